"""Hybrid search: full text + vectors, fused, boosted, optionally reranked."""

from mnemonite.search.fusion import linear_fusion, rrf_fusion
from mnemonite.search.hybrid import SearchEngine, SearchOptions
from mnemonite.search.rerank import Reranker

__all__ = ["Reranker", "SearchEngine", "SearchOptions", "linear_fusion", "rrf_fusion"]
