"""SQLite backend: one file, WAL, one writer, every write in a transaction.

All statements go through one aiosqlite connection guarded by an asyncio lock, so a
transaction is never interleaved with another coroutine's statements; other processes
are serialised by SQLite's own file lock (``busy_timeout``). A process killed mid-write
leaves the last committed state: SQLite rolls the open transaction back.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sqlite3
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from datetime import datetime
from importlib import resources
from pathlib import Path
from typing import Any

import aiosqlite

from mnemonite._time import to_text, utcnow
from mnemonite.conflicts import text_hash
from mnemonite.errors import SchemaVersionError, StoreError
from mnemonite.models import (
    ConsolidationRule,
    ConsolidationRun,
    DeltaRecord,
    Episode,
    Fact,
    FactFilter,
    Lineage,
    MemoryDelta,
    MigrationPlan,
    RuleState,
    StoreHealth,
)
from mnemonite.models.messages import SessionEvent
from mnemonite.store import sql_episodes, sql_facts, sql_rules
from mnemonite.store import sqlite_faults as faults
from mnemonite.store.base import CLOSED_STORE, RecentOrder
from mnemonite.store.filter_sql import FilterCompiler
from mnemonite.store.rows import episode_values
from mnemonite.store.sql_concepts import ConceptMethods
from mnemonite.store.sql_conflicts import ConflictMethods
from mnemonite.store.sql_consolidator import ConsolidatorMethods
from mnemonite.store.sql_graph import GraphMethods
from mnemonite.store.sql_ids import IdMethods
from mnemonite.store.sql_keys import KeyMethods
from mnemonite.store.sql_learned import BuildMethods
from mnemonite.store.sql_procedural import ProceduralMethods
from mnemonite.store.sql_purge import EpisodePurgeMethods
from mnemonite.store.sql_replay import ReplayMethods
from mnemonite.store.sql_scan import ScanMethods
from mnemonite.store.sql_search import SearchMethods
from mnemonite.store.sql_session import SessionMethods, insert_events
from mnemonite.store.sql_shared import SharedMethods
from mnemonite.store.sql_tools import ToolCallMethods
from mnemonite.store.sql_working import WorkingMethods

__all__ = ["SQLiteMemoryStore"]

log = logging.getLogger("mnemonite.store")

SCHEMA_FILES = (
    (1, "001_base.sql"),
    (2, "002_search.sql"),
    (3, "003_conflicts.sql"),
    (4, "004_graph.sql"),
    (5, "005_recent.sql"),
    (6, "006_episode_purges.sql"),
    (7, "007_agent_tiers.sql"),
    (8, "008_sensitivity_tool_calls.sql"),
    (9, "009_api_keys.sql"),
    (10, "010_consolidator.sql"),
    (11, "011_concepts.sql"),
    (12, "012_fact_sources_by_fact.sql"),
    (13, "013_message_text_updates.sql"),
    (14, "014_pending_facts.sql"),
    (15, "015_learned_graph.sql"),
    (16, "016_vectors_rowid.sql"),
)
SCHEMA_VERSION = SCHEMA_FILES[-1][0]
VECTORS_ROWID = 16  # rewrites the vectors table: a few seconds per 100,000 vectors, said before it starts
VECTORS_MOVE_SAID = 100_000  # from this many vectors
BUSY_TIMEOUT = 10.0  # seconds; MemoryConfig.busy_timeout
_PRAGMAS = (
    "PRAGMA foreign_keys = ON",
    "PRAGMA synchronous = NORMAL",
    # 64 MiB page cache: index inserts on a million-row table otherwise miss the default 2 MiB.
    "PRAGMA cache_size = -65536",
    # Reads map the file instead of copying pages in: random lookups (graph walks, hits) cost a third.
    "PRAGMA mmap_size = 2147418112",
    # LIKE is case-insensitive by default: 'Alice' would read 'alice''s rows.
    "PRAGMA case_sensitive_like = ON",
)
_EPISODE_INSERT = (
    "INSERT INTO episodes (seq, id, scope_key, user_id, session_id, agent_id, content, timestamp, source_node,"
    " metadata, recorded_at, sensitivity) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT(id) DO NOTHING"
)
# SQLite gives a new row the highest rowid + 1, so once the newest episode is purged its seq comes back;
# a rule's checkpoint or the indexer's position may have passed it, and the new episode would be skipped
# for good (found by bench/reliability_crash.py). New seqs start above every position that read them.
_EPISODE_SEQ_FLOOR = (
    "SELECT MAX(COALESCE((SELECT MAX(seq) FROM episodes), 0), COALESCE((SELECT MAX(checkpoint) FROM rules), 0),"
    " COALESCE((SELECT MAX(last_seq) FROM index_state WHERE kind = 'episode'), 0))"
)


class SQLiteMemoryStore(
    ConsolidatorMethods,
    ConflictMethods,
    EpisodePurgeMethods,
    ScanMethods,
    SearchMethods,
    GraphMethods,
    BuildMethods,
    IdMethods,
    WorkingMethods,
    SessionMethods,
    ReplayMethods,
    ProceduralMethods,
    ToolCallMethods,
    SharedMethods,
    KeyMethods,
    ConceptMethods,
):
    """The default store: ``SQLiteMemoryStore(path=Path("./memory.db"))``; ``":memory:"`` for a throwaway one."""

    def __init__(self, path: Path | str = "mnemonite.db", *, busy_timeout: float = BUSY_TIMEOUT) -> None:
        self.path = path if str(path) == ":memory:" else Path(path)
        self.busy_timeout = busy_timeout  # seconds a write waits for another connection's lock
        self._db: aiosqlite.Connection | None = None  # the writer (and the reader of an in-memory database)
        self._lock = asyncio.Lock()
        # A file has a second connection for reads: in WAL mode a read sees the last commit without waiting for a
        # write transaction in progress (an API key's check, a search, while the indexer saves a batch).
        self._reader: aiosqlite.Connection | None = None
        self._read_lock = asyncio.Lock()

    # -- lifecycle ---------------------------------------------------------------------------

    async def bootstrap(self) -> None:
        """Create or open the database; idempotent. On failure the connection is closed again."""
        if self._db is None:
            self._db = await self._connect()
        try:
            with self._translated():
                await self._configure(self._db)
                await self._db.execute("PRAGMA journal_mode = WAL")
            async with self._write() as db:
                await self._upgrade(db)
            if self._reader is None and isinstance(self.path, Path):
                reader = await self._connect()
                self._reader = reader
                with self._translated():
                    await self._configure(reader)
                    await reader.execute("PRAGMA query_only = ON")  # a write through it is a bug: it fails
        except BaseException:
            await self.close()
            raise

    async def _configure(self, db: aiosqlite.Connection) -> None:
        await db.execute(f"PRAGMA busy_timeout = {round(self.busy_timeout * 1000)}")
        for pragma in _PRAGMAS:
            await db.execute(pragma)
        await db.create_function("mnemonite_text_hash", 1, text_hash, deterministic=True)

    async def _connect(self) -> aiosqlite.Connection:
        if isinstance(self.path, Path):
            faults.check_target(self.path)
        connection = aiosqlite.connect(str(self.path), isolation_level=None)
        # A program that forgets close() (or dies of an exception) must still exit; committed
        # transactions are in the WAL either way.
        worker = getattr(connection, "_thread", None)
        if worker is not None:
            worker.daemon = True
        try:
            with self._translated():
                return await connection
        except BaseException:
            # aiosqlite stops its thread after a failed connect, but only asynchronously: wait for it
            # while the event loop is alive, or it reports "Event loop is closed" at exit.
            if worker is not None and worker.is_alive():
                worker.join(timeout=5)
            raise

    def _translated(self) -> contextlib.AbstractContextManager[None]:
        return faults.translated(self.path, self.busy_timeout)

    async def _upgrade(self, db: aiosqlite.Connection) -> None:
        """Apply the shipped schema files this database has not seen yet, in order."""
        await db.execute(
            "CREATE TABLE IF NOT EXISTS schema_version (kind TEXT NOT NULL, version INTEGER NOT NULL,"
            " description TEXT NOT NULL, body TEXT, applied_at TEXT NOT NULL, PRIMARY KEY (kind, version))"
        )
        cursor = await db.execute("SELECT version FROM schema_version WHERE kind = 'base'")
        applied = {int(row[0]) for row in await cursor.fetchall()}
        current = max(applied, default=0)
        if current > SCHEMA_VERSION:
            raise SchemaVersionError(
                f"database schema version {current} is newer than this mnemonite ({SCHEMA_VERSION}); upgrade mnemonite"
            )
        # every shipped file not applied yet, in order: numbers need not be contiguous in a database's history
        for version, name in SCHEMA_FILES:
            if version not in applied:
                if version == VECTORS_ROWID and applied:
                    await _announce_vectors_move(db)
                for statement in _schema_statements(name):
                    await db.execute(statement)
                await db.execute(
                    "INSERT INTO schema_version (kind, version, description, applied_at) VALUES ('base', ?, ?, ?)",
                    (version, name, to_text(utcnow())),
                )

    async def close(self) -> None:
        # after the read or write in flight (another task's, or another thread's through SyncMemory): closed
        # mid-transaction, the connection kept the database's write lock for the rest of the process
        async with self._read_lock:
            if self._reader is not None:
                await self._reader.close()
                self._reader = None
        async with self._lock:
            if self._db is not None:
                await self._db.close()
                self._db = None

    @asynccontextmanager
    async def _read(self) -> AsyncIterator[aiosqlite.Connection]:
        """The reading connection (the writer for an in-memory database, which has one connection)."""
        if self._reader is None:
            async with self._writer() as db:
                yield db
            return
        async with self._read_lock:
            if self._reader is None:
                raise StoreError(CLOSED_STORE)
            with self._translated():
                yield self._reader

    @asynccontextmanager
    async def _writer(self) -> AsyncIterator[aiosqlite.Connection]:
        async with self._lock:
            if self._db is None:
                raise StoreError(CLOSED_STORE)
            with self._translated():
                yield self._db

    @asynccontextmanager
    async def _write(self) -> AsyncIterator[aiosqlite.Connection]:
        async with self._writer() as db:
            try:
                await db.execute("BEGIN IMMEDIATE")
                yield db
            except BaseException:
                # A task cancelled while awaiting BEGIN (the indexer, on close) still ran it on the
                # connection's thread: roll that back too. A BEGIN that failed left nothing to roll back.
                with contextlib.suppress(sqlite3.OperationalError):
                    await db.execute("ROLLBACK")
                raise
            await db.execute("COMMIT")

    _sql_read = _read  # what the shared methods (conflicts, search, graph) run on
    _sql_write = _write
    _sql_claim = _write  # one writer: rows commit in the order they are numbered

    async def health(self, *, deep: bool = False) -> StoreHealth:
        """Counts and settings; ``deep=True`` also runs SQLite's integrity check (reads every page)."""
        async with self._read() as db:
            counts = await _scalars(
                db,
                "SELECT (SELECT COUNT(*) FROM episodes), (SELECT COUNT(*) FROM facts),"
                " (SELECT COUNT(*) FROM facts WHERE superseded_at IS NULL),"
                " (SELECT COUNT(*) FROM delta_log WHERE applied_at IS NULL AND rejected_at IS NULL),"
                " (SELECT COUNT(*) FROM rules),"
                " (SELECT MAX(version) FROM schema_version WHERE kind = 'base')",
            )
            journal = await _scalars(db, "PRAGMA journal_mode")
            check = await _scalars(db, "PRAGMA quick_check") if deep else ("ok",)
        size = self.path.stat().st_size if isinstance(self.path, Path) and self.path.exists() else None
        return StoreHealth(
            ok=check[0] == "ok",
            integrity=str(check[0]) if deep else None,
            backend="sqlite",
            location=str(self.path),
            schema_version=counts[5],
            fragment_count=counts[0],
            fact_count=counts[1],
            active_fact_count=counts[2],
            pending_delta_count=counts[3],
            rule_count=counts[4],
            journal_mode=str(journal[0]),
            size_bytes=size,
        )

    async def migrate(self, plan: MigrationPlan) -> None:
        """Apply an add-nullable-column plan atomically; re-applying the same plan is a no-op."""
        async with self._write() as db:
            await sql_episodes.migrate(db, plan, utcnow())

    # -- episodes ----------------------------------------------------------------------------

    async def put(self, episode: Episode, *, user: str, session: str, agent: str) -> None:
        """Store one episode; putting the identical episode again is a no-op."""
        await self.put_many([episode.in_scope(user, session, agent)])

    async def put_many(self, episodes: Sequence[Episode], events: Sequence[SessionEvent] = ()) -> int:
        """Store episodes that carry their own scope, all or none; returns how many were new.

        ``events`` are logged to their sessions in the same transaction."""
        now = to_text(utcnow())
        rows = [episode_values(e, now) for e in episodes]
        async with self._write() as db:
            start = (await _scalars(db, _EPISODE_SEQ_FLOOR))[0]
            cursor = await db.executemany(_EPISODE_INSERT, [(start + i, *row) for i, row in enumerate(rows, 1)])
            # Full text for the whole batch in one statement, in the same transaction (twice a per-row trigger's speed).
            await db.execute(
                "INSERT INTO episodes_fts (rowid, content) SELECT seq, content FROM episodes WHERE seq > ?", (start,)
            )
            inserted = cursor.rowcount  # rows this statement inserted (ids already stored are skipped)
            if inserted < len(rows):
                await sql_episodes.check_duplicates(db, episodes)
            sources = {(row[1], row[7]) for row in rows if row[7]}
            if sources:
                await db.executemany(
                    "INSERT OR IGNORE INTO episode_sources (scope_key, source_node) VALUES (?, ?)", sources
                )
            await insert_events(db, events)
        return inserted

    async def get_episode(self, episode_id: str) -> Episode | None:
        async with self._read() as db:
            return await sql_episodes.get_episode(db, episode_id)

    async def recent(
        self,
        user: str,
        session: str | None = None,
        agent: str | None = None,
        *,
        limit: int = 10,
        order: RecentOrder = "timestamp",
        until: datetime | None = None,
    ) -> list[Episode]:
        """Newest first; omitted session/agent widen the read (see `mnemonite.scope`).

        ``order="accessed"`` sorts by last access (creation if never read) instead.
        """
        async with self._read() as db:
            return await sql_episodes.recent(db, user, session, agent, limit, order, until)

    async def touch_episodes(self, episode_ids: Sequence[str]) -> None:
        """Count one access to each episode, now."""
        if episode_ids:
            async with self._write() as db:
                await sql_episodes.touch(db, episode_ids, utcnow())

    # -- consolidation -----------------------------------------------------------------------

    async def consolidate(self, rule: ConsolidationRule, *, max_episodes: int = 50_000) -> list[MemoryDelta]:
        """Claim the rule's new episodes and return their deltas (also kept, unapplied, in the delta log)."""
        async with self._write() as db:
            deltas, _ = await sql_rules.claim(db, rule, max_episodes, utcnow(), FilterCompiler())
        return deltas

    async def consolidate_and_apply(self, rule: ConsolidationRule, *, max_episodes: int = 50_000) -> ConsolidationRun:
        """Claim, classify and apply in one transaction: a crash leaves the whole batch or none of it.

        A delta that cannot apply is undone alone and recorded as rejected; the others land.
        """
        async with self._write() as db:
            return await sql_rules.run(db, rule, max_episodes, utcnow(), FilterCompiler())

    async def save_rule(self, rule: ConsolidationRule) -> RuleState:
        """Register (or redefine) a rule; its progress is kept across redefinitions."""
        async with self._write() as db:
            await sql_rules.upsert_rule(db, rule, utcnow())
        return next(s for s in await self.rule_states() if s.rule.id == rule.id)

    async def remove_rule(self, rule_id: str) -> None:
        async with self._write() as db:
            await sql_rules.remove(db, rule_id)

    async def rule_states(self) -> list[RuleState]:
        async with self._read() as db:
            return await sql_rules.rule_states(db)

    # -- facts -------------------------------------------------------------------------------

    async def apply_delta(self, delta: MemoryDelta) -> DeltaRecord:
        return (await self.apply_deltas([delta]))[0]

    async def apply_deltas(self, deltas: Sequence[MemoryDelta], *, reject_conflicts: bool = False) -> list[DeltaRecord]:
        """Apply in order, in one transaction: if one fails, none is applied, unless ``reject_conflicts``
        records the failing ones as rejected and applies the rest."""
        now = utcnow()
        apply = sql_facts.apply_or_reject if reject_conflicts else sql_facts.apply_delta
        async with self._write() as db:
            return [await apply(db, d, now) for d in deltas]

    async def get_fact(self, fact_id: str) -> Fact | None:
        async with self._read() as db:
            return await sql_facts.get_fact(db, fact_id)

    async def facts(self, query: FactFilter) -> list[Fact]:
        async with self._read() as db:
            return await sql_facts.query_facts(db, query, utcnow())

    async def history(self, fact_id: str) -> list[Fact]:
        async with self._read() as db:
            return await sql_facts.history(db, fact_id)

    async def lineage(self, fact_id: str) -> list[Lineage]:
        async with self._read() as db:
            return await sql_facts.lineage(db, fact_id)

    async def delta_log(
        self, *, rule_id: str | None = None, pending: bool = False, limit: int = 100
    ) -> list[DeltaRecord]:
        async with self._read() as db:
            return await sql_facts.delta_log(db, rule_id=rule_id, pending=pending, limit=limit)

    # -- backups -------------------------------------------------------------------------------

    @asynccontextmanager
    async def snapshot(self) -> AsyncIterator[aiosqlite.Connection]:
        """One read transaction: every statement in it sees the same committed state (WAL) while others write."""
        async with self._read() as db:
            await db.execute("BEGIN")
            try:
                yield db
            finally:
                await db.execute("ROLLBACK")

    async def backup_file(self, target: Path) -> None:
        """Copy the database into the new file ``target`` with SQLite's online backup API.

        One step (``pages=-1``) is one read transaction: a stepwise copy restarts whenever another
        process commits, and may never finish under steady writers. Once closed, the copy is one file.
        """
        async with self._read() as db:
            copy = sqlite3.connect(target, check_same_thread=False)  # the backup runs on aiosqlite's thread
            try:
                await db.backup(copy)
            finally:
                copy.close()


async def _announce_vectors_move(db: aiosqlite.Connection) -> None:
    """Say that opening a database of schema 15 or older moves its vectors (once), when it holds many."""
    (count,) = await _scalars(db, "SELECT count(*) FROM vectors")
    if count >= VECTORS_MOVE_SAID:
        log.warning(
            "upgrading the database to schema %d: moving %s stored vectors to a table that takes half the space"
            " (once; about 3 s per 100,000 vectors)",
            VECTORS_ROWID,
            f"{count:,}",
        )


def _schema_statements(name: str) -> list[str]:
    """The statements of a shipped schema file (triggers included: split where SQLite says complete)."""
    text = resources.files("mnemonite.store").joinpath(f"schema/sqlite/{name}").read_text()
    statements, buffer = [], ""
    for line in text.splitlines(keepends=True):
        if not buffer and line.lstrip().startswith("--"):
            continue
        buffer += line
        if sqlite3.complete_statement(buffer):
            statements.append(buffer.strip())
            buffer = ""
    return statements


async def _scalars(db: aiosqlite.Connection, sql: str, params: tuple[Any, ...] = ()) -> tuple[Any, ...]:
    cursor = await db.execute(sql, params)
    row = await cursor.fetchone()
    assert row is not None
    return tuple(row)
