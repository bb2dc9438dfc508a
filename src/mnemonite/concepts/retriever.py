"""`GraphRetriever`: a question answered from a (user, agent) concept graph (seed concepts by cosine, then a BFS)."""

from __future__ import annotations

from collections import deque

import numpy as np

from mnemonite.concepts.consolidator import SemanticConsolidator, check_unit, graph_owner
from mnemonite.embedding.base import Embedder, embed_query
from mnemonite.errors import EmbedderMismatchError, InvalidInputError
from mnemonite.models.concepts import ConceptNode, GraphResult, MemoryGraph, RelationshipEdge, ScoredConcept
from mnemonite.scope import Scope

__all__ = ["GraphRetriever", "format_as_context"]

HOP_DECAY = 0.5  # a neighbour counts half its parent: one hop away is related, not the answer
CACHED_GRAPHS = 32  # (user, agent) graphs (nodes, edges, vectors) a retriever keeps between queries
Loaded = tuple[tuple[int, str], MemoryGraph, list[str], np.ndarray]


class GraphRetriever:
    """Seeds: the ``seeds`` nodes closest to the question (cosine >= ``min_cosine``); then a
    breadth-first walk of ``depth`` hops along the edges. Schematic nodes come first."""

    def __init__(
        self,
        consolidator: SemanticConsolidator,
        embedder: Embedder,
        *,
        seeds: int = 3,
        min_cosine: float = 0.3,
        depth: int = 1,
    ) -> None:
        if seeds < 1 or depth < 0:
            raise InvalidInputError("seeds must be >= 1 and depth >= 0")
        self.consolidator = consolidator
        self.embedder = embedder
        self.seeds = seeds
        self.min_cosine = check_unit("min_cosine", min_cosine)
        self.depth = depth
        self._cache: dict[tuple[str, str], Loaded] = {}

    async def query(self, scope: Scope, question: str, top_k: int = 5) -> GraphResult:
        """The ``top_k`` concepts of the scope's (user, agent) graph that bear on ``question``, and their edges."""
        user, agent = graph_owner(scope)
        if not isinstance(question, str) or not question.strip() or top_k < 1:
            raise InvalidInputError("a graph query needs a non-empty question and top_k >= 1")
        loaded = await self._load(user, agent)
        if loaded is None or not loaded[1].nodes:
            version = 0 if loaded is None else loaded[1].version
            return GraphResult(user=user, agent=agent, question=question, version=version, concepts=[], edges=[])
        _, graph, ids, matrix = loaded
        if graph.model != self.embedder.model:
            raise EmbedderMismatchError(f"the concept graph of agent {agent!r} holds {graph.model!r} vectors")
        cosine = matrix @ await embed_query(self.embedder, question)
        reached = self._walk(graph, ids, cosine)
        ranked = sorted(reached.values(), key=lambda s: (s.node.category != "schematic", -s.score, s.node.label))
        best = ranked[:top_k]
        kept = {s.node.id for s in best}
        edges = [e for e in graph.edges if e.source in kept and e.target in kept]
        return GraphResult(user=user, agent=agent, question=question, version=graph.version, concepts=best, edges=edges)

    def format_as_context(self, result: GraphResult) -> str:
        """`format_as_context` (kept on the retriever too, as the spec calls it)."""
        return format_as_context(result)

    async def _load(self, user: str, agent: str) -> Loaded | None:
        """The graph and its vectors, read again only when a consolidation or a purge changed it."""
        key = (user, agent)
        head = await self.consolidator.head(user, agent)
        if head is None:
            return None
        cached = self._cache.get(key)
        if cached is not None and cached[0] == head:
            return cached
        graph = await self.consolidator.load_graph(user, agent)
        ids, matrix = await self.consolidator.vectors(user, agent, self.embedder.dimensions)
        if len(self._cache) >= CACHED_GRAPHS:
            self._cache.pop(next(iter(self._cache)))
        self._cache[key] = (head, graph, ids, matrix)
        return self._cache[key]

    def _walk(self, graph: MemoryGraph, ids: list[str], cosine: np.ndarray) -> dict[str, ScoredConcept]:
        order = [i for i in np.argsort(-cosine) if ids[i] in graph.nodes][: self.seeds]  # nodes added meanwhile wait
        reached = {
            ids[i]: ScoredConcept(node=graph.nodes[ids[i]], score=float(cosine[i]), depth=0)
            for i in order
            if cosine[i] >= self.min_cosine
        }
        around = _adjacency(graph.edges)
        queue = deque(reached)
        while queue:
            here = reached[queue.popleft()]
            if here.depth >= self.depth:
                continue
            for neighbour in around.get(here.node.id, []):
                if neighbour not in reached and neighbour in graph.nodes:
                    score = here.score * HOP_DECAY
                    reached[neighbour] = ScoredConcept(node=graph.nodes[neighbour], score=score, depth=here.depth + 1)
                    queue.append(neighbour)
        return reached


def _adjacency(edges: list[RelationshipEdge]) -> dict[str, list[str]]:
    """Neighbours of each node, both directions, heaviest edges first."""
    around: dict[str, list[tuple[int, str]]] = {}
    for edge in edges:
        around.setdefault(edge.source, []).append((edge.weight, edge.target))
        around.setdefault(edge.target, []).append((edge.weight, edge.source))
    return {node: [n for _, n in sorted(pairs, key=lambda p: (-p[0], p[1]))] for node, pairs in around.items()}


def format_as_context(result: GraphResult) -> str:
    """The result as prompt text: one line per concept, core (schematic) concepts marked."""
    if result.empty:
        return ""
    lines = ["Knowledge graph context:"]
    for scored in result.concepts:
        lines.append(_line(scored.node))
    return "\n".join(lines)


def _line(node: ConceptNode) -> str:
    text = f"- {node.label}"
    if node.description and node.description.lower() != node.label.lower():
        text += f": {node.description}"
    return text + (" [core concept]" if node.category == "schematic" else "")
