"""Which embedders a memory's vectors belong to, and what happens when the embedder changes.

- ``lock-on-first`` (default): the first embedder used is recorded; opening the memory with
  another one raises EmbedderMismatchError saying how to migrate.
- ``multi-active``: the new embedder becomes the active one (new vectors), the old one stays
  readable: searches read both models' vectors when the old embedder is passed in
  ``previous_embedders``.
- ``auto-migrate``: like multi-active until ``Memory.migrate_embedder()`` has re-embedded
  every record with the new model; then the old vectors are dropped.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Literal

import numpy as np

from mnemonite.embedding.base import Embedder
from mnemonite.embedding.indexer import KINDS
from mnemonite.errors import EmbedderMismatchError
from mnemonite.store import Store

log = logging.getLogger("mnemonite.embedding")
Strategy = Literal["lock-on-first", "multi-active", "auto-migrate"]


async def attach(store: Store, embedder: Embedder, strategy: Strategy, previous: Sequence[Embedder]) -> list[Embedder]:
    """Register ``embedder`` as the active one under ``strategy``; return the embedders search reads with."""
    known = {model: (dimensions, role) for model, dimensions, role in await store.embedders()}
    current = known.get(embedder.model)
    if current is not None and current[0] != embedder.dimensions:
        raise EmbedderMismatchError(
            f"model {embedder.model} was stored with {current[0]} dimensions,"
            f" but the embedder gives {embedder.dimensions}"
        )
    active = [model for model, (_, role) in known.items() if role == "active"]
    if active and active != [embedder.model]:
        if strategy == "lock-on-first":
            raise EmbedderMismatchError(
                f"this memory's vectors were made by {active[0]}, not {embedder.model}; open it with that embedder,"
                " or with embedder_strategy='multi-active' or 'auto-migrate' (then `mnemonite migrate-embedder`)"
            )
        for model in active:
            await store.set_embedder(model, known[model][0], "readable")
        if strategy == "multi-active" and current is None:
            await _start_where(store, embedder.model, active[0])
    await store.set_embedder(embedder.model, embedder.dimensions, "active")
    readable = {model for model, (_, role) in known.items() if role == "readable"} | set(active) - {embedder.model}
    readers = [embedder] + [e for e in previous if e.model in readable]
    missing = readable - {e.model for e in readers}
    if missing:
        log.warning("vectors of %s are not searched: pass their embedders in previous_embedders", sorted(missing))
    return readers


async def _start_where(store: Store, model: str, previous: str) -> None:
    """Multi-active: the new model embeds only what the previous one has not (its rows stay readable)."""
    for kind in KINDS:
        position = await store.index_position(kind, previous)
        await store.save_vectors(kind, model, [], np.zeros((0, 1), dtype=np.float32), upto=position)


async def retire_readable(store: Store) -> list[str]:
    """Drop every non-active model's vectors (the end of an auto-migration)."""
    dropped = [model for model, _, role in await store.embedders() if role == "readable"]
    for model in dropped:
        await store.drop_embedder(model)
    return dropped
