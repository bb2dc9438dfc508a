"""Opening a memory: bare paths, create=False, files that are not databases, id prefixes."""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
import threading
from pathlib import Path

import pytest

from mnemonite import (
    AmbiguousIdError,
    ConfigurationError,
    ConsolidationRule,
    DatabaseNotFoundError,
    Episode,
    InvalidInputError,
    Memory,
    MemoryConfig,
    NotADatabaseError,
    NotFoundError,
    Scope,
    StoreError,
    SyncMemory,
)
from mnemonite.store import memory_url

NO_MODEL = MemoryConfig(embedder="none")


@pytest.mark.parametrize(
    ("given", "url"),
    [
        ("m.db", "sqlite:///m.db"),
        ("./m.db", "sqlite:///./m.db"),
        ("/tmp/m.db", "sqlite:////tmp/m.db"),
        ("sqlite:///x.db", "sqlite:///x.db"),
        ("postgresql://h/db", "postgresql://h/db"),
    ],
)
def test_bare_paths_become_sqlite_urls(given: str, url: str) -> None:
    assert memory_url(given) == url


def test_a_home_path_is_expanded_and_sqlite_uris_are_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Given from Python, where no shell expands "~", it named a folder "~"; URI options named the file."""
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.chdir(tmp_path)
    assert memory_url("~/m.db") == f"sqlite:///{tmp_path}/m.db"
    for given in ("m.db?mode=ro", "file:m.db", "sqlite:///m.db?mode=ro"):
        with pytest.raises(ConfigurationError):
            SyncMemory.open(given, config=NO_MODEL)
    assert list(tmp_path.iterdir()) == []  # nothing was created


async def test_a_bare_path_opens_that_file(tmp_path: Path) -> None:
    path = tmp_path / "bare.db"
    async with await Memory.open(str(path), config=NO_MODEL) as mem:
        await mem.episodic.put(Episode(content="hello"), user="u", session="s", agent="a")
    assert path.is_file()


async def test_a_path_object_opens_that_file_and_anything_else_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "as-path.db"
    async with await Memory.open(path, config=NO_MODEL) as mem:
        await mem.episodic.put(Episode(content="hello"), user="u", session="s", agent="a")
    with SyncMemory.open(path, config=NO_MODEL) as again:
        assert [e.content for e in again.episodic.recent("u")] == ["hello"]
    with pytest.raises(InvalidInputError, match="url must be a string or a path, got int"):
        await Memory.open(3, config=NO_MODEL)  # type: ignore[arg-type]


async def test_create_false_on_a_missing_file_creates_nothing(tmp_path: Path) -> None:
    path = tmp_path / "no" / "such" / "m.db"
    with pytest.raises(DatabaseNotFoundError, match="no database at"):
        await Memory.open(f"sqlite:///{path}", config=NO_MODEL, create=False)
    assert not (tmp_path / "no").exists()


def test_sync_create_false_on_a_missing_file(tmp_path: Path) -> None:
    with pytest.raises(DatabaseNotFoundError):
        SyncMemory.open(str(tmp_path / "m.db"), config=NO_MODEL, create=False)
    assert list(tmp_path.iterdir()) == []


async def test_create_false_opens_an_existing_file(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    async with await Memory.open(str(path), config=NO_MODEL) as mem:
        await mem.episodic.put(Episode(content="hello"), user="u", session="s", agent="a")
    async with await Memory.open(str(path), config=NO_MODEL, create=False) as mem:
        assert [e.content for e in await mem.episodic.recent("u")] == ["hello"]


def test_a_file_that_is_not_a_database_is_a_typed_error(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_bytes(b"not a database, just some text that is long enough to have a header" * 20)
    before = path.read_bytes()
    threads = set(threading.enumerate())
    with pytest.raises(NotADatabaseError, match="is not a SQLite database"):
        SyncMemory.open(str(path), config=NO_MODEL, create=False)
    assert path.read_bytes() == before
    assert set(threading.enumerate()) <= threads  # the failed open closed its connection thread (no new one)


def test_a_locked_database_names_the_busy_timeout(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    SyncMemory.open(str(path), config=NO_MODEL).close()
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        with pytest.raises(StoreError, match="busy timeout"):
            SyncMemory.open(str(path), config=NO_MODEL)
    finally:
        holder.execute("ROLLBACK")
        holder.close()


async def test_resolve_id_takes_a_unique_prefix(mem_on_both: Memory) -> None:
    mem = mem_on_both
    await mem.episodic.put(Episode(id="abc123", content="one"), user="u", session="s", agent="a")
    await mem.episodic.put(Episode(id="abd456", content="two"), user="u", session="s", agent="a")
    assert await mem.resolve_id("episode", "abc") == "abc123"
    assert await mem.resolve_id("episode", "abd456") == "abd456"
    with pytest.raises(AmbiguousIdError, match="abc123, abd456"):
        await mem.resolve_id("episode", "ab")
    with pytest.raises(NotFoundError):
        await mem.resolve_id("episode", "zz")


async def test_resolve_id_takes_wildcards_literally(mem_on_both: Memory) -> None:
    mem = mem_on_both
    await mem.episodic.put(Episode(id="a_1", content="one"), user="u", session="s", agent="a")
    await mem.episodic.put(Episode(id="ab1", content="two"), user="u", session="s", agent="a")
    await mem.episodic.put(Episode(id="x%y", content="three"), user="u", session="s", agent="a")
    assert await mem.resolve_id("episode", "a_") == "a_1"
    assert await mem.resolve_id("episode", "x%") == "x%y"
    with pytest.raises(NotFoundError):
        await mem.resolve_id("episode", "%")


async def test_resolve_id_of_facts_entities_and_rules(mem_on_both: Memory) -> None:
    mem = mem_on_both
    fact = await mem.semantic.remember(Scope(user="u", agent="a"), "I live in Paris")
    entity = await mem.graph.create_entity(Scope(user="u", agent="a"), name="Alice", entity_type="person")
    await mem.add_rule(ConsolidationRule(id="nightly-3am"))
    assert await mem.resolve_id("fact", fact.id[:6]) == fact.id
    assert await mem.resolve_id("entity", entity.id[:6]) == entity.id
    assert await mem.resolve_id("rule", "night") == "nightly-3am"


async def test_a_write_cancelled_at_any_point_leaves_no_transaction_open(tmp_path: Path) -> None:
    from mnemonite.store import SQLiteMemoryStore

    store = SQLiteMemoryStore(tmp_path / "m.db")
    await store.bootstrap()
    try:
        for steps in range(12):  # cancel after 0, 1, 2, ... turns of the event loop: once while awaiting BEGIN
            task = asyncio.create_task(store.put(Episode(content=f"n{steps}"), user="u", session="s", agent="a"))
            for _ in range(steps):
                await asyncio.sleep(0)
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
            await store.put(Episode(content=f"after {steps}"), user="u", session="s", agent="a")
    finally:
        await store.close()


async def test_create_false_on_a_postgres_database_without_a_memory(postgres_url: str) -> None:
    import psycopg

    with pytest.raises(DatabaseNotFoundError, match="no mnemonite tables"):
        await Memory.open(postgres_url, config=NO_MODEL, create=False)
    with psycopg.connect(postgres_url) as db:
        tables = db.execute("SELECT count(*) FROM pg_tables WHERE schemaname = 'public'").fetchone()
    assert tables == (0,)
    async with await Memory.open(postgres_url, config=NO_MODEL) as mem:
        await mem.episodic.put(Episode(content="hello"), user="u", session="s", agent="a")
    async with await Memory.open(postgres_url, config=NO_MODEL, create=False) as mem:
        assert [e.content for e in await mem.episodic.recent("u")] == ["hello"]


async def test_memory_users_reads_who_a_memory_holds_without_creating_it(memory_url: str, tmp_path: Path) -> None:
    from mnemonite.store import memory_users

    async with await Memory.open(memory_url) as mem:
        await mem.episodic.put(Episode(content="Lunch with Bob"), user="alice", session="s", agent="a")
        await mem.semantic.remember(Scope(user="bob", agent="a"), "I live in Oslo")
    assert await memory_users(memory_url) == {"alice", "bob"}
    missing = tmp_path / "nothing-here.db"
    assert await memory_users(f"sqlite:///{missing}") == set() and not missing.exists()
    (tmp_path / "notes.db").write_text("not a database")
    assert await memory_users(f"sqlite:///{tmp_path / 'notes.db'}") is None
