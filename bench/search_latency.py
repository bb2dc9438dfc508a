"""Hybrid search latency (k = 10, one scope) at 10k, 100k and 1M records, and embedding throughput.

    python bench/search_latency.py                       # 10k, 100k, 1M (1M takes several minutes)
    python bench/search_latency.py --sizes 10000 100000

Records are synthetic 14-word texts from a 5,000-word vocabulary with Zipf-like word
frequencies (queries: 5 words) stored through `put_many`. Their vectors are synthetic too — clustered unit
vectors written through the store under the active model's id — because embedding a
million texts with the CPU model would take hours; the vector search does exactly the
same work on them. Queries are real texts embedded by the packaged model, so query
embedding time is part of every search. In the same process, for comparison: the search
with exact vectors instead of the HNSW graph, the search with SQLite FTS5 queries instead
of the in-memory BM25 index, and each part alone (query embedding by the default int8 copy of
the model and by the model as shipped, FTS5 query, in-memory BM25 query, exact numpy scan, HNSW
search). The HNSW recall is measured the way ANN
benchmarks do: held-out points of the stored clusters as queries, top 10 against exact.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import numpy as np

from mnemonite import Episode, Memory, MemoryConfig, Scope
from mnemonite.embedding import OnnxEmbedder
from mnemonite.models.search import SearchFilter
from mnemonite.search import SearchOptions
from mnemonite.search.ann import AnnIndex
from mnemonite.search.hybrid import ANN_MIN_ROWS
from mnemonite.search.lexical import LexicalIndex

CHUNK = 20_000
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


async def timed(samples: list[float], call: Awaitable[object]) -> None:
    started = time.perf_counter()
    await call
    samples.append((time.perf_counter() - started) * 1000)


def clock(samples: list[float], work: Callable[..., object], *args: object) -> None:
    started = time.perf_counter()
    work(*args)
    samples.append((time.perf_counter() - started) * 1000)


async def measure(mem: Memory, queries: list[str], size: int, embedder: OnnxEmbedder) -> list[list[str]]:
    scope = Scope(user="bench")
    started = time.perf_counter()
    await mem.search(scope, queries[0], k=10, tiers=["episodic"])
    cold = (time.perf_counter() - started) * 1000
    started = time.perf_counter()
    await mem.search(scope, queries[0], k=10, tiers=["episodic"], fresh=True)  # waits for the HNSW graph, if any
    built = (time.perf_counter() - started) * 1000
    variants = {
        "hybrid search, k=10 (default options)": SearchOptions(),
        "hybrid with exact vectors (no HNSW)": SearchOptions(ann_min_rows=None),
        "hybrid with SQLite FTS5 queries for BM25": SearchOptions(lexical="fts5"),
    }
    samples: dict[str, list[float]] = {name: [] for name in variants}
    for text in queries:
        for name, options in variants.items():
            await timed(samples[name], mem.search(scope, text, k=10, tiers=["episodic"], options=options))
    notes = {
        "hybrid search, k=10 (default options)": f"first query {cold:.0f} ms, HNSW build {built / 1000:.1f} s"
        if size >= ANN_MIN_ROWS
        else f"first query {cold:.0f} ms (loads texts and vectors)",
    }
    rows = [
        [f"{size:,}", name, f"{p(t, 50):.1f} ms", f"{p(t, 95):.1f} ms", notes.get(name, "")]
        for name, t in samples.items()
    ]
    default = p(samples["hybrid search, k=10 (default options)"], 95)
    for row, name in zip(rows[1:], list(samples)[1:], strict=True):
        row[4] = f"default p95 is {default / p(samples[name], 95):.2f}x this"

    flt = SearchFilter(scope=scope, tiers=("episodic",))
    position = await mem._store.index_position("episode", embedder.model)
    seqs, matrix = await mem._store.vectors("episode", embedder.model, embedder.dimensions, "bench", 0, position)
    lexical = LexicalIndex()
    lexical.add(await mem._store.texts("episode", "bench", 0, (await mem._store.positions("episode"))[0]))
    graph = AnnIndex(embedder.dimensions)
    graph.add(seqs, matrix)
    parts: dict[str, list[float]] = {k: [] for k in ("query", "embed", "fts5", "bm25", "scan", "hnsw")}
    shipped = OnnxEmbedder(precision="model")
    await shipped.embed_query(queries[0])  # loads it
    for text in queries:
        terms = [w for w in text.split() if w not in COMMON][:8]
        await timed(parts["query"], embedder.embed_query(text))
        await timed(parts["embed"], shipped.embed_query(text))
        await timed(parts["fts5"], mem._store.fulltext("episode", flt, terms, 200))
        vector = await embedder.embed_query(text)
        clock(parts["bm25"], lexical.search, terms, 200)
        clock(parts["scan"], lambda m, v: np.argpartition(-(m @ v), 200)[:200], matrix, vector)
        clock(parts["hnsw"], graph.search, vector, 200)
    labels = {
        "query": ("embedding the query (the int8 copy, the default)", ""),
        "embed": ("embedding the query with the model as shipped", ""),
        "fts5": ("part: SQLite FTS5 BM25 query", ""),
        "bm25": ("part: in-memory BM25 query", ""),
        "scan": ("part: exact numpy vector scan", f"{len(seqs):,} x {matrix.shape[1]} float32"),
        "hnsw": ("part: HNSW search (200 candidates)", ""),
    }
    for key, (label, note) in labels.items():
        rows.append([f"{size:,}", label, f"{p(parts[key], 50):.1f} ms", f"{p(parts[key], 95):.1f} ms", note])
    rows.append([f"{size:,}", "HNSW recall@10 vs exact (held-out points)", f"{recall(graph, matrix, 200):.3f}", "", ""])
    for row in rows:
        print("| " + " | ".join(row) + " |", flush=True)  # as soon as measured: the 1M step takes minutes
    return rows


def recall(graph: AnnIndex, matrix: np.ndarray, n: int) -> float:
    """Queries are fresh points of the stored clusters (same generator seed, new noise), as ANN benchmarks do."""
    found = 0
    for query in clustered(n, matrix.shape[1], 0):
        exact = set(np.argsort(-(matrix @ query))[:10].tolist())
        found += len(exact & {key - 1 for key in graph.search(query, 10)})  # seq - 1 is the row
    return found / (10 * n)


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
            rows += await measure(mem, queries, size, embedder)
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
