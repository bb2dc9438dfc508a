"""`Memory`: the async entry point wiring a store to the tiers, search and the consolidation rules."""

from __future__ import annotations

import asyncio
import logging
import os
import time
from collections.abc import AsyncGenerator, Callable, Sequence
from datetime import datetime
from pathlib import Path
from types import TracebackType
from typing import Literal, Self

from mnemonite._time import utcnow
from mnemonite.backup import BackupReport, backup_store
from mnemonite.backup import Progress as BackupProgress
from mnemonite.concepts import ConceptMemory
from mnemonite.config import MemoryConfig
from mnemonite.conflicts import locale_pack
from mnemonite.consolidator.runner import Consolidator
from mnemonite.embedding.base import Embedder
from mnemonite.embedding.indexer import Indexer, IndexProgress
from mnemonite.embedding.registry import attach, retire_readable
from mnemonite.errors import InvalidInputError, NotFoundError
from mnemonite.graph import GraphMemory
from mnemonite.inputs import checked
from mnemonite.keys import ApiKeys
from mnemonite.lifecycle import LifecycleTierManager
from mnemonite.models import ConsolidationRule, ConsolidationRun, MigrationPlan, RuleState, StoreHealth
from mnemonite.models.episode import Episode
from mnemonite.models.fact import MemoryType
from mnemonite.models.search import SearchFilter, SearchHit, Tier
from mnemonite.privacy import SecretGuard
from mnemonite.reading.parser import load_parser
from mnemonite.recognisers import Recogniser, SecretScanner
from mnemonite.salience import SalienceScorer
from mnemonite.scan import ScanProgress, ScanReport, scan_secrets
from mnemonite.scope import Scope, as_scope
from mnemonite.search import Reranker, SearchEngine, SearchOptions
from mnemonite.search.routing import AdaptiveRetriever, Route, RoutedSearch
from mnemonite.store import Store, memory_file, open_store
from mnemonite.store.sql_ids import IdKind
from mnemonite.tiers import EpisodicTier, SemanticTier
from mnemonite.tiers.procedural import ProceduralTier
from mnemonite.tiers.session import SessionTier
from mnemonite.tiers.shared import SharedTier
from mnemonite.tiers.working import WorkingTier
from mnemonite.tools.dispatch import Tools

__all__ = ["Memory"]

log = logging.getLogger("mnemonite.consolidation")

Progress = Callable[[IndexProgress], object]

_DEFAULT = object()


@checked
class Memory:
    """Layered long-term memory for an agent (async).

    >>> mem = await Memory.open("sqlite:///./agent-memory.db")
    >>> await mem.episodic.put(Episode(content="I live in Paris"), user="alice", session="S1", agent="rag")
    >>> await mem.consolidate(ConsolidationRule(id="nightly"))
    >>> await mem.search(Scope(user="alice"), "where does alice live")
    """

    def __init__(
        self,
        store: Store,
        config: MemoryConfig,
        *,
        scorer: SalienceScorer | None = None,
        readers: Sequence[Embedder] = (),
        recognisers: Sequence[Recogniser] = (),
    ) -> None:
        self.config = config
        pack = locale_pack(config.locale)
        scanner = SecretScanner.with_patterns(pack.secrets, extra=recognisers)
        guard = SecretGuard(scanner, config.secrets_at_rest)
        self._closed = False
        self._store = store
        self._indexer = Indexer(store, readers[0]) if readers else None
        self._engine = SearchEngine(store, readers, config.search, cache_bytes=config.search_cache_bytes)
        self.episodic = EpisodicTier(
            store,
            track_access=config.track_access,
            after_put=self._after_put,
            scorer=scorer,
            engine=self._engine,
            sensitivity=config.episodic_sensitivity,
            guard=guard,
        )
        self.semantic = SemanticTier(
            store,
            after_write=self._after_write,
            engine=self._engine,
            indexer=self._indexer,
            locale=config.locale,
            thresholds=config.conflicts,
            sensitivity=config.semantic_sensitivity,
            guard=guard,
            reader=config.reader,
            learn_graph=config.learn_graph,
        )
        self.graph = GraphMemory(store, self.semantic, salience=config.salience, after_write=self._after_write)
        # the agent tiers
        self.working = WorkingTier(store, sensitivity=config.working_sensitivity, guard=guard)
        self.session = SessionTier(store, sensitivity=config.session_sensitivity, guard=guard)
        self.shared = SharedTier(store, sensitivity=config.shared_sensitivity)
        self.procedural = ProceduralTier(
            store, embedder=readers[0] if readers else None, sensitivity=config.procedural_sensitivity, guard=guard
        )
        self.consolidator = Consolidator(
            store, self.semantic, config.consolidator, procedural=self.procedural, shared=self.shared
        )
        self.keys = ApiKeys(store)
        # the nine memory tools an agent runtime registers
        self.tools = Tools(self, store)
        self.secrets = guard
        # -- concept graph, lifecycle tiers, routing: nothing runs on its own unless the config says so --
        self.concepts = ConceptMemory(store, self._engine.active, config.concepts)
        self.lifecycle = LifecycleTierManager(store, self._engine, config.lifecycle)
        graph_query = self.concepts.query if self._engine.active is not None else None
        self._router = AdaptiveRetriever(
            self._flat, self._newest, graph_query, self._episodes_in, superseded=self._store.superseded_among
        )

    @classmethod
    async def open(
        cls,
        url: str | os.PathLike[str] | None = None,
        *,
        config: MemoryConfig | None = None,
        scorer: SalienceScorer | None = None,
        embedder: Embedder | object | None = _DEFAULT,
        previous_embedders: Sequence[Embedder] = (),
        create: bool = True,
        recognisers: Sequence[Recogniser] = (),
    ) -> Memory:
        """Open (creating if needed) the memory at ``url``; with no arguments, ``./mnemonite.db``.

        ``url`` may be a bare SQLite path (``./m.db``, or a `pathlib.Path`). ``create=False`` opens only an existing
        database and raises `DatabaseNotFoundError` otherwise, creating nothing.

        ``embedder`` defaults to the packaged offline model (``config.embedder="none"`` or
        ``embedder=None`` for full-text search only). ``recognisers`` find secrets of kinds of your
        own, beside the defaults and the locale pack's (`mnemonite.recognisers`).
        """
        config = config or MemoryConfig()
        if url is not None:
            if isinstance(url, os.PathLike):
                url = os.fspath(url)
            if not isinstance(url, str):
                raise InvalidInputError(f"Memory.open: url must be a string or a path, got {type(url).__name__}")
            config = config.model_copy(update={"url": url})
        locale_pack(config.locale)  # an unknown locale fails before anything is opened
        if config.reader == "parser":
            await asyncio.to_thread(load_parser)  # asked for by name: a missing parser fails before anything opens
        store = await open_store(config.url, create=create, busy_timeout=config.busy_timeout)
        try:
            chosen = _embedder(config, embedder)
            readers = (
                [] if chosen is None else await attach(store, chosen, config.embedder_strategy, previous_embedders)
            )
            return cls(store, config, scorer=scorer, readers=readers, recognisers=recognisers)
        except BaseException:
            await store.close()
            raise

    async def close(self, *, finish_indexing: bool | None = None, progress: Progress | None = None) -> None:
        """Embed the records still waiting for a vector, then close the database connection.

        By default (``config.index_on_close``) for up to ``config.index_on_close_seconds``, so that closing after a
        bulk write stays quick: what remains is logged, and the next open's indexer (or `index`) resumes it.
        ``finish_indexing=True`` embeds everything first, ``False`` nothing; ``progress`` is called after each
        batch. Interrupting it loses nothing. Closing a closed memory does nothing; any other call on it raises
        `StoreError`.
        """
        if self._closed:
            return
        self._closed = True
        try:
            await self.tools.flush()
            if self._indexer is not None:
                await self._indexer.close()
                if self.config.index_on_close if finish_indexing is None else finish_indexing:
                    bound = self.config.index_on_close_seconds if finish_indexing is None else None
                    await self._index(progress, bound)
        finally:
            await self.consolidator._close()
            await self._engine.close()
            await self._store.close()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.close(finish_indexing=False if error is not None else None)  # a failure is not kept waiting

    async def health(self, *, deep: bool = False) -> StoreHealth:
        """Counts and schema version of the store, and how many records wait for a vector;
        ``deep=True`` adds a full integrity check."""
        health = await self._store.health(deep=deep)
        if self._indexer is None:
            return health
        return health.model_copy(update={"pending_embeddings": await self._indexer.pending()})

    async def resolve_id(self, kind: IdKind, prefix: str, *, scope: Scope | str | None = None) -> str:
        """The full id of the one episode, fact, entity or rule whose id is or starts with ``prefix``; among the
        records of ``scope`` (its user, and agent when it names one) when given.

        Raises `NotFoundError` when none matches and `AmbiguousIdError` (listing a few) when several do.
        """
        if scope is None:
            return await self._store.resolve_id(kind, prefix)
        within = as_scope(scope)
        return await self._store.resolve_id(kind, prefix, within.user, within.agent)

    async def migrate(self, plan: MigrationPlan) -> None:
        """Apply a schema migration (adding nullable columns only)."""
        await self._store.migrate(plan)

    async def search(
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
        """Hybrid search over the scope's episodes and facts, best first (see `SearchHit`).

        Search reads its writes: records of the scope not embedded yet are embedded first when a few
        wait (``SearchOptions.embed_pending``); past that, the best full-text candidates among them
        are, and the rest rank by full text as a full-text search would rank them. ``fresh=True``
        embeds everything pending first (and waits for an approximate index being built for a
        large memory, see `SearchOptions`).
        """
        flt = SearchFilter.model_validate(
            {
                "scope": as_scope(scope),
                "tiers": tiers,
                "memory_types": memory_types,
                "tags": tags,
                "since": since,
                "until": until,
                "as_of": as_of,
            }
        )
        if fresh:
            await self.index()
        hits = await self._engine.search(query, flt, k, options=options, reranker=reranker, settled=fresh)
        await self._accessed(hits)
        return hits

    async def index(self, *, progress: Progress | None = None) -> int:
        """Embed every record the active embedder has not seen yet; returns how many.

        ``progress`` is called after each batch (`IndexProgress`: embedded so far, remaining).
        """
        return await self._index(progress, None)

    async def _index(self, progress: Progress | None, seconds: float | None) -> int:
        """`index`, stopping after the batch that passes ``seconds`` (None: none), with a log line of what is left."""
        if self._indexer is None:
            return 0
        done, started = 0, time.monotonic()
        async for step in self._indexer.run():
            done += step.batch
            if progress is not None:
                progress(step)
            if seconds is not None and time.monotonic() - started >= seconds and step.remaining:
                left = await self._indexer.pending()
                logging.getLogger("mnemonite.embedding").warning(
                    "closing with %d records still waiting for a vector (embedded %d in %.1f s): the next open"
                    " resumes them; Memory.index() or `mnemonite index` embeds them now",
                    left, done, time.monotonic() - started,
                )  # fmt: skip
                break
        return done

    async def migrate_embedder(self) -> AsyncGenerator[IndexProgress, None]:
        """Re-embed every record with the active embedder, yielding progress after each batch.

        Resumable (the position is stored) and cancellable (stop iterating). When it has
        caught up, the previous models' vectors are dropped.
        """
        if self._indexer is None:
            return
        async for progress in self._indexer.run():
            yield progress
        if await self._indexer.pending() == 0:
            await retire_readable(self._store)

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
        run = await self._store.consolidate_and_apply(rule, max_episodes=self.config.max_episodes_per_run)
        await self._after_write()
        return run

    async def run_due(self, now: datetime | None = None) -> list[ConsolidationRun]:
        """Run every registered rule whose cadence says it is due."""
        moment = now or utcnow()
        states = await self._store.rule_states()
        return [await self.consolidate(state.rule) for state in states if state.is_due(moment)]

    # -- backups -------------------------------------------------------------------------------

    async def backup(self, path: str | Path, *, progress: BackupProgress | None = None) -> BackupReport:
        """Write a consistent backup of the whole memory to ``path`` while other processes keep writing.

        SQLite: a single-file database copy (the online backup API), integrity-checked; PostgreSQL:
        the export format. ``path`` is replaced whole at the end. The report holds every table's
        row count and content hash; `mnemonite.backup.restore_memory` loads it and checks them.
        ``progress(table, rows_done, rows_total)`` is called as each table is checked.
        """
        return await backup_store(self._store, path, progress=progress, source=memory_file(self.config.url))

    async def scan_secrets(self, *, mask: bool = False, progress: ScanProgress | None = None) -> ScanReport:
        """Find the secrets nobody tagged that this memory holds in clear (written before recognition, or
        under other recognisers): card numbers, keys, passwords in records and in the audit rows quoting them.

        ``mask=True`` rewrites each such row as a write would have stored it (``[secret: card number]``,
        sensitivity raised), one audited transaction per batch; its episodes and facts are embedded again
        from the masked text. Resumable: a second run goes on where an interrupted one stopped.
        ``progress(table, rows_read, rows_in_table)`` is called after each batch.
        """
        return await scan_secrets(self._store, self.secrets, self._engine.active, mask=mask, progress=progress)

    async def _rule(self, rule_id: str) -> ConsolidationRule:
        for state in await self._store.rule_states():
            if state.rule.id == rule_id:
                return state.rule
        raise NotFoundError(f"no consolidation rule with id {rule_id!r}; register it with add_rule")

    async def _after_put(self) -> None:
        """Due rules after a put (``consolidate_on_put``). The put is committed by then, so a failing rule is
        logged and does not make it look failed; the rule runs again at the next put or `run_due`."""
        try:
            if self.config.consolidate_on_put:
                await self.run_due()
        except Exception:
            log.exception("consolidate_on_put: a due rule failed; the episodes are stored, the rule will run again")
        finally:
            await self._after_write()

    async def _after_write(self) -> None:
        if self._indexer is not None and self.config.index_in_background:
            self._indexer.kick()

    # -- concept graph, lifecycle tiers, routing ------------------------------------------------

    async def retrieve(
        self,
        scope: Scope | str,
        query: str,
        k: int = 10,
        *,
        route: Route | Literal["auto"] = "auto",
        agent: str | None = None,
    ) -> RoutedSearch:
        """Retrieval routed by the query (see `mnemonite.search.routing`): SEQUENTIAL (the newest
        episodes), MULTIHOP (a second search from the best hit, for questions that ask for a set of things),
        GRAPH (flat search re-ranked by the scope user's concept graph of ``agent``, default the scope's;
        flat when the graph gives nothing) or FLAT (`search`). The result says which and why."""
        routed = await self._router.retrieve(as_scope(scope), query, k, route=route, agent=agent)
        await self._accessed(routed.hits)
        return routed

    async def _accessed(self, hits: Sequence[SearchHit]) -> None:
        if self.config.track_lifecycle and hits:
            await self.lifecycle.access([h.record for h in hits])

    async def _flat(self, scope: Scope, query: str, k: int) -> list[SearchHit]:
        return await self._engine.search(query, SearchFilter(scope=scope), k)

    async def _newest(self, scope: Scope, k: int) -> list[Episode]:
        return await self._store.recent(scope.user, scope.session, scope.agent, limit=k)

    async def _episodes_in(self, scope: Scope, ids: Sequence[str]) -> list[Episode]:
        """The episodes of ``ids`` that lie inside ``scope`` (a graph names records of every user of its agent)."""
        found = [await self._store.get_episode(i) for i in ids]
        return [e for e in found if e is not None and _inside(e, scope)]


def _inside(episode: Episode, scope: Scope) -> bool:
    return (
        episode.user == scope.user and scope.session in (None, episode.session) and scope.agent in (None, episode.agent)
    )


def _embedder(config: MemoryConfig, embedder: Embedder | object | None) -> Embedder | None:
    if embedder is not _DEFAULT:
        return embedder if isinstance(embedder, Embedder) else None
    if config.embedder == "none":
        return None
    from mnemonite.embedding.onnx import OnnxEmbedder

    return OnnxEmbedder.default()
