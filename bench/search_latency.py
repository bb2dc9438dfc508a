"""Hybrid search latency (k = 10, one scope) at 10k, 100k and 1M records, and embedding throughput.

    python bench/search_latency.py                       # 10k, 100k, 1M (1M takes several minutes)
    python bench/search_latency.py --sizes 10000 100000

Records are synthetic 14-word texts from a 5,000-word vocabulary with Zipf-like word
frequencies (queries: 5 words) stored through `put_many`. Their vectors are synthetic too — clustered unit
vectors written through the store under the active model's id — because embedding a
million texts with the CPU model would take hours; the vector search does exactly the
same work on them. Queries are real texts embedded by the packaged model, so query
embedding time is part of every search. Baselines in the same process: the full-text
query alone and the numpy vector scan alone on the same data.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

from memstrata import Episode, Memory, MemoryConfig, Scope
from memstrata.embedding import OnnxEmbedder
from memstrata.models.search import SearchFilter

CHUNK = 20_000
ANN_FROM = 200_000  # sizes from which the opt-in approximate index is measured too
rng = random.Random(7)
VOCAB = [f"{rng.choice('bcdfghjklmnprstvz')}{rng.choice('aeiou')}{rng.choice('lmnrst')}{i}" for i in range(5000)]
COMMON = "the user said that they would like to plan visit talk about work family trip food".split()


_WEIGHTS = [1 / (rank + 50) for rank in range(len(VOCAB))]  # Zipf-like tail of content words (no stop words)


def sentence(r: random.Random, words: int = 12) -> str:
    """Content words drawn Zipf-like (the commonest is in about 5% of texts) plus two filler words."""
    chosen = r.choices(VOCAB, weights=_WEIGHTS, k=words) + r.sample(COMMON, 2)
    r.shuffle(chosen)
    return " ".join(chosen)


def clustered(n: int, dim: int, seed: int) -> np.ndarray:
    gen = np.random.default_rng(seed)
    centres = gen.standard_normal((256, dim)).astype(np.float32)
    vectors = centres[gen.integers(0, 256, n)] + 0.6 * gen.standard_normal((n, dim)).astype(np.float32)
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def p(samples: list[float], q: int) -> float:
    return statistics.quantiles(samples, n=100, method="inclusive")[q - 1]


async def load(mem: Memory, start: int, stop: int, dim: int, model: str) -> None:
    r = random.Random(start)
    for lo in range(start, stop, CHUNK):
        hi = min(stop, lo + CHUNK)
        episodes = [
            Episode(id=f"e{i}", content=sentence(r), user="bench", session=f"s{i // 500}", agent="a")
            for i in range(lo, hi)
        ]
        await mem.episodic.put_many(episodes)
        seqs = list(range(lo + 1, hi + 1))  # a fresh database numbers rows 1, 2, 3, ...
        await mem._store.save_vectors("episode", model, seqs, clustered(hi - lo, dim, lo), upto=hi)


async def measure(mem: Memory, queries: list[str], rows: list[list[str]], size: int, embedder: OnnxEmbedder) -> None:
    scope = Scope(user="bench")
    started = time.perf_counter()
    await mem.search(scope, queries[0], k=10, tiers=["episodic"])
    cold = (time.perf_counter() - started) * 1000
    samples = []
    for text in queries:
        started = time.perf_counter()
        await mem.search(scope, text, k=10, tiers=["episodic"])
        samples.append((time.perf_counter() - started) * 1000)
    rows.append(
        [
            f"{size:,}",
            "hybrid search, k=10 (default options)",
            f"{p(samples, 50):.1f} ms",
            f"{p(samples, 95):.1f} ms",
            f"first query (loads vectors): {cold:.0f} ms",
        ]
    )
    flt = SearchFilter(scope=scope, tiers=("episodic",))
    fts, scan = [], []
    seqs, matrix = await mem._store.vectors("episode", embedder.model, embedder.dimensions, flt)
    for text in queries:
        terms = [w for w in text.split() if w not in COMMON][:8]
        started = time.perf_counter()
        await mem._store.fulltext("episode", flt, terms, 200)
        fts.append((time.perf_counter() - started) * 1000)
        vector = await embedder.embed(text)
        started = time.perf_counter()
        scores = matrix @ vector
        np.argpartition(-scores, 200)[:200]
        scan.append((time.perf_counter() - started) * 1000)
    rows.append([f"{size:,}", "baseline: FTS5 query alone", f"{p(fts, 50):.1f} ms", f"{p(fts, 95):.1f} ms", ""])
    note = f"{len(seqs):,} x {matrix.shape[1]} float32"
    rows.append(
        [f"{size:,}", "baseline: numpy vector scan alone", f"{p(scan, 50):.1f} ms", f"{p(scan, 95):.1f} ms", note]
    )
    shown = 3
    if size >= ANN_FROM:
        recall = await ann_recall(mem, queries[:100], flt, seqs, matrix, embedder)
        rows.append([f"{size:,}", "approximate index recall@10 vs exact", f"{recall:.3f}", "", "HNSW (usearch), f16"])
        shown = 4
    for row in rows[-shown:]:
        print("| " + " | ".join(row) + " |", flush=True)  # as soon as measured: the 1M step takes minutes


async def ann_recall(
    mem: Memory, queries: list[str], flt: SearchFilter, seqs: np.ndarray, matrix: np.ndarray, embedder: OnnxEmbedder
) -> float:
    index = mem._engine._ann("episode", embedder.model, flt, seqs, matrix)
    found = 0
    for text in queries:
        vector = await embedder.embed(text)
        exact = set(seqs[np.argsort(-(matrix @ vector))[:10]].tolist())
        found += len(exact & set(index.search(vector, 10)))
    return found / (10 * len(queries))


async def run(sizes: list[int], n_queries: int) -> list[list[str]]:
    embedder = OnnxEmbedder.default()
    texts = [sentence(random.Random(i)) for i in range(2048)]
    started = time.perf_counter()
    await embedder.embed_batch(texts)
    rate = len(texts) / (time.perf_counter() - started)
    rows = [["-", "embedding throughput (batch 64, 14-word texts)", f"{rate:,.0f} texts/s", "", ""]]
    print("| records in the scope | operation | p50 / rate | p95 | note |")
    print("|---|---|---|---|---|")
    print("| " + " | ".join(rows[0]) + " |", flush=True)
    queries = [sentence(random.Random(10_000_000 + i), words=5) for i in range(n_queries)]
    with tempfile.TemporaryDirectory() as tmp:
        config = MemoryConfig(url=f"sqlite:///{Path(tmp) / 'latency.db'}", index_in_background=False)
        mem = await Memory.open(config=config, embedder=embedder)
        stored = 0
        for size in sorted(sizes):
            await load(mem, stored, size, embedder.dimensions, embedder.model)
            stored = size
            await measure(mem, queries, rows, size, embedder)
        await mem.close()
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000, 1_000_000])
    parser.add_argument("--queries", type=int, default=200)
    args = parser.parse_args()
    asyncio.run(run(args.sizes, args.queries))


if __name__ == "__main__":
    main()
