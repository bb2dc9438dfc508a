"""The hybrid search engine: full text and vectors per tier, fused, boosted, reranked.

Per tier it gathers full-text candidates (BM25 over FTS5, names of sources left out of
the terms) and vector candidates (exact cosine in numpy, per model), fuses them (a
weighted linear blend by default, RRF on request), boosts episodes whose source is named
in the query, spreads a little of each episode's score to its neighbours in the same
session timeline, then merges the tiers, optionally reranks and weighs in salience.
Pseudo-relevance feedback moves the query vector towards its three best first-pass
hits (Rocchio) before the final vector pass.
The defaults were chosen on the LoCoMo development split (``bench/locomo.py``).
"""

from __future__ import annotations

import logging
from collections import OrderedDict
from collections.abc import Sequence
from typing import Literal

import numpy as np
import numpy.typing as npt
from pydantic import Field

from memstrata.embedding.base import Embedder
from memstrata.errors import InvalidInputError
from memstrata.models import Episode
from memstrata.models.base import Model
from memstrata.models.search import KIND_OF_TIER, RecordKind, SearchFilter, SearchHit, Tier
from memstrata.salience import RuleBasedScorer, SalienceContext
from memstrata.search import ann
from memstrata.search import query as q
from memstrata.search.fusion import linear_fusion, rrf_fusion
from memstrata.search.rerank import Reranker
from memstrata.store import Store

Vector = npt.NDArray[np.float32]
log = logging.getLogger("memstrata.search")


class SearchOptions(Model):
    """How signals are combined. The defaults are the measured best of ``bench/locomo.py``."""

    fusion: Literal["linear", "rrf"] = "linear"
    lexical_weight: float = Field(default=0.3, ge=0, le=1, description="linear: weight of BM25, the rest is cosine")
    rrf_k: int = Field(default=60, ge=1)
    rrf_weights: tuple[float, float] = (2.0, 1.0)
    source_boost: float = Field(default=0.6, ge=0, description="x(1 + boost) for episodes whose source is named")
    neighbour_weight: float = Field(default=0.15, ge=0, le=1)
    candidates: int = Field(default=200, ge=1, le=10_000)
    use_fulltext: bool = True
    use_vectors: bool = True
    min_cosine: float | None = Field(default=None, ge=-1, le=1, description="vector candidates below it are dropped")
    models: tuple[str, ...] | None = Field(default=None, description="read only these models' vectors")
    ann_min_rows: int | None = Field(
        default=None, ge=1, description="scopes with at least this many vectors use the approximate index (opt-in)"
    )
    feedback: float = Field(default=1.0, ge=0, description="pseudo-relevance feedback: query += f x mean(top 3)")
    salience_weight: float = Field(default=0.0, ge=0, le=1, description="score x ((1 - w) + w x salience)")
    rerank_depth: int = Field(default=30, ge=1)


class SearchEngine:
    """Searches a store with the embedders whose vectors it may read (the first is the active one)."""

    def __init__(self, store: Store, readers: Sequence[Embedder] = (), options: SearchOptions | None = None) -> None:
        self._store = store
        self._readers = list(readers)
        self.options = options or SearchOptions()
        self._cache: OrderedDict[tuple[str, str, str], tuple[int, npt.NDArray[np.int64], Vector]] = OrderedDict()
        self._scorer = RuleBasedScorer()
        self._ann_indexes: dict[tuple[str, str, str], ann.AnnIndex] = {}

    async def search(
        self,
        query: str,
        flt: SearchFilter,
        k: int = 10,
        *,
        options: SearchOptions | None = None,
        reranker: Reranker | None = None,
    ) -> list[SearchHit]:
        """The ``k`` best hits across the filter's tiers, best first."""
        opts = options or self.options
        text = _check_query(query, k)
        qvecs = await self._query_vectors(text, opts.models) if opts.use_vectors else {}
        scored: list[tuple[float, Tier, int, dict[str, float | int | None]]] = []
        for tier in flt.tiers:
            scored += await self._tier(tier, text, qvecs, flt, opts)
        scored.sort(key=lambda item: item[0], reverse=True)
        hits = await self._hits(scored[: max(k, opts.rerank_depth if reranker else k) * 2], flt)
        if reranker is not None:
            head = await reranker.rerank(text, hits[: opts.rerank_depth])
            hits = [h.model_copy(update={"reranked": True}) for h in head] + hits[opts.rerank_depth :]
        if opts.salience_weight > 0:
            hits = await self._weigh_salience(hits, opts.salience_weight)
        return hits[:k]

    async def _query_vectors(self, text: str, models: tuple[str, ...] | None) -> dict[str, tuple[int, Vector]]:
        readers = [r for r in self._readers if models is None or r.model in models]
        return {r.model: (r.dimensions, await r.embed(text)) for r in readers}

    async def _tier(
        self, tier: Tier, text: str, qvecs: dict[str, tuple[int, Vector]], flt: SearchFilter, opts: SearchOptions
    ) -> list[tuple[float, Tier, int, dict[str, float | int | None]]]:
        kind = KIND_OF_TIER[tier]
        names = await self._store.sources(flt) if kind == "episode" else []
        named = q.mentioned(text, names)
        lexical = (
            await self._store.fulltext(kind, flt, q.terms(text, named), opts.candidates) if opts.use_fulltext else []
        )
        cosine = _above(
            await self._cosines(kind, qvecs, flt, opts.candidates, ann_min_rows=opts.ann_min_rows), opts.min_cosine
        )
        fused = self._fuse(lexical, cosine, opts)
        if opts.feedback and cosine:
            # Rescore the first pass's candidates with the query moved towards its three best hits.
            top = sorted(fused, key=lambda s: -fused[s])[:3]
            qvecs = await self._expand(kind, qvecs, flt, top, opts.feedback)
            cosine = _above(await self._cosines(kind, qvecs, flt, opts.candidates, only=list(fused)), opts.min_cosine)
            fused = self._fuse(lexical, cosine, opts)
        if kind == "episode":
            fused = await self._boost(fused, named, opts)
        lex_rank = {seq: rank for rank, (seq, _) in enumerate(lexical, start=1)}
        lex_score = dict(lexical)
        vec_rank = {seq: rank for rank, seq in enumerate(sorted(cosine, key=lambda s: -cosine[s]), start=1)}
        return [
            (score, tier, seq, {"fulltext_rank": lex_rank.get(seq), "fulltext_score": lex_score.get(seq),
                                "vector_rank": vec_rank.get(seq), "cosine": cosine.get(seq), "fused": score})
            for seq, score in fused.items()
        ]  # fmt: skip

    async def _cosines(
        self,
        kind: RecordKind,
        qvecs: dict[str, tuple[int, Vector]],
        flt: SearchFilter,
        limit: int,
        only: Sequence[int] | None = None,
        ann_min_rows: int | None = None,
    ) -> dict[int, float]:
        best: dict[int, float] = {}
        for model, (dimensions, vector) in qvecs.items():
            seqs, matrix = await self._vectors(kind, model, dimensions, flt)
            if only is None and ann_min_rows is not None and len(seqs) >= ann_min_rows and ann.available():
                for seq, cos in self._ann(kind, model, flt, seqs, matrix).search(vector, limit).items():
                    best[seq] = max(best.get(seq, -1.0), cos)
                continue
            if only is not None:
                seqs, matrix = _rows(seqs, matrix, only)
            if not len(seqs):
                continue
            scores = matrix @ vector
            top = np.argpartition(-scores, min(limit, len(scores) - 1))[:limit]
            for seq, cos in zip(seqs[top].tolist(), scores[top].tolist(), strict=True):
                best[seq] = max(best.get(seq, -1.0), cos)
        return best

    def _ann(
        self, kind: RecordKind, model: str, flt: SearchFilter, seqs: npt.NDArray[np.int64], matrix: Vector
    ) -> ann.AnnIndex:
        """The approximate index of a cached scope, built on first use and extended with new rows."""
        key = (kind, model, flt.model_dump_json())
        index = self._ann_indexes.get(key)
        if index is None or index.size > len(seqs):
            log.info("search: building an approximate index over %d vectors (once per scope)", len(seqs))
            index = self._ann_indexes[key] = ann.AnnIndex(matrix.shape[1])
        index.add(seqs[index.size :], matrix[index.size :])
        return index

    async def _expand(
        self, kind: RecordKind, qvecs: dict[str, tuple[int, Vector]], flt: SearchFilter, top: list[int], weight: float
    ) -> dict[str, tuple[int, Vector]]:
        expanded = {}
        for model, (dimensions, vector) in qvecs.items():
            _, rows = _rows(*await self._vectors(kind, model, dimensions, flt), top)
            if len(rows):
                vector = vector + weight * rows.mean(axis=0)
                vector = (vector / np.linalg.norm(vector)).astype(np.float32)
            expanded[model] = (dimensions, vector)
        return expanded

    async def _vectors(
        self, kind: RecordKind, model: str, dimensions: int, flt: SearchFilter
    ) -> tuple[npt.NDArray[np.int64], Vector]:
        # A scope's vectors are cached; when the index moves on, only the new rows are read and appended.
        # The cache only proposes candidates: _hits re-checks every one against the filter.
        key = (kind, model, flt.model_dump_json())
        position = await self._store.index_position(kind, model)
        cached = self._cache.get(key)
        if cached is not None and cached[0] == position:
            self._cache.move_to_end(key)
            return cached[1], cached[2]
        if cached is not None and cached[0] > position:  # the model's vectors were dropped or rebuilt
            cached = None
        seqs, matrix = await self._store.vectors(kind, model, dimensions, flt, after=cached[0] if cached else 0)
        if cached is not None:
            seqs, matrix = np.concatenate([cached[1], seqs]), np.vstack([cached[2], matrix])
        self._cache[key] = (position, seqs, matrix)
        while len(self._cache) > 16:
            self._cache.popitem(last=False)
        return seqs, matrix

    @staticmethod
    def _fuse(lexical: list[tuple[int, float]], cosine: dict[int, float], opts: SearchOptions) -> dict[int, float]:
        if opts.fusion == "rrf":
            rankings = [[seq for seq, _ in lexical], sorted(cosine, key=lambda s: -cosine[s])]
            return rrf_fusion(rankings, opts.rrf_weights, opts.rrf_k)
        alpha = opts.lexical_weight if cosine and lexical else (1.0 if lexical else 0.0)
        return linear_fusion(dict(lexical), cosine, alpha)

    async def _boost(self, fused: dict[int, float], named: list[str], opts: SearchOptions) -> dict[int, float]:
        if not fused or (not named and not opts.neighbour_weight):
            return fused
        top = sorted(fused, key=lambda s: -fused[s])[: opts.candidates]
        if named and opts.source_boost:
            for seq in await self._store.from_sources(top, named):
                fused[seq] *= 1 + opts.source_boost
        if opts.neighbour_weight:
            spread = dict(fused)
            for seq, around in (await self._store.neighbours(top[:50])).items():
                for other in around:
                    if other is not None:
                        spread[other] = spread.get(other, 0.0) + opts.neighbour_weight * fused[seq]
            fused = spread
        return fused

    async def _hits(
        self, scored: list[tuple[float, Tier, int, dict[str, float | int | None]]], flt: SearchFilter
    ) -> list[SearchHit]:
        hits: list[SearchHit] = []
        for tier in ("episodic", "semantic"):
            kind = KIND_OF_TIER[tier]
            seqs = [seq for _, t, seq, _ in scored if t == tier]
            found = await self._store.records(kind, sorted(await self._store.matching(kind, seqs, flt)))
            hits += [
                SearchHit(record=found[seq], tier=tier, score=score, **parts)
                for score, t, seq, parts in scored
                if t == tier and seq in found
            ]
        hits.sort(key=lambda h: h.score, reverse=True)
        return hits

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


def _rows(seqs: npt.NDArray[np.int64], matrix: Vector, wanted: Sequence[int]) -> tuple[npt.NDArray[np.int64], Vector]:
    """The rows of ``wanted`` seqs (``seqs`` is sorted), found by binary search, not a scan."""
    keys = np.asarray(sorted(set(wanted)), dtype=np.int64)
    at = np.searchsorted(seqs, keys)
    hit = at < len(seqs)
    at = at[hit]
    at = at[seqs[at] == keys[hit]]
    return seqs[at], matrix[at]


def _above(cosine: dict[int, float], threshold: float | None) -> dict[int, float]:
    return cosine if threshold is None else {seq: c for seq, c in cosine.items() if c >= threshold}


def _check_query(query: str, k: int) -> str:
    if not isinstance(query, str) or not query.strip():
        raise InvalidInputError("the search query must be a non-empty string")
    if k < 1:
        raise InvalidInputError(f"k must be >= 1, got {k}")
    return query.strip()[: q.MAX_QUERY_CHARS]
