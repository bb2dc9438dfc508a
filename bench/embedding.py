"""Embedding throughput of the packaged model: the int8 copy against the model as shipped, and batches of
similar length against batches in arrival order.

    python bench/embedding.py [--texts 1024] [--rounds 3] [--threads 1]

First table: the default embedder (``precision="int8"``: the int8 copy with each text's rows
quantized on their own, `mnemonite.embedding.int8`) against the model as shipped
(``precision="model"``), both sorting by length, timed alternately in one process on the same texts.
"cosine to the model" compares each text's two vectors; "batch = alone" checks that every text's
vector in the batched run is bit for bit its vector embedded alone.

Second table:
A batch is padded to its longest text. The default embedder sorts a call's texts by length and
batches neighbours (`OnnxEmbedder._run`); the baseline, timed in the same process on the same
texts, runs batches of 64 in the order given, each padded to its longest member (how the
embedder ran before). Two corpora: LoCoMo turns as `bench/locomo.py` stores them (mixed lengths),
and short synthetic 14-word texts (`bench/search_latency.py`'s generator). Best of ``--rounds``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import resource
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import numpy as np

from locomo import DATA, turns_of
from mnemonite.embedding import OnnxEmbedder
from search_latency import sentence


def locomo_turns(n: int) -> list[str]:
    data = json.loads(Path(DATA).read_text())
    return [episode.content for sample in data for episode in turns_of(sample)][:n]


def arrival_order(embedder: OnnxEmbedder, texts: list[str]) -> np.ndarray:
    """The baseline: fixed batches in the order given, each padded to its longest text."""
    step = embedder.batch_size
    parts = [
        embedder._infer(embedder._encode(texts[i : i + step]), embedder._session(embedder.precision))
        for i in range(0, len(texts), step)
    ]
    return np.vstack(parts)


async def best_rate(run: Callable[[], Awaitable[object]], n: int, rounds: int) -> float:
    best = float("inf")
    for _ in range(rounds):
        started = time.perf_counter()
        await run()
        best = min(best, time.perf_counter() - started)
    return n / best


async def precisions(corpora: dict[str, list[str]], rounds: int, threads: int | None) -> OnnxEmbedder:
    """The int8 copy (the default) against the model as shipped, both batched by length; returns the default."""
    int8, model = OnnxEmbedder(threads=threads), OnnxEmbedder(threads=threads, precision="model")
    for embedder in (int8, model):
        await embedder.embed_batch(corpora["LoCoMo turns"][:64])  # loads the session (makes the copy once)
    print(f"onnxruntime threads: {threads or 'its own default'}\n")
    print(
        "| corpus | texts | int8 copy (default) | model as shipped (baseline) | ratio | cosine to the model "
        "(min / mean) | batch = alone |"
    )
    print("|---|---|---|---|---|---|---|")
    for name, texts in corpora.items():
        fast = slow = 0.0
        for _ in range(rounds):  # alternated, so that both see the same machine load
            fast = max(fast, await best_rate(lambda t=texts: int8.embed_batch(t), len(texts), 1))  # type: ignore[misc]
            slow = max(slow, await best_rate(lambda t=texts: model.embed_batch(t), len(texts), 1))  # type: ignore[misc]
        batched = await int8.embed_batch(texts)
        cosine = np.sum(batched * await model.embed_batch(texts), axis=1)
        alone = np.vstack([await int8.embed(text) for text in texts])
        cells = [name, str(len(texts)), f"{fast:,.0f} texts/s", f"{slow:,.0f} texts/s", f"x{fast / slow:.2f}"]
        cells += [f"{cosine.min():.4f} / {cosine.mean():.4f}", "yes" if np.array_equal(batched, alone) else "NO"]
        print("| " + " | ".join(cells) + " |")
    print()
    return int8


async def main(n: int, rounds: int, threads: int | None) -> None:
    corpora = {
        "LoCoMo turns": locomo_turns(n),
        "short texts (14 words)": [sentence(random.Random(i)) for i in range(n)],
    }
    embedder = await precisions(corpora, rounds, threads)
    print("| corpus | texts | by length (default) | arrival order (baseline) | ratio | same vectors |")
    print("|---|---|---|---|---|---|")
    for name, texts in corpora.items():
        fast = await best_rate(lambda t=texts: embedder.embed_batch(t), len(texts), rounds)  # type: ignore[misc]
        slow = await best_rate(lambda t=texts: asyncio.to_thread(arrival_order, embedder, t), len(texts), rounds)  # type: ignore[misc]
        same = float(np.min(np.sum(await embedder.embed_batch(texts) * arrival_order(embedder, texts), axis=1)))
        cells = [name, str(len(texts)), f"{fast:,.0f} texts/s", f"{slow:,.0f} texts/s", f"x{fast / slow:.2f}"]
        print("| " + " | ".join([*cells, f"min cosine {same:.6f}"]) + " |")
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"\npeak RSS of this process: {peak:,.0f} MB")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--texts", type=int, default=1024)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--threads", type=int, default=1, help="onnxruntime threads per session (0: its default)")
    args = parser.parse_args()
    asyncio.run(main(args.texts, args.rounds, args.threads or None))
