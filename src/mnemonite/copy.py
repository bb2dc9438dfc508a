"""Move a whole memory between backends: ``mnemonite copy sqlite:///a.db postgresql://host/db``.

Every table is copied row for row, ``seq`` numbers included, so the indexer's positions,
the rules' checkpoints and the vectors (keyed by seq) stay valid as they are. The
destination must be empty; migration plans applied to the source are applied to it first.
Each chunk is one transaction on the destination; at the end the row counts of every
table are compared, and full text and vector indexes are (re)built on the destination.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from mnemonite.errors import InvalidInputError, StoreError
from mnemonite.models import MigrationPlan
from mnemonite.store import Store, open_store
from mnemonite.store.sql import TABLES, Connection, PgConnection, is_postgres
from mnemonite.store.sql_search import set_embedder, vector_bytes, vector_column

__all__ = ["CopyReport", "copy_memory"]

GENERATED = {"content_tsv", "text_tsv", "search_tsv"}  # PostgreSQL computes these itself
VECTOR_COLUMNS = {"vector", "embedding"}  # the same vector: float32 BLOB in SQLite, pgvector in PostgreSQL
CHUNK = 5_000


@dataclass(frozen=True)
class CopyReport:
    """Rows per table in the source and in the destination after the copy (equal when it succeeded)."""

    source: dict[str, int]
    destination: dict[str, int]

    @property
    def ok(self) -> bool:
        return self.source == self.destination


async def copy_memory(
    source_url: str, destination_url: str, *, progress: Callable[[str, int, int], None] | None = None
) -> CopyReport:
    """Copy every row of the memory at ``source_url`` into the empty one at ``destination_url``.

    ``progress(table, rows_done, rows_in_table)`` is called after each chunk. Raises
    `InvalidInputError` when the destination holds memories already (nothing is written).
    """
    if source_url == destination_url:
        raise InvalidInputError("the source and destination of a copy must differ")
    source = await open_store(source_url, create=False)
    try:
        destination = await open_store(destination_url)
        try:
            return await _copy(source, destination, progress)
        finally:
            await destination.close()
    finally:
        await source.close()


async def _copy(source: Store, destination: Store, progress: Callable[[str, int, int], None] | None) -> CopyReport:
    before = await _counts(destination)
    if any(before.values()):
        taken = ", ".join(f"{table}: {n}" for table, n in before.items() if n)
        raise InvalidInputError(f"the destination is not empty ({taken}); copy into a new database")
    counts = await _counts(source)
    async with _reading(source) as db:
        cursor = await db.execute("SELECT body FROM schema_version WHERE kind = 'plan' ORDER BY version")
        plans = [MigrationPlan.model_validate_json(row[0]) for row in await cursor.fetchall()]
    for plan in plans:
        await destination.migrate(plan)
    for table, key in TABLES:
        columns = await _shared_columns(source, destination, table)
        done = 0
        async for rows in _chunks(source, table, columns, key):
            async with _writing(destination) as db:
                await _insert(db, table, columns, rows)
            done += len(rows)
            if progress is not None:
                progress(table, done, counts[table])
        if progress is not None and not done:
            progress(table, 0, 0)
    async with _writing(destination) as db:
        await _finish(db)
        for model, dimensions, role in await _embedders(db):
            await set_embedder(db, model, dimensions, role)  # PostgreSQL: builds the model's HNSW indexes now
    return CopyReport(counts, await _counts(destination))


def _reading(store: Store) -> Any:
    return store._sql_read()  # type: ignore[attr-defined]  # both stores have it: the shared SQL's connection


def _writing(store: Store) -> Any:
    return store._sql_write()  # type: ignore[attr-defined]


async def _counts(store: Store) -> dict[str, int]:
    async with _reading(store) as db:
        cursor = await db.execute("SELECT " + ", ".join(f"(SELECT COUNT(*) FROM {table})" for table, _ in TABLES))
        row = await cursor.fetchone()
    return {table: int(n) for (table, _), n in zip(TABLES, row, strict=True)}


async def _columns(db: Connection, table: str) -> list[str]:
    if is_postgres(db):
        cursor = await db.execute(
            "SELECT column_name FROM information_schema.columns WHERE table_schema = current_schema()"
            " AND table_name = ? ORDER BY ordinal_position",
            (table,),
        )
    else:
        cursor = await db.execute("SELECT name FROM pragma_table_info(?)", (table,))
    return [str(row[0]) for row in await cursor.fetchall()]


async def _shared_columns(source: Store, destination: Store, table: str) -> list[str]:
    """The source's columns, in its order (the vector column under its source name); each must exist there."""
    async with _reading(source) as db:
        have = await _columns(db, table)
    async with _reading(destination) as db:
        want = set(await _columns(db, table)) | VECTOR_COLUMNS
    missing = [c for c in have if c not in want and c not in GENERATED]
    if missing:
        raise StoreError(f"the destination's {table} table has no column {missing[0]!r}; upgrade mnemonite there")
    return [c for c in have if c not in GENERATED]


async def _chunks(store: Store, table: str, columns: list[str], key: tuple[str, ...]) -> AsyncIterator[list[Any]]:
    """The table's rows in primary-key order, ``CHUNK`` at a time (the vector column as float32 bytes)."""
    after: tuple[Any, ...] | None = None
    while True:
        async with _reading(store) as db:
            selected = [vector_column(db, "t") if c in VECTOR_COLUMNS else f"t.{c}" for c in columns]
            where = f"WHERE ({', '.join('t.' + k for k in key)}) > ({', '.join('?' for _ in key)})" if after else ""
            cursor = await db.execute(
                f"SELECT {', '.join(selected)} FROM {table} t {where}"
                f" ORDER BY {', '.join('t.' + k for k in key)} LIMIT ?",
                (*(after or ()), CHUNK),
            )
            rows = [list(row) for row in await cursor.fetchall()]
        if not rows:
            return
        at = [columns.index(k) for k in key]
        after = tuple(rows[-1][i] for i in at)
        for i, column in enumerate(columns):
            if column in VECTOR_COLUMNS:
                for row in rows:
                    row[i] = vector_bytes(row[i])
        yield rows
        if len(rows) < CHUNK:
            return


async def _insert(db: Connection, table: str, columns: Sequence[str], rows: list[list[Any]]) -> None:
    postgres = is_postgres(db)
    names = [("embedding" if postgres else "vector") if c in VECTOR_COLUMNS else c for c in columns]
    if postgres:
        for i, column in enumerate(columns):
            if column in VECTOR_COLUMNS:
                for row in rows:
                    row[i] = np.frombuffer(row[i], dtype=np.float32)
    override = " OVERRIDING SYSTEM VALUE" if postgres and "seq" in columns and table != "vectors" else ""
    sql = f"INSERT INTO {table} ({', '.join(names)}){override} VALUES ({', '.join('?' for _ in names)})"
    if isinstance(db, PgConnection):  # vectors leave as float32 arrays, not text
        await db.executemany(sql, rows, binary_parameters=table == "vectors")
    else:
        await db.executemany(sql, rows)


async def _finish(db: Connection) -> None:
    """Indexes the row-by-row copy does not keep: FTS5 of episodes (SQLite), identity counters (PostgreSQL)."""
    if is_postgres(db):
        for table, key in TABLES:
            if key == ("seq",):
                await db.execute(
                    f"SELECT setval(pg_get_serial_sequence('{table}', 'seq'), COALESCE(MAX(seq), 0) + 1, false)"
                    f" FROM {table}"
                )
    else:
        await db.execute("INSERT INTO episodes_fts (episodes_fts) VALUES ('rebuild')")


async def _embedders(db: Connection) -> list[tuple[str, int, str]]:
    cursor = await db.execute("SELECT model, dimensions, role FROM embedders")
    return [(str(r[0]), int(r[1]), str(r[2])) for r in await cursor.fetchall()]
