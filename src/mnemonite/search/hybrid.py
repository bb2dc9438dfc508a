"""The hybrid search engine: full text and vectors per tier, fused, boosted, reranked.

Per tier it gathers full-text candidates (BM25, names of sources left out of the terms)
and vector candidates (cosine per model: exact in numpy, or an HNSW index for very large
scopes), fuses them (a weighted linear blend by default, RRF on request), boosts episodes
whose source is named in the query, spreads a little of each episode's score to its
neighbours in the same session timeline, then merges the tiers, optionally reranks and
weighs in salience. A turn whose facts were all superseded since is marked and placed below
what replaced them (`current_first`), and a fact stands in for the turns it was read from
(`stand_in`).
Pseudo-relevance feedback moves the query vector towards its three best first-pass
hits (Rocchio) before the final vector pass.
The defaults were chosen on the LoCoMo development split (``bench/locomo.py``).

Per user it searches, the engine caches an in-memory BM25 index of the texts
(`mnemonite.search.lexical`) and the vectors of each model, and reads only rows added
since. Narrower scopes and other filters become a set of allowed rows (one indexed SQL
query) applied to those; every candidate is re-checked against the filter before it is
returned, so nothing changed since it was cached can leak through. A store that ranks
vectors itself (`VectorSearchStore`: PostgreSQL with pgvector's HNSW index) is asked for
the vector candidates instead, so app servers keep no vectors in memory.

Search reads its writes. When the indexer lags, a search embeds the records of its scope
that have no vector yet if few wait (``embed_pending``), else the best full-text candidates
among them (``embed_head``), and stores those vectors; a candidate still without one is
fused at its full-text rank (`impute_by_rank`), so lag never ranks below full text alone.
"""

from __future__ import annotations

import asyncio
import heapq
import logging
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Annotated, Literal, TypeVar, cast

import numpy as np
import numpy.typing as npt
from pydantic import Field

from mnemonite.embedding.base import Embedder, embed_query
from mnemonite.errors import InvalidInputError, StoreError
from mnemonite.models import Episode, Fact
from mnemonite.models.base import Model
from mnemonite.models.fact import FactFilter
from mnemonite.models.search import KIND_OF_TIER, RecordKind, SearchFilter, SearchHit, SearchResults, Tier
from mnemonite.salience import RuleBasedScorer, SalienceContext
from mnemonite.scope import Scope
from mnemonite.search import ann
from mnemonite.search import query as q
from mnemonite.search.cache import ByteBoundedCache
from mnemonite.search.cosine import cosines
from mnemonite.search.fusion import impute_by_rank, linear_fusion, rrf_fusion
from mnemonite.search.lexical import Column, LexicalIndex, positions
from mnemonite.search.rerank import Reranker
from mnemonite.store import Store
from mnemonite.store.base import VectorSearchStore

Vector = npt.NDArray[np.float32]
Explain = Callable[[int, float], dict[str, float | int | None]]
QueryVectors = dict[str, tuple[int, Vector]]  # per model: (dimensions, the query's vector)
log = logging.getLogger("mnemonite.search")
T = TypeVar("T")


ANN_MIN_ROWS = 50_000
ANN_BATCH = 2_000  # new rows searched exactly until this many wait to join the graph
CACHE_BYTES = 512 * 2**20  # per process; see `ByteBoundedCache`
NEIGHBOURED = 50  # the head whose timeline neighbours get a share of its scores
# Feedback uses a tier's best first-pass hits only where they score at least this share of the best hit of every
# tier searched (bench/locomo.py and bench/consolidate.py: 0.5 kept both figures; 0.7 lost R@10).
FEEDBACK_SHARE = 0.5
# A hit that shares no word with the query feeds back only from this cosine (bench/locomo.py: 0.2 and 0.3 keep every
# figure, 0.4 lost R@10; "I like tea" is 0.26 from "window seat").
FEEDBACK_COSINE = 0.3


class _Vectors:
    """One model's vectors of one user, by ascending seq, and how far the model's index had got."""

    def __init__(self, dimensions: int) -> None:
        self.position = 0
        self.seqs = Column(np.int64)
        self.matrix = Column(np.float32, dimensions)

    @property
    def nbytes(self) -> int:
        return self.seqs.nbytes + self.matrix.nbytes


@dataclass
class _UserIndex:
    """What the engine keeps of one user's records of one kind."""

    user: str
    text_position: int = 0  # rows up to this seq are in ``lexical``
    lexical: LexicalIndex = field(default_factory=LexicalIndex)
    vectors: dict[str, _Vectors] = field(default_factory=dict)  # per model
    approximate: dict[str, list[ann.AnnIndex]] = field(default_factory=dict)  # per model: main graph, newer rows
    building: dict[str, asyncio.Task[None]] = field(default_factory=dict)
    sources: dict[Scope, tuple[int, list[str]]] = field(default_factory=dict)  # scope -> (text position, names)
    # held while rows are read in: concurrent searches of one user read each row once (and build one graph)
    reading: asyncio.Lock = field(default_factory=asyncio.Lock, repr=False)

    def nbytes(self) -> int:
        """About the memory held: texts' postings, vectors, graphs (source names and overhead: ~1 KB)."""
        graphs = sum(graph.nbytes for graphs in self.approximate.values() for graph in graphs)
        return 1024 + self.lexical.nbytes + sum(v.nbytes for v in self.vectors.values()) + graphs


@dataclass
class _FirstPass:
    """One tier's first pass: the records fused at their full-text rank (no vector yet), cosines, fused scores."""

    missing: set[int]
    cosine: dict[int, float]
    fused: dict[int, float]


@dataclass
class _Gathered:
    """One tier's reads for one search: the user's index, allowed rows, named sources, the query's
    terms, BM25 hits and vector candidates (from a store that ranks vectors), the cached vectors."""

    flt: SearchFilter
    index: _UserIndex
    allowed: npt.NDArray[np.int64] | None
    named: list[str]
    words: list[str]
    last: int  # the kind's highest seq when the search began
    vectors: dict[str, tuple[npt.NDArray[np.int64], Vector]]
    tail: dict[str, tuple[npt.NDArray[np.int64], Vector]]  # vectors of rows past the model's index position
    behind: bool  # some rows may have no vector yet (the indexer lags)
    unsearched: int = 0  # rows of the filter not compared by meaning: no vector when the search read them
    one_model: bool = True  # unsearched counts rows without the active model's vector: what is embedded here counts
    covered: set[int] = field(default_factory=set)  # rows this search embedded and compares by meaning
    lexical: list[tuple[int, float]] = field(default_factory=list)
    ranked: dict[int, float] = field(default_factory=dict)


COVER_BATCH = 64  # rows a search embeds at a time when many wait (it checks its time between batches)
COVER_ROWS = 8_000  # the most rows waiting for a vector a search reads to choose among (the newest): triage costs
# about 0.5 s per 10,000 short texts, out of embed_seconds
MAX_WEIGHT = 100.0  # far above any useful weight, well below where scores overflow
Weight = Annotated[float, Field(ge=0, le=MAX_WEIGHT)]


class SearchOptions(Model):
    """How signals are combined. The defaults are the measured best of ``bench/locomo.py``."""

    fusion: Literal["linear", "rrf"] = "linear"
    lexical_weight: float = Field(default=0.3, ge=0, le=1, description="linear: weight of BM25, the rest is cosine")
    rrf_k: int = Field(default=60, ge=1)
    rrf_weights: tuple[Weight, Weight] = (2.0, 1.0)
    source_boost: float = Field(
        default=0.6, ge=0, le=MAX_WEIGHT, description="x(1 + boost) for episodes whose source is named"
    )
    neighbour_weight: float = Field(default=0.15, ge=0, le=1)
    candidates: int = Field(default=200, ge=1, le=10_000)
    use_fulltext: bool = True
    lexical: Literal["memory", "fts5"] = Field(
        default="memory",
        description="BM25 from the engine's in-memory index per user, or the store's full-text index"
        " (SQLite FTS5; PostgreSQL tsvector, ranked by ts_rank)",
    )
    use_vectors: bool = True
    min_cosine: float | None = Field(default=None, ge=-1, le=1, description="vector candidates below it are dropped")
    models: tuple[str, ...] | None = Field(default=None, description="read only these models' vectors")
    ann_min_rows: int | None = Field(
        default=ANN_MIN_ROWS,
        ge=1,
        description="unfiltered searches of a user with at least this many vectors use the in-process HNSW index"
        " (None: never); stores that rank vectors themselves (PostgreSQL) always use theirs",
    )
    feedback: float = Field(
        default=1.0, ge=0, le=MAX_WEIGHT, description="pseudo-relevance feedback: query += f x mean(top 3)"
    )
    query_path: bool = Field(
        default=True,
        description="embed the query with the embedder's query path (`embed_query`) where it has one; False:"
        " with `embed`, exactly as stored vectors are made (the packaged model's two are the same unless"
        " OnnxEmbedder(query_precision=...) sets them apart)",
    )
    salience_weight: float = Field(default=0.0, ge=0, le=1, description="score x ((1 - w) + w x salience)")
    facts_stand_in: bool = Field(
        default=True,
        description="a fact among the hits stands in for the episodes it was distilled from (provenance): an"
        " episode below it is left out; one above it gives the fact its place when the fact scores at least"
        " STAND_IN_SHARE of it, else keeps it and leaves out its facts below; False: everything is returned",
    )
    newer_first: Literal["facts", "all", "off"] = Field(
        default="facts",
        description="within the first few hits, a fact stated later on the same subject as one ranked above it (their"
        " vectors close) takes its place when it scores at least NEWER_SHARE of it: what was said last of a subject"
        " is what holds now; 'all' does so for turns too (in a conversation most turns share a subject with the"
        " one before: on LoCoMo it halves MRR), 'off' leaves every hit where it scored",
    )
    current_first: bool = Field(
        default=True,
        description="a turn whose facts were all superseded since (memory no longer holds to what it said) is"
        " placed just below the first of its replacements among the hits (a fact that replaced its facts, or a"
        " turn such a fact was read from) when that scores at least REPLACED_SHARE of the turn; False: where it"
        " scored. Either way the hit says `superseded`",
    )
    specificity_weight: float = Field(
        default=2.0,
        ge=0,
        le=MAX_WEIGHT,
        description="a record's score x (1 + w x its specificity), over the same for the user's average record of"
        " its tier: specificity is the mean inverse document frequency of its words among those records, over the"
        " most it can be, so a turn that names things ranks above chatter in common words (read from the in-memory"
        " full-text index: only with lexical='memory' and use_fulltext; 0: off)",
    )
    asking_penalty: float = Field(
        default=0.1,
        ge=0,
        le=1,
        description="a record's score x (1 - p x the share of its text in sentences that end with a question"
        " mark), over the same for the user's average record of its tier: a turn that only asks tells less than"
        " one that answers (as specificity_weight: only with lexical='memory' and use_fulltext; 0: off)",
    )
    rerank_depth: int = Field(default=30, ge=1)
    embed_pending: int = Field(
        default=256,
        ge=0,
        description="read-your-writes: a search first embeds the records of its scope that have no vector yet"
        " when at most this many wait (0: never)",
    )
    embed_head: int = Field(
        default=32,
        ge=0,
        description="when more wait: the full-text candidates without a vector among the best this many are"
        " embedded; the others are fused at their full-text rank",
    )
    embed_seconds: float = Field(
        default=1.2,
        ge=0,
        description="when more than embed_pending wait (and embed_pending is not 0, which turns inline embedding"
        " off): the search embeds them for up to this long (one batch at least; 0: none), the likeliest first"
        " where the embedder can tell (`triage`), else the newest; what is left is counted in `unsearched`",
    )


class SearchEngine:
    """Searches a store with the embedders whose vectors it may read (the first is the active one)."""

    def __init__(
        self,
        store: Store,
        readers: Sequence[Embedder] = (),
        options: SearchOptions | None = None,
        *,
        cache_bytes: int = CACHE_BYTES,
    ) -> None:
        self._store = store
        self._readers = list(readers)
        self.options = options or SearchOptions()
        self._users: ByteBoundedCache[tuple[RecordKind, str], _UserIndex] = ByteBoundedCache(
            cache_bytes, _UserIndex.nbytes
        )
        self._purged = 0  # the purge log's position when the caches were last checked against it
        self._scorer = RuleBasedScorer()
        self._ranker = store if isinstance(store, VectorSearchStore) else None  # ranks vectors in the store

    async def search(
        self,
        query: str,
        flt: SearchFilter,
        k: int = 10,
        *,
        options: SearchOptions | None = None,
        reranker: Reranker | None = None,
        settled: bool = False,
    ) -> SearchResults:
        """The ``k`` best hits across the filter's tiers, best first, with how many records of the filter were
        not compared by meaning (``unsearched``: no vector yet, see `SearchOptions.embed_seconds`).

        ``settled=True`` waits for an approximate index being built instead of searching exactly meanwhile.
        """
        opts = options or self.options
        text = _check_query(query, k)
        readers = [r for r in self._readers if opts.use_vectors and (opts.models is None or r.model in opts.models)]
        # Every tier's first reads leave at once (one connection each where the store has several),
        # then the query is embedded while the store answers them.
        reads = _together(self._gather(tier, text, readers, flt, opts) for tier in flt.tiers)
        embedding = asyncio.ensure_future(self._query_vectors(text, readers, opts.query_path))
        try:
            gathered = await reads
        finally:
            qvecs = await embedding
        tier_qvecs = await self._tier_queries(text, gathered, readers, qvecs, opts)
        await self._rank(flt.tiers, gathered, tier_qvecs, opts)
        # BM25 is scaled by the best score of every tier searched, not each tier's own: otherwise the
        # best fact and the best episode both take the whole full-text weight, however weak one of them
        # matches, and a fact that merely shares a word outranks the turn that answers.
        scale = max((score for found in gathered for _, score in found.lexical), default=0.0)
        scored: list[tuple[float, Tier, int]] = []
        explain: dict[Tier, Explain] = {}
        passes = [
            await self._first_pass(tier, found, readers, tier_vecs, opts, settled, scale)
            for tier, found, tier_vecs in zip(flt.tiers, gathered, tier_qvecs, strict=True)
        ]
        # Feedback moves each tier's query towards its best first-pass hits, but only those that score near the
        # best of every tier searched: the best of a tier that holds nothing relevant would pull its query (and
        # the cosines it reports) towards itself.
        floor = FEEDBACK_SHARE * max((max(first.fused.values(), default=0.0) for first in passes), default=0.0)
        for tier, found, tier_vecs, first in zip(flt.tiers, gathered, tier_qvecs, passes, strict=True):
            tier_scored, explain[tier] = await self._tier(tier, found, tier_vecs, opts, first, floor, scale)
            scored += tier_scored
        # Facts among the candidates of a search with episodes: a deeper head, where facts meet their turns.
        stands_in = opts.facts_stand_in and "episodic" in flt.tiers and any(tier == "semantic" for _, tier, _ in scored)
        wanted = max(k, opts.rerank_depth if reranker or stands_in else k) * 2
        best = heapq.nsmallest(wanted, scored, key=lambda item: (-item[0], item[1], item[2]))  # ties: tier, oldest
        hits, replaced, where = await self._hits(
            [(score, tier, seq, explain[tier](seq, score)) for score, tier, seq in best], flt
        )
        if opts.current_first and replaced:  # on the fused scores, before a reranker's or salience's
            hits = current_first(hits, replaced)
        head = hits[:NEWER_DEPTH]
        movable = head if opts.newer_first == "all" else [h for h in head if isinstance(h.record, Fact)]
        if opts.newer_first != "off" and readers and len(movable) > 1:  # else nothing can move: no vectors read
            vectors = await self._head_vectors(movable, where, readers[0])
            hits = newer_first(hits, vectors, facts_only=opts.newer_first == "facts")
        if reranker is not None:
            head = await reranker.rerank(text, hits[: opts.rerank_depth])
            hits = [h.model_copy(update={"reranked": True}) for h in head] + hits[opts.rerank_depth :]
        if opts.salience_weight > 0:
            hits = await self._weigh_salience(hits, opts.salience_weight)
        self._users.settle((KIND_OF_TIER[tier], flt.scope.user) for tier in flt.tiers)
        if stands_in:
            hits = stand_in(hits)
        if "semantic" in flt.tiers and flt.as_of is None:
            hits = await self._candidates(hits[:k], flt)
        return SearchResults(hits[:k], unsearched=sum(found.unsearched for found in gathered))

    async def _candidates(self, hits: list[SearchHit], flt: SearchFilter) -> list[SearchHit]:
        """Current facts that a pending candidate update may replace are marked (`SearchHit.possibly_replaced_by`);
        a candidate found below the fact it may replace is moved just above it."""
        current = {h.record.id for h in hits if isinstance(h.record, Fact) and h.record.status == "active"}
        if not current:
            return hits
        pending = await self._store.facts(
            FactFilter(user=flt.scope.user, agent=flt.scope.agent, status="pending", limit=CANDIDATES)
        )
        newer = {old: fact.id for fact in sorted(pending, key=lambda f: f.recorded_at) for old in fact.may_replace}
        if not newer.keys() & current:
            return hits
        marked = [
            h.model_copy(update={"possibly_replaced_by": newer[h.record.id]}) if h.record.id in newer else h
            for h in hits
        ]
        return candidates_first(marked)

    async def _tier_queries(
        self, text: str, gathered: list[_Gathered], readers: list[Embedder], qvecs: QueryVectors, opts: SearchOptions
    ) -> list[QueryVectors]:
        """The query's vectors per tier: of the query without the source names it boosts, where it names any.

        The boost stands for the name, as it does in the full-text terms. Left in, a name dominates
        the cosine of short texts that carry it (facts name their subject; turns start with their
        speaker), and records that merely mention the person outrank those that answer: on
        ``bench/locomo.py`` and ``bench/consolidate.py`` taking it out raised R@10 and MRR.
        """
        stripped: dict[str, QueryVectors] = {}
        out = []
        for found in gathered:
            query = q.without(text, found.named) if found.named and opts.source_boost and readers else ""
            if query and query not in stripped:
                stripped[query] = await self._query_vectors(query, readers, opts.query_path)
            out.append(stripped[query] if query else qvecs)
        return out

    @staticmethod
    async def _query_vectors(text: str, readers: list[Embedder], query_path: bool) -> dict[str, tuple[int, Vector]]:
        return {r.model: (r.dimensions, await (embed_query(r, text) if query_path else r.embed(text))) for r in readers}

    @property
    def active(self) -> Embedder | None:
        """The embedder new records are embedded with (None: full text only)."""
        return self._readers[0] if self._readers else None

    async def nearest(
        self, kind: RecordKind, flt: SearchFilter, vector: Vector, k: int
    ) -> list[tuple[Episode | Fact, float]]:
        """The ``k`` records of the filter closest to ``vector`` (active model, exact cosine), best first.

        The user's closest rows are checked against the filter first (one small query); only if
        too few of them pass is the filter's whole row set read.
        """
        embedder = self.active
        if embedder is None:
            return []
        if self._ranker is not None:
            cosine = await self._ranker.nearest_rows(kind, embedder.model, embedder.dimensions, flt, vector, 8 * k)
            ranked = sorted(cosine, key=lambda s: (-cosine[s], s))
            found = await self._store.records(kind, ranked, flt)
            return [(found[seq], cosine[seq]) for seq in ranked if seq in found][:k]
        index = await self._user(kind, flt.scope.user)
        position = await self._store.index_position(kind, embedder.model)
        seqs, matrix = await self._vectors(kind, index, embedder.model, embedder.dimensions, position)
        self._users.settle([(kind, flt.scope.user)])
        scores = cosines(matrix, vector)
        for wide in (8 * k, None):
            if wide is None:
                at = positions(seqs, await self._store.selected(kind, flt))
            else:
                at = np.argsort(-scores) if len(scores) <= wide else np.argpartition(-scores, wide - 1)[:wide]
            order = at[np.argsort(-scores[at], kind="stable")]
            found = await self._store.records(kind, seqs[order].tolist(), flt)
            best = [(found[seq], score) for seq, score in zip(seqs[order].tolist(), scores[order].tolist(), strict=True)
                    if seq in found][:k]  # fmt: skip
            if len(best) == k or wide is None or len(at) == len(seqs):
                return best
        return []

    async def close(self) -> None:
        """Wait for graphs being built (a worker thread cannot be interrupted; minutes for a million vectors)."""
        for index in list(self._users.values()):
            for task in list(index.building.values()):
                await task

    async def _gather(
        self, tier: Tier, text: str, readers: list[Embedder], flt: SearchFilter, opts: SearchOptions
    ) -> _Gathered:
        """What a tier's search reads from the store; needs no query vector."""
        kind = KIND_OF_TIER[tier]
        models = [r.model for r in readers]
        last, purged, indexed = await self._store.positions(kind, models)
        if purged != self._purged:  # records were removed for good (here or by another process): forget them
            self._users.drop(lambda key: False)
            self._purged = purged
        index = await self._user(kind, flt.scope.user)
        allowed = await self._store.selected(kind, flt) if _narrows(kind, flt) else None
        names = await self._sources(index, flt, last) if kind == "episode" else await self._store.sources(flt)
        named = q.mentioned(text, names)
        behind = any(indexed[model] < last for model in models)
        writer = self._writer(readers)
        # What waits is read, or counted, before the vectors are: a row that gets its vector in between is read yet
        # counted, so the mark may be high by a few rows the indexer just did, never low.
        waiting: list[tuple[int, str]] | None = None
        if behind and writer is not None and opts.embed_pending:
            waiting = await self._store.unembedded(
                kind, [writer.model], flt, opts.embed_pending + 1, after=indexed[writer.model], upto=last
            )
        unsearched = 0
        if behind and models:
            few = waiting is not None and len(waiting) <= opts.embed_pending and len(models) == 1
            unsearched = len(waiting) if few and waiting is not None else await self._store.count_unembedded(
                kind, models, flt, min(indexed.values()), last
            )  # fmt: skip
        vecs, tail = {}, {}
        if self._ranker is None:
            vecs = {r.model: await self._vectors(kind, index, r.model, r.dimensions, indexed[r.model]) for r in readers}
            tail = {
                r.model: await self._store.vectors(kind, r.model, r.dimensions, index.user, indexed[r.model], last)
                for r in readers
                if indexed[r.model] < last
            }
        found = _Gathered(flt, index, allowed, named, q.terms(text, named), last, vecs, tail, behind, unsearched,
                          one_model=len(models) == 1)  # fmt: skip
        if waiting is not None and writer is not None:
            for seqs, matrix, saved in await self._cover(
                kind, text, writer, flt, indexed[writer.model], last, opts, waiting
            ):
                self._join_tail(found, writer, seqs, matrix)
                self._covered(found, seqs, saved)
        return found

    def _covered(self, found: _Gathered, seqs: npt.NDArray[np.int64], saved: bool) -> None:
        """Rows this search embedded: compared by meaning here (their vectors joined this search's), or, where the
        store ranks vectors itself, once their vectors are saved; then no longer counted as unsearched (each was:
        it had no vector). With several models the count was of rows without any: it is left as it is (high)."""
        if self._ranker is not None and not saved:
            return
        new = [seq for seq in seqs.tolist() if seq not in found.covered]
        found.covered.update(new)
        if found.one_model:
            found.unsearched = max(0, found.unsearched - len(new))

    async def _cover(
        self, kind: RecordKind, text: str, writer: Embedder, flt: SearchFilter, after: int, last: int,
        opts: SearchOptions, rows: list[tuple[int, str]],
    ) -> list[tuple[npt.NDArray[np.int64], Vector, bool]]:  # fmt: skip
        """Embed the filter's rows that have no vector yet: all of them when at most ``embed_pending`` wait, else
        for up to ``embed_seconds``, the likeliest first where the embedder can tell (``triage``: from its
        word-piece table, no inference), else the newest (the indexer embeds from the oldest, so the two meet)."""
        if len(rows) <= opts.embed_pending:  # ``rows``: the first embed_pending + 1 of those waiting
            return [await self._embed_rows(kind, writer, rows)]
        if not opts.embed_seconds:
            return []
        loop = asyncio.get_running_loop()
        deadline = loop.time() + opts.embed_seconds
        rows = await self._store.unembedded(kind, [writer.model], flt, COVER_ROWS, after=after, upto=last,
                                            newest_first=True)  # fmt: skip
        triage, scores = getattr(writer, "triage", None), None
        try:
            scores = await triage(text, [row_text for _, row_text in rows]) if triage is not None else None
        except Exception as error:  # the order is an optimisation: without it, the newest first
            log.warning("search: could not rank the records waiting for a vector (%s); the newest go first", error)
        if scores is not None:
            rows = [rows[i] for i in np.argsort(-np.asarray(scores), kind="stable")]
        made: list[tuple[npt.NDArray[np.int64], Vector, bool]] = []
        for start in range(0, len(rows), COVER_BATCH):
            if made and loop.time() >= deadline:  # one batch at least: the likeliest are worth the wait
                break
            made.append(await self._embed_rows(kind, writer, rows[start : start + COVER_BATCH]))
        return made

    def _writer(self, readers: list[Embedder]) -> Embedder | None:
        """The active embedder, if this search reads its vectors (it embeds what is missing)."""
        return self.active if self.active is not None and self.active in readers else None

    async def _embed(
        self, kind: RecordKind, found: _Gathered, writer: Embedder, rows: list[tuple[int, str]]
    ) -> tuple[npt.NDArray[np.int64], Vector]:
        """Embed ``rows`` for this search, store their vectors and let this search read them."""
        seqs, matrix, _ = await self._embed_rows(kind, writer, rows)
        self._join_tail(found, writer, seqs, matrix)
        return seqs, matrix

    async def _embed_rows(
        self, kind: RecordKind, writer: Embedder, rows: list[tuple[int, str]]
    ) -> tuple[npt.NDArray[np.int64], Vector, bool]:
        """Embed ``rows`` and store their vectors (the indexer passes over them later); and whether they were saved.

        A store that cannot take the write now (another process holds the lock) costs only the
        saving: the vectors still serve this search.
        """
        seqs = np.asarray([seq for seq, _ in rows], dtype=np.int64)
        if not rows:
            return seqs, np.empty((0, writer.dimensions), dtype=np.float32), True
        matrix = np.asarray(await writer.embed_batch([text for _, text in rows]), dtype=np.float32)
        try:
            await self._store.save_vectors(kind, writer.model, seqs.tolist(), matrix, upto=0)
        except StoreError as error:
            log.warning("search: vectors of %d pending records not saved now (%s)", len(rows), error)
            return seqs, matrix, False
        return seqs, matrix, True

    def _join_tail(self, found: _Gathered, writer: Embedder, seqs: npt.NDArray[np.int64], matrix: Vector) -> None:
        """Vectors made by this search join the ones it read (unless the store ranks vectors itself)."""
        if self._ranker is not None or not len(seqs):
            return
        old_seqs, old_matrix = found.tail.get(writer.model, (seqs[:0], matrix[:0]))
        new = ~np.isin(seqs, old_seqs)
        joined = np.concatenate([old_seqs, seqs[new]])
        order = np.argsort(joined, kind="stable")
        found.tail[writer.model] = (joined[order], np.concatenate([old_matrix, matrix[new]])[order])

    async def _complete(
        self, kind: RecordKind, found: _Gathered, readers: list[Embedder], opts: SearchOptions, qvecs: QueryVectors
    ) -> set[int]:
        """While the indexer lags: embed the best full-text candidates that have no vector yet (up to
        ``embed_head``), and return the others, which are fused at their full-text rank."""
        if not found.behind or not found.lexical or not readers:
            return set()
        rank = {seq: at for at, (seq, _) in enumerate(found.lexical)}
        rows = await self._store.unembedded(kind, [r.model for r in readers], found.flt, len(rank), among=sorted(rank))
        rows = [row for row in rows if row[0] not in found.covered]  # embedded by this search already (not saved)
        rows.sort(key=lambda row: rank[row[0]])
        writer = self._writer(readers)
        head = rows[: opts.embed_head] if writer is not None else []
        if writer is not None and head:
            seqs, matrix = await self._embed(kind, found, writer, head)
            self._covered(found, seqs, True)  # scored here below where the store ranks vectors itself
            if self._ranker is not None:  # the store ranked before these had vectors: score them here
                scores = cosines(matrix, qvecs[writer.model][1])
                _keep_best(found.ranked, dict(zip(seqs.tolist(), scores.tolist(), strict=True)))
        return {seq for seq, _ in rows[len(head) :]}

    async def _rank(
        self,
        tiers: Sequence[Tier],
        gathered: list[_Gathered],
        tier_qvecs: list[QueryVectors],
        opts: SearchOptions,
    ) -> None:
        """Full text of every tier, and vector candidates from a store that ranks them: its queries
        go out first (one connection per tier), so the server ranks while BM25 runs here."""
        queries = []
        if self._ranker is not None:
            queries = [
                asyncio.ensure_future(self._ranked(KIND_OF_TIER[tier], found, qvecs, opts.candidates))
                for tier, found, qvecs in zip(tiers, gathered, tier_qvecs, strict=True)
            ]
            await asyncio.sleep(0)  # the queries leave now
        try:
            if opts.use_fulltext:
                for tier, found in zip(tiers, gathered, strict=True):
                    found.lexical = await self._lexical(
                        KIND_OF_TIER[tier], found.index, found.flt, found.words, found.allowed, opts, found.last
                    )
        finally:
            for query, found in zip(queries, gathered, strict=False):
                found.ranked = await query

    async def _first_pass(
        self,
        tier: Tier,
        found: _Gathered,
        readers: list[Embedder],
        qvecs: QueryVectors,
        opts: SearchOptions,
        settled: bool,
        scale: float,
    ) -> _FirstPass:
        """One tier's candidates fused; ``scale`` is the best BM25 score of every tier searched (one scale)."""
        kind = KIND_OF_TIER[tier]
        missing = await self._complete(kind, found, readers, opts, qvecs) if opts.use_vectors else set()
        if self._ranker is not None:  # the store ranked the vectors
            cosine = _above(found.ranked, opts.min_cosine)
        else:
            cosine = await self._cosines(
                found.index, found.vectors, found.tail, qvecs, opts, found.allowed, settled=settled
            )
            cosine = _above(cosine, opts.min_cosine)
        return _FirstPass(missing, cosine, self._fuse(found.lexical, cosine, opts, missing, scale))

    async def _tier(
        self,
        tier: Tier,
        found: _Gathered,
        qvecs: QueryVectors,
        opts: SearchOptions,
        first: _FirstPass,
        floor: float,
        scale: float,
    ) -> tuple[list[tuple[float, Tier, int]], Explain]:
        """One tier's candidates scored: feedback from its best first-pass hits that reach ``floor``, boosts, prior."""
        kind = KIND_OF_TIER[tier]
        index, lexical, vecs, tail = found.index, found.lexical, found.vectors, found.tail
        missing, cosine, fused = first.missing, first.cosine, first.fused
        # Rescore the first pass's candidates with the query moved towards its three best hits: those that score
        # near the best of every tier, and that the query itself matched (a word of it, or a close cosine). The
        # best of a few unrelated records is still the best; moved towards it, the query would call it a match.
        lex_score = dict(lexical)
        top = [
            seq
            for seq in _head(fused, 3)
            if fused[seq] > 0
            and fused[seq] >= floor
            and (lex_score.get(seq, 0.0) > 0 or cosine.get(seq, 0.0) >= FEEDBACK_COSINE)
        ] if opts.feedback else []  # fmt: skip
        if top and cosine:
            only = np.asarray(sorted(fused), dtype=np.int64)
            if self._ranker is not None:
                cosine = await self._rescored(kind, qvecs, only.tolist(), top, opts.feedback)
            else:
                moved = _expand([vecs, tail], qvecs, top, opts.feedback)
                cosine = await self._cosines(index, vecs, tail, moved, opts, only, exact=True)
            cosine = _above(cosine, opts.min_cosine)
            fused = self._fuse(lexical, cosine, opts, missing, scale)
        if kind == "episode":
            fused = await self._boost(fused, found.named, opts)
        elif found.named and opts.source_boost:  # a fact speaks for its source turns' speakers (provenance)
            for seq in await self._store.facts_from_sources(_head(fused, opts.candidates), found.named):
                fused[seq] *= 1 + opts.source_boost
        if (opts.specificity_weight or opts.asking_penalty) and opts.lexical == "memory" and opts.use_fulltext:
            fused = _prior(fused, found.index.lexical, opts.specificity_weight, opts.asking_penalty)

        def explain(seq: int, score: float) -> dict[str, float | int | None]:
            """Why a record scored what it did; computed only for the records that make the head."""
            if not ranks:
                ranks["lexical"] = {s: rank for rank, (s, _) in enumerate(lexical, start=1)}
                ranks["vector"] = {s: rank for rank, s in enumerate(sorted(cosine, key=lambda s: -cosine[s]), 1)}
            return {"fulltext_rank": ranks["lexical"].get(seq), "fulltext_score": lex_score.get(seq),
                    "vector_rank": ranks["vector"].get(seq), "cosine": cosine.get(seq), "fused": score}  # fmt: skip

        ranks: dict[str, dict[int, int]] = {}
        return [(score, tier, seq) for seq, score in fused.items()], explain

    async def _user(self, kind: RecordKind, user: str) -> _UserIndex:
        """The user's cached index (created empty; texts and vectors are read in by the callers)."""
        return self._users.get((kind, user), lambda: _UserIndex(user))

    async def _sources(self, index: _UserIndex, flt: SearchFilter, position: int) -> list[str]:
        """The scope's source names (speakers, tools), read again only when new episodes arrived."""
        cached = index.sources.get(flt.scope)
        if cached is None or cached[0] != position:
            cached = index.sources[flt.scope] = (position, await self._store.sources(flt))
        return cached[1]

    async def _lexical(
        self,
        kind: RecordKind,
        index: _UserIndex,
        flt: SearchFilter,
        words: list[str],
        allowed: npt.NDArray[np.int64] | None,
        opts: SearchOptions,
        last: int,
    ) -> list[tuple[int, float]]:
        if opts.lexical == "fts5":
            return await self._store.fulltext(kind, flt, words, opts.candidates)
        if last > index.text_position:
            async with index.reading:
                if last > index.text_position:  # another search may have read them meanwhile
                    rows = await self._store.texts(kind, flt.scope.user, index.text_position, last)
                    if len(rows) > 10_000:
                        log.info("search: indexing %d %s texts of user %r in memory", len(rows), kind, flt.scope.user)
                    index.lexical.add(rows)
                    index.text_position = last
        return index.lexical.search(words, opts.candidates, allowed)

    async def _cosines(
        self,
        index: _UserIndex,
        vecs: dict[str, tuple[npt.NDArray[np.int64], Vector]],
        tail: dict[str, tuple[npt.NDArray[np.int64], Vector]],
        qvecs: QueryVectors,
        opts: SearchOptions,
        allowed: npt.NDArray[np.int64] | None,
        *,
        exact: bool = False,
        settled: bool = False,
    ) -> dict[int, float]:
        best: dict[int, float] = {}
        for model, (_, vector) in qvecs.items():
            seqs, matrix = vecs[model]
            big = opts.ann_min_rows is not None and len(seqs) >= opts.ann_min_rows and allowed is None and not exact
            graphs = await self._ann(index, model, seqs, matrix, settled) if big else []
            for graph in graphs:
                _keep_best(best, graph.search(vector, opts.candidates))
            if graphs:
                seqs, matrix = seqs[graphs[-1].end :], matrix[graphs[-1].end :]  # not in a graph yet: exact
            for block in ((seqs, matrix), tail.get(model)):
                if block is not None:
                    _keep_best(best, _exact(*block, vector, allowed, None if exact else opts.candidates))
        return best

    async def _ranked(
        self, kind: RecordKind, found: _Gathered, qvecs: dict[str, tuple[int, Vector]], limit: int
    ) -> dict[int, float]:
        """From a store that ranks vectors: the filter's best ``limit`` cosines, over every model.

        A filter known to select no row (a user without facts) asks the store nothing.
        """
        assert self._ranker is not None
        best: dict[int, float] = {}
        if found.allowed is not None and not len(found.allowed):
            return best
        for model, (dimensions, vector) in qvecs.items():
            _keep_best(best, await self._ranker.nearest_rows(kind, model, dimensions, found.flt, vector, limit))
        return best

    async def _rescored(
        self, kind: RecordKind, qvecs: dict[str, tuple[int, Vector]], seqs: list[int], top: list[int], weight: float
    ) -> dict[int, float]:
        """From a store that ranks vectors: cosines of ``seqs`` with each query moved towards ``top`` (Rocchio)."""
        assert self._ranker is not None
        best: dict[int, float] = {}
        for model, (dimensions, vector) in qvecs.items():
            _keep_best(best, await self._ranker.rescored(kind, model, dimensions, seqs, vector, top, weight))
        return best

    async def _ann(
        self, index: _UserIndex, model: str, seqs: npt.NDArray[np.int64], matrix: Vector, settled: bool
    ) -> list[ann.AnnIndex]:
        """The user's HNSW graphs (none while the first is built), scheduling their growth.

        Graphs are built in a worker thread and never changed once published: rows indexed
        later are searched exactly until ``ANN_BATCH`` of them wait, then get a graph of their
        own; when that one reaches a quarter of the main graph, one graph over everything
        replaces both. ``settled`` waits until the graphs cover every row.
        """
        for _ in range(3):
            graphs = index.approximate.get(model, [])
            covered = graphs[-1].end if graphs else 0
            task = index.building.get(model)
            if task is None and (not graphs or len(seqs) - covered >= ANN_BATCH or (settled and covered < len(seqs))):
                main = graphs[0] if graphs else None
                start = 0 if main is None or len(seqs) - main.end > main.size // 4 else main.end
                keep = [] if main is None or start == 0 else [main]
                job = self._grow(index, model, keep, start, seqs[start:], matrix[start:])
                task = index.building[model] = asyncio.create_task(job)
            if not settled or task is None:
                return graphs
            await task
        return index.approximate.get(model, [])

    async def _grow(
        self,
        index: _UserIndex,
        model: str,
        keep: list[ann.AnnIndex],
        start: int,
        seqs: npt.NDArray[np.int64],
        matrix: Vector,
    ) -> None:
        """Build a graph over rows ``start`` onwards in a worker thread, then publish ``keep`` + it."""
        vectors = index.vectors.get(model)
        if start == 0:
            log.info("search: building an approximate index over %d vectors of user %r", len(seqs), index.user)
        try:
            graph = ann.AnnIndex(matrix.shape[1], start)
            await asyncio.to_thread(graph.add, seqs, matrix)
            if index.vectors.get(model) is vectors:  # not dropped or rebuilt meanwhile
                index.approximate[model] = [*keep, graph]
        except Exception:
            log.exception("search: the approximate index could not be built; searches stay exact")
        finally:
            index.building.pop(model, None)

    async def _vectors(
        self, kind: RecordKind, index: _UserIndex, model: str, dimensions: int, position: int
    ) -> tuple[npt.NDArray[np.int64], Vector]:
        """The user's vectors of one model, reading only rows indexed since the last read (up to ``position``)."""
        async with index.reading:  # one search reads a row in; the others wait and find it there
            cached = index.vectors.get(model)
            if cached is not None and cached.position > position:  # a search that read its position earlier, or
                _, _, now = await self._store.positions(kind, [model])  # the model's vectors dropped or rebuilt
                if now[model] >= cached.position:
                    return cached.seqs.view, cached.matrix.view  # the rows it reads past ``position`` read again
            if cached is None or cached.position > position:
                cached = index.vectors[model] = _Vectors(dimensions)
                index.approximate.pop(model, None)  # a graph being built for the old vectors is discarded when done
            if cached.position < position:
                seqs, matrix = await self._store.vectors(kind, model, dimensions, index.user, cached.position, position)
                cached.seqs.extend(seqs)
                cached.matrix.extend(matrix)
                cached.position = position
            return cached.seqs.view, cached.matrix.view

    @staticmethod
    def _fuse(
        lexical: list[tuple[int, float]],
        cosine: dict[int, float],
        opts: SearchOptions,
        missing: set[int],
        top: float | None = None,
    ) -> dict[int, float]:
        if missing:  # records without a vector yet are fused at their full-text rank, not at cosine 0
            cosine = {**cosine, **impute_by_rank(lexical, cosine, missing)}
        if opts.fusion == "rrf":
            rankings = [[seq for seq, _ in lexical], sorted(cosine, key=lambda s: -cosine[s])]
            return rrf_fusion(rankings, opts.rrf_weights, opts.rrf_k)
        alpha = opts.lexical_weight if cosine and lexical else (1.0 if lexical else 0.0)
        return linear_fusion(dict(lexical), cosine, alpha, top)

    async def _boost(self, fused: dict[int, float], named: list[str], opts: SearchOptions) -> dict[int, float]:
        """Boost episodes of named sources, then spread a share of the head's scores to timeline neighbours."""
        if not fused or (not named and not opts.neighbour_weight):
            return fused
        top = _head(fused, opts.candidates)
        if named and opts.source_boost:
            for seq in await self._store.from_sources(top, named):
                fused[seq] *= 1 + opts.source_boost
        if opts.neighbour_weight:
            spread = dict(fused)
            for seq, around in (await self._store.neighbours(top[:NEIGHBOURED])).items():
                for other in around:
                    if other is not None:
                        spread[other] = spread.get(other, 0.0) + opts.neighbour_weight * fused[seq]
            fused = spread
        return fused

    async def _hits(
        self, scored: list[tuple[float, Tier, int, dict[str, float | int | None]]], flt: SearchFilter
    ) -> tuple[list[SearchHit], dict[str, set[str]], dict[str, tuple[RecordKind, int]]]:
        """The records of ``scored``, best first; what replaced the facts of the episodes among them that memory
        no longer holds to (their facts were all superseded or forgotten, as of the filter's moment): episode id ->
        the ids of the facts that replaced them and of the turns those were read from (those episodes' hits say
        so); and each record's kind and row (id -> (kind, seq))."""
        tiers: list[Tier] = [tier for tier in ("episodic", "semantic") if any(t == tier for _, t, _, _ in scored)]
        episodes = sorted(seq for _, t, seq, _ in scored if t == "episodic")
        # on a connection of its own, beside the records' reads
        stale = asyncio.ensure_future(self._store.superseded_episodes(episodes, flt.as_of)) if episodes else None
        reads = _together(  # each tier's records on a connection of its own, re-checked against the filter now
            self._store.records(KIND_OF_TIER[tier], sorted(seq for _, t, seq, _ in scored if t == tier), flt)
            for tier in tiers
        )
        try:
            found_by_tier = await reads
        finally:
            superseded = await stale if stale is not None else {}
        hits: list[SearchHit] = []
        replaced: dict[str, set[str]] = {}
        where: dict[str, tuple[RecordKind, int]] = {}
        for tier, found in zip(tiers, found_by_tier, strict=True):
            for score, t, seq, why in scored:
                if t == tier and seq in found:
                    record, stale_turn = found[seq], t == "episodic" and seq in superseded
                    where[record.id] = (KIND_OF_TIER[tier], seq)
                    if stale_turn:
                        facts, turns = superseded[seq]
                        replaced[record.id] = (facts | turns) - {record.id}
                    hits.append(_hit(record, tier, score, why, superseded=stale_turn))
        hits.sort(key=lambda h: h.score, reverse=True)
        return hits, replaced, where

    async def _head_vectors(
        self, head: Sequence[SearchHit], where: dict[str, tuple[RecordKind, int]], embedder: Embedder
    ) -> dict[str, Vector]:
        """The stored vectors (of ``embedder``'s model) of the records of ``head``, by record id."""
        out: dict[str, Vector] = {}
        for kind in ("episode", "fact"):
            rows = {where[h.record.id][1]: h.record.id for h in head if where.get(h.record.id, ("", 0))[0] == kind}
            if rows:
                seqs, matrix = await self._store.vectors_of(kind, embedder.model, embedder.dimensions, sorted(rows))
                out |= {rows[seq]: vector for seq, vector in zip(seqs.tolist(), matrix, strict=True)}
        return out

    async def _weigh_salience(self, hits: list[SearchHit], weight: float) -> list[SearchHit]:
        context = SalienceContext()
        weighed = []
        for hit in hits:
            record = hit.record
            salience = await self._scorer.score(record, context) if isinstance(record, Episode) else record.salience
            weighed.append(
                hit.model_copy(update={"salience": salience, "score": hit.score * ((1 - weight) + weight * salience)})
            )
        weighed.sort(key=lambda h: h.score, reverse=True)
        return weighed


def _together(jobs: Iterable[Awaitable[T]]) -> Awaitable[list[T]]:
    """Start ``jobs`` now, all at once; awaiting the result waits for every one and raises the first failure."""
    running = asyncio.gather(*jobs, return_exceptions=True)

    async def results() -> list[T]:
        done = await running
        for result in done:
            if isinstance(result, BaseException):
                raise result
        return cast(list[T], done)

    return results()


# A turn goes below what replaced it only when that scores at least this share of the turn's score (as a fact
# stands in for its turn): below it, the turn matched for what its replacement does not say, often the past itself.
REPLACED_SHARE = 0.5


def current_first(hits: Sequence[SearchHit], replaced: dict[str, set[str]]) -> list[SearchHit]:
    """``hits`` (best first) where each episode of ``replaced`` (episode id -> the ids of the records that
    replaced what it said) comes just below the first of its replacements ranked under it, with that one's
    score, when that one scores at least ``REPLACED_SHARE`` of the episode's score (fused scores, not negative).
    An episode with a replacement above it already, or none within that share below it, stays."""
    out = list(hits)
    for hit in reversed(hits):  # lowest first: a turn moved down never passes back above one moved below it
        ids = replaced.get(hit.record.id)
        if not ids:
            continue
        at = next(i for i, placed in enumerate(out) if placed is hit)
        if any(placed.record.id in ids for placed in out[:at]):
            continue  # what replaced it comes first already
        below = next((i for i in range(at + 1, len(out)) if out[i].record.id in ids), None)
        if below is not None and out[below].score < REPLACED_SHARE * hit.score:
            continue
        if below is not None:
            replacement = out[below]
            del out[at]  # the replacement is now at ``below - 1``: the turn goes right after it
            out.insert(below, hit.model_copy(update={"score": replacement.score}))
    return out


# The present first: within the first NEWER_DEPTH hits, a newer record on the same subject as one ranked above it
# (their vectors at a cosine of at least NEWER_SUBJECT) takes its place when it scores at least NEWER_SHARE of it.
NEWER_DEPTH = 8
CANDIDATES = 500  # the pending facts of a scope read to mark what candidate updates may replace
NEWER_SHARE = 0.25
NEWER_SUBJECT = 0.3


def newer_first(hits: Sequence[SearchHit], vectors: dict[str, Vector], *, facts_only: bool = True) -> list[SearchHit]:
    """``hits`` (best first) where, within the first ``NEWER_DEPTH``, a record said later on the same subject as
    one above it (what a later statement says of a subject is what memory holds now: a move, a new job) is placed
    right above it, with its score, when it scores at least ``NEWER_SHARE`` of it; ``facts_only``: when both are
    facts. Records without a stored vector stay where they scored. The depth stays within the first ten: recall@10
    cannot change."""
    out = list(hits)
    depth = min(len(out), NEWER_DEPTH)
    at = 0
    while at < depth:
        older = out[at]
        moved = False
        for below in range(at + 1, depth):
            newer = out[below]
            a, b = vectors.get(older.record.id), vectors.get(newer.record.id)
            if facts_only and not (isinstance(older.record, Fact) and isinstance(newer.record, Fact)):
                continue
            if (a is None or b is None or _said(newer) <= _said(older) or newer.score < NEWER_SHARE * older.score
                    or float(a @ b) < NEWER_SUBJECT):  # fmt: skip
                continue
            del out[below]
            out.insert(at, newer.model_copy(update={"score": older.score}))
            moved = True
            break
        if not moved:
            at += 1
    return out


def _said(hit: SearchHit) -> datetime:
    """When a record's statement was made: an episode's time; a fact's start of validity, else when recorded."""
    record = hit.record
    return record.timestamp if isinstance(record, Episode) else (record.valid_from or record.recorded_at)


# A fact takes the place of a turn ranked above it only when it scores at least this share of the turn's score;
# else the turn's relevance came from words the fact does not carry, and the turn stays.
STAND_IN_SHARE = 0.5


def candidates_first(hits: Sequence[SearchHit]) -> list[SearchHit]:
    """``hits`` with each candidate update moved just above the fact it may replace, if it ranked below it."""
    out = list(hits)
    for old in [h for h in hits if h.possibly_replaced_by]:
        at = {h.record.id: n for n, h in enumerate(out)}
        new = at.get(old.possibly_replaced_by or "")
        if new is not None and new > at[old.record.id]:
            moved = out.pop(new)
            out.insert(at[old.record.id], moved)
    return out


def stand_in(hits: Sequence[SearchHit]) -> list[SearchHit]:
    """``hits`` (best first) where each fact stands in for the episodes it was distilled from.

    A turn and a fact read from it are one piece of evidence: handed both, an agent reads it
    twice. An episode ranked below one of its facts is left out. An episode ranked above its
    facts gives its place (and score) to the best of them when that one scores at least
    ``STAND_IN_SHARE`` of the episode's score; otherwise the episode stays (what made it match is not
    in its facts: a clause the extractor did not read, a statement since superseded) and its
    facts ranked below it are left out, since it holds them. A pending fact, not yet confirmed
    by the conflict pipeline, stands in for nothing.
    """
    facts: dict[str, list[SearchHit]] = {}  # episode id -> the current facts read from it, best first
    for hit in hits:
        if isinstance(hit.record, Fact) and hit.record.status != "pending":
            for source in hit.record.source_episode_ids:
                facts.setdefault(source, []).append(hit)
    out: list[SearchHit] = []
    placed: set[str] = set()  # facts already in ``out``
    held: set[str] = set()  # facts left out because an episode kept above them holds them
    covered: set[str] = set()  # episodes a fact placed above them stands in for
    for hit in hits:
        record = hit.record
        if isinstance(record, Fact):
            if record.id not in placed and record.id not in held:
                placed.add(record.id)
                covered.update(record.source_episode_ids if record.status != "pending" else ())
                out.append(hit)
            continue
        if record.id in covered:
            continue
        below = [
            fact for fact in facts.get(record.id, []) if fact.record.id not in placed and fact.record.id not in held
        ]
        if below and below[0].score >= STAND_IN_SHARE * hit.score:
            best = below[0]
            placed.add(best.record.id)
            covered.update(best.record.source_episode_ids)  # type: ignore[union-attr]
            out.append(best.model_copy(update={"score": hit.score}))
        else:
            held.update(fact.record.id for fact in below)
            out.append(hit)
    return out


def _hit(
    record: Episode | Fact, tier: Tier, score: float, parts: dict[str, float | int | None], *, superseded: bool
) -> SearchHit:
    """A hit of the engine's own plain numbers and a record read back: not validated again (`Model.trusted`)."""
    values = {"record": record, "tier": tier, "score": float(score), **parts, "salience": None, "reranked": False,
              "superseded": superseded, "possibly_replaced_by": None}  # fmt: skip
    return SearchHit.trusted(values)


def _head(scores: dict[int, float], n: int) -> list[int]:
    """The ``n`` best-scored seqs, best first (ties: older first)."""
    if 4 * n < len(scores):  # a short head of many (the feedback's three, the neighbours' hundred): no full sort
        return heapq.nsmallest(n, scores, key=lambda s: (-scores[s], s))
    return sorted(scores, key=lambda s: (-scores[s], s))[:n]


def _above(cosine: dict[int, float], threshold: float | None) -> dict[int, float]:
    return cosine if threshold is None else {seq: c for seq, c in cosine.items() if c >= threshold}


def _check_query(query: str, k: int) -> str:
    if not isinstance(query, str) or not query.strip():
        raise InvalidInputError("the search query must be a non-empty string")
    if k < 1:
        raise InvalidInputError(f"k must be >= 1, got {k}")
    return query.strip()[: q.MAX_QUERY_CHARS]


def _narrows(kind: RecordKind, flt: SearchFilter) -> bool:
    """Whether the filter selects fewer rows than every record of its user (facts: only current ones)."""
    scope = flt.scope
    return kind == "fact" or bool(scope.session or scope.agent or flt.since or flt.until or flt.lifecycle)


def _exact(
    seqs: npt.NDArray[np.int64],
    matrix: Vector,
    vector: Vector,
    allowed: npt.NDArray[np.int64] | None,
    limit: int | None,
) -> dict[int, float]:
    """seq -> cosine of the best ``limit`` rows (all: None) of one block, among ``allowed`` if given."""
    if allowed is not None:
        at = positions(seqs, allowed)
        seqs, matrix = seqs[at], matrix[at]
    if not len(seqs):
        return {}
    scores = cosines(matrix, vector)
    if limit is not None and limit < len(scores):
        top = np.argpartition(-scores, limit - 1)[:limit]
        seqs, scores = seqs[top], scores[top]
    return dict(zip(seqs.tolist(), scores.tolist(), strict=True))


def _expand(
    blocks: list[dict[str, tuple[npt.NDArray[np.int64], Vector]]],
    qvecs: QueryVectors,
    top: list[int],
    weight: float,
) -> QueryVectors:
    """Each query vector moved towards the mean of the ``top`` records' vectors (Rocchio)."""
    expanded = {}
    wanted = np.asarray(sorted(top), dtype=np.int64)
    for model, (dimensions, vector) in qvecs.items():
        found = [matrix[positions(seqs, wanted)] for seqs, matrix in (b[model] for b in blocks if model in b)]
        rows = np.concatenate(found) if found else np.empty((0, dimensions), dtype=np.float32)
        if len(rows):
            vector = vector + weight * rows.mean(axis=0)
            vector = (vector / np.linalg.norm(vector)).astype(np.float32)
        expanded[model] = (dimensions, vector)
    return expanded


def _prior(fused: dict[int, float], lexical: LexicalIndex, specific: float, asking: float) -> dict[int, float]:
    """Scores x the records' prior (`LexicalIndex.prior`): turns that name things rise above chatter in common
    words, and turns that only ask sink below those that tell. A record the index does not hold keeps its score."""
    indexed = lexical.seqs
    if not fused or not len(indexed):
        return fused
    seqs = np.fromiter(fused, dtype=np.int64, count=len(fused))
    at = np.minimum(np.searchsorted(indexed, seqs), len(indexed) - 1)
    held = indexed[at] == seqs
    factor = np.ones(len(seqs))
    factor[held] = lexical.prior(at[held], specific, asking)
    return {seq: score * f for seq, score, f in zip(fused, fused.values(), factor.tolist(), strict=True)}


def _keep_best(best: dict[int, float], found: dict[int, float]) -> None:
    """Merge ``found`` cosines into ``best``, keeping the higher per record (several models or graphs)."""
    if not best:
        best.update(found)
        return
    for seq, cos in found.items():
        if cos > best.get(seq, -2.0):
            best[seq] = cos
