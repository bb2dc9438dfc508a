"""The storage protocols every backend implements.

``MemoryStore`` is the episodic contract of the spec; ``FactStore`` the semantic side;
``Store`` is both plus rule bookkeeping, which is what `Memory` talks to. Nothing
outside ``memstrata.store`` imports a concrete store.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal, Protocol, runtime_checkable

from memstrata.models import (
    ConsolidationRule,
    ConsolidationRun,
    DeltaRecord,
    Episode,
    Fact,
    Lineage,
    MemoryDelta,
    MigrationPlan,
    RuleState,
    StoreHealth,
)
from memstrata.models.fact import FactFilter

__all__ = ["FactStore", "MemoryStore", "RecentOrder", "Store"]

RecentOrder = Literal["timestamp", "accessed"]


@runtime_checkable
class MemoryStore(Protocol):
    """Episodic memory: immutable episodes under a (user, session, agent) key."""

    async def bootstrap(self) -> None: ...
    async def health(self, *, deep: bool = False) -> StoreHealth: ...
    async def migrate(self, plan: MigrationPlan) -> None: ...
    async def put(self, episode: Episode, *, user: str, session: str, agent: str) -> None: ...
    async def recent(
        self,
        user: str,
        session: str | None = None,
        agent: str | None = None,
        *,
        limit: int,
        order: RecentOrder = "timestamp",
    ) -> list[Episode]: ...
    async def consolidate(self, rule: ConsolidationRule) -> list[MemoryDelta]: ...


@runtime_checkable
class FactStore(Protocol):
    """Semantic memory: facts changed only through typed, audited deltas."""

    async def apply_delta(self, delta: MemoryDelta) -> DeltaRecord: ...
    async def apply_deltas(self, deltas: Sequence[MemoryDelta]) -> list[DeltaRecord]: ...
    async def get_fact(self, fact_id: str) -> Fact | None: ...
    async def facts(self, query: FactFilter) -> list[Fact]: ...
    async def history(self, fact_id: str) -> list[Fact]: ...
    async def lineage(self, fact_id: str) -> list[Lineage]: ...
    async def delta_log(self, *, rule_id: str | None, pending: bool, limit: int) -> list[DeltaRecord]: ...


@runtime_checkable
class Store(MemoryStore, FactStore, Protocol):
    """Everything `Memory` needs from a backend."""

    async def close(self) -> None: ...
    async def put_many(self, episodes: Sequence[Episode]) -> int: ...
    async def get_episode(self, episode_id: str) -> Episode | None: ...
    async def touch_episodes(self, episode_ids: Sequence[str]) -> None: ...
    async def save_rule(self, rule: ConsolidationRule) -> RuleState: ...
    async def remove_rule(self, rule_id: str) -> None: ...
    async def rule_states(self) -> list[RuleState]: ...
    async def consolidate_and_apply(self, rule: ConsolidationRule, *, max_episodes: int) -> ConsolidationRun: ...
