"""The SQLite store's lifecycle: bootstrap, health, migrate, schema versions, crash safety."""

from __future__ import annotations

import asyncio
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from conftest import ep
from mnemonite import (
    ConfigurationError,
    FactStore,
    MemoryStore,
    SQLiteMemoryStore,
    Store,
    StoreUnavailableError,
)
from mnemonite.store import open_store, sqlite_path
from mnemonite.store.sqlite import SCHEMA_VERSION


async def test_bootstrap_is_idempotent_and_enables_wal(tmp_path: Path) -> None:
    path = tmp_path / "nested" / "dir" / "m.db"
    store = SQLiteMemoryStore(path=path)
    await store.bootstrap()
    await store.put(ep("e1"), user="u", session="s", agent="a")
    await store.bootstrap()
    health = await store.health(deep=True)
    latest = SCHEMA_VERSION
    assert (health.ok, health.journal_mode, health.fragment_count, health.schema_version) == (True, "wal", 1, latest)
    assert health.integrity == "ok" and (await store.health()).integrity is None
    assert health.size_bytes and health.size_bytes > 0
    await store.close()
    with sqlite3.connect(path) as db:
        indexes = {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'index'")}
    assert "idx_episodes_scope_ts" in indexes


async def test_store_satisfies_the_protocols(store: SQLiteMemoryStore) -> None:
    assert isinstance(store, MemoryStore) and isinstance(store, FactStore) and isinstance(store, Store)


def test_urls() -> None:
    assert sqlite_path("sqlite:///./a.db") == Path("a.db")
    assert sqlite_path("sqlite:////abs/a.db") == Path("/abs/a.db")
    assert sqlite_path("sqlite:///:memory:") == ":memory:"
    with pytest.raises(ConfigurationError):
        sqlite_path("sqlite://relative.db")
    with pytest.raises(StoreUnavailableError, match="cannot connect to postgresql://localhost:1/db"):
        asyncio.run(open_store("postgresql://localhost:1/db"))  # PostgreSQL URLs open the server store
    with pytest.raises(ConfigurationError, match="unsupported"):
        asyncio.run(open_store("mysql://x"))


CRASHER = textwrap.dedent(
    """
    import asyncio, os, sys
    from mnemonite import ConsolidationRule, SQLiteMemoryStore
    from mnemonite.store import sql_facts

    real = sql_facts.apply_delta
    count = 0

    async def slow_apply(db, delta, now):
        global count
        count += 1
        result = await real(db, delta, now)
        if count == 50:
            print("half-way", flush=True)
            await asyncio.sleep(60)  # killed here, mid-transaction
        return result

    sql_facts.apply_delta = slow_apply

    async def main():
        store = SQLiteMemoryStore(sys.argv[1])
        await store.bootstrap()
        await store.consolidate_and_apply(ConsolidationRule(id="nightly"), max_episodes=1000)

    asyncio.run(main())
    """
)


async def _prepare(path: Path) -> None:
    store = SQLiteMemoryStore(path)
    await store.bootstrap()
    await store.put_many(
        [ep(f"e{i}").model_copy(update={"user": "u", "session": "s", "agent": "a"}) for i in range(100)]
    )
    await store.close()


async def _inspect(path: Path) -> tuple[object, ...]:
    store = SQLiteMemoryStore(path)
    await store.bootstrap()
    health = await store.health(deep=True)
    rules = await store.rule_states()
    await store.close()
    return health.ok, health.fragment_count, health.fact_count, health.pending_delta_count, rules


def test_a_killed_process_leaves_all_or_nothing(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    asyncio.run(_prepare(path))
    with subprocess.Popen([sys.executable, "-c", CRASHER, str(path)], stdout=subprocess.PIPE, text=True) as child:
        assert child.stdout is not None
        line = child.stdout.readline().strip()
        child.kill()
    assert line == "half-way"
    # Nothing of the half-applied batch: no facts, no outbox rows, and the rule registration rolled back too.
    assert asyncio.run(_inspect(path)) == (True, 100, 0, 0, [])


async def test_concurrent_writers_in_one_process(tmp_path: Path) -> None:
    store = SQLiteMemoryStore(tmp_path / "m.db")
    await store.bootstrap()

    async def writer(n: int) -> None:
        for i in range(20):
            await store.put(ep(f"w{n}-{i}"), user=f"u{n}", session="s", agent="a")

    await asyncio.gather(*(writer(n) for n in range(8)))
    assert (await store.health()).fragment_count == 160
    await store.close()


async def test_two_stores_on_one_file_serialise_through_sqlite(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    first, second = SQLiteMemoryStore(path), SQLiteMemoryStore(path)
    await first.bootstrap()
    await second.bootstrap()

    async def writer(store: SQLiteMemoryStore, name: str) -> None:
        for i in range(50):
            await store.put_many(
                [
                    ep(f"{name}-{i}-{j}").model_copy(update={"user": name, "session": "s", "agent": "a"})
                    for j in range(5)
                ]
            )

    await asyncio.gather(writer(first, "one"), writer(second, "two"))
    assert (await first.health()).fragment_count == 500
    assert len(await second.recent("one", limit=1000)) == 250
    await first.close()
    await second.close()
