"""Hybrid search: full text + vectors, fused, boosted, optionally reranked."""

from memstrata.search.fusion import linear_fusion, rrf_fusion
from memstrata.search.hybrid import SearchEngine, SearchOptions
from memstrata.search.rerank import Reranker

__all__ = ["Reranker", "SearchEngine", "SearchOptions", "linear_fusion", "rrf_fusion"]
