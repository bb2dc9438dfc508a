"""`mnemonite demo` tells one story: nothing it prints as current contradicts what it showed superseded."""

from __future__ import annotations

import io
import re

import pytest
from rich.console import Console

from mnemonite.demo import run_demo

ROW = re.compile(r"│ (?P<predicate>[^│·]+?) · (?P<object>[^│]+?)\s*│ (?P<valid>[^│]+?)\s*│ (?P<status>\w+)\s*│")


@pytest.fixture(scope="module")
def output(tmp_path_factory: pytest.TempPathFactory) -> str:
    buffer = io.StringIO()
    path = tmp_path_factory.mktemp("demo") / "demo.db"
    run_demo(f"sqlite:///{path}", Console(file=buffer, width=200, color_system=None))
    return buffer.getvalue()


def section(text: str, start: str, end: str) -> str:
    return text[text.index(start) : text.index(end, text.index(start))]


def current_facts(output: str) -> dict[str, str]:
    table = section(output, "What Sam's assistant knows now", "history of")
    return {m["predicate"]: m["object"] for m in ROW.finditer(table) if m["status"] == "active"}


def test_the_current_facts_are_the_latest_of_each_story_line(output: str) -> None:
    assert current_facts(output) == {"diet": "pescatarian", "lives in": "Vila Nova de Gaia", "works at": "Figma"}


def test_the_entity_profile_agrees_with_the_current_facts(output: str) -> None:
    context = section(output, "graph.context_for", "### Relations")
    profile = dict(line.split(": ", 1) for line in context.splitlines()[2:] if ": " in line)
    profile.pop("type")
    current = current_facts(output)
    assert profile, "the profile shows what memory holds about Sam"
    assert all(current[key] == value for key, value in profile.items()), profile
    assert "vegetarian" not in section(output, "graph.context_for", "audit log")


def test_superseded_values_are_never_shown_as_current(output: str) -> None:
    history = section(output, "history of 'lives in'", "as_of =")
    closed = {m["object"] for m in ROW.finditer(history) if m["status"] == "superseded"}
    assert closed == {"Lisbon", "Porto"}
    assert not closed & set(current_facts(output).values())


def test_the_demo_says_whose_memory_it_made_and_how_to_inspect_it(output: str) -> None:
    assert "user 'sam', agent 'assistant'" in output and "mnemonite ui --db " in output
    assert "pip install -e '.[server]'" in output  # the extras' brackets are text, not markup
