"""The reranker protocol: reorder the best hits with a stronger, slower judge."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from mnemonite.models.search import SearchHit


@runtime_checkable
class Reranker(Protocol):
    """A cross-encoder, an LLM judge or any scoring function.

    Gets the query and the top hits (best first) and returns them in its order; it may
    change ``score``. Hits it leaves out are dropped.
    """

    async def rerank(self, query: str, hits: list[SearchHit]) -> list[SearchHit]: ...
