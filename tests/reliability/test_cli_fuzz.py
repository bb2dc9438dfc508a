"""The command line's inputs, fuzzed: every argument of the commands that take text, numbers or times.

With ``--debug`` a failure propagates as the exception itself, so the test sees its type: only a
`MnemoniteError` (or click's usage error, exit code 2) may come out, and a failed command leaves the
database content unchanged. Without ``--debug`` the same failure is one line on stderr. Text from a
real command line may hold lone surrogates (bytes that are not UTF-8, decoded with surrogateescape).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from mnemonite import MnemoniteError
from mnemonite.cli import app

sys.path.insert(0, str(Path(__file__).parents[2] / "bench"))
from reliability_inputs import ODD, content_hash

EXAMPLES = int(os.environ.get("MNEMONITE_FUZZ_EXAMPLES", "6"))
WHO = ["-u", "u", "-s", "s", "-a", "a"]
COMMANDS = [
    ["record", "{}", *WHO], ["record", "x", "-u", "{}", "-s", "s", "-a", "a"], ["record", "x", *WHO, "--meta", "{}"],
    ["record", "x", *WHO, "--timestamp", "{}"], ["record", "x", *WHO, "--id", "{}"],
    ["record", "x", *WHO, "--source-node", "{}"], ["recent", "-u", "{}"], ["recent", "-u", "u", "--limit", "{}"],
    ["search", "{}", "-u", "u"], ["search", "x", "-u", "u", "--limit", "{}"], ["remember", "{}", "-u", "u", "-a", "a"],
    ["facts", "-u", "u", "--as-of", "{}"], ["facts", "-u", "u", "--predicate", "{}"], ["forget", "{}"],
    ["history", "{}"], ["supersede", "{}", "new text"], ["deltas", "--rule", "{}"], ["conflicts", "-u", "{}"],
    ["graph", "add", "{}", "--type", "person", "-u", "u", "-a", "a"],
    ["graph", "add", "E", "--type", "person", "--prop", "{}", "-u", "u", "-a", "a"],
    ["graph", "neighbors", "{}", "-u", "u", "-a", "a"],
    ["graph", "context", "E", "--topic", "{}", "-u", "u", "-a", "a"],
    ["rules", "add", "{}"], ["rules", "add", "r", "--filter", "{}"], ["rules", "add", "r", "--cron", "{}"],
    ["purge-episodes", "{}", "--reason", "r"], ["purge-episodes", "-u", "{}", "--reason", "r"],
]  # fmt: skip
ARGUMENT = st.one_of(
    st.sampled_from([v for v in ODD["text"] if len(v) < 1000]),
    st.sampled_from([str(v) for v in ODD["int"] + ODD["float"]]),
    st.text(st.one_of(st.characters(min_codepoint=0xDC80, max_codepoint=0xDCFF), st.characters()), max_size=12),
    st.sampled_from(["2025-13-01", "0001-01-01T00:00:00+05:00", "9999-12-31T23:59:59-05:00", "k=", "=v", "k={"]),
)


@pytest.fixture
def database(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    path = tmp_path / "m.db"
    monkeypatch.setenv("MNEMONITE_EMBEDDER", "none")
    monkeypatch.delenv("MNEMONITE_URL", raising=False)
    runner = CliRunner()
    assert runner.invoke(app, ["--db", str(path), "record", "hello", *WHO]).exit_code == 0
    return str(path)


def fuzz_commands(database: str, commands: list[list[str]], examples: int) -> list[str]:
    """Each of ``commands`` with an odd value in place of ``{}``: the problems found (an untyped error, or
    a refused command that changed the database)."""
    runner, url, problems = CliRunner(), f"sqlite:///{database}", []

    @settings(max_examples=examples, deadline=None, database=None, derandomize=True,
              suppress_health_check=list(HealthCheck))  # fmt: skip
    @given(command=st.sampled_from(commands), value=ARGUMENT)
    def one(command: list[str], value: str) -> None:
        if value.startswith("-"):
            value = f" {value}"  # an option name is click's business (exit 2), not a value
        args = ["--debug", "--db", database, *[value if part == "{}" else part for part in command]]
        before = content_hash(url)
        result = runner.invoke(app, args)
        error = result.exception
        if error is None or (isinstance(error, SystemExit) and error.code in (0, 1, 2)):
            return
        if not isinstance(error, MnemoniteError):
            problems.append(f"{command[:2]} {value!r:.50}: {type(error).__name__}: {error}")
        elif content_hash(url) != before:
            problems.append(f"{command[:2]} {value!r:.50}: refused, but the database changed")

    one()
    return problems


def test_every_command_argument_fails_typed_and_changes_nothing(database: str) -> None:
    problems = fuzz_commands(database, COMMANDS, EXAMPLES * len(COMMANDS))
    assert problems == [], "\n".join(problems)


@pytest.mark.parametrize(
    "args", [["recent", "-u", "\udcff\udcfe"], ["recent", "-u", "a\x00b"], ["recent", "-u", "u", "--limit", str(2**63)]]
)
def test_without_debug_a_refused_argument_is_one_line(database: str, args: list[str]) -> None:
    result = CliRunner().invoke(app, ["--db", database, *args])
    assert result.exit_code == 1
    assert result.stderr.startswith("error: ") and result.stderr.count("\n") == 1
    assert result.stdout == ""
