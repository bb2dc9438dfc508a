"""`SyncMemory`: the blocking facade. Every method is a one-line delegate to `Memory`,
run on a private event-loop thread, so there is one implementation of everything."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine, Iterable
from concurrent.futures import Future
from datetime import datetime
from types import TracebackType
from typing import Any, Self, TypeVar

from memstrata.config import MemoryConfig
from memstrata.memory import Memory
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
from memstrata.models.fact import FactStatus
from memstrata.salience import SalienceContext, SalienceScorer
from memstrata.scope import Scope
from memstrata.tiers import EpisodicTier, SalientEpisode, SemanticTier

__all__ = ["SyncMemory"]

T = TypeVar("T")


class _Loop:
    """An event loop running on a daemon thread; `run` blocks until a coroutine finishes."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name="memstrata-loop", daemon=True)
        self.thread.start()

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        future: Future[T] = asyncio.run_coroutine_threadsafe(coro, self.loop)
        return future.result()

    def stop(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join()
        self.loop.close()


class SyncEpisodicTier:
    """Blocking ``mem.episodic``."""

    def __init__(self, tier: EpisodicTier, loop: _Loop) -> None:
        self._tier, self._run = tier, loop.run

    def put(
        self, episode: Episode, *, user: str | None = None, session: str | None = None, agent: str | None = None
    ) -> Episode:
        return self._run(self._tier.put(episode, user=user, session=session, agent=agent))

    def put_many(
        self,
        episodes: Iterable[Episode],
        *,
        user: str | None = None,
        session: str | None = None,
        agent: str | None = None,
    ) -> int:
        return self._run(self._tier.put_many(episodes, user=user, session=session, agent=agent))

    def get(self, episode_id: str) -> Episode:
        return self._run(self._tier.get(episode_id))

    def recent(
        self, user: str | Scope, session: str | None = None, agent: str | None = None, *, limit: int = 10
    ) -> list[Episode]:
        return self._run(self._tier.recent(user, session, agent, limit=limit))

    def salient(
        self, scope: Scope, *, limit: int = 10, context: SalienceContext | None = None, candidates: int = 200
    ) -> list[SalientEpisode]:
        return self._run(self._tier.salient(scope, limit=limit, context=context, candidates=candidates))

    def consolidate(self, rule: ConsolidationRule) -> list[MemoryDelta]:
        return self._run(self._tier.consolidate(rule))


class SyncSemanticTier:
    """Blocking ``mem.semantic``."""

    def __init__(self, tier: SemanticTier, loop: _Loop) -> None:
        self._tier, self._run = tier, loop.run

    def apply_delta(self, delta: MemoryDelta | dict[str, object]) -> DeltaRecord:
        return self._run(self._tier.apply_delta(delta))

    def apply_deltas(self, deltas: Iterable[MemoryDelta | dict[str, object]]) -> list[DeltaRecord]:
        return self._run(self._tier.apply_deltas(deltas))

    def apply_pending(self) -> list[DeltaRecord]:
        return self._run(self._tier.apply_pending())

    def facts(
        self,
        user: str | Scope,
        agent: str | None = None,
        *,
        as_of: datetime | None = None,
        valid_at: datetime | None = None,
        status: FactStatus | None = None,
        subject: str | None = None,
        predicate: str | None = None,
        channel: str | None = None,
        limit: int = 100,
    ) -> list[Fact]:
        return self._run(
            self._tier.facts(
                user, agent, as_of=as_of, valid_at=valid_at, status=status, subject=subject,
                predicate=predicate, channel=channel, limit=limit,
            )
        )  # fmt: skip

    def get(self, fact_id: str) -> Fact:
        return self._run(self._tier.get(fact_id))

    def history(self, fact_id: str) -> list[Fact]:
        return self._run(self._tier.history(fact_id))

    def lineage(self, fact_id: str) -> list[Lineage]:
        return self._run(self._tier.lineage(fact_id))

    def deltas(self, *, rule_id: str | None = None, pending: bool = False, limit: int = 100) -> list[DeltaRecord]:
        return self._run(self._tier.deltas(rule_id=rule_id, pending=pending, limit=limit))


class SyncMemory:
    """Blocking `Memory`: ``with SyncMemory.open("sqlite:///memory.db") as mem: ...``."""

    def __init__(self, memory: Memory, loop: _Loop) -> None:
        self._memory, self._loop, self._run = memory, loop, loop.run
        self.config = memory.config
        self.episodic = SyncEpisodicTier(memory.episodic, loop)
        self.semantic = SyncSemanticTier(memory.semantic, loop)

    @classmethod
    def open(
        cls, url: str | None = None, *, config: MemoryConfig | None = None, scorer: SalienceScorer | None = None
    ) -> SyncMemory:
        loop = _Loop()
        try:
            return cls(loop.run(Memory.open(url, config=config, scorer=scorer)), loop)
        except BaseException:
            loop.stop()
            raise

    def close(self) -> None:
        self._run(self._memory.close())
        self._loop.stop()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None) -> None:
        self.close()

    def health(self, *, deep: bool = False) -> StoreHealth:
        return self._run(self._memory.health(deep=deep))

    def migrate(self, plan: MigrationPlan) -> None:
        return self._run(self._memory.migrate(plan))

    def add_rule(self, rule: ConsolidationRule) -> RuleState:
        return self._run(self._memory.add_rule(rule))

    def remove_rule(self, rule_id: str) -> None:
        return self._run(self._memory.remove_rule(rule_id))

    def rules(self) -> list[RuleState]:
        return self._run(self._memory.rules())

    def consolidate(self, rule: ConsolidationRule | str) -> ConsolidationRun:
        return self._run(self._memory.consolidate(rule))

    def run_due(self, now: datetime | None = None) -> list[ConsolidationRun]:
        return self._run(self._memory.run_due(now))
