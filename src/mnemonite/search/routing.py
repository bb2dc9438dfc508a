"""`AdaptiveRetriever`: each query routed to SEQUENTIAL, GRAPH or FLAT retrieval by keywords (no model call).

The spec's heuristics: "last time", "previously", "earlier", "before", "recent" -> SEQUENTIAL
(the newest records); "how", "why", "relationship", "explain", "cause", "effect", or a query
longer than 80 characters -> GRAPH (the concept graph); anything else -> FLAT (hybrid search).
GRAPH falls back to FLAT when the graph gives nothing. Two guards, measured on LoCoMo
(``bench/locomo.py``), keep the router from losing what flat search finds: a sequential cue
counts only when the query names nothing else ("what did we discuss last time?", not "what did
Caroline paint before the trip?"), and the GRAPH route fuses the graph's records into the flat
ranking instead of replacing it.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Sequence
from typing import Literal

from pydantic import Field

from mnemonite.models.base import Model
from mnemonite.models.concepts import GraphResult
from mnemonite.models.episode import Episode
from mnemonite.models.search import SearchHit
from mnemonite.scope import Scope
from mnemonite.search import query as q

__all__ = ["AdaptiveRetriever", "Route", "RoutedSearch", "route_for"]

Route = Literal["sequential", "graph", "flat"]
SEQUENTIAL_CUES = ("last time", "previously", "earlier", "before", "recent", "recently")
GRAPH_CUES = ("how", "why", "relationship", "explain", "cause", "effect")
LONG_QUERY = 80
# Words of a question about the conversation itself: with the cue removed, nothing is left to search for.
_ABOUT_CONVERSATION = frozenset(
    "discuss discussed talk talked say said tell told mention mentioned conversation chat chatted ask asked"
    " speak spoke topic topics us last time previously earlier recent recently anything something new happen"
    " happened going update updates".split()
)
GRAPH_WEIGHT = 0.5  # rank-fusion weight of the graph's records against flat search's 1.0 (bench/locomo.py)

FlatSearch = Callable[[Scope, str, int], Awaitable[list[SearchHit]]]
Recent = Callable[[Scope, int], Awaitable[list[Episode]]]
GraphQuery = Callable[[str, str, int], Awaitable[GraphResult]]
Fetch = Callable[[Scope, Sequence[str]], Awaitable[list[Episode]]]


class RoutedSearch(Model):
    """What a routed retrieval returns: the hits, the route taken, why, and whether GRAPH fell back."""

    route: Route
    reason: str
    fell_back: bool = False
    hits: list[SearchHit] = Field(default_factory=list)
    graph: GraphResult | None = None


def _has(text: str, cue: str) -> bool:
    return re.search(rf"(?<!\w){re.escape(cue)}(?!\w)", text) is not None


def route_for(question: str) -> tuple[Route, str]:
    """The route for ``question`` and the reason, by the keyword rules (see the module docstring)."""
    text = question.lower()
    cue = next((c for c in SEQUENTIAL_CUES if _has(text, c)), None)
    if cue is not None:
        rest = [w for w in q.terms(text) if w not in _ABOUT_CONVERSATION]
        if not rest:
            return "sequential", f"sequential cue {cue!r} and nothing else named"
    word = next((c for c in GRAPH_CUES if _has(text, c)), None)
    if word is not None:
        return "graph", f"graph cue {word!r}"
    if len(question.strip()) > LONG_QUERY:
        return "graph", f"long query ({len(question.strip())} > {LONG_QUERY} characters)"
    if cue is not None:
        return "flat", f"sequential cue {cue!r} qualifies a subject ({', '.join(rest[:3])}): flat search"
    return "flat", "no routing cue"


class AdaptiveRetriever:
    """Routes each query (`route_for`) and runs the chosen retrieval; GRAPH needs ``graph`` and an agent."""

    def __init__(
        self, search: FlatSearch, recent: Recent, graph: GraphQuery | None, fetch: Fetch, *, concepts: int = 5
    ) -> None:
        self._search, self._recent, self._graph, self._fetch = search, recent, graph, fetch
        self.concepts = concepts

    async def retrieve(
        self,
        scope: Scope,
        question: str,
        k: int = 10,
        *,
        route: Route | Literal["auto"] = "auto",
        agent: str | None = None,
    ) -> RoutedSearch:
        """The ``k`` best records for ``question`` by the routed path (``route`` forces one)."""
        chosen, reason = route_for(question) if route == "auto" else (route, "route given")
        if chosen == "sequential":
            episodes = await self._recent(scope, k)
            hits = [_recent_hit(e, rank) for rank, e in enumerate(episodes)]
            return RoutedSearch(route="sequential", reason=reason, hits=hits)
        if chosen == "graph":
            return await self._graph_route(scope, question, k, reason, agent or scope.agent)
        return RoutedSearch(route="flat", reason=reason, hits=await self._search(scope, question, k))

    async def _graph_route(self, scope: Scope, question: str, k: int, reason: str, agent: str | None) -> RoutedSearch:
        flat = await self._search(scope, question, k)
        if self._graph is None or agent is None:
            why = "no concept graph configured" if self._graph is None else "no agent to read a concept graph of"
            return RoutedSearch(route="flat", reason=f"{reason}; {why}: flat", fell_back=True, hits=flat)
        result = await self._graph(agent, question, self.concepts)
        ranked = _graph_records(result)
        episodes = await self._fetch(scope, ranked[: 4 * k]) if ranked else []
        if not episodes:
            return RoutedSearch(
                route="flat", reason=f"{reason}; the graph gave nothing: flat", fell_back=True, hits=flat, graph=result
            )
        return RoutedSearch(route="graph", reason=reason, hits=_fuse(flat, episodes, k), graph=result)


def _recent_hit(episode: Episode, rank: int) -> SearchHit:
    return SearchHit(record=episode, tier="episodic", score=1.0 / (1 + rank))


def _graph_records(result: GraphResult) -> list[str]:
    """Record ids the graph's concepts lead to, best first: a record taught by several close concepts
    first; a concept that many records taught counts less for each (it says less about any one)."""
    scores: dict[str, float] = {}
    for scored in result.concepts:
        sources = scored.node.sources
        for record in sources:
            scores[record] = scores.get(record, 0.0) + max(scored.score, 0.0) / len(sources) ** 0.5
    return sorted(scores, key=lambda r: (-scores[r], r))


def _fuse(flat: list[SearchHit], graph: list[Episode], k: int) -> list[SearchHit]:
    """Reciprocal rank fusion (k=60) of flat search's ranking and the graph's, flat weighted 1.0."""
    score: dict[str, float] = {}
    hit: dict[str, SearchHit] = {}
    for rank, h in enumerate(flat):
        score[h.record.id] = 1.0 / (60 + rank)
        hit[h.record.id] = h
    for rank, e in enumerate(graph):
        score[e.id] = score.get(e.id, 0.0) + GRAPH_WEIGHT / (60 + rank)
        hit.setdefault(e.id, SearchHit(record=e, tier="episodic", score=0.0))
    order = sorted(score, key=lambda r: -score[r])[:k]
    return [hit[r].model_copy(update={"score": round(score[r], 6)}) for r in order]
