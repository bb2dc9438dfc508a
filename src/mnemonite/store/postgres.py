"""PostgreSQL backend (psycopg 3, async, connection pool, pgvector): the whole store protocol.

Many processes on many machines may write at once: every write is one transaction, ids are
unique in the table (a batch that repeats a stored id with other content is refused whole),
and a schema upgrade takes an advisory lock so concurrent bootstraps apply it once. Rows use
the same encodings as the SQLite store (fixed-width UTC text times, escaped scope keys
compared bytewise), so the two backends answer every read identically.

Needs the ``postgres`` extra: ``pip install 'mnemonite[postgres]'``.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import select
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine, Sequence
from contextlib import asynccontextmanager, nullcontext
from datetime import datetime
from importlib import resources
from typing import TYPE_CHECKING, Any, Concatenate, ParamSpec, TypeVar, cast

from mnemonite._time import to_text, utcnow
from mnemonite.errors import (
    ConfigurationError,
    DatabaseNotFoundError,
    SchemaVersionError,
    StoreBusyError,
    StoreError,
    StoreUnavailableError,
)
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
from mnemonite.models.search import Positions, RecordKind, SearchFilter
from mnemonite.store import sql_episodes, sql_facts, sql_rules, sql_search
from mnemonite.store.base import CLOSED_STORE, RecentOrder
from mnemonite.store.filter_sql import PostgresFilterCompiler
from mnemonite.store.rows import episode_values
from mnemonite.store.sql import TABLES, PgConnection
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
from mnemonite.store.sql_search import Matrix, SearchMethods
from mnemonite.store.sql_session import SessionMethods, insert_events
from mnemonite.store.sql_shared import SharedMethods
from mnemonite.store.sql_tools import ToolCallMethods
from mnemonite.store.sql_working import WorkingMethods

if TYPE_CHECKING:
    from psycopg import AsyncConnection
    from psycopg_pool import AsyncConnectionPool

__all__ = ["PostgresMemoryStore"]

log = logging.getLogger("mnemonite.store")

SCHEMA_FILES = (
    (1, "001_base.sql"),
    (2, "002_facts.sql"),
    (3, "003_rules.sql"),
    (4, "004_conflicts.sql"),
    (5, "005_search.sql"),
    (6, "006_graph.sql"),
    (7, "007_recent.sql"),
    (8, "008_episode_purges.sql"),
    (9, "009_agent_tiers.sql"),
    (10, "010_sensitivity_tool_calls.sql"),
    (11, "011_api_keys.sql"),
    (12, "012_consolidator.sql"),
    (13, "013_concepts.sql"),
    (14, "014_pending_facts.sql"),
    (15, "015_learned_graph.sql"),
)
SCHEMA_VERSION = SCHEMA_FILES[-1][0]
PGVECTOR_MIN = (0, 8)
_SCHEMA_LOCK = 0x6D656D73  # advisory lock id ("mems"): one bootstrap applies a schema upgrade at a time
# Every write transaction holds this lock shared; a consolidation claim, and a read of the positions that
# searches and the indexer resume from, hold it exclusively for a moment. Seqs are drawn at insert but
# commit out of order: under the exclusive lock no write is in flight, so every seq up to the highest
# visible one is committed (or never will be), and a position read then can never skip a row.
_SEQ_LOCK = 0x6D656D74
_EPISODE_INSERT = (
    "INSERT INTO episodes (id, scope_key, user_id, session_id, agent_id, content, timestamp, source_node, metadata,"
    " recorded_at, sensitivity) SELECT * FROM unnest(%s::text[], %s::text[], %s::text[], %s::text[], %s::text[],"
    " %s::text[], %s::text[], %s::text[], %s::text[], %s::text[], %s::text[]) ON CONFLICT (id) DO NOTHING RETURNING id"
)


def _drivers() -> tuple[Any, Any]:
    try:
        import pgvector.psycopg  # noqa: F401  (checked here: bootstrap registers its types)
        import psycopg
        import psycopg_pool
    except ImportError:
        raise ConfigurationError("the PostgreSQL backend needs: pip install 'mnemonite[postgres]'") from None
    return psycopg, psycopg_pool


async def _configure(connection: Any, lock_timeout_ms: int = 10_000) -> None:
    """A new pooled connection: numpy vectors travel in pgvector's binary format, every statement
    is planned for its own values, and a lock wait ends after the busy timeout.

    psycopg prepares a statement run five times; PostgreSQL may then reuse one generic plan for
    any values, and the best plan depends on them (how many rows a scope pattern or a time range
    selects). Measured at 100,000 episodes: the generic plan of the hits' read scanned the scope's
    index for 10 ms where the primary key answers in 0.4 ms.
    """
    from pgvector.psycopg import register_vector_async

    await register_vector_async(connection)
    await connection.execute("SET plan_cache_mode = force_custom_plan")
    await connection.execute(f"SET lock_timeout = {int(lock_timeout_ms)}")  # the busy timeout


async def _check_connection(connection: Any) -> None:
    """Ask the server (one round trip) only when the idle connection's socket has something to read.

    An idle connection receives nothing unless the server closed it or is about to (a restart,
    a crash, a terminated backend): then the pool's own check fails and the connection is replaced.
    """
    try:
        readable = bool(select.select([connection.fileno()], [], [], 0)[0])
    except (OSError, ValueError):
        readable = True
    if readable:
        _, psycopg_pool = _drivers()
        await psycopg_pool.AsyncConnectionPool.check_connection(connection)


T = TypeVar("T")
P = ParamSpec("P")
S = TypeVar("S", bound="PostgresMemoryStore")


def _retried(
    method: Callable[Concatenate[S, P], Coroutine[Any, Any, T]],
) -> Callable[Concatenate[S, P], Coroutine[Any, Any, T]]:
    """Run an idempotent store method again while the server is unreachable (``store.retries`` times)."""

    async def again(self: S, *args: P.args, **kwargs: P.kwargs) -> T:
        return await self._retrying(lambda: method(self, *args, **kwargs))

    return cast(Callable[Concatenate[S, P], Coroutine[Any, Any, T]], functools.wraps(method)(again))


class PostgresMemoryStore(
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
    """``PostgresMemoryStore("postgresql://user@host/db")``; ``pool_size`` connections at most; a server
    that gives no connection within ``timeout`` seconds counts as unreachable.

    Writes that are idempotent by design (episodes by id, deltas by delta id, claims by the
    rule's checkpoint, plans by version) are retried ``retries`` times, after 0.2 s, 0.5 s, 1 s, ...,
    when the server cannot be reached: a restart of the server costs a pause, not an error, and a
    batch whose commit was cut off is never applied twice. Then `StoreUnavailableError`.
    """

    def __init__(
        self, url: str, *, pool_size: int = 8, retries: int = 3, timeout: float = 5.0, busy_timeout: float = 10.0
    ) -> None:
        self.url = url
        self.busy_timeout = busy_timeout  # seconds a statement waits for a lock (lock_timeout), then StoreBusyError
        self._pool_size = pool_size
        self.retries = retries
        self.timeout = timeout  # seconds to wait for a connection before the server counts as unreachable
        self._pool: AsyncConnectionPool | None = None

    async def _retrying(self, work: Callable[[], Awaitable[T]]) -> T:
        """Run an idempotent write, again while the server is unreachable (see the class docstring)."""
        for attempt in range(self.retries + 1):
            try:
                return await work()
            except StoreUnavailableError:
                if attempt == self.retries:
                    raise
                delay = min(5.0, 0.2 * 2.5**attempt)
                log.warning("PostgreSQL unreachable; retrying in %.1f s (%d/%d)", delay, attempt + 1, self.retries)
                await asyncio.sleep(delay)
        raise AssertionError("unreachable")

    # -- lifecycle ---------------------------------------------------------------------------

    async def bootstrap(self, *, create: bool = True) -> None:
        """Connect and bring the schema up to date; idempotent, safe from many processes at once.

        ``create=False`` opens only a database that already holds a memory: one without mnemonite's
        tables raises `DatabaseNotFoundError` and is left as it was (no extension, no table).
        """
        psycopg, psycopg_pool = _drivers()
        if self._pool is None:
            if not create:
                await self._require_memory()
            await self._create_extension()
            pool = psycopg_pool.AsyncConnectionPool(
                self.url,
                min_size=1,
                max_size=self._pool_size,
                open=False,
                timeout=self.timeout,
                kwargs={"autocommit": True, "connect_timeout": max(1, round(self.timeout))},
                configure=functools.partial(_configure, lock_timeout_ms=round(self.busy_timeout * 1000)),
                check=_check_connection,  # a connection a restart broke is replaced
            )
            try:
                await pool.open(wait=True, timeout=self.timeout)
            except (psycopg.Error, psycopg_pool.PoolTimeout) as error:
                await pool.close()
                raise StoreUnavailableError(f"PostgreSQL: cannot connect to {_redacted(self.url)}: {error}") from None
            self._pool = pool
        try:
            async with self._write() as db:
                await self._upgrade(db)
        except BaseException:
            await self.close()
            raise

    async def _require_memory(self) -> None:
        psycopg, _ = _drivers()
        try:
            async with await psycopg.AsyncConnection.connect(
                self.url, autocommit=True, connect_timeout=max(1, round(self.timeout))
            ) as db:
                cursor = await db.execute("SELECT to_regclass('schema_version') IS NOT NULL")
                found = bool((await cursor.fetchone() or (False,))[0])
        except psycopg.OperationalError as error:
            raise StoreUnavailableError(f"PostgreSQL: cannot connect to {_redacted(self.url)}: {error}") from None
        if not found:
            raise DatabaseNotFoundError(
                f"no memory in {_redacted(self.url)}: the database has no mnemonite tables (nothing was created)"
            )

    async def _create_extension(self) -> None:
        """Make sure the database has pgvector (once, before pooled connections register its type)."""
        psycopg, _ = _drivers()
        try:
            async with await psycopg.AsyncConnection.connect(
                self.url, autocommit=True, connect_timeout=max(1, round(self.timeout))
            ) as db:
                cursor = await db.execute("SELECT 1 FROM pg_extension WHERE extname = 'vector'")
                if await cursor.fetchone() is None:
                    async with db.transaction():
                        await db.execute("SELECT pg_advisory_xact_lock(%s)", (_SCHEMA_LOCK,))
                        await db.execute("CREATE EXTENSION IF NOT EXISTS vector")
                cursor = await db.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'")
                version = str((await cursor.fetchone() or ("0",))[0])
        except psycopg.OperationalError as error:
            raise StoreUnavailableError(f"PostgreSQL: cannot connect to {_redacted(self.url)}: {error}") from None
        except psycopg.Error as error:
            raise ConfigurationError(
                f"PostgreSQL: the pgvector extension is missing and could not be created ({error});"
                " install pgvector on the server and run 'CREATE EXTENSION vector' as a superuser"
            ) from None
        if _version(version) < PGVECTOR_MIN:  # half-precision HNSW and iterative index scans
            raise ConfigurationError(
                f"PostgreSQL: pgvector {version} is too old; mnemonite needs 0.8 or newer"
                " (ALTER EXTENSION vector UPDATE after installing it on the server)"
            )

    async def _upgrade(self, db: AsyncConnection[Any]) -> None:
        await db.execute("SELECT pg_advisory_xact_lock(%s)", (_SCHEMA_LOCK,))
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
                await db.execute(resources.files("mnemonite.store").joinpath("schema/postgres", name).read_text())
                await db.execute(
                    "INSERT INTO schema_version (kind, version, description, applied_at) VALUES ('base', %s, %s, %s)",
                    (version, name, to_text(utcnow())),
                )

    async def drop_tables(self) -> None:
        """Drop every mnemonite table of the database, with all memories in it (``mnemonite demo --fresh``)."""
        psycopg, _ = _drivers()
        bookkeeping = ["consolidator_jobs", "consolidator_scan", "consolidator_usage", "consolidator_episodes"]
        tables = ", ".join(["schema_version", "api_keys", *bookkeeping, *(table for table, _ in TABLES)])
        try:
            async with await psycopg.AsyncConnection.connect(self.url, autocommit=True) as db:
                await db.execute(f"DROP TABLE IF EXISTS {tables} CASCADE")
        except psycopg.Error as error:
            message = f"PostgreSQL: cannot drop the tables of {_redacted(self.url)}: {error}"
            raise StoreUnavailableError(message) from None

    async def users(self) -> set[str]:
        """Every user whose records the database holds, read from each mnemonite table with a user column
        (``mnemonite demo --fresh`` checks them before `drop_tables`); nothing is created."""
        psycopg, _ = _drivers()
        try:
            async with await psycopg.AsyncConnection.connect(self.url, autocommit=True) as db:
                found = await db.execute(
                    "SELECT table_name FROM information_schema.columns WHERE column_name = 'user_id'"
                    " AND table_schema = current_schema()"
                )
                users: set[str] = set()
                for (table,) in await found.fetchall():
                    rows = await db.execute(f'SELECT DISTINCT user_id FROM "{table}"')  # a name from the catalogue
                    users |= {str(row[0]) for row in await rows.fetchall()}
                return users
        except psycopg.Error as error:
            message = f"PostgreSQL: cannot read the users of {_redacted(self.url)}: {error}"
            raise StoreUnavailableError(message) from None

    async def close(self) -> None:
        if self._pool is not None:
            await self._pool.close()
            self._pool = None

    @asynccontextmanager
    async def _read(self) -> AsyncIterator[AsyncConnection[Any]]:
        psycopg, psycopg_pool = _drivers()
        if self._pool is None:
            raise StoreError(CLOSED_STORE)
        try:
            async with self._pool.connection() as db:
                yield db
        except psycopg.errors.LockNotAvailable as error:
            raise StoreBusyError(
                f"PostgreSQL: {error}: a lock was held longer than the busy timeout ({self.busy_timeout:g} s);"
                " retry, or allow a longer wait with MemoryConfig.busy_timeout (MNEMONITE_BUSY_TIMEOUT, seconds)"
            ) from error
        except psycopg.errors.ProgramLimitExceeded as error:  # an OperationalError, but nothing is down
            raise StoreError(f"PostgreSQL refused a value too large to store or index: {error}") from error
        except (psycopg.OperationalError, psycopg_pool.PoolTimeout) as error:
            raise StoreUnavailableError(f"PostgreSQL is unreachable or went away: {error}") from error
        except psycopg.Error as error:  # e.g. a NUL character, which PostgreSQL text cannot hold
            raise StoreError(f"PostgreSQL refused the statement: {error}") from error

    @asynccontextmanager
    async def _transaction(self) -> AsyncIterator[AsyncConnection[Any]]:
        """One transaction: committed if the block ends normally, rolled back otherwise."""
        async with self._read() as db, db.transaction():
            yield db

    @asynccontextmanager
    async def _write(self) -> AsyncIterator[AsyncConnection[Any]]:
        """A write transaction, holding ``_SEQ_LOCK`` shared."""
        async with self._transaction() as db:
            await db.execute("SELECT pg_advisory_xact_lock_shared(%s)", (_SEQ_LOCK,))
            yield db

    @asynccontextmanager
    async def _settled(self, pipelined: bool = False) -> AsyncIterator[PgConnection]:
        """A transaction that no write overlaps: every seq up to the highest visible one is final.

        ``pipelined``: its statements are sent without waiting for each other's results (for a
        short read: the lock, the read and the commit cost two round trips, not four).
        """
        async with self._read() as db, db.pipeline() if pipelined else nullcontext(), db.transaction():
            await db.execute("SELECT pg_advisory_xact_lock(%s)", (_SEQ_LOCK,))
            yield PgConnection(db)

    @asynccontextmanager
    async def _sql_claim(self) -> AsyncIterator[PgConnection]:
        """The consolidator's job scans: no write in flight, so no row numbered lower commits later."""
        async with self._settled() as db:
            yield db

    @asynccontextmanager
    async def _sql_read(self) -> AsyncIterator[PgConnection]:
        async with self._read() as db:
            yield PgConnection(db)

    @asynccontextmanager
    async def _sql_write(self) -> AsyncIterator[PgConnection]:
        async with self._write() as db:
            yield PgConnection(db)

    @_retried
    async def health(self, *, deep: bool = False) -> StoreHealth:
        """Counts and settings; ``deep=True`` also verifies the episode indexes against the table (amcheck)."""
        integrity = await self._check_indexes() if deep else None
        async with self._read() as db:
            cursor = await db.execute(
                "SELECT (SELECT COUNT(*) FROM episodes),"
                " (SELECT MAX(version) FROM schema_version WHERE kind = 'base'),"
                " pg_database_size(current_database()), current_setting('synchronous_commit'),"
                " (SELECT COUNT(*) FROM facts), (SELECT COUNT(*) FROM facts WHERE superseded_at IS NULL),"
                " (SELECT COUNT(*) FROM delta_log WHERE applied_at IS NULL AND rejected_at IS NULL),"
                " (SELECT COUNT(*) FROM rules)"
            )
            row = await cursor.fetchone()
        assert row is not None
        return StoreHealth(
            ok=integrity in (None, "ok"),
            integrity=integrity,
            backend="postgresql",
            location=_redacted(self.url),
            schema_version=int(row[1]),
            fragment_count=int(row[0]),
            fact_count=int(row[4]),
            active_fact_count=int(row[5]),
            pending_delta_count=int(row[6]),
            rule_count=int(row[7]),
            journal_mode=f"wal (synchronous_commit={row[3]})",
            size_bytes=int(row[2]),
        )

    async def _check_indexes(self) -> str:
        """ "ok", or what amcheck found; says so when the extension cannot be used here."""
        async with self._read() as db:
            cursor = await db.execute("SELECT 1 FROM pg_available_extensions WHERE name = 'amcheck'")
            available = await cursor.fetchone() is not None
        if not available:
            return "not checked: the amcheck extension is not available on this server"
        try:
            async with self._write() as db:
                await db.execute("CREATE EXTENSION IF NOT EXISTS amcheck")
                cursor = await db.execute(
                    "SELECT i.indexrelid::regclass::text FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid"
                    " JOIN pg_am a ON a.oid = c.relam WHERE i.indrelid = 'episodes'::regclass AND a.amname = 'btree'"
                )
                for (index,) in await cursor.fetchall():
                    await db.execute("SELECT bt_index_check(%s::regclass, true)", (index,))
        except StoreError as error:
            return f"failed: {error}"
        return "ok"

    @_retried
    async def migrate(self, plan: MigrationPlan) -> None:
        """Apply an add-nullable-column plan atomically; re-applying the same plan is a no-op."""
        async with self._write() as db:
            await db.execute("SELECT pg_advisory_xact_lock(%s)", (_SCHEMA_LOCK,))
            await sql_episodes.migrate(PgConnection(db), plan, utcnow())

    # -- episodes ----------------------------------------------------------------------------

    async def put(self, episode: Episode, *, user: str, session: str, agent: str) -> None:
        """Store one episode; putting the identical episode again is a no-op."""
        await self.put_many([episode.in_scope(user, session, agent)])

    async def put_many(self, episodes: Sequence[Episode], events: Sequence[SessionEvent] = ()) -> int:
        """Store episodes that carry their own scope, all or none; returns how many were new.

        ``events`` are logged to their sessions in the same transaction."""
        now = to_text(utcnow())
        rows = [episode_values(e, now) for e in episodes]
        if not rows:
            return 0
        return await self._retrying(lambda: self._insert(episodes, rows, events))

    async def _insert(
        self, episodes: Sequence[Episode], rows: list[tuple[Any, ...]], events: Sequence[SessionEvent] = ()
    ) -> int:
        columns = [list(column) for column in zip(*rows, strict=True)]
        async with self._write() as db:
            cursor = await db.execute(_EPISODE_INSERT, columns)
            inserted = len(await cursor.fetchall())
            if inserted < len(rows):
                await sql_episodes.check_duplicates(PgConnection(db), episodes)
            sources = sorted({(row[1], row[7]) for row in rows if row[7]})
            if sources:
                await db.execute(
                    "INSERT INTO episode_sources (scope_key, source_node) SELECT * FROM unnest(%s::text[], %s::text[])"
                    " ON CONFLICT DO NOTHING",
                    ([key for key, _ in sources], [name for _, name in sources]),
                )
            await insert_events(PgConnection(db), events)
        return inserted

    @_retried
    async def get_episode(self, episode_id: str) -> Episode | None:
        async with self._read() as db:
            return await sql_episodes.get_episode(PgConnection(db), episode_id)

    @_retried
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
        """Newest first; omitted session/agent widen the read (see `mnemonite.scope`)."""
        async with self._read() as db:
            return await sql_episodes.recent(PgConnection(db), user, session, agent, limit, order, until)

    async def touch_episodes(self, episode_ids: Sequence[str]) -> None:
        """Count one access to each episode, now."""
        if episode_ids:
            async with self._write() as db:
                await sql_episodes.touch(PgConnection(db), episode_ids, utcnow())

    # -- consolidation -------------------------------------------------------------------------

    @_retried
    async def consolidate(self, rule: ConsolidationRule, *, max_episodes: int = 50_000) -> list[MemoryDelta]:
        """Claim the rule's new episodes and return their deltas (also kept, unapplied, in the delta log)."""
        async with self._settled() as db:
            deltas, _ = await sql_rules.claim(db, rule, max_episodes, utcnow(), PostgresFilterCompiler())
        return deltas

    async def consolidate_and_apply(self, rule: ConsolidationRule, *, max_episodes: int = 50_000) -> ConsolidationRun:
        """Claim, classify and apply in one transaction: a crash leaves the whole batch or none of it."""

        async def work() -> ConsolidationRun:
            async with self._settled() as db:
                return await sql_rules.run(db, rule, max_episodes, utcnow(), PostgresFilterCompiler())

        return await self._retrying(work)

    @_retried
    async def save_rule(self, rule: ConsolidationRule) -> RuleState:
        """Register (or redefine) a rule; its progress is kept across redefinitions."""
        async with self._write() as db:
            await sql_rules.upsert_rule(PgConnection(db), rule, utcnow())
        return next(s for s in await self.rule_states() if s.rule.id == rule.id)

    async def remove_rule(self, rule_id: str) -> None:
        async with self._write() as db:
            await sql_rules.remove(PgConnection(db), rule_id)

    @_retried
    async def rule_states(self) -> list[RuleState]:
        async with self._read() as db:
            return await sql_rules.rule_states(PgConnection(db))

    # -- facts ---------------------------------------------------------------------------------

    async def apply_delta(self, delta: MemoryDelta) -> DeltaRecord:
        return (await self.apply_deltas([delta]))[0]

    async def apply_deltas(self, deltas: Sequence[MemoryDelta], *, reject_conflicts: bool = False) -> list[DeltaRecord]:
        """Apply in order, in one transaction: if one fails, none is applied, unless ``reject_conflicts``
        records the failing ones as rejected and applies the rest."""
        apply = sql_facts.apply_or_reject if reject_conflicts else sql_facts.apply_delta

        async def work() -> list[DeltaRecord]:
            now = utcnow()
            async with self._write() as db:
                return [await apply(PgConnection(db), d, now) for d in deltas]

        return await self._retrying(work)

    @_retried
    async def get_fact(self, fact_id: str) -> Fact | None:
        async with self._read() as db:
            return await sql_facts.get_fact(PgConnection(db), fact_id)

    @_retried
    async def facts(self, query: FactFilter) -> list[Fact]:
        async with self._read() as db:
            return await sql_facts.query_facts(PgConnection(db), query, utcnow())

    @_retried
    async def history(self, fact_id: str) -> list[Fact]:
        async with self._read() as db:
            return await sql_facts.history(PgConnection(db), fact_id)

    @_retried
    async def lineage(self, fact_id: str) -> list[Lineage]:
        async with self._read() as db:
            return await sql_facts.lineage(PgConnection(db), fact_id)

    @_retried
    async def delta_log(
        self, *, rule_id: str | None = None, pending: bool = False, limit: int = 100
    ) -> list[DeltaRecord]:
        async with self._read() as db:
            return await sql_facts.delta_log(PgConnection(db), rule_id=rule_id, pending=pending, limit=limit)

    # -- search (the rest is shared: `SearchMethods`) --------------------------------------------

    async def positions(self, kind: RecordKind, models: Sequence[str] = ()) -> Positions:
        """As on SQLite, read while no write is in flight (see ``_SEQ_LOCK``): caches resume from it."""
        async with self._settled(pipelined=True) as db:
            return await sql_search.positions(db, kind, models)

    async def pending_texts(self, kind: RecordKind, model: str, limit: int) -> list[tuple[int, str]]:
        """As on SQLite, read while no write is in flight: the indexer's position never passes a late commit."""
        async with self._settled() as db:
            return await sql_search.pending_texts(db, kind, model, limit)

    async def nearest_rows(
        self, kind: RecordKind, model: str, dimensions: int, flt: SearchFilter, vector: Matrix, limit: int
    ) -> dict[int, float]:
        """seq -> cosine of the filter's ``limit`` rows closest to ``vector`` (the model's HNSW index)."""
        async with self._sql_read() as db:
            return await sql_search.nearest_rows(db, kind, model, dimensions, flt, vector, limit)

    async def rescored(
        self,
        kind: RecordKind,
        model: str,
        dimensions: int,
        seqs: Sequence[int],
        vector: Matrix,
        towards: Sequence[int],
        weight: float,
    ) -> dict[int, float]:
        """seq -> cosine of each of ``seqs`` with ``vector`` moved towards the ``towards`` rows' mean vector."""
        async with self._sql_read() as db:
            return await sql_search.rescored(db, kind, model, dimensions, seqs, vector, towards, weight)

    # -- backups -------------------------------------------------------------------------------

    @asynccontextmanager
    async def snapshot(self) -> AsyncIterator[PgConnection]:
        """One read-only REPEATABLE READ transaction: every statement in it sees the same committed state."""
        async with self._read() as db, db.transaction():
            await db.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
            yield PgConnection(db)


def _version(text: str) -> tuple[int, ...]:
    """``"0.8.1"`` -> (0, 8, 1); anything unparsable sorts first."""
    try:
        return tuple(int(part) for part in text.split("."))
    except ValueError:
        return (0,)


def _redacted(url: str) -> str:
    """The URL without its password, for messages and health."""
    head, at, tail = url.rpartition("@")
    if not at or ":" not in head.split("//", 1)[-1]:
        return url
    scheme, _, credentials = head.partition("//")
    return f"{scheme}//{credentials.split(':', 1)[0]}:***@{tail}"
