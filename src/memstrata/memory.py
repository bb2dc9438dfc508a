"""`Memory`: the async entry point wiring a store to the tiers and the consolidation rules."""

from __future__ import annotations

from datetime import datetime
from types import TracebackType
from typing import Self

from memstrata._time import utcnow
from memstrata.config import MemoryConfig
from memstrata.errors import NotFoundError
from memstrata.models import ConsolidationRule, ConsolidationRun, MigrationPlan, RuleState, StoreHealth
from memstrata.salience import SalienceScorer
from memstrata.store import Store, open_store
from memstrata.tiers import EpisodicTier, SemanticTier

__all__ = ["Memory"]


class Memory:
    """Layered long-term memory for an agent (async).

    >>> mem = await Memory.open("sqlite:///./agent-memory.db")
    >>> await mem.episodic.put(Episode(content="I live in Paris"), user="alice", session="S1", agent="rag")
    >>> await mem.consolidate(ConsolidationRule(id="nightly"))
    >>> await mem.semantic.facts("alice")
    """

    def __init__(self, store: Store, config: MemoryConfig, *, scorer: SalienceScorer | None = None) -> None:
        self.config = config
        self._store = store
        after_put = self._after_put if config.consolidate_on_put else None
        self.episodic = EpisodicTier(store, track_access=config.track_access, after_put=after_put, scorer=scorer)
        self.semantic = SemanticTier(store)

    @classmethod
    async def open(
        cls, url: str | None = None, *, config: MemoryConfig | None = None, scorer: SalienceScorer | None = None
    ) -> Memory:
        """Open (creating if needed) the memory at ``url``; with no arguments, ``./memstrata.db``."""
        config = config or MemoryConfig()
        if url is not None:
            config = config.model_copy(update={"url": url})
        return cls(await open_store(config.url), config, scorer=scorer)

    async def close(self) -> None:
        """Close the database connection."""
        await self._store.close()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.close()

    async def health(self, *, deep: bool = False) -> StoreHealth:
        """Counts and schema version of the store; ``deep=True`` adds a full integrity check."""
        return await self._store.health(deep=deep)

    async def migrate(self, plan: MigrationPlan) -> None:
        """Apply a schema migration (adding nullable columns only)."""
        await self._store.migrate(plan)

    async def add_rule(self, rule: ConsolidationRule) -> RuleState:
        """Register a consolidation rule (or redefine one, keeping its progress)."""
        return await self._store.save_rule(rule)

    async def remove_rule(self, rule_id: str) -> None:
        """Unregister a rule; the facts it promoted stay."""
        await self._store.remove_rule(rule_id)

    async def rules(self) -> list[RuleState]:
        """Every registered rule with its progress and cadence state."""
        return await self._store.rule_states()

    async def consolidate(self, rule: ConsolidationRule | str) -> ConsolidationRun:
        """Run a rule now: claim its new episodes, classify and apply the deltas in one transaction."""
        if isinstance(rule, str):
            rule = await self._rule(rule)
        return await self._store.consolidate_and_apply(rule, max_episodes=self.config.max_episodes_per_run)

    async def run_due(self, now: datetime | None = None) -> list[ConsolidationRun]:
        """Run every registered rule whose cadence says it is due."""
        moment = now or utcnow()
        states = await self._store.rule_states()
        return [await self.consolidate(state.rule) for state in states if state.is_due(moment)]

    async def _rule(self, rule_id: str) -> ConsolidationRule:
        for state in await self._store.rule_states():
            if state.rule.id == rule_id:
                return state.rule
        raise NotFoundError(f"no consolidation rule with id {rule_id!r}; register it with add_rule")

    async def _after_put(self) -> list[ConsolidationRun]:
        return await self.run_due()
