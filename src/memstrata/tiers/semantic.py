"""The semantic tier: facts changed only by typed, audited deltas, readable at any point in time."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Sequence
from datetime import datetime

from memstrata.errors import NotFoundError
from memstrata.models import DeltaRecord, Fact, FactFilter, Lineage, MemoryDelta, parse_delta
from memstrata.models.fact import FactStatus, MemoryType
from memstrata.models.search import SearchFilter, SearchHit
from memstrata.scope import Scope
from memstrata.search import Reranker, SearchEngine, SearchOptions
from memstrata.store import Store

AfterWrite = Callable[[], Awaitable[object]]

__all__ = ["SemanticTier"]


class SemanticTier:
    """``mem.semantic``: apply deltas, read facts (now, ``as_of`` or ``valid_at``), follow lineage."""

    def __init__(
        self, store: Store, *, after_write: AfterWrite | None = None, engine: SearchEngine | None = None
    ) -> None:
        self._store = store
        self._after_write = after_write
        self._engine = engine or SearchEngine(store)

    async def apply_delta(self, delta: MemoryDelta | dict[str, object]) -> DeltaRecord:
        """Validate and apply one delta atomically; applying the same ``delta_id`` again changes nothing."""
        return (await self.apply_deltas([delta]))[0]

    async def apply_deltas(self, deltas: Iterable[MemoryDelta | dict[str, object]]) -> list[DeltaRecord]:
        """Apply several deltas in order, in one transaction: all of them or none."""
        records = await self._store.apply_deltas([parse_delta(d) for d in deltas])
        if self._after_write is not None:
            await self._after_write()
        return records

    async def apply_pending(self) -> list[DeltaRecord]:
        """Apply the deltas consolidation emitted that were never applied (e.g. after a crash).

        One that cannot be applied is recorded as rejected, with the reason, and the rest go on.
        """
        pending = await self._store.delta_log(rule_id=None, pending=True, limit=100_000)
        records = await self._store.apply_deltas([record.delta for record in pending], reject_conflicts=True)
        if self._after_write is not None:
            await self._after_write()
        return records

    async def search(
        self,
        scope: Scope,
        query: str,
        k: int = 10,
        *,
        as_of: datetime | None = None,
        memory_types: Sequence[MemoryType] | None = None,
        tags: Sequence[str] | None = None,
        since: datetime | None = None,
        until: datetime | None = None,
        options: SearchOptions | None = None,
        reranker: Reranker | None = None,
    ) -> list[SearchHit]:
        """Hybrid search over this scope's facts (current ones, or as of a moment), best first."""
        flt = SearchFilter.model_validate(
            {
                "scope": scope,
                "tiers": ("semantic",),
                "memory_types": memory_types,
                "tags": tags,
                "since": since,
                "until": until,
                "as_of": as_of,
            }
        )
        return await self._engine.search(query, flt, k, options=options, reranker=reranker)

    async def facts(
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
        """Facts of a (user, agent), newest first; ``agent=None`` widens to all agents.

        ``as_of`` (system time) replays what memory believed then; ``valid_at`` (world time)
        asks what held then, superseded history included.
        """
        if isinstance(user, Scope):
            agent = user.agent if agent is None else agent
            user = user.user
        Scope(user=user, agent=agent)
        query = FactFilter(
            user=user,
            agent=agent,
            as_of=as_of,
            valid_at=valid_at,
            status=status,
            subject=subject,
            predicate=predicate,
            channel=channel,
            limit=limit,
        )
        return await self._store.facts(query)

    async def get(self, fact_id: str) -> Fact:
        """One fact by id, whatever its status, or NotFoundError."""
        fact = await self._store.get_fact(fact_id)
        if fact is None:
            raise NotFoundError(f"no fact with id {fact_id!r}")
        return fact

    async def history(self, fact_id: str) -> list[Fact]:
        """Every version in the fact's supersede chain, oldest first, with validity intervals."""
        return await self._store.history(fact_id)

    async def lineage(self, fact_id: str) -> list[Lineage]:
        """The lineage edges (SUPERSEDES, CONSOLIDATES) touching a fact."""
        return await self._store.lineage(fact_id)

    async def deltas(self, *, rule_id: str | None = None, pending: bool = False, limit: int = 100) -> list[DeltaRecord]:
        """The audit log of deltas, oldest first; ``pending=True`` lists emitted but unapplied ones."""
        return await self._store.delta_log(rule_id=rule_id, pending=pending, limit=limit)
