"""API keys: created bound to a scope, stored hashed, listed without secrets, revocable; on both stores."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from pathlib import Path

import pytest
from typer.testing import CliRunner

from mnemonite import AuthenticationError, InvalidInputError, Memory, MemoryScopeError, NotFoundError
from mnemonite.cli import app

runner = CliRunner()


async def test_a_key_is_bound_to_its_scope_and_authenticates(mem_on_both: Memory) -> None:
    issued = await mem_on_both.keys.create("alice", agent="rag", can="read,write", label="laptop")
    assert issued.secret.startswith("mnm_") and len(issued.secret) > 40
    key = await mem_on_both.keys.authenticate(issued.secret)
    assert (key.user, key.agent, key.capabilities, key.label) == ("alice", "rag", ("read", "write"), "laptop")
    assert key == issued.key


async def test_keys_are_listed_without_secrets_and_per_user(mem_on_both: Memory) -> None:
    a = await mem_on_both.keys.create("alice", can=["admin", "read"])
    b = await mem_on_both.keys.create("bob")
    assert [k.id for k in await mem_on_both.keys.all()] == [a.key.id, b.key.id]
    assert [k.id for k in await mem_on_both.keys.all("bob")] == [b.key.id]
    listed = (await mem_on_both.keys.all("alice"))[0]
    assert listed.capabilities == ("read", "admin")  # in the canonical order
    assert a.secret not in listed.model_dump_json() and "secret" not in listed.model_dump()


async def test_revoked_unknown_and_missing_keys_are_refused(mem_on_both: Memory) -> None:
    issued = await mem_on_both.keys.create("alice")
    revoked = await mem_on_both.keys.revoke(issued.key.id)
    assert revoked.revoked_at is not None and not revoked.active
    assert (await mem_on_both.keys.revoke(issued.key.id)).revoked_at == revoked.revoked_at  # revoking twice
    for secret in (issued.secret, "mnm_" + "x" * 43, "", None, "y" * 10_000):
        with pytest.raises(AuthenticationError):
            await mem_on_both.keys.authenticate(secret)
    assert await mem_on_both.keys.active() == 0
    with pytest.raises(NotFoundError):
        await mem_on_both.keys.revoke("no-such-key")


async def test_bad_key_requests_change_nothing(mem_on_both: Memory) -> None:
    for user, can in (("alice", "read,delete"), ("alice", ""), ("alice", []), (" ", "read")):
        with pytest.raises((InvalidInputError, MemoryScopeError)):
            await mem_on_both.keys.create(user, can=can)
    with pytest.raises((InvalidInputError, MemoryScopeError)):
        await mem_on_both.keys.create("alice", agent="")
    assert await mem_on_both.keys.all() == []


async def test_only_the_hash_of_a_secret_is_stored(tmp_path: Path) -> None:
    path = tmp_path / "keys.db"
    async with await Memory.open(f"sqlite:///{path}", embedder=None) as mem:
        issued = await mem.keys.create("alice")
    rows = sqlite3.connect(path).execute("SELECT * FROM api_keys").fetchall()
    stored = json.dumps(rows)
    assert issued.secret not in stored
    assert hashlib.sha256(issued.secret.encode()).hexdigest() in stored


def test_cli_creates_lists_and_revokes_keys(tmp_path: Path) -> None:
    db = ["--db", str(tmp_path / "cli.db")]
    made = runner.invoke(app, ["keys", "create", *db, "--user", "alice", "--agent", "rag", "--can", "read", "--json"])
    assert made.exit_code == 0, made.output
    issued = json.loads(made.stdout)
    assert issued["key"]["capabilities"] == ["read"] and issued["secret"].startswith("mnm_")
    listed = runner.invoke(app, ["keys", "list", *db, "--json"])
    assert issued["secret"] not in listed.stdout
    assert [k["id"] for k in json.loads(listed.stdout)] == [issued["key"]["id"]]
    table = runner.invoke(app, ["keys", "list", *db]).stdout
    assert "alice" in table and issued["secret"] not in table
    revoked = runner.invoke(app, ["keys", "revoke", *db, issued["key"]["id"], "--json"])
    assert json.loads(revoked.stdout)["revoked_at"] is not None
    bad = runner.invoke(app, ["keys", "create", *db, "--user", "bob", "--can", "read,root"])
    assert bad.exit_code == 1 and "capabilities" in bad.output
    assert len(json.loads(runner.invoke(app, ["keys", "list", *db, "--json"]).stdout)) == 1
    gone = runner.invoke(app, ["keys", "revoke", *db, "nope"])
    assert gone.exit_code == 1 and "no API key" in gone.output
