"""Replaying a session's exported events into a memory: each event is stored as it was, and the
writes it records are applied again (the records carry their ids and times, so the state is the same)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from contextlib import AbstractAsyncContextManager
from typing import Any

from mnemonite._time import to_text, utcnow
from mnemonite.errors import InvalidInputError
from mnemonite.models import Episode
from mnemonite.models.blocks import Block
from mnemonite.models.messages import Message, SessionEvent
from mnemonite.models.procedures import Procedure
from mnemonite.models.shared import Group, SharedItem
from mnemonite.store import sql_procedural, sql_session, sql_shared, sql_working
from mnemonite.store.rows import episode_values
from mnemonite.store.sql import Connection, is_postgres

__all__ = ["REPLAYED", "ReplayMethods", "replay"]

Apply = Callable[[Connection, dict[str, Any]], Awaitable[None]]
_EPISODE_INSERT = (
    "INSERT INTO episodes (id, scope_key, user_id, session_id, agent_id, content, timestamp, source_node,"
    " metadata, recorded_at, sensitivity) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING"
)


async def _message(db: Connection, payload: dict[str, Any]) -> None:
    await sql_session.insert_messages(db, [Message.model_validate(payload["message"])])


async def _compact(db: Connection, payload: dict[str, Any]) -> None:
    summary = Message.model_validate(payload["summary"])
    assert summary.user is not None and summary.session is not None
    await sql_session.insert_messages(db, [summary])
    await sql_session.mark_compacted(db, summary.user, summary.session, payload["compacted"], summary.id)


async def _procedure(db: Connection, payload: dict[str, Any]) -> None:
    await sql_procedural.upsert(db, Procedure.model_validate(payload["procedure"]))


async def _unprocedure(db: Connection, payload: dict[str, Any]) -> None:
    await sql_procedural.delete(db, payload["procedure"]["id"])


async def _group(db: Connection, payload: dict[str, Any]) -> None:
    await sql_shared.restore_group(db, Group.model_validate(payload["group"]))


async def _share(db: Connection, payload: dict[str, Any]) -> None:
    await sql_shared.share(db, SharedItem.model_validate(payload["item"]))


async def _unshare(db: Connection, payload: dict[str, Any]) -> None:
    await sql_shared.unshare(db, payload["item"]["id"])


async def _episodes(db: Connection, payload: dict[str, Any]) -> None:
    """The episodes a flush promoted; one already stored (the same id) is left as it is."""
    now = to_text(utcnow())
    for episode in [Episode.model_validate(e) for e in payload["episodes"]]:
        row = episode_values(episode, now)
        cursor = await db.execute(_EPISODE_INSERT, row)
        if cursor.rowcount and not is_postgres(db):  # SQLite's episode full text is written by the store, not a trigger
            await db.execute(
                "INSERT INTO episodes_fts (rowid, content) SELECT seq, content FROM episodes WHERE id = ?",
                (episode.id,),
            )
        if row[7]:
            await db.execute(
                "INSERT INTO episode_sources (scope_key, source_node) VALUES (?, ?) ON CONFLICT DO NOTHING",
                (row[1], row[7]),
            )


async def _block(db: Connection, payload: dict[str, Any]) -> None:
    await sql_working.restore(db, Block.model_validate(payload["block"]))


# What each write event does again (events of other names are only stored).
REPLAYED: dict[str, Apply] = {
    "session.push": _message,
    "session.compact": _compact,
    "session.flush": _episodes,
    "procedural.define": _procedure,
    "procedural.remove": _unprocedure,
    "shared.create": _group,
    "shared.add_member": _group,
    "shared.remove_member": _group,
    "shared.attach": _share,
    "shared.detach": _unshare,
    **{f"working.{verb}": _block for verb in ("define", "write", "append", "patch", "attach", "detach")},
}


async def replay(db: Connection, events: Sequence[SessionEvent]) -> None:
    """Store the events and apply the writes they record, in order."""
    for event in events:
        apply = REPLAYED.get(event.name)
        if apply is not None:
            try:
                await apply(db, event.payload)
            except (KeyError, TypeError) as error:
                raise InvalidInputError(f"event {event.id} ({event.name}) has no usable record: {error}") from None
        await sql_session.insert_events(db, [event])


class ReplayMethods:
    """`replay_events` of a store (mixed in): one transaction."""

    def _sql_write(self) -> AbstractAsyncContextManager[Connection]:
        raise NotImplementedError

    async def replay_events(self, events: Sequence[SessionEvent]) -> None:
        async with self._sql_write() as db:
            await replay(db, events)
