"""`SemanticConsolidator`: a finished topic's events merged into the (user, agent) persistent concept graph."""

from __future__ import annotations

from collections.abc import Sequence

from mnemonite.concepts.extract import ConceptExtractor, KeyPhraseExtractor
from mnemonite.embedding.base import Embedder, Vectors
from mnemonite.errors import InvalidInputError, MemoryScopeError
from mnemonite.models.concepts import EventNode, GraphVersion, MemoryGraph, TopicMerge
from mnemonite.scope import Scope
from mnemonite.store.base import ConceptStore

__all__ = ["SemanticConsolidator", "check_unit", "graph_owner"]

MERGE_AT = 0.85  # the spec's merge threshold: a concept this similar to a node is that node
SCHEMATIC_AT = 5  # the spec's frequency from which a node is a core ("schematic") concept


def graph_owner(scope: Scope) -> tuple[str, str]:
    """The (user, agent) whose concept graph ``scope`` names: a graph is never read across users."""
    if not isinstance(scope, Scope) or scope.agent is None:
        raise MemoryScopeError("a concept graph is read and written under a (user, agent) scope")
    return scope.user, scope.agent


def check_unit(name: str, value: float) -> float:
    """A threshold in [0, 1], or `InvalidInputError`."""
    if not isinstance(value, int | float) or not 0 <= value <= 1:
        raise InvalidInputError(f"{name} must be a number in [0, 1], got {value!r}")
    return float(value)


class SemanticConsolidator:
    """Extracts a topic's concepts (``extractor``: rule-based key phrases by default), embeds them and
    merges them into the (user, agent) graph as its next version, in one transaction.

    A concept at cosine >= ``merge_at`` (0.85) with an existing node increments that node's
    frequency instead of adding a duplicate; at ``schematic_at`` (5) it is tagged schematic.
    """

    def __init__(
        self,
        store: ConceptStore,
        embedder: Embedder,
        extractor: ConceptExtractor | None = None,
        *,
        max_concepts: int = 5,
        merge_at: float = MERGE_AT,
        schematic_at: int = SCHEMATIC_AT,
    ) -> None:
        if max_concepts < 1 or schematic_at < 1:
            raise InvalidInputError("max_concepts and schematic_at must be >= 1")
        self._store = store
        self.embedder = embedder
        self.extractor: ConceptExtractor = extractor or KeyPhraseExtractor()
        self.max_concepts = max_concepts
        self.merge_at = check_unit("merge_at", merge_at)
        self.schematic_at = schematic_at

    async def consolidate(
        self,
        user: str,
        agent: str,
        events: Sequence[EventNode],
        *,
        session: str | None = None,
        shift_distance: float | None = None,
    ) -> GraphVersion | None:
        """Merge ``events`` (one topic) into ``user``'s graph of ``agent``; None when they name no concept."""
        if not agent or not isinstance(agent, str) or not user or not isinstance(user, str):
            raise InvalidInputError("consolidate needs a user id and an agent id")
        concepts = await self.extractor.extract([e.text for e in events], self.max_concepts)
        if not concepts:
            return None
        vectors = await self.embedder.embed_batch([c.label for c in concepts])
        merge = TopicMerge(
            user=user,
            agent=agent,
            session=session,
            model=self.embedder.model,
            concepts=tuple(concepts),
            vectors=vectors,
            sources=tuple(dict.fromkeys(e.record_id for e in events if e.record_id)),
            events=len(events),
            shift_distance=shift_distance,
            merge_at=self.merge_at,
            schematic_at=self.schematic_at,
        )
        return await self._store.consolidate_concepts(merge)

    async def load_graph(self, user: str, agent: str) -> MemoryGraph:
        """The graph: nodes by id, edges, version (0 and empty before its first consolidation)."""
        return await self._store.concept_graph(user, agent)

    async def head(self, user: str, agent: str) -> tuple[int, str] | None:
        """The graph's version and the time it last changed (None: no graph yet); one small read."""
        return await self._store.concept_head(user, agent)

    async def versions(self, user: str, agent: str, limit: int = 100) -> list[GraphVersion]:
        """The graph's consolidations, newest first: what each added and merged."""
        return await self._store.concept_versions(user, agent, limit)

    async def vectors(self, user: str, agent: str, dimensions: int) -> tuple[list[str], Vectors]:
        """The graph's node ids and their unit vectors (row i is node i's)."""
        return await self._store.concept_vectors(user, agent, dimensions)
