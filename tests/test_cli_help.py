"""The command line documents itself: help on every option, choices listed, every command in the README."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any, get_args

import pytest
import typer
from typer.testing import CliRunner

from mnemonite.cli import app
from mnemonite.cli._common import MemoryType
from mnemonite.cli.graph import Direction
from mnemonite.cli.search import Tier
from mnemonite.models import fact, graph, search

README = Path(__file__).resolve().parents[1] / "README.md"
runner = CliRunner()


def commands(group: Any, path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], Any]]:
    """Every leaf command of the click tree under ``group``, with its path of names."""
    for name, command in sorted(group.commands.items()):
        if hasattr(command, "commands"):
            yield from commands(command, (*path, name))
        else:
            yield (*path, name), command


ROOT = typer.main.get_command(app)
LEAVES = list(commands(ROOT))


def test_the_tree_has_every_command() -> None:
    names = {" ".join(path) for path, _ in LEAVES}
    expected = {"supersede", "graph entities", "graph unrelate", "graph delete", "record", "search", "rules list"}
    assert expected <= names


@pytest.mark.parametrize("path", [path for path, _ in LEAVES], ids=" ".join)
def test_every_option_has_help_text(path: tuple[str, ...]) -> None:
    command = dict(LEAVES)[path]
    bare = [p.name for p in command.params if getattr(p, "help", None) in (None, "") and p.name != "help"]
    assert not bare, f"mnemonite {' '.join(path)}: options without help text: {bare}"
    assert command.help, f"mnemonite {' '.join(path)} has no description"
    result = runner.invoke(app, [*path, "--help"])
    assert result.exit_code == 0, result.output


def test_global_options_have_help_text() -> None:
    assert all(p.help for p in ROOT.params if p.name != "help")
    assert "--no-embed" in runner.invoke(app, ["--help"]).stdout


def test_options_with_fixed_values_list_them() -> None:
    help_text = runner.invoke(app, ["graph", "neighbors", "--help"]).stdout
    assert re.search(r"out.*in.*both", help_text, re.S)
    assert "preference" in runner.invoke(app, ["remember", "--help"]).stdout
    assert "multi-active" in runner.invoke(app, ["migrate-embedder", "--help"]).stdout


@pytest.mark.parametrize(
    ("choices", "literal"),
    [(MemoryType, fact.MemoryType), (Direction, graph.Direction), (Tier, search.Tier)],
)
def test_choices_match_the_library(choices: Any, literal: Any) -> None:
    assert {c.value for c in choices} == set(get_args(literal))


def test_every_command_is_in_the_readme_command_table() -> None:
    section = README.read_text().split("## Command line", 1)[1].split("\n## ", 1)[0]
    table = [line for line in section.splitlines() if line.startswith("| `mnemonite ")]
    missing = [" ".join(p) for p, _ in LEAVES if not any(f"`mnemonite {' '.join(p)}" in row for row in table)]
    assert not missing, f"commands missing from the README's command table: {missing}"


def test_every_command_takes_json_and_db() -> None:
    for path, command in LEAVES:
        flags = {flag for p in command.params for flag in getattr(p, "opts", [])}
        assert "--json" in flags, f"mnemonite {' '.join(path)} has no --json"
        assert "--db" in flags or path == ("copy",), f"mnemonite {' '.join(path)} has no --db"
