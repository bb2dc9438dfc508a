"""Every ```python block of README.md runs as written, in an empty folder, and shows what it says it shows."""

from __future__ import annotations

import json
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
    assert list(cwd.iterdir()) == [], "a README block works in a temporary folder it creates"
    return done.stdout


@pytest.fixture(scope="module")
def outputs(tmp_path_factory: pytest.TempPathFactory) -> dict[int, str]:
    """Each block's output, each run once in an empty folder of its own."""
    return {index: run_block(code, tmp_path_factory.mktemp(f"block{index}")) for index, code in enumerate(BLOCKS)}


def test_the_readme_has_its_examples() -> None:
    assert len(BLOCKS) == 13


@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_every_block_prints_what_it_shows(index: int, outputs: dict[int, str]) -> None:
    assert outputs[index].strip(), f"block {index} prints nothing:\n{BLOCKS[index]}"


def test_the_first_example_finds_the_record_right_after_writing_it(outputs: dict[int, str]) -> None:
    assert "I moved to Porto" in outputs[0].splitlines()[0]


def test_the_tour_consolidates_an_episode_into_a_fact(outputs: dict[int, str]) -> None:
    assert "sam lives in Porto" in outputs[1]


def test_sync_memory_reads_back_what_it_wrote(outputs: dict[int, str]) -> None:
    assert outputs[2].strip() == "['Standup moved to 10:30']"


def test_remember_with_decision_prints_what_the_readme_says(outputs: dict[int, str]) -> None:
    reason = "same subject and single-valued predicate (lives_in), another object"
    printed = f"supersede subject_predicate COLD 0.307 {reason} True"
    assert outputs[3].splitlines()[0] == printed
    assert f"# {printed}" in BLOCKS[3]


def test_the_graph_example_prints_a_prompt_ready_context(outputs: dict[int, str]) -> None:
    assert "[('WORKS_AT', 0)]" in outputs[4]
    assert "Alice prefers async Python" in outputs[4] and "Alice WORKS_AT Acme" in outputs[4]


def test_the_consolidator_example_promotes_statements_and_keeps_the_move(outputs: dict[int, str]) -> None:
    block = next(i for i, code in enumerate(BLOCKS) if "mem.consolidator.run" in code)
    out = outputs[block]
    assert "'I work at Siemens'" in out and "'Ana lives in Porto'" in out and "from ['s1-0']" in out
    assert "I live in Berlin'" not in out and "'I moved to Munich'" in out  # the old address is history
    assert "My sister Ana is a nurse. She lives in Porto." in out  # the light phase's summary


def test_the_agent_runtime_block_prints_both_formats_and_the_dispatchers_answers(outputs: dict[int, str]) -> None:
    [index] = [i for i, block in enumerate(BLOCKS) if "tools.openai()" in block]
    lines = outputs[index].splitlines()
    assert lines[0] == str(
        ["block_append", "block_replace", "block_rethink", "fact_remember", "fact_search", "fact_supersede",
         "fact_forget", "recall_episodes", "conversation_search"]
    )  # fmt: skip
    anthropic = json.loads(lines[1])
    assert anthropic["name"] == "fact_search" and anthropic["input_schema"]["required"] == ["query"]
    assert json.loads(lines[2])["decision"] == "admit"
    assert json.loads(lines[3])["error"]["code"] == "scope_not_allowed"
    assert lines[4] == "needs_approval"


def test_the_concept_graph_example_shifts_consolidates_and_routes(outputs: dict[int, str]) -> None:
    [index] = [i for i, block in enumerate(BLOCKS) if "mem.concepts" in block]
    lines = outputs[index].splitlines()
    assert lines[0].startswith("shift at distance") and lines[0].endswith("graph version 1")
    assert "version 2" in lines[1] and "Knowledge graph context:" in lines
    assert lines[-1].startswith("graph | graph cue 'how' |")


def test_a_card_number_said_in_passing_is_masked_and_kept_for_a_reveal(outputs: dict[int, str]) -> None:
    index = next(i for i, block in enumerate(BLOCKS) if "reveal_text" in block)
    masked, revealed = outputs[index].splitlines()[:2]
    assert masked == "my card is [secret: card number], expiry 04/29 | secret"
    assert revealed == "my card is 4111 1111 1111 1111, expiry 04/29"
