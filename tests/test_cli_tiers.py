"""The agent tiers' commands (blocks, session, procedures, groups) over a real SQLite file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from mnemonite.cli import app

runner = CliRunner()
ALICE = ["-u", "alice", "-a", "planner"]


@pytest.fixture
def db(tmp_path: Path) -> list[str]:
    return ["--db", f"sqlite:///{tmp_path / 'cli.db'}", "--no-embed"]


def invoke(*args: str) -> str:
    result = runner.invoke(app, _global(args))
    assert result.exit_code == 0, result.output
    return result.stdout


def fail(*args: str) -> str:
    result = runner.invoke(app, _global(args))
    assert result.exit_code == 1, result.output
    return result.output


def _global(args: tuple[str, ...]) -> list[str]:
    """--no-embed is a global option: it goes before the command."""
    flags = [a for a in args if a == "--no-embed"]
    return [*flags, *(a for a in args if a != "--no-embed")]


def test_blocks(db: list[str]) -> None:
    invoke("blocks", "define", "persona", "I plan trips.", *ALICE, "--limit", "40", "--description", "who I am", *db)
    invoke("blocks", "append", "persona", "I like trains.", *ALICE, *db)
    invoke("blocks", "patch", "persona", "trains", "night trains", *ALICE, *db)
    assert invoke("blocks", "read", "persona", *ALICE, *db).strip() == "I plan trips.\nI like night trains."
    assert "cut at least" in fail("blocks", "write", "persona", "x" * 50, *ALICE, *db)
    assert "occurs 4 times" in fail("blocks", "patch", "persona", "i", "I", *ALICE, *db)
    invoke("blocks", "attach", "persona", "writer", *ALICE, *db)
    listed = json.loads(invoke("blocks", "list", "-u", "alice", "-a", "writer", "--json", *db))
    assert [(b["label"], b["agents"]) for b in listed] == [("persona", ["planner", "writer"])]
    invoke("blocks", "detach", "persona", *ALICE, "--from", "writer", *db)
    assert json.loads(invoke("blocks", "list", "-u", "alice", "-a", "writer", "--json", *db)) == []
    prompt = json.loads(invoke("blocks", "compile", *ALICE, "--max-tokens", "500", "--json", *db))["prompt"]
    assert prompt.startswith("<persona>\n<description>who I am</description>")
    invoke("blocks", "define", "rules", "fixed", *ALICE, "--read-only", "--sensitivity", "secret", *db)
    assert "read-only" in fail("blocks", "write", "rules", "changed", *ALICE, *db)
    assert "sees no block" in fail("blocks", "read", "persona", "-u", "bob", "-a", "planner", *db)


def test_session(db: list[str], tmp_path: Path) -> None:
    chat = ["-u", "alice", "-s", "trip", "-a", "planner"]
    invoke("session", "push", "Find a train to Porto.", *chat, *db)
    invoke("session", "push", "The 9:00 train is best.", *chat, "--role", "assistant", "--important", *db)
    rows = json.loads(invoke("session", "list", "-u", "alice", "-s", "trip", "--json", *db))
    assert [(r["role"], r["important"]) for r in rows] == [("user", False), ("assistant", True)]
    hits = json.loads(invoke("session", "search", "porto", "-u", "alice", "--json", *db))
    assert [h["message"]["content"] for h in hits] == ["Find a train to Porto."]
    assert json.loads(invoke("session", "flush", "-u", "alice", "-s", "trip", "--json", *db))["episodes"] == [
        rows[1]["id"]
    ]
    assert invoke("session", "compact", "-u", "alice", "-s", "trip", "--keep-last", "5", *db).strip() == (
        "nothing older to compact"
    )
    summary = json.loads(invoke("session", "compact", "-u", "alice", "-s", "trip", "--keep-last", "1", "--json", *db))
    assert summary["content"].startswith("Summary of 1 earlier turns:") and summary["role"] == "system"
    out = tmp_path / "trip.jsonl"
    assert json.loads(invoke("session", "export", str(out), "-u", "alice", "-s", "trip", "--json", *db))["events"] == 4
    other = ["--db", f"sqlite:///{tmp_path / 'other.db'}"]
    assert "replayed 4 events" in invoke("session", "replay", str(out), *other)
    assert (
        len(json.loads(invoke("session", "list", "-u", "alice", "--json", *other))) == 2
    )  # the summary, the last turn
    assert "already" in fail("session", "replay", str(out), *other)
    bad = runner.invoke(app, _global(("session", "push", "x", *chat, "--sensitivity", "classified", *db)))
    assert bad.exit_code == 2 and "classified" in bad.output
    assert "is not a session export" in fail("session", "replay", str(tmp_path / "cli.db"), *other)


def test_procedures(db: list[str]) -> None:
    invoke("procedures", "define", "book-train", *ALICE, "--step", "Search", "--step", "Book", "--trigger", "rail", *db)
    invoke("procedures", "define", "expenses", *ALICE, "--step", "Collect receipts", *db)
    names = [p["name"] for p in json.loads(invoke("procedures", "list", "-u", "alice", "--json", *db))]
    assert names == ["book-train", "expenses"]
    found = json.loads(invoke("procedures", "activate", "book a rail trip", *ALICE, "--json", *db))
    assert found[0]["procedure"]["name"] == "book-train"
    invoke("procedures", "remove", "expenses", *ALICE, *db)
    assert "no procedure" in fail("procedures", "remove", "expenses", *ALICE, *db)


def test_groups(db: list[str]) -> None:
    bob = ["--member-user", "bob", "--member-agent", "assistant"]
    invoke("groups", "create", "home", *ALICE, "--kind", "household", *db)
    invoke("groups", "add-member", "home", *ALICE, *bob, *db)
    invoke("blocks", "define", "groceries", "milk", *ALICE, *db)
    shared = json.loads(invoke("groups", "share", "home", *ALICE, "--block", "groceries", "--json", *db))
    seen = json.loads(invoke("groups", "shared", "-u", "bob", "-a", "assistant", "--json", *db))
    assert [i["block"]["value"] for i in seen] == ["milk"]
    assert [g["name"] for g in json.loads(invoke("groups", "list", "-u", "bob", "-a", "assistant", "--json", *db))] == [
        "home"
    ]
    assert json.loads(invoke("groups", "shared", "-u", "eve", "-a", "x", "--json", *db)) == []
    assert "not a member" in fail("groups", "share", "home", "-u", "eve", "-a", "x", "--block", "groceries", *db)
    assert "not an owner" in fail("groups", "add-member", "home", "-u", "bob", "-a", "assistant", *bob, *db)
    invoke("groups", "unshare", "home", shared["id"], *ALICE, *db)
    invoke("groups", "remove-member", "home", *ALICE, *bob, *db)
    assert json.loads(invoke("groups", "shared", "-u", "bob", "-a", "assistant", "--json", *db)) == []
