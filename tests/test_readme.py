"""Every ```python block of README.md runs as written, in an empty folder, and shows what it says it shows."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text()
BLOCKS = re.findall(r"^```python\n(.*?)^```$", README, flags=re.MULTILINE | re.DOTALL)


def run_block(code: str, cwd: Path) -> str:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, "-c", code], cwd=cwd, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, f"README block failed:\n{code}\n{done.stderr}"
    return done.stdout


def test_the_readme_has_its_examples() -> None:
    assert len(BLOCKS) == 5


@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_every_block_runs_prints_and_leaves_nothing_behind(index: int, tmp_path: Path) -> None:
    out = run_block(BLOCKS[index], tmp_path)
    assert out.strip(), f"block {index} prints nothing:\n{BLOCKS[index]}"
    assert list(tmp_path.iterdir()) == [], "a README block works in a temporary folder it creates"


def test_the_first_example_finds_the_record_right_after_writing_it(tmp_path: Path) -> None:
    out = run_block(BLOCKS[0], tmp_path)
    assert "I moved to Porto" in out.splitlines()[0]


def test_the_tour_consolidates_an_episode_into_a_fact(tmp_path: Path) -> None:
    out = run_block(BLOCKS[1], tmp_path)
    assert "sam lives in Porto" in out


def test_remember_with_decision_prints_what_the_readme_says(tmp_path: Path) -> None:
    out = run_block(BLOCKS[3], tmp_path)
    assert out.splitlines()[0] == "supersede regex COLD 0.298 explicit change signal True"


def test_the_graph_example_prints_a_prompt_ready_context(tmp_path: Path) -> None:
    out = run_block(BLOCKS[4], tmp_path)
    assert "[('WORKS_AT', 0)]" in out
    assert "Alice prefers async Python" in out and "Alice WORKS_AT Acme" in out
