"""`LifecycleTierManager`: hot / warm / cold per record, promoted lazily on access, demoted by `sweep`.

The rules (the defaults of `LifecycleWindows`): COLD -> WARM after 1 access within 7 days,
WARM -> HOT after 3; `sweep` (call it at session start) demotes HOT -> WARM after an hour
without access and WARM -> COLD after 7 days without any. A record never accessed is cold.
`search` looks in the hot and warm records first and widens to the cold ones only when they
hold nothing close enough.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from functools import partial

from mnemonite._time import utcnow
from mnemonite.errors import InvalidInputError
from mnemonite.inputs import checked
from mnemonite.models.episode import Episode
from mnemonite.models.fact import Fact
from mnemonite.models.lifecycle import LifecycleTier, LifecycleWindows, SweepReport, TierRow, TierStats, promote
from mnemonite.models.search import RecordKind, SearchFilter, SearchHit, Tier
from mnemonite.scope import Scope, as_scope
from mnemonite.search import SearchEngine, SearchOptions
from mnemonite.store.base import ConceptStore

__all__ = ["LifecycleTierManager"]

WORKING_SET: tuple[LifecycleTier, ...] = ("hot", "warm")


@checked
class LifecycleTierManager:
    """``mem.lifecycle``: each record's tier, its promotion on access, sweeps, and working-set-first search."""

    def __init__(self, store: ConceptStore, engine: SearchEngine, windows: LifecycleWindows | None = None) -> None:
        self._store = store
        self._engine = engine
        self.windows = windows or LifecycleWindows()

    async def access(self, records: Sequence[Episode | Fact], *, now: datetime | None = None) -> list[TierRow]:
        """Count one access to each record (episodes or facts) and promote it; returns their new state."""
        moment = now or utcnow()
        rule = partial(_promote_at, moment=moment, windows=self.windows)
        done: list[TierRow] = []
        for kind, pairs in _by_kind(records).items():
            done += await self._store.tier_access(kind, pairs, rule, moment)
        return done

    async def sweep(self, scope: Scope | str | None = None, *, now: datetime | None = None) -> SweepReport:
        """Demote what went stale: HOT -> WARM, WARM -> COLD (every user's records when ``scope`` is None)."""
        user = None if scope is None else as_scope(scope).user
        return await self._store.tier_sweep(user, self.windows, now or utcnow())

    async def stats(self, scope: Scope | str) -> TierStats:
        """How many of the user's records are hot, warm and cold."""
        return await self._store.tier_stats(as_scope(scope).user)

    async def tiers(self, kind: RecordKind, ids: Sequence[str]) -> dict[str, LifecycleTier]:
        """Each record's tier (cold when it has never been accessed)."""
        return await self._store.tiers_of(kind, list(ids))

    async def search(
        self,
        scope: Scope | str,
        query: str,
        k: int = 10,
        *,
        tiers: Sequence[Tier] = ("episodic", "semantic"),
        enough: int = 1,
        min_cosine: float = 0.5,
        options: SearchOptions | None = None,
        record_access: bool = True,
        now: datetime | None = None,
    ) -> list[SearchHit]:
        """Search the hot and warm records first; when fewer than ``enough`` of their hits reach
        ``min_cosine``, search everything (cold included) instead. The hits returned count as
        accesses (at ``now``, default the current time) unless ``record_access=False``."""
        if enough < 1 or not 0 <= min_cosine <= 1:
            raise InvalidInputError("enough must be >= 1 and min_cosine in [0, 1]")
        base = SearchFilter(scope=as_scope(scope), tiers=tuple(tiers))
        # Without query feedback: in a working set of a few records it would pull the query onto whatever
        # is there, and the cosine that decides whether to widen would measure the feedback, not the query.
        exact = (options or self._engine.options).model_copy(update={"feedback": 0.0})
        hits = await self._engine.search(query, base.model_copy(update={"lifecycle": WORKING_SET}), k, options=exact)
        close = [h for h in hits if h.cosine is not None and h.cosine >= min_cosine]
        if len(close) < enough:
            close = await self._engine.search(query, base, k, options=options)
        if record_access:
            await self.access([h.record for h in close], now=now)
        return close


def _promote_at(row: TierRow, *, moment: datetime, windows: LifecycleWindows) -> TierRow:
    return promote(row, moment, windows)


def _by_kind(records: Sequence[Episode | Fact]) -> dict[RecordKind, list[tuple[str, str]]]:
    grouped: dict[RecordKind, dict[str, str]] = {}
    for record in records:
        if isinstance(record, Episode):
            kind: RecordKind = "episode"
        elif isinstance(record, Fact):
            kind = "fact"
        else:
            raise InvalidInputError(f"lifecycle access takes episodes and facts, got {type(record).__name__}")
        if record.user is None:
            raise InvalidInputError(f"{kind} {record.id} has no user: access stored records")
        grouped.setdefault(kind, {})[record.id] = record.user
    return {kind: sorted(pairs.items()) for kind, pairs in grouped.items()}
