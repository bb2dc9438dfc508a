"""The session tier on the SQL stores: the message log, its full text, and the event log of each session.

Messages and events are read by exact (user, session, agent) column values. Full text is
FTS5 (SQLite) or a generated tsvector (PostgreSQL). Compaction only marks the turns it
summarised (``compacted_into``): no turn is ever deleted, so an export still holds each one.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractAsyncContextManager
from datetime import datetime
from typing import Any

import orjson

from mnemonite._time import from_text, to_text
from mnemonite.errors import InvalidInputError
from mnemonite.models.messages import EventKind, Message, SessionEvent
from mnemonite.store.rows import dumps
from mnemonite.store.sql import Connection, is_postgres
from mnemonite.store.sql_search import fts_match, tsquery

__all__ = ["SessionMethods", "insert_events", "insert_messages"]

_MESSAGE_COLUMNS = (
    "m.id, m.user_id, m.session_id, m.agent_id, m.role, m.content, m.important, m.metadata, m.sensitivity,"
    " m.timestamp, m.compacted_into"
)
_EVENT_COLUMNS = "id, user_id, session_id, agent_id, kind, name, payload, sensitivity, at"


def _message(row: Sequence[Any]) -> Message:
    return Message.trusted({
        "id": row[0], "user": row[1], "session": row[2], "agent": row[3], "role": row[4], "content": row[5],
        "important": bool(row[6]), "metadata": orjson.loads(row[7]), "sensitivity": row[8],
        "timestamp": from_text(row[9]), "compacted_into": row[10],
    })  # fmt: skip


def _event(row: Sequence[Any]) -> SessionEvent:
    return SessionEvent.trusted({
        "id": row[0], "user": row[1], "session": row[2], "agent": row[3], "kind": row[4], "name": row[5],
        "payload": orjson.loads(row[6]), "sensitivity": row[7], "at": from_text(row[8]),
    })  # fmt: skip


def _scope(user: str, session: str | None, agent: str | None, alias: str = "m") -> tuple[str, list[object]]:
    parts, params = [f"{alias}.user_id = ?"], [user]
    for column, value in (("session_id", session), ("agent_id", agent)):
        if value is not None:
            parts.append(f"{alias}.{column} = ?")
            params.append(value)
    return " AND ".join(parts), list(params)


async def insert_messages(db: Connection, messages: Sequence[Message]) -> None:
    """Messages that carry their user, session, agent and sensitivity."""
    await db.executemany(
        "INSERT INTO session_messages (id, user_id, session_id, agent_id, role, content, important, metadata,"
        " sensitivity, timestamp, compacted_into) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [
            (m.id, m.user, m.session, m.agent, m.role, m.content, int(m.important), dumps(m.metadata), m.sensitivity,
             to_text(m.timestamp), m.compacted_into)
            for m in messages
        ],
    )  # fmt: skip


_COMPARED = ("session", "agent", "role", "content")


async def _held_messages(db: Connection, messages: Sequence[Message]) -> set[str]:
    """The ids of ``messages`` stored already, each checked to be the very message (a retry); another user's id is
    taken, and neither described nor compared."""
    ids = list(dict.fromkeys(m.id for m in messages))
    if not ids:
        return set()
    cursor = await db.execute(
        "SELECT id, user_id, session_id, agent_id, role, content FROM session_messages"
        f" WHERE id IN ({', '.join('?' for _ in ids)})",
        ids,
    )
    stored = {row[0]: tuple(row[1:]) for row in await cursor.fetchall()}
    for m in messages:
        if m.id in stored:
            user, *rest = stored[m.id]
            if user != m.user:
                raise InvalidInputError(f"message id {m.id!r} is taken: choose another id")
            given = (m.session, m.agent, m.role, m.content)
            differ = [name for name, old, new in zip(_COMPARED, rest, given, strict=True) if old != new]
            if differ:
                raise InvalidInputError(f"message id {m.id!r} is already stored with another {', '.join(differ)}")
    return set(stored)


async def insert_events(db: Connection, events: Sequence[SessionEvent | None]) -> None:
    """Append events to their sessions' logs (None: nothing to log)."""
    rows = [
        (e.id, e.user, e.session, e.agent, e.kind, e.name, dumps(e.payload), e.sensitivity, to_text(e.at))
        for e in events
        if e is not None
    ]
    if rows:
        await db.executemany(f"INSERT INTO session_events ({_EVENT_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)


async def messages(
    db: Connection,
    user: str,
    session: str | None,
    agent: str | None,
    limit: int,
    compacted: bool,
    until: datetime | None = None,
) -> list[Message]:
    """The newest ``limit`` messages of the scope (at or before ``until`` when given) in time order;
    compacted turns only when asked.

    A summary carries the time of the last turn it replaced, so it stands where those turns stood."""
    clause, params = _scope(user, session, agent)
    if not compacted:
        clause += " AND m.compacted_into IS NULL"
    if until is not None:
        clause, params = f"{clause} AND m.timestamp <= ?", [*params, to_text(until)]
    rows = await db.execute_fetchall(
        f"SELECT {_MESSAGE_COLUMNS} FROM session_messages m WHERE {clause} ORDER BY m.timestamp DESC, m.seq DESC"
        " LIMIT ?",
        (*params, limit),
    )
    return [_message(row) for row in reversed(list(rows))]


async def search(
    db: Connection, user: str, session: str | None, agent: str | None, terms: Sequence[str], limit: int
) -> list[tuple[Message, float]]:
    """Messages matching any of ``terms``, best first (BM25 / ``ts_rank``), compacted turns included."""
    if not terms:
        return []
    clause, params = _scope(user, session, agent)
    if is_postgres(db):
        rows = await db.execute_fetchall(
            f"SELECT {_MESSAGE_COLUMNS}, ts_rank(m.content_tsv, q.query) AS score FROM session_messages m,"
            f" (SELECT {tsquery(terms)} AS query) q WHERE m.content_tsv @@ q.query AND {clause}"
            " ORDER BY score DESC, m.seq DESC LIMIT ?",
            (*terms, *params, limit),
        )
    else:
        rows = await db.execute_fetchall(
            f"SELECT {_MESSAGE_COLUMNS}, -bm25(session_messages_fts) AS score FROM session_messages_fts f"
            f" JOIN session_messages m ON m.seq = f.rowid WHERE session_messages_fts MATCH ? AND {clause}"
            " ORDER BY bm25(session_messages_fts), m.seq DESC LIMIT ?",
            (fts_match(terms), *params, limit),
        )
    return [(_message(row), float(row[11])) for row in rows]


async def events(
    db: Connection, user: str, session: str | None, agent: str | None, kinds: Sequence[EventKind] = ()
) -> list[SessionEvent]:
    """The scope's events in the order they happened."""
    clause, params = _scope(user, session, agent, alias="e")
    if kinds:
        clause += f" AND e.kind IN ({', '.join('?' for _ in kinds)})"
        params += list(kinds)
    rows = await db.execute_fetchall(
        f"SELECT {', '.join('e.' + c.strip() for c in _EVENT_COLUMNS.split(','))} FROM session_events e"
        f" WHERE {clause} ORDER BY e.seq",
        params,
    )
    return [_event(row) for row in rows]


async def mark_compacted(db: Connection, user: str, session: str, ids: Sequence[str], summary_id: str) -> None:
    """Mark the summarised turns (of this user and session only)."""
    for start in range(0, len(ids), 500):
        chunk = list(ids[start : start + 500])
        await db.execute(
            "UPDATE session_messages SET compacted_into = ? WHERE user_id = ? AND session_id = ?"
            f" AND id IN ({', '.join('?' for _ in chunk)})",
            (summary_id, user, session, *chunk),
        )


async def has_session(db: Connection, user: str, session: str) -> bool:
    rows = await db.execute_fetchall(
        "SELECT 1 FROM session_events WHERE user_id = ? AND session_id = ? LIMIT 1", (user, session)
    )
    return bool(list(rows))


class SessionMethods:
    """The session methods of a store (mixed in); each write is one transaction with its events."""

    def _sql_read(self) -> AbstractAsyncContextManager[Connection]:
        raise NotImplementedError

    def _sql_write(self) -> AbstractAsyncContextManager[Connection]:
        raise NotImplementedError

    async def push_messages(self, messages: Sequence[Message], events: Sequence[SessionEvent]) -> None:
        """Insert messages with their events; a message whose id is stored already is a retry, written once."""
        async with self._sql_write() as db:
            held = await _held_messages(db, messages)
            fresh = [m for m in messages if m.id not in held]
            await insert_messages(db, fresh)
            await insert_events(db, [e for e in events if e.payload.get("message", {}).get("id") not in held])

    async def log_events(self, events: Sequence[SessionEvent]) -> None:
        async with self._sql_write() as db:
            await insert_events(db, events)

    async def messages(
        self,
        user: str,
        session: str | None,
        agent: str | None,
        *,
        limit: int,
        compacted: bool = False,
        until: datetime | None = None,
    ) -> list[Message]:
        async with self._sql_read() as db:
            return await messages(db, user, session, agent, limit, compacted, until)

    async def search_messages(
        self, user: str, session: str | None, agent: str | None, terms: Sequence[str], limit: int
    ) -> list[tuple[Message, float]]:
        async with self._sql_read() as db:
            return await search(db, user, session, agent, terms, limit)

    async def session_events(
        self, user: str, session: str | None, agent: str | None, kinds: Sequence[EventKind] = ()
    ) -> list[SessionEvent]:
        async with self._sql_read() as db:
            return await events(db, user, session, agent, kinds)

    async def compact_messages(self, summary: Message, ids: Sequence[str], event: SessionEvent) -> None:
        assert summary.user is not None and summary.session is not None
        async with self._sql_write() as db:
            await insert_messages(db, [summary])
            await mark_compacted(db, summary.user, summary.session, ids, summary.id)
            await insert_events(db, [event])
