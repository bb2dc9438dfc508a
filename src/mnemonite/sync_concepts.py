"""Blocking ``mem.concepts`` and ``mem.lifecycle``: one-line delegates, as the rest of `SyncMemory`."""

from __future__ import annotations

from collections.abc import Coroutine, Sequence
from datetime import datetime
from typing import Any, Protocol, TypeVar

from mnemonite.concepts import ConceptMemory, EventGraph
from mnemonite.lifecycle import LifecycleTierManager
from mnemonite.models import Episode, Fact
from mnemonite.models.concepts import EventNode, GraphResult, GraphVersion, MemoryGraph, SemanticShiftEvent
from mnemonite.models.lifecycle import LifecycleTier, SweepReport, TierRow, TierStats
from mnemonite.models.search import RecordKind, SearchHit, Tier
from mnemonite.scope import Scope
from mnemonite.search import SearchOptions

__all__ = ["SyncConceptMemory", "SyncLifecycleTierManager"]

T = TypeVar("T")


class _Loop(Protocol):
    def run(self, coro: Coroutine[Any, Any, T]) -> T: ...


class SyncConceptMemory:
    """Blocking ``mem.concepts``."""

    def __init__(self, concepts: ConceptMemory, loop: _Loop) -> None:
        self._concepts, self._run = concepts, loop.run

    def observe(self, scope: Scope, event: EventNode) -> SemanticShiftEvent | None:
        return self._run(self._concepts.observe(scope, event))

    def observe_many(self, scope: Scope, events: Sequence[EventNode]) -> list[SemanticShiftEvent | None]:
        return self._run(self._concepts.observe_many(scope, events))

    def flush(self, scope: Scope) -> GraphVersion | None:
        return self._run(self._concepts.flush(scope))

    def event_graph(self, scope: Scope) -> EventGraph | None:
        return self._concepts.event_graph(scope)

    def consolidate(self, scope: Scope, events: Sequence[EventNode]) -> GraphVersion | None:
        return self._run(self._concepts.consolidate(scope, events))

    def load_graph(self, scope: Scope) -> MemoryGraph:
        return self._run(self._concepts.load_graph(scope))

    def versions(self, scope: Scope, *, limit: int = 100) -> list[GraphVersion]:
        return self._run(self._concepts.versions(scope, limit=limit))

    def query(self, scope: Scope, question: str, top_k: int = 5) -> GraphResult:
        return self._run(self._concepts.query(scope, question, top_k))

    def format_as_context(self, result: GraphResult) -> str:
        return self._concepts.format_as_context(result)


class SyncLifecycleTierManager:
    """Blocking ``mem.lifecycle``."""

    def __init__(self, lifecycle: LifecycleTierManager, loop: _Loop) -> None:
        self._lifecycle, self._run = lifecycle, loop.run
        self.windows = lifecycle.windows

    def access(self, records: Sequence[Episode | Fact], *, now: datetime | None = None) -> list[TierRow]:
        return self._run(self._lifecycle.access(records, now=now))

    def sweep(self, scope: Scope | str | None = None, *, now: datetime | None = None) -> SweepReport:
        return self._run(self._lifecycle.sweep(scope, now=now))

    def stats(self, scope: Scope | str) -> TierStats:
        return self._run(self._lifecycle.stats(scope))

    def tiers(self, kind: RecordKind, ids: Sequence[str]) -> dict[str, LifecycleTier]:
        return self._run(self._lifecycle.tiers(kind, ids))

    def search(
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
        return self._run(
            self._lifecycle.search(
                scope, query, k, tiers=tiers, enough=enough, min_cosine=min_cosine, options=options,
                record_access=record_access, now=now,
            )
        )  # fmt: skip
