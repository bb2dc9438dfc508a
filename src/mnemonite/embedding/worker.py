"""One inference thread per model: concurrent callers' texts meet in batches, off every event loop.

A search embeds one short query. Run where it is asked for, on the caller's event loop, 64 concurrent
searches embed their queries one after the other and block everything else the loop serves meanwhile
(HTTP requests, reads from the store). Through the worker, a query waits only for the batch being run
when it arrives (a few milliseconds for queries, one slice of ``slice_size`` texts of a bulk job at
most); the queries that arrived meanwhile then run together, in one batch, while the loop goes on
(onnxruntime releases the GIL while it computes). Bulk work (the indexer, ``embed_batch``) is cut into
slices run between the queries' batches, so a bulk import never holds a search back for long.

The thread starts on the first text and stays for the process (a daemon: it never keeps one alive);
a forked child starts its own. When the interpreter exits, the thread finishes the batch it runs and stops
before the native libraries are torn down: an exit in the middle of an onnxruntime run aborts the process
("terminate called without an active exception") however cleanly the program itself ended.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import logging
import os
import threading
import weakref
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

import numpy as np
import numpy.typing as npt

log = logging.getLogger("mnemonite.embedding")

Vectors = npt.NDArray[np.float32]
P = TypeVar("P")  # what a batch is run with (an embedder's precision)
EXIT_WAIT_S = 30.0  # the longest an exiting process waits for the batch being run (one slice: about a second)


@dataclass(eq=False)
class _Job(Generic[P]):
    texts: Sequence[str]
    option: P
    loop: asyncio.AbstractEventLoop
    future: asyncio.Future[Vectors]
    out: Vectors | None = None
    taken: int = 0  # texts handed to the thread so far (a bulk job goes in slices)
    done: int = 0
    failed: bool = False

    def abandoned(self) -> bool:
        return self.failed or self.future.done()  # cancelled by its caller, or settled by an error


@dataclass
class _Piece(Generic[P]):
    job: _Job[P]
    start: int
    end: int


@dataclass
class _State(Generic[P]):
    queries: deque[_Job[P]] = field(default_factory=deque)
    bulk: deque[_Job[P]] = field(default_factory=deque)
    thread: threading.Thread | None = None
    pid: int = 0
    stopping: bool = False  # the interpreter exits: the thread ends after the batch it runs


class EmbeddingWorker(Generic[P]):
    """Runs ``run(texts, option)`` on one thread for every caller of every event loop (see the module's docstring).

    ``embed(texts, option)`` is a query's path: run with whatever else waits, first. ``embed(..., bulk=True)``
    goes in slices of ``slice_size`` texts, after the queries waiting at each slice.
    """

    def __init__(self, run: Callable[[Sequence[str], P], Vectors], dimensions: int, *, slice_size: int = 64) -> None:
        self._run, self._dimensions, self.slice_size = run, dimensions, max(1, slice_size)
        self._lock = threading.Condition()
        self._state: _State[P] = _State()
        self.batches = 0  # batches run, and the texts in them: what callers shared (read by tests and benches)
        self.texts = 0
        _WORKERS.add(self)

    async def embed(self, texts: Sequence[str], option: P, *, bulk: bool = False) -> Vectors:
        if not texts:
            return np.zeros((0, self._dimensions), dtype=np.float32)
        loop = asyncio.get_running_loop()
        job: _Job[P] = _Job(list(texts), option, loop, loop.create_future())
        if self._state.pid != os.getpid():  # a forked child: its copy of the lock may be held by a parent thread
            self._lock = threading.Condition()
            self._state = _State()  # and its queue held the parent's callers
        with self._lock:
            state = self._started()
            (state.bulk if bulk else state.queries).append(job)
            self._lock.notify()
        return await job.future

    def _started(self) -> _State[P]:
        state = self._state
        if state.thread is None or state.stopping or not state.thread.is_alive():
            state = self._state = _State(pid=os.getpid())
            state.thread = threading.Thread(target=self._serve, args=(state,), name="mnemonite-embed", daemon=True)
            state.thread.start()
        return state

    def stop(self, timeout: float = EXIT_WAIT_S) -> None:
        """Ends the thread after the batch it runs (at most ``timeout`` seconds); texts still waiting are dropped.

        Called when the interpreter exits; a later ``embed`` starts a new thread.
        """
        with self._lock:
            state = self._state
            state.stopping = True
            self._lock.notify_all()
        if state.thread is not None and state.thread is not threading.current_thread():
            state.thread.join(timeout)

    def _serve(self, state: _State[P]) -> None:
        while True:
            with self._lock:
                while not state.queries and not state.bulk and not state.stopping:
                    self._lock.wait()
                if state.stopping:
                    return
                pieces = [_Piece(job, 0, len(job.texts)) for job in state.queries if not job.abandoned()]
                state.queries.clear()
                while state.bulk and state.bulk[0].abandoned():
                    state.bulk.popleft()
                if state.bulk:
                    job = state.bulk[0]
                    end = min(len(job.texts), job.taken + self.slice_size)
                    pieces.append(_Piece(job, job.taken, end))
                    job.taken = end
                    if end == len(job.texts):
                        state.bulk.popleft()
            for option in list(dict.fromkeys(piece.job.option for piece in pieces)):
                self._batch([piece for piece in pieces if piece.job.option == option], option)

    def _batch(self, pieces: list[_Piece[P]], option: P) -> None:
        texts = [text for piece in pieces for text in piece.job.texts[piece.start : piece.end]]
        try:
            vectors = self._run(texts, option)
        except Exception as error:  # handed to each caller, who sees it as if it had run the batch itself
            for piece in pieces:
                piece.job.failed = True
                _settle(piece.job, None, error)
            return
        self.batches, self.texts = self.batches + 1, self.texts + len(texts)
        at = 0
        for piece in pieces:
            job, n = piece.job, piece.end - piece.start
            if job.out is None:
                job.out = np.empty((len(job.texts), vectors.shape[1]), dtype=np.float32)
            job.out[piece.start : piece.end] = vectors[at : at + n]
            at += n
            job.done += n
            if job.done == len(job.texts):
                _settle(job, job.out, None)


_WORKERS: weakref.WeakSet[EmbeddingWorker[Any]] = weakref.WeakSet()


@atexit.register
def _stop_at_exit() -> None:
    for worker in list(_WORKERS):
        worker.stop()


def _settle(job: _Job[P], value: Vectors | None, error: Exception | None) -> None:
    def settle() -> None:
        if job.future.done():
            return
        if error is not None:
            job.future.set_exception(error)
        else:
            job.future.set_result(value)  # type: ignore[arg-type]

    with contextlib.suppress(RuntimeError):  # the caller's loop closed meanwhile: nobody waits
        job.loop.call_soon_threadsafe(settle)
