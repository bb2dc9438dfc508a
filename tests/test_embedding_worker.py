"""The embedding worker: one inference thread, callers' texts in shared batches, queries before bulk work."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Sequence

import numpy as np

from mnemonite.embedding import OnnxEmbedder
from mnemonite.embedding.worker import EmbeddingWorker


class Recorder:
    """A stand-in model: each text's vector is [its length, the option]; every batch is logged."""

    def __init__(self, pause: float = 0.0) -> None:
        self.batches: list[list[str]] = []
        self.threads: set[str] = set()
        self.pause = pause

    def __call__(self, texts: Sequence[str], option: int) -> np.ndarray:
        self.batches.append(list(texts))
        self.threads.add(threading.current_thread().name)
        if self.pause:
            time.sleep(self.pause)
        if any(text == "boom" for text in texts):
            raise ValueError("the model failed")
        return np.array([[len(text), option] for text in texts], dtype=np.float32)


async def test_concurrent_callers_share_batches_off_the_event_loop() -> None:
    model = Recorder(pause=0.02)
    worker = EmbeddingWorker(model, 2)
    texts = [f"query {'x' * i}" for i in range(40)]
    vectors = await asyncio.gather(*[worker.embed([text], 1) for text in texts])
    assert [v[0][0] for v in vectors] == [len(text) for text in texts]  # each caller gets its own text's vector
    assert len(model.batches) < len(texts) / 4  # they waited for one batch and ran in the next, together
    assert model.threads == {"mnemonite-embed"}


async def test_a_failure_reaches_every_caller_of_its_batch_and_no_other() -> None:
    model = Recorder(pause=0.05)
    worker = EmbeddingWorker(model, 2)
    first = asyncio.ensure_future(worker.embed(["ahead"], 1))
    await asyncio.sleep(0.01)  # the thread is busy with "ahead": the next three meet in one batch
    together = [asyncio.ensure_future(worker.embed([text], 1)) for text in ("a", "boom", "b")]
    assert (await first)[0][0] == 5
    results = await asyncio.gather(*together, return_exceptions=True)
    assert all(isinstance(r, ValueError) for r in results)
    assert (await worker.embed(["after"], 1))[0][0] == 5  # the worker goes on


async def test_options_run_in_batches_of_their_own() -> None:
    model = Recorder(pause=0.02)
    worker = EmbeddingWorker(model, 2)
    found = await asyncio.gather(*[worker.embed([f"t{i}"], i % 2) for i in range(10)])
    assert [int(v[0][1]) for v in found] == [i % 2 for i in range(10)]
    for batch in model.batches:
        assert len({int(t[1:]) % 2 for t in batch}) == 1


async def test_a_query_passes_a_bulk_job_and_bulk_keeps_its_order() -> None:
    model = Recorder(pause=0.01)
    worker = EmbeddingWorker(model, 2, slice_size=8)
    bulk_texts = ["y" * (i % 13 + 1) for i in range(200)]
    bulk = asyncio.ensure_future(worker.embed(bulk_texts, 1, bulk=True))
    await asyncio.sleep(0.03)
    query = await worker.embed(["where do I live"], 1)
    assert query[0][0] == len("where do I live") and not bulk.done()  # answered between two slices
    vectors = await bulk
    assert vectors[:, 0].tolist() == [len(t) for t in bulk_texts]
    assert max(len(b) for b in model.batches) <= 8 + 1


async def test_a_cancelled_caller_leaves_the_others_their_answers() -> None:
    model = Recorder(pause=0.03)
    worker = EmbeddingWorker(model, 2, slice_size=4)
    gone = asyncio.ensure_future(worker.embed(["z"] * 40, 1, bulk=True))
    await asyncio.sleep(0.01)
    gone.cancel()
    kept = await worker.embed(["kept"], 1)
    assert kept[0][0] == 4
    await asyncio.sleep(0.05)
    assert sum(len(b) for b in model.batches) < 40 + 1  # the abandoned job's remaining slices never ran


def test_a_forked_child_embeds_with_a_thread_of_its_own() -> None:
    import multiprocessing

    worker = EmbeddingWorker(Recorder(), 2)
    assert asyncio.run(worker.embed(["parent"], 1))[0][0] == 6  # the parent's thread is running
    context = multiprocessing.get_context("fork")
    results = context.Queue()

    def child() -> None:
        results.put(float(asyncio.run(worker.embed(["child!"], 1))[0][0]))

    process = context.Process(target=child)
    process.start()
    process.join(timeout=30)
    assert process.exitcode == 0 and results.get(timeout=5) == 6.0


def test_callers_on_two_event_loops_in_two_threads() -> None:
    model = Recorder(pause=0.01)
    worker = EmbeddingWorker(model, 2)
    out: dict[str, float] = {}

    def run(name: str) -> None:
        out[name] = float(asyncio.run(worker.embed([name * 3], 1))[0][0])

    threads = [threading.Thread(target=run, args=(name,)) for name in ("ab", "cde")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert out == {"ab": 6.0, "cde": 9.0}


async def test_the_packaged_model_embeds_the_same_through_the_worker() -> None:
    """Concurrent queries batched together get the vectors each gets alone (the model pools per text)."""
    model = OnnxEmbedder.default()
    texts = ["where does sam live now", "my cat Milo", "the rent went up to 1,400 euros", "hi"]
    alone = [await model.embed_query(text) for text in texts]
    before = model._worker.batches
    together = await asyncio.gather(*[model.embed_query(text) for text in texts])
    for a, b in zip(alone, together, strict=True):
        assert float(np.dot(a, b)) > 0.999
    assert model._worker.batches - before < len(texts)  # at least two of them ran in one batch
    bulk = await model.embed_batch(texts)
    for a, b in zip(alone, bulk, strict=True):
        assert float(np.dot(a, b)) > 0.999


async def test_stop_lets_the_running_batch_finish_and_a_later_text_starts_a_new_thread() -> None:
    model, running = Recorder(pause=0.2), threading.Event()

    def run(texts: Sequence[str], option: int) -> np.ndarray:
        running.set()
        return model(texts, option)

    worker = EmbeddingWorker(run, 2, slice_size=4)
    dropped = asyncio.ensure_future(worker.embed(["a"] * 12, 1, bulk=True))
    assert await asyncio.to_thread(running.wait, 10)
    first = worker._state.thread
    assert first is not None
    await asyncio.to_thread(worker.stop)  # as at the interpreter's exit: the slice being run ends, nothing after it
    assert not first.is_alive() and len(model.batches) == 1 and not dropped.done()
    assert (await worker.embed(["again"], 1))[0][0] == 5
    assert worker._state.thread is not first and len(model.batches) == 2
    dropped.cancel()
