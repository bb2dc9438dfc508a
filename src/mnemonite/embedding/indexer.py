"""The indexer: embeds stored records in batches, after the write (puts stay fast).

Search never waits for it: records it has not reached yet are found by full text only
(``search(..., fresh=True)`` catches up first). Its position per (kind, model) lives in
the database, so it resumes where it stopped; re-embedding for a new model is the same
loop (the embedder migration runner).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Sequence

from mnemonite.embedding.base import Embedder
from mnemonite.errors import StoreUnavailableError
from mnemonite.models.base import Model
from mnemonite.models.search import RecordKind
from mnemonite.store import Store

log = logging.getLogger("mnemonite.embedding")
KINDS: tuple[RecordKind, ...] = ("episode", "fact")
# Rows per embedder call: the embedder sorts a call's texts by length and pads each batch to its own
# longest, which only pays when a call holds enough texts to sort (64 rows: 26 LoCoMo turns per CPU
# second, 512: 56; `bench/peers.py`, "Reading it").
WINDOW = 512


class IndexProgress(Model):
    """After one batch: how far the model's index has come."""

    model: str
    kind: RecordKind
    batch: int
    embedded: int
    remaining: int


class Indexer:
    """Embeds what the active embedder has not seen yet; one batch at a time."""

    def __init__(self, store: Store, embedder: Embedder, *, batch_size: int = WINDOW) -> None:
        self._store, self.embedder, self.batch_size = store, embedder, batch_size
        self._lock = asyncio.Lock()
        self._task: asyncio.Task[None] | None = None

    async def pending(self) -> int:
        return sum([await self._store.pending_count(kind, self.embedder.model) for kind in KINDS])

    async def run(self, kinds: Sequence[RecordKind] = KINDS) -> AsyncIterator[IndexProgress]:
        """Embed until caught up, yielding after each batch; stop early by closing the generator."""
        model = self.embedder.model
        for kind in kinds:
            embedded = 0
            while True:
                async with self._lock:
                    rows = await self._store.pending_texts(kind, model, self.batch_size)
                    if not rows:
                        break
                    matrix = await self.embedder.embed_batch([text for _, text in rows])
                    seqs = [seq for seq, _ in rows]
                    await self._store.save_vectors(kind, model, seqs, matrix, upto=max(seqs))
                embedded += len(rows)
                remaining = await self._store.pending_count(kind, model)
                yield IndexProgress(model=model, kind=kind, batch=len(rows), embedded=embedded, remaining=remaining)

    async def catch_up(self, kinds: Sequence[RecordKind] = KINDS) -> int:
        """Embed everything pending (of ``kinds``); returns how many records were embedded."""
        done = 0
        async for progress in self.run(kinds):
            done += progress.batch
        return done

    def kick(self) -> None:
        """Start catching up in the background unless already running."""
        if self._task is None or self._task.done():
            self._task = asyncio.get_running_loop().create_task(self._background())

    async def _background(self) -> None:
        try:
            async for _ in self.run():
                pass
        except StoreUnavailableError as error:  # the database restarting: said in one line, resumed at the next write
            log.warning("background indexing paused (%s); it resumes with the next write", error)
        except Exception:  # a background failure must not kill the app; search falls back to full text
            log.exception("background indexing failed; records stay searchable by full text")

    async def close(self) -> None:
        if self._task is not None and not self._task.done():
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
