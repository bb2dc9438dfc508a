"""The command line of the agent tiers, the consolidator, the concept graph and the lifecycle, fuzzed: every
argument of their commands that takes text or a number. As in ``test_cli_fuzz.py``: with ``--debug`` only a
`MnemoniteError` (or click's usage error, exit code 2) may come out, and a failed command leaves the database
content unchanged. ``MNEMONITE_FUZZ_EXAMPLES`` (default 6) / 3 examples per command.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from mnemonite.cli import app

sys.path.insert(0, str(Path(__file__).parents[2] / "bench"))
sys.path.insert(0, str(Path(__file__).parent))
from test_cli_fuzz import EXAMPLES, fuzz_commands

PER_COMMAND = max(1, EXAMPLES // 3)  # a command opens the memory each time: 2 each in the fast profile
UA = ["-u", "u", "-a", "a"]
US = ["-u", "u", "-s", "s"]
COMMANDS = [
    ["blocks", "define", "{}", "x", *UA], ["blocks", "define", "b2", "{}", *UA], ["blocks", "define", "b3", "x", "-u",
    "{}", "-a", "a"], ["blocks", "define", "b4", "x", *UA, "--limit", "{}"], ["blocks", "define", "b5", "x", *UA,
    "--description", "{}"], ["blocks", "write", "notes", "{}", *UA], ["blocks", "append", "notes", "{}", *UA],
    ["blocks", "patch", "notes", "{}", "x", *UA], ["blocks", "patch", "notes", "tea", "{}", *UA],
    ["blocks", "attach", "notes", "{}", *UA], ["blocks", "read", "{}", *UA],
    ["blocks", "compile", *UA, "--max-tokens", "{}"], ["blocks", "list", "-u", "{}"],
    ["session", "push", "{}", *US, "-a", "a"], ["session", "push", "x", "-u", "u", "-s", "{}", "-a", "a"],
    ["session", "list", *US, "--limit", "{}"], ["session", "search", "{}", "-u", "u"],
    ["session", "search", "x", "-u", "u", "-k", "{}"], ["session", "compact", *US, "--keep-last", "{}"],
    ["session", "flush", *US, "--min-importance", "{}"], ["session", "replay", "{}"],
    ["procedures", "define", "{}", *UA, "--step", "s"], ["procedures", "define", "p", *UA, "--step", "{}"],
    ["procedures", "define", "p", *UA, "--step", "s", "--trigger", "{}"], ["procedures", "remove", "{}", *UA],
    ["procedures", "activate", "{}", *UA], ["procedures", "activate", "x", *UA, "-k", "{}"],
    ["groups", "create", "{}", *UA], ["groups", "add-member", "{}", *UA, "--member-user", "v", "--member-agent", "b"],
    ["groups", "add-member", "team", *UA, "--member-user", "{}", "--member-agent", "b"],
    ["groups", "share", "team", *UA, "--fact", "{}"], ["groups", "share", "team", *UA, "--block", "{}"],
    ["groups", "unshare", "team", "{}", *UA], ["groups", "shared", "-u", "{}", "-a", "a"],
    ["consolidate", "--phase", "light", "--user", "{}"], ["consolidate", "{}"],
    ["concepts", "show", "-u", "{}", "-a", "a"], ["concepts", "version", *UA, "--limit", "{}"],
    ["concepts", "query", "{}", *UA], ["lifecycle", "sweep", "-u", "{}"], ["lifecycle", "stats", "-u", "{}"],
]  # fmt: skip
SEED = [["blocks", "define", "notes", "likes tea", *UA], ["session", "push", "hello", *US, "-a", "a"],
        ["procedures", "define", "deploy", *UA, "--step", "build"], ["groups", "create", "team", *UA],
        ["groups", "share", "team", *UA, "--block", "notes"]]  # fmt: skip


@pytest.fixture
def database(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    path = tmp_path / "m.db"
    monkeypatch.setenv("MNEMONITE_EMBEDDER", "none")
    monkeypatch.delenv("MNEMONITE_URL", raising=False)
    runner = CliRunner()
    for command in SEED:
        result = runner.invoke(app, ["--db", str(path), *command])
        assert result.exit_code == 0, result.output
    return str(path)


def test_every_tier_command_argument_fails_typed_and_changes_nothing(database: str) -> None:
    problems = fuzz_commands(database, COMMANDS, PER_COMMAND * len(COMMANDS))
    assert problems == [], "\n".join(problems)
