"""Who is calling: a `Principal` (from an API key, or the fixed scope of a stdio MCP server) and its fences.

A principal reaches one user (and one agent, when its key names one). Reads and writes take their
scope from it; a record named by id is served only when it lies inside that scope, and otherwise
answers exactly as a missing id does (`NotFoundError`), so ids of another tenant reveal nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypeVar

from mnemonite.errors import NotFoundError, PermissionDeniedError
from mnemonite.memory import Memory
from mnemonite.models import Episode, Fact
from mnemonite.models.graph import Entity
from mnemonite.models.keys import CAPABILITIES, ApiKey, Capability
from mnemonite.models.tools import GuardTier
from mnemonite.scope import Scope
from mnemonite.tools import GuardPolicy

__all__ = ["Principal"]

T = TypeVar("T")


@dataclass(frozen=True)
class Principal:
    """The scope and capabilities a call runs with."""

    user: str
    agent: str | None
    capabilities: frozenset[Capability]
    key_id: str | None = None

    @classmethod
    def of_key(cls, key: ApiKey) -> Principal:
        """The principal an API key stands for."""
        return cls(user=key.user, agent=key.agent, capabilities=frozenset(key.capabilities), key_id=key.id)

    @classmethod
    def local(cls, user: str, agent: str | None) -> Principal:
        """A principal with every capability (a stdio MCP server started for one user)."""
        return cls(user=user, agent=agent, capabilities=frozenset(CAPABILITIES))

    def require(self, capability: Capability) -> None:
        """`PermissionDeniedError` unless the key was given ``capability``."""
        if capability not in self.capabilities:
            raise PermissionDeniedError(f"this API key cannot {capability}: it was created with {self._can()}")

    def require_whole_user(self, why: str) -> None:
        """`PermissionDeniedError` for a key bound to one agent: ``why`` the call reaches every agent's records."""
        if self.agent is not None:
            raise PermissionDeniedError(
                f"this API key is bound to agent {self.agent!r}, but {why}: use a key bound to user {self.user!r} only"
            )

    def policy(self) -> GuardPolicy:
        """The guard policy of the memory tools for this caller: every tool for a key that may write,
        the reading ones only otherwise. The key holder is the host, so no call waits for approval."""
        allowed: frozenset[GuardTier] = frozenset({"read", "add", "rewrite", "destroy"})
        if "write" not in self.capabilities:
            allowed = frozenset({"read"})
        return GuardPolicy(allowed=allowed, needs_approval=frozenset())

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
        """A fact of this scope by id; another scope's is `NotFoundError`, as a missing one is."""
        fact = await mem.semantic.get(fact_id)
        return self._inside(fact, fact.user, fact.agent, f"no fact with id {fact_id!r}")

    async def episode(self, mem: Memory, episode_id: str) -> Episode:
        """An episode of this scope by id; another scope's is `NotFoundError`."""
        episode = await mem.episodic.get(episode_id)
        return self._inside(episode, episode.user or "", episode.agent, f"no episode with id {episode_id!r}")

    async def entity(self, mem: Memory, entity_id: str) -> Entity:
        """An entity of this scope by id; another scope's is `NotFoundError`."""
        entity = await mem.graph.get_entity(entity_id)
        return self._inside(entity, entity.user, entity.agent, f"no entity with id {entity_id!r}")

    def _inside(self, record: T, user: str, agent: str | None, missing: str) -> T:
        if not self.owns(user, agent):
            raise NotFoundError(missing)
        return record
