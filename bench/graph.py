"""Graph memory latency: `neighbors` at depth 1/2/3 and `context_for`, on a power-law graph.

    python bench/graph.py                                  # 100k entities, 1M edges, 100k facts
    python bench/graph.py --entities 10000 --edges 100000 --facts 10000

Both ends of every edge are drawn with weights (rank + 1) ** -0.5 over two shuffles of
the entities, which gives the degree tail of a preferential-attachment graph (P(k) ~ k^-3,
hubs of a few thousand edges), across eight relation types. Facts are linked to entities
the same way (role "about", one in four also "mentions" a second entity) and carry texts of
a 2,000-word vocabulary; `context_for` is asked about a random entity with a one-word
topic. Walks start at uniformly random entities, direction "both", the default limit
(1,000 edges). In the same process, for comparison: the same breadth-first walk done the
N+1 way (one edges query per visited entity, from Python) for depths 1 and 2.
The database is a real SQLite file; the embedder is off (neither call uses vectors).
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

from mnemonite import AddDelta, Memory, MemoryConfig, Scope
from mnemonite._time import utcnow
from mnemonite.tokens import default_counter

SCOPE = Scope(user="bench", agent="a")
RELATIONS = ["KNOWS", "USES", "WORKS_AT", "PART_OF", "DEPENDS_ON", "MENTIONS", "OWNS", "FOLLOWS"]
rng = random.Random(11)
VOCAB = [f"{rng.choice('bcdfgklmnprstv')}{rng.choice('aeiou')}{rng.choice('lmnrst')}{i}" for i in range(2000)]


def p(samples: list[float], q: int) -> float:
    return statistics.quantiles(samples, n=100, method="inclusive")[q - 1]


def power_law(gen: np.random.Generator, n: int, size: int) -> np.ndarray:
    weights = (np.arange(n) + 1.0) ** -0.5
    ranks = gen.choice(n, size=size, p=weights / weights.sum())
    return gen.permutation(n)[ranks]


async def load(mem: Memory, entities: int, edges: int, facts: int) -> tuple[list[str], int, float]:
    started = time.perf_counter()
    g = mem.graph
    ids: list[str] = []
    for lo in range(0, entities, 20_000):
        made = await g.create_entities(
            SCOPE, [{"name": f"entity {i}", "entity_type": "node"} for i in range(lo, min(entities, lo + 20_000))]
        )
        ids += [e.id for e in made]
    gen = np.random.default_rng(5)
    sources, targets = power_law(gen, entities, edges), power_law(gen, entities, edges)
    relations = gen.integers(0, len(RELATIONS), edges)
    seen = set()
    triples = []
    for s, t, r in zip(sources.tolist(), targets.tolist(), relations.tolist(), strict=True):
        if s != t and (s, t, r) not in seen:
            seen.add((s, t, r))
            triples.append((ids[s], ids[t], RELATIONS[r]))
    for lo in range(0, len(triples), 100_000):
        await g.relate_many(SCOPE, triples[lo : lo + 100_000])
    about, other = power_law(gen, entities, facts), power_law(gen, entities, facts)
    counter = default_counter()
    text_rng = random.Random(3)
    for lo in range(0, facts, 5_000):
        deltas = []
        for i in range(lo, min(facts, lo + 5_000)):
            text = " ".join(text_rng.choices(VOCAB, k=12))
            links = [{"entity_id": ids[about[i]], "role": "about"}]
            if i % 4 == 0 and other[i] != about[i]:
                links.append({"entity_id": ids[other[i]], "role": "mentions"})
            payload = {"text": text, "user": SCOPE.user, "agent": SCOPE.agent, "entities": links,
                       "token_count": counter.count(text)}  # fmt: skip
            deltas.append(AddDelta(fact_payload=payload, source_episode_ids=[], promotion_ts=utcnow(),
                                   rule_id="bench", confidence=1.0))  # fmt: skip
        await mem.semantic.apply_deltas(deltas)
    return ids, len(triples), time.perf_counter() - started


async def n_plus_one(mem: Memory, start: str, depth: int) -> int:
    """The same walk as `neighbors(direction="both")`, one query per visited entity."""
    seen, frontier, found = {start}, [start], set()
    for _ in range(depth):
        nxt = []
        for node in frontier:
            for edge in await mem.graph.edges_from(node) + await mem.graph.edges_to(node):
                found.add(edge.id)
                other = edge.target if edge.source == node else edge.source
                if other not in seen:
                    seen.add(other)
                    nxt.append(other)
        frontier = nxt
    return len(found)


async def run(entities: int, edges: int, facts: int, samples: int, keep: Path | None) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = keep or Path(tmp) / "graph.db"
        loaded = path.exists()
        mem = await Memory.open(config=MemoryConfig(url=f"sqlite:///{path}", embedder="none"))
        if loaded:  # --db: a graph kept from an earlier run with the same sizes
            ids, stored, seconds = [], edges, 0.0
            for offset in range(0, entities, 10_000):
                ids += [e.id for e in (await mem.graph.entities(SCOPE, limit=10_000, offset=offset))[0]]
        else:
            ids, stored, seconds = await load(mem, entities, edges, facts)
        stats = await mem.graph.stats(SCOPE)
        degrees = [len(await mem.graph.edges_from(i, limit=100_000)) + len(await mem.graph.edges_to(i, limit=100_000))
                   for i in random.Random(1).sample(ids, 200)]  # fmt: skip
        median = statistics.median(degrees)
        print(f"graph: {stats.entities:,} entities, {stats.edges:,} edges ({edges - stored:,} drawn twice or"
              f" self-loops dropped), {stats.active_memories:,} facts; loaded in {seconds:.0f} s;"
              f" degree of 200 random entities: median {median:.0f}, max {max(degrees)}")  # fmt: skip
        print()
        print("| operation | p50 | p95 | mean edges returned | note |")
        print("|---|---|---|---|---|")
        pick = random.Random(2)
        results: dict[str, list[float]] = {}
        returned: dict[str, list[int]] = {}
        for depth, n in ((1, samples), (2, samples), (3, max(20, samples // 4))):
            name = f"neighbors depth {depth}"
            for start in pick.sample(ids, n):
                began = time.perf_counter()
                got = await mem.graph.neighbors(start, depth=depth)
                results.setdefault(name, []).append((time.perf_counter() - began) * 1000)
                returned.setdefault(name, []).append(len(got))
        for depth, n in ((1, samples), (2, max(20, samples // 4))):
            name = f"baseline: N+1 walk depth {depth}"
            for start in pick.sample(ids, n):
                began = time.perf_counter()
                count = await n_plus_one(mem, start, depth)
                results.setdefault(name, []).append((time.perf_counter() - began) * 1000)
                returned.setdefault(name, []).append(count)
        for start in pick.sample(range(entities), samples):
            topic = pick.choice(VOCAB)
            began = time.perf_counter()
            ctx = await mem.graph.context_for(SCOPE, entity=f"entity {start}", topic=topic, touch=False)
            results.setdefault("context_for (2,000 tokens)", []).append((time.perf_counter() - began) * 1000)
            returned.setdefault("context_for (2,000 tokens)", []).append(len(ctx.edges_out) + len(ctx.edges_in))
        notes = {
            "neighbors depth 2": "target p95 <= 20 ms",
            "context_for (2,000 tokens)": "target p95 <= 20 ms; edges shown",
        }
        for depth in (1, 2):
            base = p(results[f"baseline: N+1 walk depth {depth}"], 95)
            notes[f"baseline: N+1 walk depth {depth}"] = (
                f"recursive query p95 is {p(results[f'neighbors depth {depth}'], 95) / base:.2f}x this"
            )
        for name, times in results.items():
            mean = statistics.mean(returned[name])
            print(f"| {name} | {p(times, 50):.1f} ms | {p(times, 95):.1f} ms | {mean:,.0f} | {notes.get(name, '')} |")
        await mem.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--entities", type=int, default=100_000)
    parser.add_argument("--edges", type=int, default=1_000_000)
    parser.add_argument("--facts", type=int, default=100_000)
    parser.add_argument("--samples", type=int, default=200)
    parser.add_argument("--db", type=Path, help="keep the graph in this file and reuse it on the next run")
    args = parser.parse_args()
    asyncio.run(run(args.entities, args.edges, args.facts, args.samples, args.db))


if __name__ == "__main__":
    main()
