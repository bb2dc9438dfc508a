"""Text at rest, read and rewritten in place: what `Memory.scan_secrets` reads and masks.

Every table that holds text a person or a model wrote is listed with its text and JSON columns,
the records themselves and the audit rows that quote them (decisions, deltas, session events,
tool calls). A rewrite is one transaction per batch: the new text (full text follows by trigger or
generated column), the sensitivity raised, the vectors of the rewritten episodes and facts dropped
(the caller embeds the masked text again), and one audit row in the purge log per user, which also
tells every process's search caches to forget what they held.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from typing import Any, Final

import orjson

from mnemonite._time import utcnow
from mnemonite.models.conflict import PurgeRecord
from mnemonite.store import sql_conflicts
from mnemonite.store.sql import Connection

__all__ = ["TEXT_TABLES", "ScanMethods", "TextRow", "TextTable"]


@dataclass(frozen=True)
class TextTable:
    """A table's columns of text (``texts``) and of JSON holding text (``json``)."""

    name: str
    texts: tuple[str, ...]
    json: tuple[str, ...] = ()
    sensitivity: bool = False
    kind: str | None = None  # "episode" or "fact": the vectors to drop when rewritten
    id: str = "id"
    user: str = "user_id"


TEXT_TABLES: Final[dict[str, TextTable]] = {
    t.name: t
    for t in (
        TextTable("episodes", ("content",), ("metadata",), sensitivity=True, kind="episode"),
        TextTable("facts", ("text", "subject", "object", "summary"), ("payload",), sensitivity=True, kind="fact"),
        TextTable("session_messages", ("content",), ("metadata",), sensitivity=True),
        TextTable("blocks", ("value", "description"), sensitivity=True),
        TextTable("procedures", ("trigger_text",), ("steps",), sensitivity=True),
        TextTable("session_events", (), ("payload",), sensitivity=True),
        TextTable("fact_conflicts", ("candidate_text", "reason")),
        TextTable("delta_log", (), ("body",), id="delta_id", user="''"),
        TextTable("tool_calls", (), ("arguments", "result")),
    )
}


@dataclass
class TextRow:
    """One row's text columns (JSON ones parsed) as read, and as they are to be written."""

    seq: int
    id: str
    user: str
    values: dict[str, Any]
    sensitivity: str | None = None
    kinds: list[str] = field(default_factory=list)


async def text_rows(db: Connection, table: TextTable, after: int, limit: int) -> list[TextRow]:
    """Up to ``limit`` rows with ``seq`` after ``after``, in order."""
    columns = [*table.texts, *table.json, *(("sensitivity",) if table.sensitivity else ())]
    cursor = await db.execute(
        f"SELECT seq, {table.id}, {table.user}, {', '.join(columns)} FROM {table.name} WHERE seq > ? ORDER BY seq"
        " LIMIT ?",
        (after, limit),
    )
    found = []
    for row in await cursor.fetchall():
        values = dict(zip(columns, row[3:], strict=True))
        level = values.pop("sensitivity", None)
        for name in table.json:
            values[name] = orjson.loads(values[name]) if values[name] is not None else None
        found.append(TextRow(int(row[0]), str(row[1]), str(row[2]), values, level))
    return found


async def rewrite(db: Connection, table: TextTable, rows: Sequence[TextRow], reason: str) -> None:
    """Write the rows' new text (and sensitivity), drop their vectors, and audit it per user."""
    for row in rows:
        columns = [*table.texts, *table.json, *(("sensitivity",) if table.sensitivity else ())]
        values = [row.values[c] for c in table.texts] + [orjson.dumps(row.values[c]).decode() for c in table.json]
        values += [row.sensitivity] if table.sensitivity else []
        sets = ", ".join(f"{c} = ?" for c in columns)
        await db.execute(f"UPDATE {table.name} SET {sets} WHERE seq = ?", (*values, row.seq))
    if table.kind is not None and rows:
        marks = ", ".join("?" for _ in rows)
        await db.execute(
            f"DELETE FROM vectors WHERE kind = ? AND seq IN ({marks})", (table.kind, *(r.seq for r in rows))
        )
    for user in sorted({row.user for row in rows} - {""}):  # a delta's rewrite is its fact's: audited there
        ids = [row.id for row in rows if row.user == user]
        shown = ", ".join(ids[:20]) + (f" and {len(ids) - 20} more" if len(ids) > 20 else "")
        record = PurgeRecord(
            fact_ids=[], user=user, agent=None, purged_at=utcnow(),
            reason=f"{reason}: secrets masked in place in {table.name} {shown}",
        )  # fmt: skip
        await sql_conflicts.insert_purge(db, record)


class ScanMethods:
    """Reading and rewriting text at rest (mixed into a store)."""

    def _sql_read(self) -> AbstractAsyncContextManager[Connection]:
        raise NotImplementedError

    def _sql_write(self) -> AbstractAsyncContextManager[Connection]:
        raise NotImplementedError

    async def text_count(self, table: str) -> int:
        async with self._sql_read() as db:
            cursor = await db.execute(f"SELECT COUNT(*) FROM {TEXT_TABLES[table].name}")
            row = await cursor.fetchone()
            return int(row[0]) if row else 0

    async def text_rows(self, table: str, after: int, limit: int) -> list[TextRow]:
        async with self._sql_read() as db:
            return await text_rows(db, TEXT_TABLES[table], after, limit)

    async def rewrite_texts(self, table: str, rows: Sequence[TextRow], reason: str) -> None:
        async with self._sql_write() as db:
            await rewrite(db, TEXT_TABLES[table], rows, reason)
