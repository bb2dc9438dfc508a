"""The shared tier over HTTP: groups of agents and what their members share with them (create,
add_member, remove_member, groups, attach, detach, list_for).

A group is named by its id or its name, among the groups the scope's (user, agent) is a member
of: any other group, whoever's, is 403 `GroupAccessError` ("not a member of it"), the same answer
as for a group that does not exist. Groups may hold other users' agents (a household): an owner
adds them by (user, agent), and they then read what the group shares, never anything else of
the owner's.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from mnemonite.models.base import Model
from mnemonite.models.sensitivity import Sensitivity
from mnemonite.models.shared import Group, GroupKind, SharedItem
from mnemonite.scope import Scope
from mnemonite.server.episodic import ScopeFields
from mnemonite.server.verbs import Call, Page, Paged, Verb, page_of

__all__ = ["VERBS"]


class GroupBody(ScopeFields):
    """A new group, owned by the scope's agent."""

    name: str = Field(min_length=1, max_length=200)
    kind: GroupKind = "team"


class Member(Model):
    """A (user, agent) of a group."""

    user: str = Field(min_length=1, max_length=256)
    agent: str = Field(min_length=1, max_length=256)


class MemberBody(ScopeFields):
    """A member to add to a group the scope's agent owns (``owner``: as another owner)."""

    member: Member
    owner: bool = False


class MemberQuery(ScopeFields):
    """The member to remove: ``member_user`` and ``member_agent``."""

    member_user: str = Field(min_length=1, max_length=256)
    member_agent: str = Field(min_length=1, max_length=256)


class ShareBody(ScopeFields):
    """Share one of the agent's facts (``fact_id``) or a block it sees (``block``, its label) with the group."""

    fact_id: str | None = Field(default=None, min_length=1, max_length=256)
    block: str | None = Field(default=None, min_length=1, max_length=100)
    sensitivity: Sensitivity | None = None


class SharedQuery(Paged, ScopeFields):
    """What the groups of the scope's agent share, oldest first (one group's, with ``group``)."""

    group: str | None = Field(default=None, min_length=1, max_length=256)


class GroupsQuery(Paged, ScopeFields):
    """The groups the scope's agent is a member of, a page at a time."""


def _scope(call: Call[Any]) -> Scope:
    return call.who.scope(user=call.body.user, agent=call.body.agent)


async def create(call: Call[GroupBody]) -> Group:
    """Create a group owned by the scope's agent."""
    return await call.mem.shared.create(_scope(call), call.body.name, kind=call.body.kind)


async def groups(call: Call[GroupsQuery]) -> Page[Group]:
    """The groups the scope's agent is a member of (paged)."""
    return page_of(await call.mem.shared.groups(_scope(call)), call.body)


async def add_member(call: Call[MemberBody]) -> Group:
    """Add a (user, agent) to a group the scope's agent owns."""
    member = Scope(user=call.body.member.user, agent=call.body.member.agent)
    return await call.mem.shared.add_member(_scope(call), call.ids["group"], member, owner=call.body.owner)


async def remove_member(call: Call[MemberQuery]) -> Group:
    """Remove a (user, agent) from a group the scope's agent owns (the last owner stays)."""
    member = Scope(user=call.body.member_user, agent=call.body.member_agent)
    return await call.mem.shared.remove_member(_scope(call), call.ids["group"], member)


async def attach(call: Call[ShareBody]) -> SharedItem:
    """Share one of the agent's facts or blocks with a group it is a member of."""
    b = call.body
    return await call.mem.shared.attach(
        _scope(call), call.ids["group"], fact_id=b.fact_id, block=b.block, sensitivity=b.sensitivity
    )


async def detach(call: Call[ScopeFields]) -> SharedItem:
    """Stop sharing a fact or block with a group (by its id or the share's); the record itself stays."""
    return await call.mem.shared.detach(_scope(call), call.ids["group"], call.ids["item_id"])


async def list_for(call: Call[SharedQuery]) -> Page[SharedItem]:
    """What the scope's agent's groups share, oldest first (paged)."""
    return page_of(await call.mem.shared.list_for(_scope(call), group=call.body.group), call.body)


_G = "/v1/groups/{group}"
VERBS: tuple[Verb, ...] = (
    Verb("shared", "shared.create", "POST", "/v1/groups", "write", create, Group, body=GroupBody, status=201),
    Verb("shared", "shared.groups", "GET", "/v1/groups", "read", groups, Page[Group], query=GroupsQuery),
    Verb("shared", "shared.list_for", "GET", "/v1/shared", "read", list_for, Page[SharedItem], query=SharedQuery),
    Verb("shared", "shared.add_member", "POST", f"{_G}/members", "write", add_member, Group, body=MemberBody),
    Verb("shared", "shared.remove_member", "DELETE", f"{_G}/members", "write", remove_member, Group,
         query=MemberQuery),
    Verb("shared", "shared.attach", "POST", f"{_G}/shares", "write", attach, SharedItem, body=ShareBody,
         status=201),
    Verb("shared", "shared.detach", "DELETE", f"{_G}/shares/{{item_id}}", "write", detach, SharedItem,
         query=ScopeFields),
)  # fmt: skip
