"""Ingest throughput and recent() latency on a real SQLite file.

    python bench/ingest.py                      # 100k and 1M episodes over 1,000 users
    python bench/ingest.py --sizes 10000 50000  # smaller, quicker
    python bench/ingest.py --sizes 200000 --baseline ed0d784 --rounds 2   # against the code of a git ref

Prints one markdown table. With ``--baseline`` the ref's own ``bench/ingest.py`` runs with the package
as it was at that ref, in a process of its own, alternating with this tree's run (``--rounds`` each), and
a second table sets the medians side by side.

Baselines run in the same process on the same file: a raw
`sqlite3` executemany of the same rows (ingest) and a raw `sqlite3` query of the same
index (recent), so the ratios show what mnemonite's validation, scoping and async
layers cost on this machine.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import re
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

from mnemonite import Episode, Memory, MemoryConfig
from mnemonite.scope import episode_key

USERS, SESSIONS, AGENTS = 1_000, 10, 3
CHUNK = 10_000
T0 = datetime(2025, 1, 1, tzinfo=UTC)


def scope_of(i: int) -> tuple[str, str, str]:
    user = i % USERS
    return f"user-{user:04d}", f"session-{(i // USERS) % SESSIONS}", f"agent-{(i // 7) % AGENTS}"


def episodes(start: int, stop: int) -> list[Episode]:
    batch = []
    for i in range(start, stop):
        user, session, agent = scope_of(i)
        batch.append(
            Episode(
                id=f"ep-{i}",
                content=f"turn {i}: the user mentioned topic {i % 97} and asked about item {i % 13}",
                timestamp=T0 + timedelta(seconds=i),
                user=user,
                session=session,
                agent=agent,
                metadata={"subject": user, "predicate": f"topic-{i % 97}"},
            )
        )
    return batch


def raw_rows(batch: list[Episode]) -> Iterator[tuple[object, ...]]:
    for e in batch:
        assert e.user and e.session and e.agent
        key = episode_key(e.user, e.session, e.agent)
        yield (e.id + "-raw", key, e.user, e.session, e.agent, e.content, e.timestamp.isoformat(), "", "{}", "")


def percentile(samples: list[float], q: float) -> float:
    return statistics.quantiles(samples, n=100, method="inclusive")[q - 1] if len(samples) > 1 else samples[0]


async def timed(samples: list[float], make: Callable[[], object]) -> None:
    started = time.perf_counter()
    await make()  # type: ignore[misc]
    samples.append((time.perf_counter() - started) * 1000)


PATTERNS = {
    "exact (user, session, agent)": lambda u, s, a: (u, s, a),
    "widened: user + session": lambda u, s, a: (u, s, None),
    "widened: user + agent": lambda u, s, a: (u, None, a),
    "widened: user only": lambda u, s, a: (u, None, None),
}


async def measure_recent(mem: Memory, size: int, queries: int, rows: list[list[str]]) -> None:
    rng = random.Random(size)
    for name, pattern in PATTERNS.items():
        samples: list[float] = []
        for _ in range(queries):
            user, session, agent = pattern(*scope_of(rng.randrange(size)))
            await timed(samples, lambda u=user, s=session, a=agent: mem.episodic.recent(u, s, a, limit=10))
        rows.append(
            [
                f"{size:,}",
                f"recent() {name}",
                f"{percentile(samples, 50):.2f} ms",
                f"{percentile(samples, 95):.2f} ms",
                "",
            ]
        )


def raw_recent(path: Path, size: int, queries: int) -> tuple[float, float]:
    rng = random.Random(size)
    samples = []
    with sqlite3.connect(path) as db:
        for _ in range(queries):
            key = episode_key(*scope_of(rng.randrange(size)))
            started = time.perf_counter()
            db.execute(
                "SELECT id, content, timestamp, metadata FROM episodes WHERE scope_key = ?"
                " ORDER BY timestamp DESC LIMIT 10",
                (key,),
            ).fetchall()
            samples.append((time.perf_counter() - started) * 1000)
    return percentile(samples, 50), percentile(samples, 95)


async def run(sizes: list[int], queries: int, singles: int) -> list[list[str]]:
    rows: list[list[str]] = []
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "bench.db"
        # Embedding is off the write path (a background indexer); bench/search_latency.py measures it.
        mem = await Memory.open(config=MemoryConfig(url=f"sqlite:///{path}", index_in_background=False), embedder=None)
        stored, batched_seconds = 0, 0.0
        raw = sqlite3.connect(path, isolation_level=None)
        raw.execute("PRAGMA cache_size = -65536")
        for size in sizes:
            while stored < size:
                batch = episodes(stored, min(size, stored + CHUNK))
                started = time.perf_counter()
                await mem.episodic.put_many(batch)
                batched_seconds += time.perf_counter() - started
                stored += len(batch)
            # baseline: a raw executemany of the same kind of rows into the same table and indexes
            sample = episodes(20_000_000 + size, 20_000_000 + size + CHUNK)
            started = time.perf_counter()
            raw.execute("BEGIN")
            raw.executemany(
                "INSERT INTO episodes (id, scope_key, user_id, session_id, agent_id, content, timestamp, source_node,"
                " metadata, recorded_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                raw_rows(sample),
            )
            raw.execute("COMMIT")
            raw_seconds = time.perf_counter() - started
            raw.execute("DELETE FROM episodes WHERE id LIKE '%-raw'")
            batched_rate = stored / batched_seconds
            raw_rate = CHUNK / raw_seconds
            rows.append(
                [
                    f"{size:,}",
                    "put_many, 10k per batch (cumulative)",
                    f"{batched_rate:,.0f} episodes/s",
                    "",
                    f"{batched_rate / raw_rate:.2f}x raw sqlite3 executemany ({raw_rate:,.0f}/s)",
                ]
            )
            single: list[float] = []
            for i in range(singles):
                (one,) = episodes(10_000_000 + size + i, 10_000_000 + size + i + 1)
                await timed(single, lambda e=one: mem.episodic.put(e))
            rate = 1000 / statistics.mean(single)
            rows.append(
                [
                    f"{size:,}",
                    "put one by one (own transaction each)",
                    f"{rate:,.0f} episodes/s",
                    f"p95 {percentile(single, 95):.2f} ms",
                    "",
                ]
            )
            stored += singles
            await measure_recent(mem, size, queries, rows)
            p50, p95 = raw_recent(path, size, queries)
            rows.append(
                [
                    f"{size:,}",
                    "baseline: raw sqlite3 exact-scope query",
                    f"{p50:.2f} ms",
                    f"{p95:.2f} ms",
                    "no validation, no access tracking",
                ]
            )
        raw.close()
        await mem.close()
    return rows


def baseline_rows(ref: str, argv: list[str]) -> list[list[str]]:
    """The rows the ref's own bench prints, run with the package as it was at ``ref`` in a process of its own."""
    root = Path(__file__).resolve().parent.parent
    with tempfile.TemporaryDirectory() as tmp:
        archive = subprocess.run(["git", "archive", ref, "src", "bench"], cwd=root, capture_output=True, check=True)
        subprocess.run(["tar", "-x", "-C", tmp], input=archive.stdout, check=True)
        env = {**os.environ, "PYTHONPATH": str(Path(tmp) / "src")}
        out = subprocess.run(
            [sys.executable, str(Path(tmp) / "bench" / "ingest.py"), *argv],
            env=env, capture_output=True, text=True, check=True,
        ).stdout  # fmt: skip
    return [
        [cell.strip() for cell in line.strip().strip("|").split("|")]
        for line in out.splitlines()
        if line.startswith("| ") and not line.startswith("| episodes |")
    ]


def number(cell: str) -> float | None:
    found = re.match(r"(?:p95 )?([\d,]+(?:\.\d+)?)", cell)
    return float(found.group(1).replace(",", "")) if found else None


def compare(ours: list[list[list[str]]], theirs: list[list[list[str]]], ref: str) -> None:
    """Medians per (size, operation) of this tree's rounds and the ref's, and their ratio."""
    print(f"\n#### this tree against `{ref}` (medians of {len(ours)} alternating rounds each)")
    print("| episodes | operation | this tree | p95 | ref | p95 | ratio (rate: higher is better; ms: lower) |")
    print("|---|---|---|---|---|---|---|")
    keyed = {(row[0], row[1]): i for i, row in enumerate(theirs[0])}
    for i, row in enumerate(ours[0]):
        j = keyed.get((row[0], row[1]))
        if j is None or row[1].startswith("baseline"):
            continue
        unit = row[2].split(" ", 1)[1] if " " in row[2] else ""
        cells = []
        for runs, at in ((ours, i), (theirs, j)):
            for column in (2, 3):
                values = [v for v in (number(r[at][column]) for r in runs) if v is not None]
                cells.append(statistics.median(values) if values else None)
        mine, _, base, _ = cells
        ratio = f"{mine / base:.2f}x" if mine and base else ""
        shown = [f"{v:,.2f}" if v is not None else "" for v in cells]
        print(f"| {row[0]} | {row[1]} | {shown[0]} {unit} | {shown[1]} | {shown[2]} {unit} | {shown[3]} | {ratio} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[100_000, 1_000_000])
    parser.add_argument("--queries", type=int, default=1_000, help="recent() calls per pattern and size")
    parser.add_argument("--singles", type=int, default=2_000, help="one-by-one puts per size")
    parser.add_argument("--baseline", metavar="GIT_REF", help="also run the bench of this git ref, alternating")
    parser.add_argument("--rounds", type=int, default=1, help="runs of each (with --baseline)")
    args = parser.parse_args()
    argv = ["--sizes", *map(str, args.sizes), "--queries", str(args.queries), "--singles", str(args.singles)]
    ours: list[list[list[str]]] = []
    theirs: list[list[list[str]]] = []
    for _ in range(args.rounds if args.baseline else 1):
        ours.append(asyncio.run(run(sorted(args.sizes), args.queries, args.singles)))
        if args.baseline:
            theirs.append(baseline_rows(args.baseline, argv))
    print(
        f"episodes over {USERS:,} users x {SESSIONS} sessions x {AGENTS} agents; recent(limit=10), access tracking on"
    )
    print("| episodes | operation | rate / p50 | p95 | note |")
    print("|---|---|---|---|---|")
    for row in ours[-1]:
        print("| " + " | ".join(row) + " |")
    if args.baseline:
        compare(ours, theirs, args.baseline)


if __name__ == "__main__":
    main()
