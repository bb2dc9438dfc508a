"""The audit log of memory tool calls on the SQL stores: one row per call, appended, read newest first."""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractAsyncContextManager

import orjson

from mnemonite._time import from_text, to_text
from mnemonite.errors import MemoryScopeError
from mnemonite.models.messages import SessionEvent
from mnemonite.models.tools import ToolCall
from mnemonite.store.rows import dumps
from mnemonite.store.sql import Connection
from mnemonite.store.sql_session import insert_events

__all__ = ["ToolCallMethods"]

_COLUMNS = (
    "id, user_id, agent_id, session_id, tool, guard, side_effect, arguments, outcome, error_code, result,"
    " called_at, duration_ms"
)
_INSERT = f"INSERT INTO tool_calls ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"


def _values(call: ToolCall) -> tuple[object, ...]:
    return (
        call.id, call.user, call.agent, call.session, call.tool, call.guard, call.side_effect, dumps(call.arguments),
        call.outcome, call.error_code, dumps(call.result), to_text(call.called_at), call.duration_ms,
    )  # fmt: skip


def _row(row: Sequence[object]) -> ToolCall:
    return ToolCall(
        id=row[0], user=row[1], agent=row[2], session=row[3], tool=row[4], guard=row[5], side_effect=row[6],
        arguments=orjson.loads(str(row[7])), outcome=row[8], error_code=row[9], result=orjson.loads(str(row[10])),
        called_at=from_text(str(row[11])), duration_ms=row[12],
    )  # fmt: skip


class ToolCallMethods:
    """The tool-call audit of a store (mixed in)."""

    def _sql_write(self) -> AbstractAsyncContextManager[Connection]:
        raise NotImplementedError

    def _sql_read(self) -> AbstractAsyncContextManager[Connection]:
        raise NotImplementedError

    async def log_tool_calls(self, calls: Sequence[ToolCall], events: Sequence[SessionEvent] = ()) -> None:
        """Append audit rows, and the session events of calls made in a session, in one transaction."""
        if calls or events:
            async with self._sql_write() as db:
                await db.executemany(_INSERT, [_values(call) for call in calls])
                await insert_events(db, events)

    async def tool_calls(self, user: str, agent: str | None, *, limit: int) -> list[ToolCall]:
        """The newest audit rows of a user (and agent), newest first."""
        if limit < 1:
            raise MemoryScopeError(f"limit must be >= 1, got {limit}")
        where, params = ("user_id = ?", [user]) if agent is None else ("user_id = ? AND agent_id = ?", [user, agent])
        async with self._sql_read() as db:
            cursor = await db.execute(
                f"SELECT {_COLUMNS} FROM tool_calls WHERE {where} ORDER BY seq DESC LIMIT ?", (*params, limit)
            )
            return [_row(row) for row in await cursor.fetchall()]
