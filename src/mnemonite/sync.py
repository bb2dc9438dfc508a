"""`SyncMemory`: the blocking facade. Every method is a one-line delegate to `Memory`,
run on a private event-loop thread, so there is one implementation of everything."""

from __future__ import annotations

import asyncio
import atexit
import logging
import os
import threading
import weakref
from collections.abc import AsyncGenerator, Callable, Coroutine, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import Future
from datetime import datetime
from pathlib import Path
from types import TracebackType
from typing import Any, Literal, Self, TypeVar

from mnemonite.backup import BackupReport
from mnemonite.backup import Progress as BackupProgress
from mnemonite.config import MemoryConfig
from mnemonite.consolidator.runner import Consolidator
from mnemonite.embedding.base import Embedder
from mnemonite.embedding.indexer import IndexProgress
from mnemonite.errors import StoreError
from mnemonite.graph import GraphMemory
from mnemonite.judge import ConflictJudge
from mnemonite.keys import ApiKeys
from mnemonite.memory import _DEFAULT, Memory, Progress
from mnemonite.models import (
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
from mnemonite.models.conflict import ConflictDecision, JudgeVerdict, PurgeRecord
from mnemonite.models.consolidator import ConsolidatorStatus, Phase, PhaseReport, TopicEpisode
from mnemonite.models.fact import EntityLink, EventDateConfidence, FactStatus, MemoryType
from mnemonite.models.graph import (
    BudgetConfig,
    Direction,
    Edge,
    Entity,
    EntityContext,
    GraphBuildReport,
    GraphStats,
    RecallOptions,
    ScoredFact,
)
from mnemonite.models.keys import ApiKey, IssuedKey
from mnemonite.models.search import SearchHit, Tier
from mnemonite.models.sensitivity import Sensitivity
from mnemonite.recognisers import Recogniser
from mnemonite.salience import SalienceContext, SalienceScorer
from mnemonite.scan import ScanProgress, ScanReport
from mnemonite.scope import Scope
from mnemonite.search import Reranker, SearchOptions
from mnemonite.search.routing import Route, RoutedSearch
from mnemonite.store.sql_ids import IdKind
from mnemonite.sync_concepts import SyncConceptMemory, SyncLifecycleTierManager
from mnemonite.sync_tiers import SyncProceduralTier, SyncSessionTier, SyncSharedTier, SyncWorkingTier
from mnemonite.sync_tools import SyncTools
from mnemonite.tiers import EpisodicTier, SalientEpisode, SemanticTier
from mnemonite.tiers.episodic import RecalledEpisode

__all__ = ["SyncMemory"]

T = TypeVar("T")
log = logging.getLogger("mnemonite")
_OPEN: weakref.WeakSet[SyncMemory] = weakref.WeakSet()  # closed at exit (see `SyncMemory`)


@atexit.register  # registered after the embedding worker's, so it runs first, while the worker still serves
def _close_open_memories() -> None:
    for memory in list(_OPEN):
        memory._close_at_exit()


class _Loop:
    """An event loop running on a daemon thread; `run` blocks until a coroutine finishes."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name="mnemonite-loop", daemon=True)
        self.thread.start()

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        if self.closed:
            coro.close()  # never started: no "was never awaited" warning
            raise StoreError("the memory is closed: open it again with SyncMemory.open")
        future: Future[T] = asyncio.run_coroutine_threadsafe(coro, self.loop)
        return future.result()

    @property
    def closed(self) -> bool:
        return self.loop.is_closed()

    def stop(self) -> None:
        self.run(self.loop.shutdown_default_executor())  # let embedding threads finish first
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join()
        self.loop.close()


async def _next(iterator: AsyncGenerator[IndexProgress, None]) -> IndexProgress:
    return await anext(iterator)


class SyncEpisodicTier:
    """Blocking ``mem.episodic``."""

    def __init__(self, tier: EpisodicTier, loop: _Loop) -> None:
        self._tier, self._run = tier, loop.run

    def put(
        self, episode: Episode, *, user: str | None = None, session: str | None = None, agent: str | None = None
    ) -> Episode:
        return self._run(self._tier.put(episode, user=user, session=session, agent=agent))

    def record(self, scope: Scope, content: str, **fields: Any) -> Episode:
        return self._run(self._tier.record(scope, content, **fields))

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

    def purge(self, episode_id: str, *, reason: str, derived: bool = False) -> PurgeRecord:
        return self._run(self._tier.purge(episode_id, reason=reason, derived=derived))

    def purge_scope(self, scope: Scope | str, *, reason: str, derived: bool = False) -> PurgeRecord:
        return self._run(self._tier.purge_scope(scope, reason=reason, derived=derived))

    def recent(
        self,
        user: str | Scope,
        session: str | None = None,
        agent: str | None = None,
        *,
        limit: int = 10,
        until: datetime | None = None,
    ) -> list[Episode]:
        return self._run(self._tier.recent(user, session, agent, limit=limit, until=until))

    def salient(
        self, scope: Scope | str, *, limit: int = 10, context: SalienceContext | None = None, candidates: int = 200
    ) -> list[SalientEpisode]:
        return self._run(self._tier.salient(scope, limit=limit, context=context, candidates=candidates))

    def recall(
        self,
        scope: Scope | str,
        query: str,
        k: int = 5,
        *,
        candidates: int = 50,
        context: SalienceContext | None = None,
    ) -> list[RecalledEpisode]:
        return self._run(self._tier.recall(scope, query, k, candidates=candidates, context=context))

    def search(
        self,
        scope: Scope | str,
        query: str,
        k: int = 10,
        *,
        since: datetime | None = None,
        until: datetime | None = None,
        options: SearchOptions | None = None,
        reranker: Reranker | None = None,
    ) -> list[SearchHit]:
        return self._run(
            self._tier.search(scope, query, k, since=since, until=until, options=options, reranker=reranker)
        )

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
        scope: Scope | str,
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
                scope, as_of=as_of, valid_at=valid_at, status=status, subject=subject,
                predicate=predicate, channel=channel, limit=limit,
            )
        )  # fmt: skip

    def get(self, fact_id: str) -> Fact:
        return self._run(self._tier.get(fact_id))

    def add_names(self, scope: Scope, *names: str) -> list[str]:
        return self._run(self._tier.add_names(scope, *names))

    def names(self, scope: Scope) -> list[str]:
        return self._run(self._tier.names(scope))

    def remember_with_decision(
        self,
        scope: Scope,
        text: str,
        *,
        memory_type: MemoryType = "fact",
        subject: str | None = None,
        predicate: str | None = None,
        object: str | None = None,
        tags: Sequence[str] = (),
        valid_from: datetime | None = None,
        source_episode_ids: Sequence[str] = (),
        confidence: float = 1.0,
        entities: Sequence[EntityLink | tuple[str, str] | str] = (),
        summary: str | None = None,
        payload: dict[str, Any] | None = None,
        rule_id: str = "remember",
        event_date: datetime | None = None,
        event_date_confidence: EventDateConfidence | None = None,
        sensitivity: Sensitivity | None = None,
    ) -> ConflictDecision:
        return self._run(
            self._tier.remember_with_decision(
                scope, text, memory_type=memory_type, subject=subject, predicate=predicate, object=object,
                tags=tags, valid_from=valid_from, source_episode_ids=source_episode_ids, confidence=confidence,
                entities=entities, summary=summary, payload=payload, rule_id=rule_id, event_date=event_date,
                event_date_confidence=event_date_confidence, sensitivity=sensitivity,
            )
        )  # fmt: skip

    def remember(self, scope: Scope, text: str, **fields: Any) -> Fact:
        return self._run(self._tier.remember(scope, text, **fields))

    def supersede(self, old_id: str, text: str, *, scope: Scope | None = None, **fields: Any) -> Fact:
        return self._run(self._tier.supersede(old_id, text, scope=scope, **fields))

    def forget(self, fact_id: str, *, scope: Scope | None = None) -> Fact:
        return self._run(self._tier.forget(fact_id, scope=scope))

    def purge(self, fact_id: str, *, reason: str) -> PurgeRecord:
        return self._run(self._tier.purge(fact_id, reason=reason))

    def purges(self, scope: Scope | str) -> list[PurgeRecord]:
        return self._run(self._tier.purges(scope))

    def conflicts(self, scope: Scope | str, *, fact_id: str | None = None, limit: int = 100) -> list[ConflictDecision]:
        return self._run(self._tier.conflicts(scope, fact_id=fact_id, limit=limit))

    def resolve_pending(self, scope: Scope, judge: ConflictJudge | None = None) -> list[ConflictDecision]:
        return self._run(self._tier.resolve_pending(scope, judge))

    def decide_pending(self, fact_id: str, verdict: JudgeVerdict, *, scope: Scope | None = None) -> ConflictDecision:
        return self._run(self._tier.decide_pending(fact_id, verdict, scope=scope))

    def history(self, fact_id: str) -> list[Fact]:
        return self._run(self._tier.history(fact_id))

    def lineage(self, fact_id: str) -> list[Lineage]:
        return self._run(self._tier.lineage(fact_id))

    def deltas(self, *, rule_id: str | None = None, pending: bool = False, limit: int = 100) -> list[DeltaRecord]:
        return self._run(self._tier.deltas(rule_id=rule_id, pending=pending, limit=limit))

    def search(
        self,
        scope: Scope | str,
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
        return self._run(
            self._tier.search(
                scope, query, k, as_of=as_of, memory_types=memory_types, tags=tags, since=since, until=until,
                options=options, reranker=reranker,
            )
        )  # fmt: skip


class SyncGraphMemory:
    """Blocking ``mem.graph``."""

    def __init__(self, graph: GraphMemory, loop: _Loop) -> None:
        self._graph, self._run = graph, loop.run

    def create_entity(
        self,
        scope: Scope,
        *,
        name: str,
        entity_type: str,
        properties: Mapping[str, Any] | None = None,
        owner: str | None = None,
    ) -> Entity:
        return self._run(
            self._graph.create_entity(scope, name=name, entity_type=entity_type, properties=properties, owner=owner)
        )

    def create_entities(self, scope: Scope, entities: Iterable[Mapping[str, Any]]) -> list[Entity]:
        return self._run(self._graph.create_entities(scope, entities))

    def get_entity(self, entity_id: str) -> Entity:
        return self._run(self._graph.get_entity(entity_id))

    def entity(self, scope: Scope, name: str) -> Entity:
        return self._run(self._graph.entity(scope, name))

    def update_entity(
        self,
        entity_id: str,
        *,
        name: str | None = None,
        entity_type: str | None = None,
        properties: Mapping[str, Any] | None = None,
        owner: str | None = None,
    ) -> Entity:
        return self._run(
            self._graph.update_entity(entity_id, name=name, entity_type=entity_type, properties=properties, owner=owner)
        )

    def entities(
        self, scope: Scope, *, entity_type: str | None = None, limit: int = 100, offset: int = 0
    ) -> tuple[list[Entity], int]:
        return self._run(self._graph.entities(scope, entity_type=entity_type, limit=limit, offset=offset))

    def search_entities(self, scope: Scope, query: str, *, limit: int = 20) -> list[Entity]:
        return self._run(self._graph.search_entities(scope, query, limit=limit))

    def delete_entity(self, entity_id: str) -> None:
        return self._run(self._graph.delete_entity(entity_id))

    def relate(
        self,
        scope: Scope,
        *,
        source: str,
        target: str,
        relation: str,
        properties: Mapping[str, Any] | None = None,
    ) -> Edge:
        return self._run(
            self._graph.relate(scope, source=source, target=target, relation=relation, properties=properties)
        )

    def relate_many(
        self, scope: Scope, edges: Iterable[tuple[str, str, str] | tuple[str, str, str, Mapping[str, Any]]]
    ) -> int:
        return self._run(self._graph.relate_many(scope, edges))

    def unrelate(self, *, source: str, target: str, relation: str) -> None:
        return self._run(self._graph.unrelate(source=source, target=target, relation=relation))

    def neighbors(
        self,
        entity_id: str,
        *,
        relation: str | None = None,
        direction: Direction = "both",
        depth: int = 1,
        limit: int = 1000,
        ended: bool = False,
    ) -> list[Edge]:
        return self._run(
            self._graph.neighbors(
                entity_id, relation=relation, direction=direction, depth=depth, limit=limit, ended=ended
            )
        )

    def edges_from(self, entity_id: str, *, limit: int = 1000, ended: bool = False) -> list[Edge]:
        return self._run(self._graph.edges_from(entity_id, limit=limit, ended=ended))

    def edges_to(self, entity_id: str, *, limit: int = 1000, ended: bool = False) -> list[Edge]:
        return self._run(self._graph.edges_to(entity_id, limit=limit, ended=ended))

    def recall(self, scope: Scope, options: RecallOptions | None = None, **fields: Any) -> list[ScoredFact]:
        return self._run(self._graph.recall(scope, options, **fields))

    def touch(self, fact_ids: Sequence[str]) -> int:
        return self._run(self._graph.touch(fact_ids))

    def decay_all(self, scope: Scope, factor: float) -> int:
        return self._run(self._graph.decay_all(scope, factor))

    def consolidate(self, fact_ids: Sequence[str], text: str, *, summary: str | None = None) -> Fact:
        return self._run(self._graph.consolidate(fact_ids, text, summary=summary))

    def promote(self, edge: Edge) -> ConflictDecision:
        return self._run(self._graph.promote(edge))

    def context_for(
        self,
        scope: Scope,
        *,
        entity: str,
        topic: str | None = None,
        max_tokens: int = BudgetConfig().max_tokens,
        budget: BudgetConfig | None = None,
        touch: bool = True,
    ) -> EntityContext:
        return self._run(
            self._graph.context_for(
                scope, entity=entity, topic=topic, max_tokens=max_tokens, budget=budget, touch=touch
            )
        )

    def stats(self, scope: Scope) -> GraphStats:
        return self._run(self._graph.stats(scope))

    def build(
        self, scope: Scope | None = None, *, progress: Callable[[int, int], None] | None = None, batch: int = 200
    ) -> GraphBuildReport:
        return self._run(self._graph.build(scope, progress=progress, batch=batch))


class SyncConsolidator:
    """Blocking ``mem.consolidator``; ``watch`` blocks until Ctrl-C (or ``stop`` is set) and stops cleanly."""

    def __init__(self, consolidator: Consolidator, loop: _Loop) -> None:
        self._consolidator, self._loop, self._run = consolidator, loop, loop.run

    def run(
        self, phase: Phase | None = None, *, user: str | None = None, max_jobs: int | None = None
    ) -> list[PhaseReport]:
        return self._run(self._consolidator.run(phase, user=user, max_jobs=max_jobs))

    def status(self) -> ConsolidatorStatus:
        return self._run(self._consolidator.status())

    def summaries(self, scope: Scope | str) -> dict[str, str]:
        return self._run(self._consolidator.summaries(scope))

    def topic_episodes(self, scope: Scope | str) -> list[TopicEpisode]:
        return self._run(self._consolidator.topic_episodes(scope))

    def due(self, last_runs: dict[Phase, tuple[datetime, int]], now: datetime | None = None) -> list[Phase]:
        return self._run(self._consolidator.due(last_runs, now))

    def watch(
        self,
        *,
        stop: asyncio.Event | None = None,
        poll_seconds: float = 5.0,
        on_report: Callable[[PhaseReport], object] | None = None,
    ) -> None:
        event = stop or asyncio.Event()
        future = asyncio.run_coroutine_threadsafe(
            self._consolidator.watch(stop=event, poll_seconds=poll_seconds, on_report=on_report), self._loop.loop
        )
        try:
            future.result()
        except KeyboardInterrupt:
            # Ctrl-C lands in this thread; the worker finishes the job in hand, then stops.
            self._loop.loop.call_soon_threadsafe(event.set)
            future.result()


class SyncApiKeys:
    """Blocking ``mem.keys``."""

    def __init__(self, keys: ApiKeys, loop: _Loop) -> None:
        self._keys, self._run = keys, loop.run

    def create(
        self,
        user: str,
        *,
        agent: str | None = None,
        can: str | Iterable[str] = ("read", "write"),
        label: str | None = None,
    ) -> IssuedKey:
        return self._run(self._keys.create(user, agent=agent, can=can, label=label))

    def all(self, user: str | None = None) -> list[ApiKey]:
        return self._run(self._keys.all(user))

    def revoke(self, key_id: str) -> ApiKey:
        return self._run(self._keys.revoke(key_id))

    def active(self) -> int:
        return self._run(self._keys.active())

    def authenticate(self, secret: str | None) -> ApiKey:
        return self._run(self._keys.authenticate(secret))


class SyncMemory:
    """Blocking `Memory`: ``with SyncMemory.open("sqlite:///memory.db") as mem: ...``.

    A memory still open when the interpreter exits is closed then, as `close` would: the audit rows of the
    last tool calls are written, the database is closed cleanly.
    """

    def __init__(self, memory: Memory, loop: _Loop) -> None:
        self._memory, self._loop, self._run = memory, loop, loop.run
        self._pid = os.getpid()
        _OPEN.add(self)
        self.config = memory.config
        self.episodic = SyncEpisodicTier(memory.episodic, loop)
        self.semantic = SyncSemanticTier(memory.semantic, loop)
        self.graph = SyncGraphMemory(memory.graph, loop)
        self.consolidator = SyncConsolidator(memory.consolidator, loop)
        # the agent tiers
        self.working = SyncWorkingTier(memory.working, loop)
        self.session = SyncSessionTier(memory.session, loop)
        self.procedural = SyncProceduralTier(memory.procedural, loop)
        # the nine memory tools
        self.tools = SyncTools(memory.tools, loop)
        self.shared = SyncSharedTier(memory.shared, loop)

        self.keys = SyncApiKeys(memory.keys, loop)
        self.concepts = SyncConceptMemory(memory.concepts, loop)
        self.lifecycle = SyncLifecycleTierManager(memory.lifecycle, loop)

    @classmethod
    def open(
        cls,
        url: str | os.PathLike[str] | None = None,
        *,
        config: MemoryConfig | None = None,
        scorer: SalienceScorer | None = None,
        embedder: Embedder | object | None = _DEFAULT,
        previous_embedders: Sequence[Embedder] = (),
        create: bool = True,
        recognisers: Sequence[Recogniser] = (),
    ) -> SyncMemory:
        loop = _Loop()
        try:
            opened = Memory.open(
                url,
                config=config,
                scorer=scorer,
                embedder=embedder,
                previous_embedders=previous_embedders,
                create=create,
                recognisers=recognisers,
            )
            return cls(loop.run(opened), loop)
        except BaseException:
            loop.stop()
            raise

    def close(self, *, finish_indexing: bool | None = None, progress: Progress | None = None) -> None:
        """As `Memory.close`; closing a closed memory does nothing, any other call on it raises `StoreError`."""
        if self._loop.closed:
            return
        try:
            self._run(self._memory.close(finish_indexing=finish_indexing, progress=progress))
        finally:
            self._loop.stop()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None) -> None:
        self.close(finish_indexing=False if error is not None else None)

    def _close_at_exit(self) -> None:
        if self._pid != os.getpid() or self._loop.closed or not self._loop.thread.is_alive():
            return  # a forked child's copy: the loop and its connections are the parent's
        try:
            self.close()
        except Exception:
            log.exception("closing a memory left open at exit failed")

    def health(self, *, deep: bool = False) -> StoreHealth:
        return self._run(self._memory.health(deep=deep))

    def resolve_id(self, kind: IdKind, prefix: str, *, scope: Scope | str | None = None) -> str:
        return self._run(self._memory.resolve_id(kind, prefix, scope=scope))

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

    def search(
        self,
        scope: Scope | str,
        query: str,
        k: int = 10,
        *,
        tiers: Sequence[Tier] = ("episodic", "semantic"),
        memory_types: Sequence[MemoryType] | None = None,
        tags: Sequence[str] | None = None,
        since: datetime | None = None,
        until: datetime | None = None,
        as_of: datetime | None = None,
        options: SearchOptions | None = None,
        reranker: Reranker | None = None,
        fresh: bool = False,
    ) -> list[SearchHit]:
        return self._run(
            self._memory.search(
                scope, query, k, tiers=tiers, memory_types=memory_types, tags=tags, since=since, until=until,
                as_of=as_of, options=options, reranker=reranker, fresh=fresh,
            )
        )  # fmt: skip

    def index(self, *, progress: Progress | None = None) -> int:
        return self._run(self._memory.index(progress=progress))

    def migrate_embedder(self) -> Iterator[IndexProgress]:
        progress = self._memory.migrate_embedder()
        try:
            while True:
                try:
                    yield self._run(_next(progress))
                except StopAsyncIteration:
                    return
        finally:
            self._run(progress.aclose())

    # -- backups -------------------------------------------------------------------------------

    def backup(self, path: str | Path, *, progress: BackupProgress | None = None) -> BackupReport:
        return self._run(self._memory.backup(path, progress=progress))

    def scan_secrets(self, *, mask: bool = False, progress: ScanProgress | None = None) -> ScanReport:
        return self._run(self._memory.scan_secrets(mask=mask, progress=progress))

    # -- concept graph, lifecycle tiers, routing ------------------------------------------------

    def retrieve(
        self,
        scope: Scope | str,
        query: str,
        k: int = 10,
        *,
        route: Route | Literal["auto"] = "auto",
        agent: str | None = None,
    ) -> RoutedSearch:
        return self._run(self._memory.retrieve(scope, query, k, route=route, agent=agent))
