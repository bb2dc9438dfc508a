"""The shared tier: groups of agents (a household, a team, an organisation) and what is shared with them."""

from __future__ import annotations

from typing import Literal

from pydantic import AwareDatetime, Field

from mnemonite._time import utcnow
from mnemonite.models.base import Model, new_id
from mnemonite.models.blocks import Block
from mnemonite.models.fact import Fact
from mnemonite.models.sensitivity import Sensitivity

__all__ = ["Group", "GroupKind", "GroupMember", "SharedItem"]

GroupKind = Literal["household", "team", "org"]
MemberRole = Literal["owner", "member"]


class GroupMember(Model):
    """One (user, agent) of a group; an owner may add and remove members."""

    user: str
    agent: str
    role: MemberRole = "member"


class Group(Model):
    """A group; ``name`` is unique among its owner's groups."""

    id: str = Field(default_factory=new_id, min_length=1, max_length=256)
    name: str = Field(min_length=1, max_length=200)
    kind: GroupKind = "team"
    owner: str
    members: tuple[GroupMember, ...] = ()
    created_at: AwareDatetime = Field(default_factory=utcnow)


class SharedItem(Model):
    """A fact or a block shared with a group, as a member reads it."""

    id: str = Field(default_factory=new_id, min_length=1, max_length=256)
    group_id: str
    group: str
    kind: Literal["fact", "block"]
    item_id: str
    shared_by: GroupMember
    sensitivity: Sensitivity
    shared_at: AwareDatetime = Field(default_factory=utcnow)
    fact: Fact | None = None
    block: Block | None = None
