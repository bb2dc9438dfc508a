"""Groups and what their members share, on the SQL stores.

A group names its members as exact (user, agent) pairs; a member reads what is shared with the
groups it belongs to, and nothing else: every read starts from the reader's own membership rows.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractAsyncContextManager
from typing import Any

from mnemonite._time import from_text, to_text
from mnemonite.errors import GroupAccessError, InvalidInputError, NotFoundError
from mnemonite.models import Fact
from mnemonite.models.messages import SessionEvent
from mnemonite.models.shared import Group, GroupMember, SharedItem
from mnemonite.store import sql_facts, sql_working
from mnemonite.store.sql import Connection, integrity_errors
from mnemonite.store.sql_session import insert_events

__all__ = ["SharedMethods", "restore_group", "share", "unshare"]


async def _members(db: Connection, group_id: str) -> tuple[GroupMember, ...]:
    rows = await db.execute_fetchall(
        "SELECT user_id, agent_id, role FROM group_members WHERE group_id = ? ORDER BY added_at, user_id, agent_id",
        (group_id,),
    )
    return tuple(GroupMember(user=r[0], agent=r[1], role=r[2]) for r in rows)


async def _group(db: Connection, row: Sequence[Any]) -> Group:
    return Group(
        id=row[0], name=row[1], kind=row[2], owner=row[3], created_at=from_text(row[4]),
        members=await _members(db, str(row[0])),
    )  # fmt: skip


async def groups_of(db: Connection, user: str, agent: str) -> list[Group]:
    """The groups (user, agent) is a member of, by name."""
    rows = await db.execute_fetchall(
        "SELECT g.id, g.name, g.kind, g.owner, g.created_at FROM group_members m"
        " JOIN agent_groups g ON g.id = m.group_id WHERE m.user_id = ? AND m.agent_id = ? ORDER BY g.name, g.id",
        (user, agent),
    )
    return [await _group(db, row) for row in rows]


async def group_for(db: Connection, user: str, agent: str, group: str) -> Group:
    """The member's group whose id or name is ``group``; `GroupAccessError` when it is none of its groups."""
    found = [g for g in await groups_of(db, user, agent) if group in (g.id, g.name)]
    if len(found) != 1:
        reason = "several of its groups are named so: give the id" if found else "not a member of it"
        raise GroupAccessError(f"agent {agent!r} of user {user!r} cannot use group {group!r}: {reason}")
    return found[0]


async def restore_group(db: Connection, group: Group) -> None:
    """Make the stored group (its row and members) exactly ``group``; what it shares stays."""
    await db.execute(
        "INSERT INTO agent_groups (id, name, kind, owner, created_at) VALUES (?, ?, ?, ?, ?)"
        " ON CONFLICT (id) DO NOTHING",
        (group.id, group.name, group.kind, group.owner, to_text(group.created_at)),
    )
    await db.execute("DELETE FROM group_members WHERE group_id = ?", (group.id,))
    # added_at orders the members: written from the group's creation time so that a replay writes the same
    await db.executemany(
        "INSERT INTO group_members (group_id, user_id, agent_id, role, added_at) VALUES (?, ?, ?, ?, ?)",
        [
            (group.id, m.user, m.agent, m.role, f"{to_text(group.created_at)}#{i:06d}")
            for i, m in enumerate(group.members)
        ],
    )


async def share(db: Connection, item: SharedItem) -> None:
    try:
        await db.execute(
            "INSERT INTO shared_items (id, group_id, kind, item_id, user_id, agent_id, sensitivity, shared_at)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (item.id, item.group_id, item.kind, item.item_id, item.shared_by.user, item.shared_by.agent,
             item.sensitivity, to_text(item.shared_at)),
        )  # fmt: skip
    except integrity_errors():
        raise InvalidInputError(f"this {item.kind} is shared with group {item.group!r} already") from None


async def unshare(db: Connection, share_id: str) -> None:
    await db.execute("DELETE FROM shared_items WHERE id = ?", (share_id,))


async def items(db: Connection, groups: Sequence[Group]) -> list[SharedItem]:
    """What is shared with these groups, oldest first, each with its fact or block."""
    if not groups:
        return []
    by_id = {g.id: g for g in groups}
    rows = await db.execute_fetchall(
        "SELECT id, group_id, kind, item_id, user_id, agent_id, sensitivity, shared_at FROM shared_items"
        f" WHERE group_id IN ({', '.join('?' for _ in by_id)}) ORDER BY shared_at, id",
        list(by_id),
    )
    found = []
    for row in rows:
        group = by_id[str(row[1])]
        role = next((m.role for m in group.members if (m.user, m.agent) == (row[4], row[5])), "member")
        fact = await sql_facts.get_fact(db, str(row[3])) if row[2] == "fact" else None
        block = await sql_working.block_by_id(db, str(row[3])) if row[2] == "block" else None
        if fact is None and block is None:
            continue  # purged since it was shared
        found.append(
            SharedItem(
                id=row[0], group_id=group.id, group=group.name, kind=row[2], item_id=row[3],
                shared_by=GroupMember(user=row[4], agent=row[5], role=role), sensitivity=row[6],
                shared_at=from_text(row[7]), fact=fact, block=block,
            )
        )  # fmt: skip
    return found


class SharedMethods:
    """The group methods of a store (mixed in); each write is one transaction with its session event."""

    def _sql_read(self) -> AbstractAsyncContextManager[Connection]:
        raise NotImplementedError

    def _sql_write(self) -> AbstractAsyncContextManager[Connection]:
        raise NotImplementedError

    async def groups_of(self, user: str, agent: str) -> list[Group]:
        async with self._sql_read() as db:
            return await groups_of(db, user, agent)

    async def group_for(self, user: str, agent: str, group: str) -> Group:
        async with self._sql_read() as db:
            return await group_for(db, user, agent, group)

    async def save_group(self, group: Group, event: SessionEvent | None, *, new: bool) -> Group:
        async with self._sql_write() as db:
            if new and list(
                await db.execute_fetchall(
                    "SELECT 1 FROM agent_groups WHERE owner = ? AND name = ?", (group.owner, group.name)
                )
            ):
                raise InvalidInputError(f"user {group.owner!r} has a group named {group.name!r} already")
            await restore_group(db, group)
            await insert_events(db, [event])
        return group

    async def share_item(self, item: SharedItem, event: SessionEvent | None) -> SharedItem:
        async with self._sql_write() as db:
            await share(db, item)
            await insert_events(db, [event])
        return item

    async def unshare_item(self, share_id: str, event: SessionEvent | None) -> None:
        async with self._sql_write() as db:
            await unshare(db, share_id)
            await insert_events(db, [event])

    async def shared_with(self, groups: Sequence[Group]) -> list[SharedItem]:
        async with self._sql_read() as db:
            return await items(db, groups)

    async def fact_in_scope(self, user: str, agent: str, fact_id: str) -> Fact:
        """The fact of that (user, agent) with this id; `NotFoundError` for any other."""
        async with self._sql_read() as db:
            fact = await sql_facts.get_fact(db, fact_id)
        if fact is None or (fact.user, fact.agent) != (user, agent):
            raise NotFoundError(f"agent {agent!r} of user {user!r} has no fact with id {fact_id!r}")
        return fact
