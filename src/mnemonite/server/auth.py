"""Who is calling: a `Principal` (from an API key, or the fixed scope of a stdio MCP server) and its fences.

A principal reaches one user (and one agent, when its key names one). Reads and writes take their
scope from it; a record named by id is served only when it lies inside that scope, and otherwise
answers exactly as a missing id does (`NotFoundError`), so ids of another tenant reveal nothing.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TypeVar

from mnemonite.errors import NotFoundError, PermissionDeniedError
from mnemonite.memory import Memory
from mnemonite.models import Episode, Fact
from mnemonite.models.graph import Entity
from mnemonite.models.keys import CAPABILITIES, ApiKey, Capability
from mnemonite.models.tools import GuardTier
from mnemonite.scope import Scope
from mnemonite.store.sql_ids import IdKind
from mnemonite.tools import GuardPolicy

__all__ = ["OPEN", "Door", "Principal"]

T = TypeVar("T")
EVERY_TIER: frozenset[GuardTier] = frozenset({"read", "add", "rewrite", "destroy"})


@dataclass(frozen=True)
class Door:
    """What a door of the service lets any caller do, whatever its key allows: ``mnemonite serve`` and
    ``mnemonite mcp`` started with ``--read-only`` (nothing changes memory) or ``--no-destroy`` (nothing is
    forgotten, purged or deleted; adding and rewriting stay)."""

    read_only: bool = False
    no_destroy: bool = False

    @property
    def tiers(self) -> frozenset[GuardTier]:
        """The guard tiers of the memory tools this door runs."""
        if self.read_only:
            return frozenset({"read"})
        return EVERY_TIER - {"destroy"} if self.no_destroy else EVERY_TIER

    @property
    def policy(self) -> str:
        """What this door lets through, in words."""
        if self.read_only:
            return "read-only: nothing changes memory through this server"
        if self.no_destroy:
            return "no destroying: nothing is forgotten, purged or deleted through this server"
        return "what each key allows; fact_forget is annotated destructive for an MCP host to confirm"

    def refusal(self, *, changes: bool, destroys: bool = False) -> str | None:
        """Why this door refuses a call that ``changes`` memory (or ``destroys`` some of it), or None."""
        if self.read_only and (changes or destroys):
            return "this server is read-only (started with --read-only): nothing can change memory through it"
        if self.no_destroy and destroys:
            return ("this server does not destroy (started with --no-destroy): nothing can be forgotten, purged or"
                    " deleted through it")  # fmt: skip
        return None

    def check(self, *, changes: bool, destroys: bool = False) -> None:
        """`PermissionDeniedError` when this door refuses such a call."""
        if reason := self.refusal(changes=changes, destroys=destroys):
            raise PermissionDeniedError(reason)


OPEN = Door()  # every tool, as the caller's key allows


@dataclass(frozen=True)
class Principal:
    """The scope and capabilities a call runs with."""

    user: str
    agent: str | None
    capabilities: frozenset[Capability]
    key_id: str | None = None
    door: Door = OPEN

    @classmethod
    def of_key(cls, key: ApiKey, door: Door = OPEN) -> Principal:
        """The principal an API key stands for, calling through ``door``."""
        return cls(user=key.user, agent=key.agent, capabilities=frozenset(key.capabilities), key_id=key.id,
                   door=door)  # fmt: skip

    @classmethod
    def local(cls, user: str, agent: str | None, door: Door = OPEN) -> Principal:
        """A principal with every capability the door allows (a stdio MCP server started for one user)."""
        return cls(user=user, agent=agent, capabilities=frozenset(CAPABILITIES), door=door)

    def require(self, capability: Capability) -> None:
        """`PermissionDeniedError` unless the key was given ``capability`` (and, to write, the door lets it)."""
        if capability not in self.capabilities:
            raise PermissionDeniedError(f"this API key cannot {capability}: it was created with {self._can()}")
        if capability == "write":
            self.door.check(changes=True)

    def require_tier(self, tier: GuardTier) -> None:
        """`PermissionDeniedError` unless this caller may run a memory tool of guard tier ``tier``."""
        if tier != "read":
            self.require("write")
        self.door.check(changes=tier != "read", destroys=tier == "destroy")

    def require_whole_user(self, why: str) -> None:
        """`PermissionDeniedError` for a key bound to one agent: ``why`` the call reaches every agent's records."""
        if self.agent is not None:
            raise PermissionDeniedError(
                f"this API key is bound to agent {self.agent!r}, but {why}: use a key bound to user {self.user!r} only"
            )

    def policy(self) -> GuardPolicy:
        """The guard policy of the memory tools for this caller: every tool for a key that may write,
        the reading ones only otherwise, within what the door runs (`Door`). The key holder is the host, so no
        call waits for approval (an MCP host asks its user before a tool annotated destructive)."""
        allowed: frozenset[GuardTier] = EVERY_TIER if "write" in self.capabilities else frozenset({"read"})
        return GuardPolicy(allowed=allowed & self.door.tiers, needs_approval=frozenset())

    @property
    def sees_every_agent(self) -> bool:
        """Whether the caller may learn which of its user's agents hold records: a stdio server started for the
        user, or a key bound to the user only (a key bound to one agent learns nothing of the others)."""
        return self.key_id is None or self.agent is None

    def _can(self) -> str:
        return "--can " + ",".join(c for c in CAPABILITIES if c in self.capabilities)

    def scope(self, *, user: str | None = None, agent: str | None = None, session: str | None = None) -> Scope:
        """The scope of a call: the key's user and agent; a request may narrow to an agent (if the key has
        none) and a session, never name another user or agent."""
        if user is not None and user != self.user:
            raise PermissionDeniedError(f"this API key is bound to user {self.user!r}, not {user!r}")
        if agent is not None and self.agent is not None and agent != self.agent:
            raise PermissionDeniedError(f"this API key is bound to agent {self.agent!r}, not {agent!r}")
        return Scope(user=self.user, agent=self.agent or agent, session=session)

    def owns(self, user: str, agent: str | None) -> bool:
        """Whether a record of (user, agent) lies inside this principal's scope."""
        return user == self.user and (self.agent is None or agent == self.agent)

    async def fact(self, mem: Memory, fact_id: str) -> Fact:
        """A fact of this scope by id or id prefix; another scope's is `NotFoundError`, as a missing one is."""
        fact = await self._get(mem.semantic.get, mem, "fact", fact_id)
        return self._inside(fact, fact.user, fact.agent, f"no fact with id {fact_id!r}")

    async def episode(self, mem: Memory, episode_id: str) -> Episode:
        """An episode of this scope by id or id prefix; another scope's is `NotFoundError`."""
        episode = await self._get(mem.episodic.get, mem, "episode", episode_id)
        return self._inside(episode, episode.user or "", episode.agent, f"no episode with id {episode_id!r}")

    async def entity(self, mem: Memory, entity_id: str) -> Entity:
        """An entity of this scope by id or id prefix; another scope's is `NotFoundError`."""
        entity = await self._get(mem.graph.get_entity, mem, "entity", entity_id)
        return self._inside(entity, entity.user, entity.agent, f"no entity with id {entity_id!r}")

    async def _get(self, get: Callable[[str], Awaitable[T]], mem: Memory, kind: IdKind, given: str) -> T:
        """The record ``given`` names: by its id, else by the one id of this principal's records it begins
        (as the CLI takes them); several is `AmbiguousIdError`, listing only ids of this scope."""
        try:
            return await get(given)
        except NotFoundError:
            try:
                full = await mem.resolve_id(kind, given, scope=Scope(user=self.user, agent=self.agent))
            except NotFoundError:
                raise NotFoundError(f"no {kind} with id {given!r}") from None
            return await get(full)

    def _inside(self, record: T, user: str, agent: str | None, missing: str) -> T:
        if not self.owns(user, agent):
            raise NotFoundError(missing)
        return record
