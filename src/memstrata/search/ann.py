"""An optional approximate index (HNSW, via the ``usearch`` package) for scopes with very many vectors.

Exact numpy search reads every vector of the scope per query (about 80 ms per million on
two cores). Opt in with ``SearchOptions(ann_min_rows=N)``: for scopes of at least N vectors
the engine builds an HNSW graph once
(minutes for a million vectors, logged), keeps it in memory next to the cached vectors and
adds new rows to it as they are indexed. Its recall against exact search is measured in
``bench/search_latency.py``; it is off by default until that recall is good on realistic
data. Without ``usearch`` installed, search stays exact.
"""

from __future__ import annotations

import logging
from typing import Any

import numpy as np
import numpy.typing as npt

log = logging.getLogger("memstrata.search")


def available() -> bool:
    try:
        import usearch.index  # noqa: F401
    except ImportError:
        return False
    return True


class AnnIndex:
    """HNSW over (seq, vector) rows, cosine metric, half-precision storage."""

    def __init__(self, dimensions: int) -> None:
        from usearch.index import Index

        self._index: Any = Index(ndim=dimensions, metric="cos", dtype="f16", connectivity=16, expansion_add=64)
        self.size = 0

    def add(self, seqs: npt.NDArray[np.int64], matrix: npt.NDArray[np.float32]) -> None:
        if len(seqs):
            log.info("search: adding %d vectors to the approximate index", len(seqs))
            self._index.add(seqs.astype(np.uint64), matrix, threads=0)
            self.size += len(seqs)

    def search(self, vector: npt.NDArray[np.float32], limit: int) -> dict[int, float]:
        self._index.expansion_search = max(64, 2 * limit)
        found = self._index.search(vector, limit)
        return {int(key): 1.0 - float(distance) for key, distance in zip(found.keys, found.distances, strict=True)}
