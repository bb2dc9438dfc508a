"""Working-memory blocks on the SQL stores (``?`` placeholders, see `mnemonite.store.sql`).

A block belongs to a (user, agent), its owner; ``block_agents`` says which agents of the same
user see it, and keeps a label unique among the blocks one agent sees. Every read names the
user and the agent by exact column values. Edits read, check and write in one transaction
(PostgreSQL: the row is locked first), so two agents editing one block never lose a write.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import AbstractAsyncContextManager
from datetime import datetime
from typing import Any

from mnemonite._time import from_text, to_text
from mnemonite.errors import BlockConflictError, NotFoundError
from mnemonite.models.blocks import Block
from mnemonite.models.messages import SessionEvent
from mnemonite.store.sql import Connection, integrity_errors, is_postgres
from mnemonite.store.sql_session import insert_events

__all__ = ["BlockEdit", "BlockLog", "WorkingMethods"]

BlockEdit = Callable[[Block], Block]
BlockLog = Callable[[Block], SessionEvent | None]

_COLUMNS = (
    "b.id, b.user_id, b.agent_id, b.label, b.value, b.description, b.char_limit, b.token_limit, b.read_only,"
    " b.sensitivity, b.created_at, b.updated_at"
)


def _block(row: Sequence[Any], agents: Sequence[str]) -> Block:
    return Block.trusted({
        "id": row[0], "user": row[1], "agent": row[2], "label": row[3], "value": row[4], "description": row[5],
        "limit": int(row[6]), "token_limit": None if row[7] is None else int(row[7]), "read_only": bool(row[8]),
        "sensitivity": row[9], "agents": tuple(agents), "created_at": from_text(row[10]),
        "updated_at": from_text(row[11]),
    })  # fmt: skip


async def _with_agents(db: Connection, rows: Sequence[Sequence[Any]]) -> list[Block]:
    ids = [str(row[0]) for row in rows]
    agents: dict[str, list[str]] = {block_id: [] for block_id in ids}
    for start in range(0, len(ids), 500):
        chunk = ids[start : start + 500]
        found = await db.execute_fetchall(
            f"SELECT block_id, agent_id FROM block_agents WHERE block_id IN ({', '.join('?' for _ in chunk)})"
            " ORDER BY attached_at, agent_id",
            chunk,
        )
        for block_id, agent in found:
            agents[str(block_id)].append(str(agent))
    return [_block(row, agents[str(row[0])]) for row in rows]


async def blocks(db: Connection, user: str, agent: str | None, label: str | None = None) -> list[Block]:
    """The blocks an agent sees (every block of the user when ``agent`` is None), oldest first."""
    if agent is None:
        sql, params = f"SELECT {_COLUMNS} FROM blocks b WHERE b.user_id = ?", [user]
        if label is not None:
            sql, params = sql + " AND b.label = ?", [*params, label]
    else:
        sql = (
            f"SELECT {_COLUMNS} FROM block_agents a JOIN blocks b ON b.id = a.block_id"
            " WHERE a.user_id = ? AND a.agent_id = ?"
        )
        params = [user, agent]
        if label is not None:
            sql, params = sql + " AND a.label = ?", [*params, label]
    return await _with_agents(db, list(await db.execute_fetchall(sql + " ORDER BY b.seq", params)))


async def _one(db: Connection, sql: str, params: Sequence[object]) -> Block | None:
    rows = list(await db.execute_fetchall(sql + (" FOR UPDATE OF b" if is_postgres(db) else ""), params))
    return (await _with_agents(db, rows))[0] if rows else None


async def visible(db: Connection, user: str, agent: str, label: str) -> Block:
    """The block labelled ``label`` that the agent sees, locked for an edit; NotFoundError otherwise."""
    found = await _one(
        db,
        f"SELECT {_COLUMNS} FROM block_agents a JOIN blocks b ON b.id = a.block_id"
        " WHERE a.user_id = ? AND a.agent_id = ? AND a.label = ?",
        (user, agent, label),
    )
    if found is None:
        raise NotFoundError(f"agent {agent!r} sees no block labelled {label!r}; define or attach it first")
    return found


async def owned(db: Connection, user: str, agent: str, label: str) -> Block | None:
    """The agent's own block labelled ``label`` (attached or not), locked for an edit."""
    return await _one(
        db,
        f"SELECT {_COLUMNS} FROM blocks b WHERE b.user_id = ? AND b.agent_id = ? AND b.label = ?",
        (user, agent, label),
    )


def _values(block: Block) -> tuple[Any, ...]:
    return (
        block.value, block.description, block.limit, block.token_limit, int(block.read_only), block.sensitivity,
        to_text(block.updated_at),
    )  # fmt: skip


async def insert(db: Connection, block: Block) -> None:
    """A new block and its attachments; a taken label raises `BlockConflictError`, inserting nothing."""
    try:
        await db.execute(
            "INSERT INTO blocks (id, user_id, agent_id, label, value, description, char_limit, token_limit, read_only,"
            " sensitivity, updated_at, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (block.id, block.user, block.agent, block.label, *_values(block), to_text(block.created_at)),
        )
        await _attach_all(db, block, block.agents, block.created_at)
    except integrity_errors():
        raise BlockConflictError(
            f"a block labelled {block.label!r} already exists for agent {block.agent!r};"
            " write or patch it, or define it with replace=True"
        ) from None


async def update(db: Connection, block: Block) -> None:
    """Store a block's value, limits and flags (its id, owner and label stay)."""
    await db.execute(
        "UPDATE blocks SET value = ?, description = ?, char_limit = ?, token_limit = ?, read_only = ?,"
        " sensitivity = ?, updated_at = ? WHERE id = ?",
        (*_values(block), block.id),
    )


async def _attach_all(db: Connection, block: Block, agents: Sequence[str], at: datetime) -> None:
    await db.executemany(
        "INSERT INTO block_agents (block_id, user_id, agent_id, label, attached_at) VALUES (?, ?, ?, ?, ?)",
        [(block.id, block.user, agent, block.label, to_text(at)) for agent in agents],
    )


async def attach(db: Connection, block: Block, agent: str, at: datetime) -> Block:
    """Show the block to another agent of its user; a label that agent sees already raises."""
    if agent in block.agents:
        return block
    try:
        await _attach_all(db, block, [agent], at)
    except integrity_errors():
        raise BlockConflictError(f"agent {agent!r} already sees a block labelled {block.label!r}") from None
    return block.model_copy(update={"agents": (*block.agents, agent)})


async def detach(db: Connection, block: Block, agent: str) -> Block:
    """Hide the block from an agent (the block stays, with its owner)."""
    if agent not in block.agents:
        raise NotFoundError(f"block {block.label!r} is not attached to agent {agent!r}")
    await db.execute("DELETE FROM block_agents WHERE block_id = ? AND agent_id = ?", (block.id, agent))
    return block.model_copy(update={"agents": tuple(a for a in block.agents if a != agent)})


async def restore(db: Connection, block: Block) -> None:
    """Make the stored block exactly ``block`` (a replayed state): row and attachments."""
    await db.execute("DELETE FROM block_agents WHERE block_id = ?", (block.id,))
    await db.execute("DELETE FROM blocks WHERE id = ?", (block.id,))
    await insert(db, block)


class WorkingMethods:
    """The block methods of a store (mixed in); each write is one transaction with its session event."""

    def _sql_read(self) -> AbstractAsyncContextManager[Connection]:
        raise NotImplementedError

    def _sql_write(self) -> AbstractAsyncContextManager[Connection]:
        raise NotImplementedError

    async def blocks(self, user: str, agent: str | None, label: str | None = None) -> list[Block]:
        async with self._sql_read() as db:
            return await blocks(db, user, agent, label)

    async def define_block(self, block: Block, *, replace: bool, log: BlockLog) -> Block:
        async with self._sql_write() as db:
            existing = await owned(db, block.user, block.agent, block.label) if replace else None
            if existing is None:
                await insert(db, block)
                stored = block
            else:
                stored = block.model_copy(
                    update={"id": existing.id, "agents": existing.agents, "created_at": existing.created_at}
                )
                await update(db, stored)
            await insert_events(db, [log(stored)])
        return stored

    async def edit_block(self, user: str, agent: str, label: str, edit: BlockEdit, log: BlockLog) -> Block:
        async with self._sql_write() as db:
            edited = edit(await visible(db, user, agent, label))
            await update(db, edited)
            await insert_events(db, [log(edited)])
        return edited

    async def attach_block(self, user: str, owner: str, label: str, agent: str, at: datetime, log: BlockLog) -> Block:
        async with self._sql_write() as db:
            attached = await attach(db, await _owned(db, user, owner, label), agent, at)
            await insert_events(db, [log(attached)])
        return attached

    async def detach_block(self, user: str, owner: str, label: str, agent: str, log: BlockLog) -> Block:
        async with self._sql_write() as db:
            detached = await detach(db, await _owned(db, user, owner, label), agent)
            await insert_events(db, [log(detached)])
        return detached


async def _owned(db: Connection, user: str, owner: str, label: str) -> Block:
    found = await owned(db, user, owner, label)
    if found is None:
        raise NotFoundError(f"agent {owner!r} has no block labelled {label!r}")
    return found


async def block_by_id(db: Connection, block_id: str) -> Block | None:
    rows = list(await db.execute_fetchall(f"SELECT {_COLUMNS} FROM blocks b WHERE b.id = ?", (block_id,)))
    return (await _with_agents(db, rows))[0] if rows else None
