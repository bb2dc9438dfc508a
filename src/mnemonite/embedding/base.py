"""The embedder protocol: texts in, L2-normalised float32 vectors out, tagged with a model id."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from mnemonite.errors import EmbeddingError

Vectors = npt.NDArray[np.float32]


@runtime_checkable
class Embedder(Protocol):
    """Anything that turns texts into vectors. ``model`` is stored with every vector it makes:
    vectors of different models are never compared."""

    @property
    def model(self) -> str: ...

    @property
    def dimensions(self) -> int: ...

    async def embed(self, text: str) -> Vectors: ...

    async def embed_batch(self, texts: Sequence[str]) -> Vectors: ...


class BatchEmbedder:
    """Shared plumbing of the built-in embedders: the model id, the size, and `embed` via `embed_batch`."""

    _model_id: str
    _dimensions: int

    @property
    def model(self) -> str:
        return self._model_id

    @property
    def dimensions(self) -> int:
        return self._dimensions

    async def embed(self, text: str) -> Vectors:
        vector: Vectors = (await self.embed_batch([text]))[0]
        return vector

    async def embed_query(self, text: str) -> Vectors:
        """A search query's vector; embedders with a faster query path override this."""
        return await self.embed(text)

    async def embed_batch(self, texts: Sequence[str]) -> Vectors:
        raise NotImplementedError


async def embed_query(embedder: Embedder, text: str) -> Vectors:
    """A search query's vector: the embedder's ``embed_query`` where it has one, else ``embed``."""
    query = getattr(embedder, "embed_query", None)
    vector: Vectors = await (query(text) if query is not None else embedder.embed(text))
    return vector


def normalise(matrix: npt.NDArray[np.floating], expected_dim: int | None = None) -> Vectors:
    """Rows scaled to unit length; a wrong shape or a non-finite value is an EmbeddingError."""
    vectors = np.asarray(matrix, dtype=np.float32)
    if vectors.ndim != 2 or (expected_dim is not None and vectors.shape[1] != expected_dim):
        raise EmbeddingError(f"embedder returned shape {vectors.shape}, expected (n, {expected_dim})")
    if not np.isfinite(vectors).all():
        raise EmbeddingError("embedder returned NaN or infinite values")
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    unit: Vectors = (vectors / np.maximum(norms, 1e-12)).astype(np.float32)
    return unit
