"""The approximate vector index (HNSW, via ``usearch``) used for users with very many vectors.

Exact numpy search reads every vector of the scope per query (about 9 ms per 100,000 on
two cores), which is most of the latency budget of a large memory. For an unfiltered
search of a user with at least ``SearchOptions.ann_min_rows`` vectors the engine builds
an HNSW graph in a worker thread the first time (searches stay exact meanwhile), then
answers from it. Rows indexed later are searched exactly until enough of them wait; then a
worker thread builds a second, small graph over them, and rebuilds one graph over all rows
when that second one has grown to a quarter of the first. A graph is never changed once
searches can see it. Filtered searches (a session,
an agent, a time range, facts) stay exact over the rows the filter allows. Its recall
against exact search and its effect on LoCoMo are measured in ``bench/``.
"""

from __future__ import annotations

import logging
from typing import Any

import numpy as np
import numpy.typing as npt
import onnxruntime  # noqa: F401  (first: loaded after usearch's numkong library, onnxruntime's import crashes)
from usearch.index import Index

log = logging.getLogger("mnemonite.search")

CONNECTIVITY = 16
EXPANSION_ADD = 64


class AnnIndex:
    """HNSW over (seq, vector) rows, cosine metric, half-precision storage."""

    def __init__(self, dimensions: int, start: int = 0) -> None:
        self._index: Any = Index(
            ndim=dimensions, metric="cos", dtype="f16", connectivity=CONNECTIVITY, expansion_add=EXPANSION_ADD
        )
        self.start = start  # the first row (in the engine's per-user order) this graph holds
        self.size = 0

    @property
    def end(self) -> int:
        return self.start + self.size

    @property
    def nbytes(self) -> int:
        return int(self._index.memory_usage)

    def add(self, seqs: npt.NDArray[np.int64], matrix: npt.NDArray[np.float32]) -> None:
        if len(seqs):
            self._index.add(seqs.astype(np.uint64), matrix, threads=0)
            self.size += len(seqs)

    def search(self, vector: npt.NDArray[np.float32], limit: int) -> dict[int, float]:
        self._index.expansion_search = max(64, limit)
        found = self._index.search(vector, limit)
        return {int(key): 1.0 - float(distance) for key, distance in zip(found.keys, found.distances, strict=True)}
