"""``mem.concepts``: the session event graphs, each (user, agent) concept graph and graph queries, on one object."""

from __future__ import annotations

from collections.abc import Sequence

from mnemonite.concepts.consolidator import SemanticConsolidator, graph_owner
from mnemonite.concepts.extract import ConceptExtractor
from mnemonite.concepts.graph import EventGraph, GraphBuilder
from mnemonite.concepts.retriever import GraphRetriever, format_as_context
from mnemonite.embedding.base import Embedder
from mnemonite.errors import ConfigurationError
from mnemonite.inputs import checked
from mnemonite.models.concepts import (
    ConceptConfig,
    EventNode,
    GraphResult,
    GraphVersion,
    MemoryGraph,
    SemanticShiftEvent,
)
from mnemonite.scope import Scope
from mnemonite.store.base import ConceptStore

__all__ = ["ConceptMemory"]


@checked
class ConceptMemory:
    """Feed events with `observe` (messages, LLM calls, tool calls, memory reads); topics are
    consolidated into the (user, agent) graph at each semantic shift and at `flush`. Needs an embedder."""

    def __init__(
        self,
        store: ConceptStore,
        embedder: Embedder | None,
        config: ConceptConfig | None = None,
        extractor: ConceptExtractor | None = None,
    ) -> None:
        self.config = config or ConceptConfig()
        self._store = store
        self._parts: tuple[GraphBuilder, GraphRetriever] | None = None
        if embedder is not None:
            consolidator = SemanticConsolidator(
                store,
                embedder,
                extractor,
                max_concepts=self.config.max_concepts,
                merge_at=self.config.merge_at,
                schematic_at=self.config.schematic_at,
            )
            builder = GraphBuilder(embedder, consolidator, threshold=self.config.shift_threshold)
            retriever = GraphRetriever(
                consolidator, embedder, seeds=self.config.seeds, min_cosine=self.config.min_cosine,
                depth=self.config.depth,
            )  # fmt: skip
            self._parts = (builder, retriever)

    @property
    def builder(self) -> GraphBuilder:
        """The `GraphBuilder` (its `SemanticConsolidator` is ``builder.consolidator``)."""
        return self._need()[0]

    @property
    def retriever(self) -> GraphRetriever:
        return self._need()[1]

    async def observe(self, scope: Scope, event: EventNode) -> SemanticShiftEvent | None:
        """Add an event to the session's graph; the `SemanticShiftEvent` when it began a new topic."""
        return await self.builder.observe(scope, event)

    async def observe_many(self, scope: Scope, events: Sequence[EventNode]) -> list[SemanticShiftEvent | None]:
        """`observe` each event in order, embedding them in one batch."""
        return await self.builder.observe_many(scope, events)

    async def flush(self, scope: Scope) -> GraphVersion | None:
        """End the session: consolidate its open topic and drop its event graph."""
        return await self.builder.flush(scope)

    def event_graph(self, scope: Scope) -> EventGraph | None:
        """The session's transient event graph, if it has one."""
        return self.builder.graph(scope)

    async def consolidate(self, scope: Scope, events: Sequence[EventNode]) -> GraphVersion | None:
        """Merge ``events`` as one topic into the scope's (user, agent) graph now (no shift detection);
        the version records ``scope.session`` when it has one."""
        user, agent = graph_owner(scope)
        return await self.builder.consolidator.consolidate(user, agent, events, session=scope.session)

    async def load_graph(self, scope: Scope) -> MemoryGraph:
        """The scope's (user, agent) concept graph: nodes, edges, version."""
        return await self._store.concept_graph(*graph_owner(scope))

    async def versions(self, scope: Scope, *, limit: int = 100) -> list[GraphVersion]:
        """The (user, agent) graph's versions, newest first (the audit trail of its consolidations)."""
        return await self._store.concept_versions(*graph_owner(scope), limit)

    async def query(self, scope: Scope, question: str, top_k: int = 5) -> GraphResult:
        """The concepts of the scope's (user, agent) graph that bear on ``question`` (`GraphRetriever.query`)."""
        return await self.retriever.query(scope, question, top_k)

    def format_as_context(self, result: GraphResult) -> str:
        """A graph query's result as prompt text."""
        return format_as_context(result)

    def _need(self) -> tuple[GraphBuilder, GraphRetriever]:
        if self._parts is None:
            raise ConfigurationError("the concept graph needs an embedder (this memory was opened without one)")
        return self._parts
