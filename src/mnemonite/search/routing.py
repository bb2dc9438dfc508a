"""`AdaptiveRetriever`: each query routed to SEQUENTIAL, MULTIHOP, GRAPH or FLAT retrieval by keywords (no
model call).

The spec's heuristics: "last time", "previously", "earlier", "before", "recent" -> SEQUENTIAL
(the newest records); "how", "why", "relationship", "explain", "cause", "effect", or a query
longer than 80 characters -> GRAPH (the concept graph); anything else -> FLAT (hybrid search).
A fourth route, MULTIHOP, is checked before GRAPH: a question that asks for a set of things ("both",
"in common", "how many", "kinds of", a plural after what/which, "what has ... done") needs several
records, and gets a second search from the first one's best hit (`mnemonite.search.hops`).
GRAPH falls back to FLAT when the graph gives nothing. Two guards, measured on LoCoMo
(``bench/locomo.py``), keep the router from losing what flat search finds: a sequential cue
counts only when the query names nothing else ("what did we discuss last time?", not "what did
Caroline paint before the trip?"), and the GRAPH route boosts the flat hits the graph's concepts
point at (score x (1 + 0.1 x their pull)) instead of replacing flat search.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Sequence
from typing import Literal

from pydantic import Field

from mnemonite.errors import InvalidInputError
from mnemonite.models.base import Model
from mnemonite.models.concepts import GraphResult
from mnemonite.models.episode import Episode
from mnemonite.models.search import SearchHit
from mnemonite.scope import Scope
from mnemonite.search import hops
from mnemonite.search import query as q

__all__ = ["AdaptiveRetriever", "Route", "RoutedSearch", "route_for"]

Route = Literal["sequential", "multihop", "graph", "flat"]
SEQUENTIAL_CUES = ("last time", "previously", "earlier", "before", "recent", "recently")
GRAPH_CUES = ("how", "why", "relationship", "explain", "cause", "effect")
LONG_QUERY = 80
# Words of a question about the conversation itself: with the cue removed, nothing is left to search for.
_ABOUT_CONVERSATION = frozenset(
    "discuss discussed talk talked say said tell told mention mentioned conversation chat chatted ask asked"
    " speak spoke topic topics us last time previously earlier recent recently anything something new happen"
    " happened going update updates".split()
)
# Cues of a question whose answer is a set of things, so several records: general English, no domain words.
SET_CUES = (
    "both", "in common", "share", "shared", "all", "every", "ever", "each", "how many", "how often", "times",
    "list", "kinds of", "kind of", "types of", "type of", "ways", "some",
)  # fmt: skip
_AUXILIARY = "do|does|did|has|have|had|are|were|is|was|can|could|would|will"
_PLURAL_ASKED = re.compile(rf"\b(?:what|which)\s+(?:[\w+-]+\s+){{0,2}}[\w-]+s\s+(?:{_AUXILIARY})\b")
_PERFECT_ASKED = re.compile(r"^\W*(?:what|where|which|who)\b.*\b(?:has|have)\b")
GRAPH_BOOST = 0.1  # flat score x (1 + boost x graph pull in [0, 1]): chosen on bench/locomo.py

FlatSearch = Callable[[Scope, str, int], Awaitable[list[SearchHit]]]
Recent = Callable[[Scope, int], Awaitable[list[Episode]]]
GraphQuery = Callable[[Scope, str, int], Awaitable[GraphResult]]  # the scope names the (user, agent) graph
Fetch = Callable[[Scope, Sequence[str]], Awaitable[list[Episode]]]
Superseded = Callable[[Sequence[str]], Awaitable[set[str]]]  # which of these episode ids memory no longer holds to


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
    several = _asks_for_several(text)
    if several is not None:
        return "multihop", several
    word = next((c for c in GRAPH_CUES if _has(text, c)), None)
    if word is not None:
        return "graph", f"graph cue {word!r}"
    if len(question.strip()) > LONG_QUERY:
        return "graph", f"long query ({len(question.strip())} > {LONG_QUERY} characters)"
    if cue is not None:
        return "flat", f"sequential cue {cue!r} qualifies a subject ({', '.join(rest[:3])}): flat search"
    return "flat", "no routing cue"


def _asks_for_several(text: str) -> str | None:
    """Why the lower-cased question asks for a set of things (several records), or None."""
    cue = next((c for c in SET_CUES if _has(text, c)), None)
    if cue is not None:
        return f"set cue {cue!r}"
    if _PLURAL_ASKED.search(text):
        return "asks for a plural (what/which + plural noun)"
    if _PERFECT_ASKED.search(text):
        return "asks what has been done (present perfect)"
    return None


class AdaptiveRetriever:
    """Routes each query (`route_for`) and runs the chosen retrieval; GRAPH needs ``graph`` and an agent:
    it reads only the scope's user's graph of that agent."""

    def __init__(
        self,
        search: FlatSearch,
        recent: Recent,
        graph: GraphQuery | None,
        fetch: Fetch,
        *,
        concepts: int = 5,
        superseded: Superseded | None = None,
    ) -> None:
        """``superseded`` tells which of some episodes memory no longer holds to, for the hits that do not come
        from a search (the newest turns, the graph's own records): they say so as search hits do."""
        self._search, self._recent, self._graph, self._fetch = search, recent, graph, fetch
        self._superseded = superseded
        self.concepts = concepts
        self.boost = GRAPH_BOOST
        self.hop_weight, self.hop_guard = hops.HOP_WEIGHT, hops.HOP_GUARD

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
            stale = await self._stale(episodes)
            hits = [_recent_hit(e, rank, e.id in stale) for rank, e in enumerate(episodes)]
            return RoutedSearch(route="sequential", reason=reason, hits=hits)
        if chosen == "graph":
            return await self._graph_route(scope, question, k, reason, agent or scope.agent)
        if chosen == "multihop":
            return await self._multihop(scope, question, k, reason)
        return RoutedSearch(route="flat", reason=reason, hits=await self._search(scope, question, k))

    async def _multihop(self, scope: Scope, question: str, k: int, reason: str) -> RoutedSearch:
        if k < 1:  # both hops read deeper than k, so the search would not catch it
            raise InvalidInputError(f"k must be >= 1, got {k}")
        depth = max(k, hops.HOP_DEPTH)
        first = await self._search(scope, question, depth)
        if not first:
            return RoutedSearch(route="multihop", reason=f"{reason}; nothing found: no second hop", hits=[])
        second = await self._search(scope, hops.second_query(question, first), depth)
        fused = hops.fuse_hops(first, second, weight=self.hop_weight, guard=self.hop_guard)
        why = f"{reason}; second hop from the best hit ({first[0].record.id})"
        return RoutedSearch(route="multihop", reason=why, hits=fused[:k])

    async def _graph_route(self, scope: Scope, question: str, k: int, reason: str, agent: str | None) -> RoutedSearch:
        flat = await self._search(scope, question, k)
        if self._graph is None or agent is None:
            why = "no concept graph configured" if self._graph is None else "no agent to read a concept graph of"
            return RoutedSearch(route="flat", reason=f"{reason}; {why}: flat", fell_back=True, hits=flat)
        result = await self._graph(Scope(user=scope.user, agent=agent), question, self.concepts)
        graph = _graph_records(result)
        held = {h.record.id for h in flat}
        # Records flat search did not return are read (and checked against the scope) only where they count:
        # to fill a short list, or to tell whether the graph knows anything of this scope at all.
        wanted = max(k - len(flat), 0 if held & graph.keys() else 1)
        extra = await self._fetch(scope, [r for r in graph if r not in held][: 4 * wanted]) if wanted else []
        if not held & graph.keys() and not extra:
            return RoutedSearch(
                route="flat", reason=f"{reason}; the graph gave nothing: flat", fell_back=True, hits=flat, graph=result
            )
        hits = _boost(flat, extra, graph, k, self.boost, await self._stale(extra))
        return RoutedSearch(route="graph", reason=reason, hits=hits, graph=result)

    async def _stale(self, episodes: Sequence[Episode]) -> set[str]:
        return await self._superseded([e.id for e in episodes]) if self._superseded and episodes else set()


def _recent_hit(episode: Episode, rank: int, superseded: bool) -> SearchHit:
    return SearchHit(record=episode, tier="episodic", score=1.0 / (1 + rank), superseded=superseded)


def _graph_records(result: GraphResult) -> dict[str, float]:
    """Record id -> how strongly the graph's concepts point at it, in [0, 1], best first: a record taught
    by several close concepts most; a concept that many records taught counts less for each."""
    scores: dict[str, float] = {}
    for scored in result.concepts:
        sources = scored.node.sources
        for record in sources:
            scores[record] = scores.get(record, 0.0) + max(scored.score, 0.0) / len(sources) ** 0.5
    top = max(scores.values(), default=0.0) or 1.0
    return {r: scores[r] / top for r in sorted(scores, key=lambda r: (-scores[r], r))}


def _boost(
    flat: list[SearchHit], extra: list[Episode], graph: dict[str, float], k: int, boost: float, stale: set[str]
) -> list[SearchHit]:
    """Flat hits with scores x (1 + boost x the graph's pull), re-sorted; then the graph's other records."""
    boosted = [h.model_copy(update={"score": h.score * (1 + boost * graph.get(h.record.id, 0.0))}) for h in flat]
    boosted.sort(key=lambda h: -h.score)
    floor = boosted[-1].score if boosted else 1.0
    tail = [
        SearchHit(record=e, tier="episodic", score=floor * graph[e.id] * 0.5, superseded=e.id in stale) for e in extra
    ]
    return (boosted + tail)[:k]
