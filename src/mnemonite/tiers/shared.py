"""The shared tier: groups of agents (a household, a team, an organisation) and the facts and blocks
their members share with them.

A group's members are (user, agent) pairs; its creator is its owner, and owners add and remove
members. An agent reads what its groups share (`list_for`) and nothing of a group it is not in:
`GroupAccessError`. A member shares only its own facts and the blocks it sees.
"""

from __future__ import annotations

import builtins

from mnemonite.errors import GroupAccessError, InvalidInputError, NotFoundError
from mnemonite.inputs import checked
from mnemonite.models.messages import SessionEvent
from mnemonite.models.sensitivity import Sensitivity, check_sensitivity
from mnemonite.models.shared import Group, GroupKind, GroupMember, SharedItem
from mnemonite.scope import Scope
from mnemonite.store import Store
from mnemonite.tiers._log import agent_scope, event_for

__all__ = ["SharedTier"]

_KINDS = ("household", "team", "org")


@checked
class SharedTier:
    """``mem.shared``: create, add_member, remove_member, groups, attach, detach, list_for."""

    def __init__(self, store: Store, *, sensitivity: Sensitivity = "internal") -> None:
        self._store = store
        self._sensitivity = sensitivity

    async def create(self, scope: Scope, name: str, *, kind: GroupKind = "team") -> Group:
        """A new group of the scope's user, with the scope's agent as its owner; a name the user gave
        another group already raises `InvalidInputError`."""
        user, agent = agent_scope(scope, "shared.create")
        if kind not in _KINDS:
            raise InvalidInputError(f"kind must be one of {', '.join(_KINDS)}, got {kind!r}")
        group = Group(name=name, kind=kind, owner=user, members=(GroupMember(user=user, agent=agent, role="owner"),))
        return await self._store.save_group(group, self._event(scope, "shared.create", group), new=True)

    async def add_member(self, scope: Scope, group: str, member: Scope, *, owner: bool = False) -> Group:
        """Add (user, agent) ``member`` to a group the scope's agent owns."""
        found = await self._owned(scope, group)
        user, agent = agent_scope(member, "shared.add_member (member)")
        if any((m.user, m.agent) == (user, agent) for m in found.members):
            raise InvalidInputError(f"agent {agent!r} of user {user!r} is a member of {found.name!r} already")
        role = "owner" if owner else "member"
        updated = found.model_copy(update={"members": (*found.members, GroupMember(user=user, agent=agent, role=role))})
        return await self._store.save_group(updated, self._event(scope, "shared.add_member", updated), new=False)

    async def remove_member(self, scope: Scope, group: str, member: Scope) -> Group:
        """Remove ``member`` from a group the scope's agent owns (the last owner stays)."""
        found = await self._owned(scope, group)
        user, agent = agent_scope(member, "shared.remove_member (member)")
        kept = tuple(m for m in found.members if (m.user, m.agent) != (user, agent))
        if len(kept) == len(found.members):
            raise NotFoundError(f"agent {agent!r} of user {user!r} is not a member of {found.name!r}")
        if not any(m.role == "owner" for m in kept):
            raise InvalidInputError(f"{found.name!r} needs an owner: add another owner first")
        updated = found.model_copy(update={"members": kept})
        return await self._store.save_group(updated, self._event(scope, "shared.remove_member", updated), new=False)

    async def groups(self, scope: Scope) -> builtins.list[Group]:
        """The groups the scope's (user, agent) is a member of."""
        return await self._store.groups_of(*agent_scope(scope, "shared.groups"))

    async def attach(
        self,
        scope: Scope,
        group: str,
        *,
        fact_id: str | None = None,
        block: str | None = None,
        sensitivity: Sensitivity | None = None,
    ) -> SharedItem:
        """Share one of the agent's facts (``fact_id``) or a block it sees (``block``: its label) with a
        group it is a member of; the members then read it with `list_for`."""
        user, agent = agent_scope(scope, "shared.attach")
        if (fact_id is None) == (block is None):
            raise InvalidInputError("attach shares one thing: give fact_id=... or block=...")
        found = await self._store.group_for(user, agent, group)
        me = next(m for m in found.members if (m.user, m.agent) == (user, agent))
        if fact_id is not None:
            fact = await self._store.fact_in_scope(user, agent, fact_id)
            kind, item_id, level = "fact", fact.id, check_sensitivity(sensitivity, self._sensitivity)
        else:
            seen = await self._store.blocks(user, agent, block)
            if not seen:
                raise NotFoundError(f"agent {agent!r} sees no block labelled {block!r}")
            kind, item_id, level = "block", seen[0].id, check_sensitivity(sensitivity, seen[0].sensitivity)
        item = SharedItem(
            group_id=found.id, group=found.name, kind=kind, item_id=item_id, shared_by=me, sensitivity=level
        )
        event = event_for(scope, "memory_write", "shared.attach", {"item": item.model_dump(mode="json")}, level)
        return await self._store.share_item(item, event)

    async def detach(self, scope: Scope, group: str, item_id: str) -> SharedItem:
        """Stop sharing a fact or block (its id, or the share's id) with a group; the member who shared
        it or an owner may. The fact or block itself stays."""
        user, agent = agent_scope(scope, "shared.detach")
        found = await self._store.group_for(user, agent, group)
        shared = [i for i in await self._store.shared_with([found]) if item_id in (i.id, i.item_id)]
        if not shared:
            raise NotFoundError(f"group {found.name!r} shares nothing with id {item_id!r}")
        item = shared[0]
        me = next(m for m in found.members if (m.user, m.agent) == (user, agent))
        if me.role != "owner" and (item.shared_by.user, item.shared_by.agent) != (user, agent):
            raise GroupAccessError(f"only the member who shared it or an owner of {found.name!r} can detach it")
        bare = item.model_copy(update={"fact": None, "block": None})
        event = event_for(scope, "memory_write", "shared.detach", {"item": bare.model_dump(mode="json")})
        await self._store.unshare_item(item.id, event)
        return item

    async def list_for(self, scope: Scope, *, group: str | None = None) -> builtins.list[SharedItem]:
        """What the groups of the scope's (user, agent) share (one group's with ``group``), oldest first."""
        user, agent = agent_scope(scope, "shared.list_for")
        groups = [await self._store.group_for(user, agent, group)] if group is not None else None
        items = await self._store.shared_with(
            groups if groups is not None else await self._store.groups_of(user, agent)
        )
        event = event_for(scope, "memory_read", "shared.list_for", {"items": [i.id for i in items]})
        if event is not None:
            await self._store.log_events([event])
        return items

    async def _owned(self, scope: Scope, group: str) -> Group:
        user, agent = agent_scope(scope, "shared")
        found = await self._store.group_for(user, agent, group)
        if not any((m.user, m.agent, m.role) == (user, agent, "owner") for m in found.members):
            raise GroupAccessError(f"agent {agent!r} of user {user!r} is not an owner of {found.name!r}")
        return found

    def _event(self, scope: Scope, name: str, group: Group) -> SessionEvent | None:
        return event_for(scope, "memory_write", name, {"group": group.model_dump(mode="json")})
