"""What the SQL shared by the SQLite and PostgreSQL stores needs from a connection.

The shared modules (`sql_facts`) are written once, with ``?`` placeholders and SQL both
databases accept. aiosqlite connections fit as they are; `PgConnection` adapts a psycopg
connection: placeholders become ``%s`` and ``executemany`` runs on a cursor.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Mapping, Sequence
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Protocol
from weakref import WeakKeyDictionary

if TYPE_CHECKING:
    from psycopg import AsyncConnection, AsyncCursor

__all__ = ["TABLES", "Connection", "Cursor", "PgConnection", "integrity_errors", "is_postgres", "json_array_has"]


# Every table of a memory, parents before children (foreign keys), with its primary key.
TABLES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("episodes", ("seq",)),
    ("episode_sources", ("scope_key", "source_node")),
    ("facts", ("seq",)),
    ("fact_sources", ("episode_id", "fact_id")),
    ("lineage", ("new_id", "old_id", "relation")),
    ("delta_log", ("seq",)),
    ("rules", ("id",)),
    ("fact_conflicts", ("seq",)),
    ("purges", ("seq",)),
    ("embedders", ("model",)),
    ("index_state", ("kind", "model")),
    ("vectors", ("kind", "model", "seq")),
    ("entities", ("seq",)),
    ("edges", ("seq",)),
    ("fact_entities", ("entity_id", "fact_id", "role")),
    ("graph_build", ("scope_key",)),
    # the working, session, procedural and shared tiers
    ("blocks", ("seq",)),
    ("block_agents", ("block_id", "agent_id")),
    ("session_messages", ("seq",)),
    ("session_events", ("seq",)),
    ("procedures", ("seq",)),
    ("agent_groups", ("seq",)),
    ("group_members", ("group_id", "user_id", "agent_id")),
    ("shared_items", ("seq",)),
    # the memory tools' audit
    ("tool_calls", ("seq",)),
    ("concept_graphs", ("agent_id",)),
    ("concept_nodes", ("seq",)),
    ("concept_edges", ("seq",)),
    ("concept_sources", ("node_id", "record_id")),
    ("concept_versions", ("agent_id", "version")),
    ("record_tiers", ("kind", "record_id")),
)


class Cursor(Protocol):
    @property
    def rowcount(self) -> int: ...
    async def fetchone(self) -> Any: ...
    async def fetchall(self) -> Any: ...


class Connection(Protocol):
    async def execute(self, sql: str, parameters: Sequence[Any] = ...) -> Any: ...
    async def execute_fetchall(self, sql: str, parameters: Sequence[Any] = ...) -> Iterable[Any]: ...
    async def executemany(self, sql: str, parameters: Iterable[Sequence[Any]]) -> Any: ...


@lru_cache(maxsize=512)
def _pyformat(sql: str, marker: str = "%s") -> str:
    """``?`` placeholders to psycopg's ``%s`` (the shared SQL holds no other ``?`` and no literal ``%``);
    ``%b`` sends every parameter in binary (vectors: 20x faster than their text form)."""
    return sql.replace("%", "%%").replace("?", marker)


# What each psycopg connection was told with `PgConnection.set_session` (a pooled connection outlives its uses).
_SESSION_SETTINGS: WeakKeyDictionary[Any, dict[str, str]] = WeakKeyDictionary()


class PgConnection:
    """A psycopg connection speaking the shared SQL's dialect of the DB-API."""

    is_postgres = True

    def __init__(self, connection: AsyncConnection[Any]) -> None:
        self._connection = connection

    async def execute(
        self,
        sql: str,
        parameters: Sequence[Any] = (),
        *,
        prepare: bool | None = None,
        binary: bool = False,
        binary_parameters: bool = False,
    ) -> AsyncCursor[Any]:
        """``prepare=False``: plan with these values every time (a generic plan can miss a partial index);
        ``binary``: rows in binary format (vectors arrive as float32 arrays, not text);
        ``binary_parameters``: parameters in binary format (vectors leave as float32 arrays)."""
        cursor = self._connection.cursor()
        query = _pyformat(sql, "%b" if binary_parameters else "%s")
        await cursor.execute(query, tuple(parameters), prepare=prepare, binary=binary)
        return cursor

    async def execute_fetchall(self, sql: str, parameters: Sequence[Any] = ()) -> list[Any]:
        """Every row of one statement (aiosqlite's name: there it saves a second trip to its thread)."""
        cursor = await self.execute(sql, parameters)
        return await cursor.fetchall()

    async def set_session(self, settings: Mapping[str, str]) -> None:
        """Session settings (``SET``), sent only where this connection does not hold them yet.

        Remembered only when set outside a transaction block (a rollback would undo them).
        """
        held = _SESSION_SETTINGS.setdefault(self._connection, {})
        wanted = {name: value for name, value in settings.items() if held.get(name) != value}
        if not wanted:
            return
        calls = ", ".join("set_config(?, ?, false)" for _ in wanted)
        await self.execute(f"SELECT {calls}", [part for item in wanted.items() for part in item])
        from psycopg.pq import TransactionStatus

        if self._connection.info.transaction_status == TransactionStatus.IDLE:
            held.update(wanted)

    async def executemany(
        self, sql: str, parameters: Iterable[Sequence[Any]], *, binary_parameters: bool = False
    ) -> AsyncCursor[Any]:
        cursor = self._connection.cursor()
        rows = [tuple(row) for row in parameters]
        if rows:
            await cursor.executemany(_pyformat(sql, "%b" if binary_parameters else "%s"), rows)
        return cursor


def is_postgres(db: Any) -> bool:
    """Whether ``db`` speaks to PostgreSQL (a `PgConnection`), not SQLite."""
    return bool(getattr(db, "is_postgres", False))


def json_array_has(db: Any, column: str, count: int = 1) -> str:
    """A condition: the JSON array in ``column`` holds one of the values of the next ``count`` ``?``."""
    marks = ", ".join("?" for _ in range(count))
    if is_postgres(db):
        elements = f"jsonb_array_elements_text({column}::jsonb) AS j(value)"
        return f"EXISTS (SELECT 1 FROM {elements} WHERE j.value IN ({marks}))"
    return f"EXISTS (SELECT 1 FROM json_each({column}) WHERE value IN ({marks}))"


def integrity_errors() -> tuple[type[Exception], ...]:
    """The drivers' constraint-violation errors (unique, foreign key, check), for ``except``."""
    errors: list[type[Exception]] = [sqlite3.IntegrityError]
    try:
        from psycopg.errors import IntegrityError
    except ImportError:  # the postgres extra is not installed
        pass
    else:
        errors.append(IntegrityError)
    return tuple(errors)
