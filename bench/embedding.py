"""Embedding throughput of the packaged model: batches of similar length against batches in arrival order.

    python bench/embedding.py [--texts 1024] [--rounds 3]

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
        embedder._infer(embedder._encode(texts[i : i + step]), embedder._session) for i in range(0, len(texts), step)
    ]
    return np.vstack(parts)


async def best_rate(run: Callable[[], Awaitable[object]], n: int, rounds: int) -> float:
    best = float("inf")
    for _ in range(rounds):
        started = time.perf_counter()
        await run()
        best = min(best, time.perf_counter() - started)
    return n / best


async def main(n: int, rounds: int) -> None:
    embedder = OnnxEmbedder.default()
    corpora = {
        "LoCoMo turns": locomo_turns(n),
        "short texts (14 words)": [sentence(random.Random(i)) for i in range(n)],
    }
    await embedder.embed_batch(corpora["LoCoMo turns"][:64])  # loads the model
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
    args = parser.parse_args()
    asyncio.run(main(args.texts, args.rounds))
