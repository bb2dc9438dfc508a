"""The HTTP client of mnemonite's OpenAI-compatible adapters (embeddings, the judge)."""

from __future__ import annotations

import httpx


def client(
    base_url: str, *, api_key: str | None, timeout: float, transport: httpx.AsyncBaseTransport | None
) -> httpx.AsyncClient:
    """An async client for ``base_url`` (``.../v1``), with a bearer token when ``api_key`` is given."""
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    return httpx.AsyncClient(base_url=base_url.rstrip("/"), headers=headers, timeout=timeout, transport=transport)
