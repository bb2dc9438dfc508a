"""An embedder for any OpenAI-compatible ``/embeddings`` endpoint (OpenAI, vLLM, llama.cpp, Ollama, ...)."""

from __future__ import annotations

from collections.abc import Sequence

import httpx
import numpy as np

from mnemonite._http import client
from mnemonite.embedding.base import BatchEmbedder, Vectors, normalise
from mnemonite.errors import EmbeddingError


class OpenAIEmbedder(BatchEmbedder):
    """``OpenAIEmbedder(base_url="http://localhost:8000/v1", model="text-embedding-3-small", dimensions=1536)``.

    ``model_id`` (stored with the vectors) defaults to ``openai:<model>``. Requests are
    batched; a failed request raises EmbeddingError and nothing is written.
    """

    def __init__(
        self,
        base_url: str,
        model: str,
        dimensions: int,
        *,
        api_key: str | None = None,
        model_id: str | None = None,
        batch_size: int = 128,
        timeout: float = 30.0,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self._client = client(base_url, api_key=api_key, timeout=timeout, transport=transport)
        self._model, self._dimensions = model, dimensions
        self._model_id = model_id or f"openai:{model}"
        self.batch_size = batch_size

    async def embed_batch(self, texts: Sequence[str]) -> Vectors:
        parts = [await self._request(texts[i : i + self.batch_size]) for i in range(0, len(texts), self.batch_size)]
        stacked: Vectors = np.vstack(parts) if parts else np.zeros((0, self._dimensions), dtype=np.float32)
        return stacked

    async def _request(self, texts: Sequence[str]) -> Vectors:
        try:
            response = await self._client.post("/embeddings", json={"model": self._model, "input": list(texts)})
            response.raise_for_status()
            data = sorted(response.json()["data"], key=lambda item: item["index"])
        except (httpx.HTTPError, KeyError, TypeError, ValueError) as error:
            raise EmbeddingError(f"embedding request to {self._client.base_url} failed: {error}") from error
        if len(data) != len(texts):
            raise EmbeddingError(f"endpoint returned {len(data)} embeddings for {len(texts)} texts")
        return normalise(np.array([item["embedding"] for item in data], dtype=np.float32), self._dimensions)

    async def aclose(self) -> None:
        await self._client.aclose()
