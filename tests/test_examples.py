"""Each program in examples/ runs as a user would run it (a subprocess, in an empty folder) and tells its story."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"


def run_example(name: str, cwd: Path) -> str:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run(
        [sys.executable, str(EXAMPLES / name)], cwd=cwd, env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    assert list(cwd.iterdir()) == [], "an example cleans up after itself"
    return done.stdout


def test_every_example_is_tested_and_documented() -> None:
    tested = {"chat_loop.py", "facts_over_time.py", "postgres.py"}
    assert {path.name for path in EXAMPLES.glob("*.py")} == tested
    readme = (ROOT / "README.md").read_text()
    assert all(f"python examples/{name}" in readme for name in tested)
    assert "pip install 'mnemonite[postgres]'" in readme


def test_chat_loop_recalls_earlier_turns_before_answering(tmp_path: Path) -> None:
    out = run_example("chat_loop.py", tmp_path)
    prompts = out.split("Relevant memories:")[1:]
    assert len(prompts) == 4
    assert "(nothing yet)" in prompts[0]
    assert "- My sister Ana is vegan and visits me next week." in prompts[2]
    assert "- I am training for the Porto half marathon in May." in prompts[3]
    assert out.rstrip().endswith("8 turns recorded")


def test_facts_over_time_replays_system_and_world_time(tmp_path: Path) -> None:
    out = run_example("facts_over_time.py", tmp_path)
    now, rest = out.split("now:\n")[1].split("as_of the checkpoint")
    believed, rest = rest.split("valid_at 2024-12-01")
    held, history = rest.split("history of where Sam lives:")
    assert "'I moved to Porto' → supersede" in out
    assert "supersede → user · lives_in · vila nova de gaia" in out
    assert "Vila Nova de Gaia" in now and "Lisbon" not in now and "Porto'" not in now
    assert "'I live in Lisbon'" in believed and "Gaia" not in believed
    assert "'I live in Lisbon'                       held 2024-01-10 → 2025-06-01" in held and "Gaia" not in held
    assert [line.split("'")[1] for line in history.strip().splitlines()] == [
        "I live in Lisbon",
        "I moved to Porto",
        "I live in Vila Nova de Gaia",
    ]


def test_postgres_example_starts_its_own_server_and_finds_what_it_stored(tmp_path: Path) -> None:
    out = run_example("postgres.py", tmp_path)
    assert "stored 3 episodes on PostgreSQL" in out
    assert "My favourite food is grilled sardines" in out
    assert out.rstrip().endswith("server stopped")
