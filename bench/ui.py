"""The memory inspector at scale: each view's page over one scope of 100k episodes and 10k facts.

    python bench/ui.py                                # 100,000 episodes, 10,000 facts, 30 requests per view
    python bench/ui.py --episodes 5000 --facts 500    # a short run

A fresh SQLite memory is filled through the bulk paths (`episodic.put_many` in batches of 5,000, facts as
`apply_deltas` batches of 1,000 in which a fifth are updates that supersede an earlier fact, a 300-entity graph,
300 `remember` calls for the conflict log, five working blocks), without vectors: the fill measures the write
path, not the model. The server (`create_app`, the packaged model loaded, background indexing off so nothing
else runs) listens on a free loopback port in this process. For every view, "first" is the first request after
the server started (time to first render: the whole HTML page), then p50 / p95 over ``--requests`` more. The
baseline is the JSON API's read of the same data in the same run, where there is one (`/v1/...`). With
Chromium installed, "browser" is the median time to the load event of the page in headless Chromium (HTML,
stylesheet and script), three loads.
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import socket
import statistics
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import uvicorn

from mnemonite import Episode, Memory, MemoryConfig, Scope
from mnemonite.models import AddDelta, UpdateDelta
from mnemonite.server import create_app

SCOPE = Scope(user="ada", agent="assistant")
T0 = datetime(2025, 1, 1, tzinfo=UTC)
WORDS = "tea coffee jazz chess hiking Porto Berlin Lisbon python rust sailing piano cats ramen tennis opera".split()


def _episodes(count: int) -> Iterator[list[Episode]]:
    for start in range(0, count, 5000):
        yield [
            Episode(
                content=f"Ada talked about {WORDS[i % len(WORDS)]} and {WORDS[(i * 7) % len(WORDS)]} (turn {i})",
                timestamp=T0 + timedelta(minutes=i),
                session=f"s{i // 50}",
            )
            for i in range(start, min(start + 5000, count))
        ]


def _payload(i: int) -> dict[str, Any]:
    return {"text": f"Ada's fact number {i} is about {WORDS[i % len(WORDS)]}", "user": SCOPE.user,
            "agent": SCOPE.agent, "valid_from": T0 + timedelta(hours=i), "subject": "Ada",
            "predicate": f"likes {i % 500}", "object": WORDS[i % len(WORDS)]}  # fmt: skip


async def _facts(mem: Memory, count: int) -> tuple[list[str], datetime]:
    """``count`` facts in batches of 1,000: the first 800 of a batch added, the last 200 superseding 200 of them;
    and the moment half of them were written (what the as-of view replays)."""
    made: list[str] = []
    middle = datetime.now(UTC)
    meta = {"source_episode_ids": [], "promotion_ts": T0, "rule_id": "bench", "confidence": 1.0}
    for start in range(0, count, 1000):
        size = min(1000, count - start)
        adds = min(size, 800 if size == 1000 else size)
        records = await mem.semantic.apply_deltas(
            [AddDelta(fact_payload=_payload(start + i), **meta) for i in range(adds)]
        )
        ids = [r.fact_id for r in records if r.fact_id]
        updates = [UpdateDelta(replaces=[ids[i]], fact_payload=_payload(start + adds + i), **meta)
                   for i in range(size - adds)]  # fmt: skip
        made += ids + [r.fact_id for r in await mem.semantic.apply_deltas(updates) if r.fact_id]
        if len(made) <= count // 2:
            middle = datetime.now(UTC)
    return made, middle


async def _graph(mem: Memory) -> str:
    entities = await mem.graph.create_entities(
        SCOPE, [{"name": f"Thing {i}", "entity_type": "thing"} for i in range(300)]
    )
    edges = [(entities[i].id, entities[(i * 3 + 1) % 300].id, "RELATES_TO") for i in range(300)]
    edges += [(entities[i].id, entities[(i + 7) % 300].id, "NEAR") for i in range(300)]
    await mem.graph.relate_many(SCOPE, edges)
    return entities[0].id


async def fill(db: str, episodes: int, facts: int) -> tuple[dict[str, str], float]:
    """The memory, an admin key, and the ids the views need; and how long the fill took."""
    started = time.perf_counter()
    async with await Memory.open(db, embedder=None, config=MemoryConfig(index_on_close=False)) as mem:
        for batch in _episodes(episodes):
            await mem.episodic.put_many(batch, user=SCOPE.user, agent=SCOPE.agent)
        fact_ids, middle = await _facts(mem, facts)
        entity = await _graph(mem)
        for i in range(300):
            await mem.semantic.remember(SCOPE, f"Ada mentioned {WORDS[i % len(WORDS)]} on day {i}")
        for i in range(5):
            await mem.working.define(SCOPE, f"block_{i}", f"Ada's working note {i}: " + "x" * 500)
        key = await mem.keys.create(SCOPE.user, can="read,write,admin")
    ids = {"key": key.secret, "fact": fact_ids[-1], "entity": entity, "middle": middle.strftime("%Y-%m-%dT%H:%M:%S.%f")}
    return ids, time.perf_counter() - started


def views(ids: dict[str, str]) -> list[tuple[str, str, str | None]]:
    """(name, page, the JSON API read of the same data) for every view."""
    middle = ids["middle"]
    return [
        ("timeline", "/ui/timeline", "/v1/episodes?limit=100"),
        ("timeline, text filter", "/ui/timeline?q=opera", None),
        ("facts over time", "/ui/facts", "/v1/facts?limit=200"),
        ("facts, as of", f"/ui/facts?as_of={middle}", f"/v1/facts?limit=200&as_of={middle}Z"),
        ("one fact", f"/ui/facts/{ids['fact']}", f"/v1/facts/{ids['fact']}/history"),
        ("conflicts", "/ui/conflicts", "/v1/conflicts?limit=100"),
        ("graph, depth 2", f"/ui/graph?entity={ids['entity']}&depth=2",
         f"/v1/entities/{ids['entity']}/neighbors?depth=2"),
        ("search", "/ui/search?q=what+does+Ada+say+about+opera", None),
        ("blocks & consolidator", "/ui/status", None),
    ]  # fmt: skip


@contextmanager
def serving(db: str) -> Iterator[str]:
    config = MemoryConfig(index_in_background=False, index_on_close=False)
    app = create_app(db, config=config, mcp=False)
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))
    thread = threading.Thread(target=lambda: asyncio.run(server.serve(sockets=[sock])), daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    finally:
        server.should_exit = True
        thread.join(timeout=60)
        sock.close()


def timed(http: httpx.Client, path: str) -> float:
    started = time.perf_counter()
    answer = http.get(path)
    elapsed = (time.perf_counter() - started) * 1000
    if answer.status_code != 200:
        raise SystemExit(f"{path}: {answer.status_code} {answer.text[:300]}")
    return elapsed


def p(samples: list[float], q: int) -> float:
    return statistics.quantiles(samples, n=100, method="inclusive")[q - 1]


def browser_loads(url: str, key: str, pages: list[str]) -> dict[str, float]:
    """Median time to the load event of each page in headless Chromium (empty without Chromium)."""
    path = shutil.which("chromium")
    if path is None:
        return {}
    from playwright.sync_api import sync_playwright

    loads: dict[str, float] = {}
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=path, args=["--no-sandbox"])
        context = browser.new_context(base_url=url, extra_http_headers={"Authorization": f"Bearer {key}"})
        page = context.new_page()
        for target in pages:
            samples = []
            for _ in range(3):
                started = time.perf_counter()
                page.goto(target, wait_until="load")
                samples.append((time.perf_counter() - started) * 1000)
            loads[target] = statistics.median(samples)
        browser.close()
    return loads


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--episodes", type=int, default=100_000)
    parser.add_argument("--facts", type=int, default=10_000)
    parser.add_argument("--requests", type=int, default=30)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        db = str(Path(tmp) / "ui.db")
        ids, took = asyncio.run(fill(db, args.episodes, args.facts))
        print(f"filled {args.episodes:,} episodes and {args.facts:,} facts (+300 remembered, 300 entities, 600 edges)"
              f" in {took:.1f} s ({args.episodes / took:,.0f} episodes/s overall)")  # fmt: skip
        report(db, ids, args)


def report(db: str, ids: dict[str, str], args: argparse.Namespace) -> None:
    listed = views(ids)
    with serving(db) as url, httpx.Client(base_url=url, headers={"Authorization": f"Bearer {ids['key']}"},
                                         timeout=120) as http:  # fmt: skip
        rows = []
        for name, page, api in listed:
            first = timed(http, page)
            warm = [timed(http, page) for _ in range(args.requests)]
            base = [timed(http, api) for _ in range(args.requests)] if api else None
            rows.append((name, first, p(warm, 50), p(warm, 95), p(base, 95) if base else None,
                         len(http.get(page).content)))  # fmt: skip
        loads = browser_loads(url, ids["key"], [page for _, page, _ in listed])
    print(f"\n{'view':<24}{'first ms':>10}{'p50 ms':>9}{'p95 ms':>9}{'API p95':>9}{'KB':>7}{'browser':>9}")
    for (name, first, p50, p95, api_p95, size), (_, page, _) in zip(rows, listed, strict=True):
        baseline = f"{api_p95:9.1f}" if api_p95 is not None else f"{'-':>9}"
        load = f"{loads[page]:9.1f}" if page in loads else f"{'-':>9}"
        print(f"{name:<24}{first:10.1f}{p50:9.1f}{p95:9.1f}{baseline}{size / 1024:7.0f}{load}")


if __name__ == "__main__":
    main()
