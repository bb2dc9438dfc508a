"""Does walking the learned graph help search? LoCoMo after the standard phase, with and without a graph walk.

    python bench/graph_walk.py [--data ../shared/bench/locomo/locomo-dev.json] [--conversations N]

Every LoCoMo turn is stored and consolidated as in `bench/consolidate.py` (rule-based standard phase, the graph
learned from what it reads). Each question of categories 1-4 is searched in its conversation with the defaults
(episodes and facts). The walk: the entities of the conversation whose name or alias the question names, and their
neighbours one hop away (edges that hold); the facts linked to any of them, ranked by `graph.recall` (salience x
BM25 against the question); their ranking fused with the search's by reciprocal rank (k = 60, the walk weighted
``--weight``). A fact counts as its source turns, in its rank. R@10 and MRR as in `bench/locomo.py`, overall and
per category, both rows in one run. The walk is kept in the product only where it helps.
LoCoMo is CC BY-NC 4.0, used here as test data only.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import sys
import tempfile
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from consolidate import AGENT, ranked_turns
from locomo import CATEGORIES, DATA, DEPTH, Evidence, metrics, turns_of
from mnemonite import Fact, Memory, MemoryConfig, Scope
from mnemonite.models.graph import Entity, RecallOptions
from mnemonite.models.search import SearchHit


def _words(text: str) -> str:
    return " " + " ".join(re.findall(r"\w+", text.casefold())) + " "


def _named(question: str, entities: list[Entity]) -> list[Entity]:
    words = _words(question)
    found = []
    for entity in entities:
        names = [entity.name, *(a for a in entity.properties.get("aliases", []) if isinstance(a, str))]
        if any(_words(name) in words for name in names):
            found.append(entity)
    return found


async def walk(mem: Memory, scope: Scope, question: str, entities: list[Entity]) -> list[Fact]:
    named = _named(question, entities)
    if not named:
        return []
    ids = {e.id for e in named}
    for entity in named:
        for edge in await mem.graph.neighbors(entity.id, limit=50):
            ids |= {edge.source, edge.target}
    scored = await mem.graph.recall(scope, RecallOptions(query=question, entity_ids=sorted(ids), limit=20))
    return [s.fact for s in scored]


def fused(hits: list[SearchHit], walked: list[Fact], prefix: str, weight: float) -> list[str]:
    """Turn ids of the two rankings fused by reciprocal rank."""
    score: dict[str, float] = defaultdict(float)
    for rank, turn in enumerate(ranked_turns(hits, prefix), start=1):
        score[turn] += 1 / (60 + rank)
    for rank, fact in enumerate(walked, start=1):
        for turn in fact.source_episode_ids:
            score[turn.removeprefix(prefix)] += weight / (60 + rank)
    return sorted(score, key=lambda t: -score[t])


async def run(data: list[dict[str, Any]], weight: float) -> dict[str, dict[int, list[list[float]]]]:
    rows: dict[str, dict[int, list[list[float]]]] = {
        "search": defaultdict(list),
        "search + graph walk": defaultdict(list),
    }
    evidence = Evidence()
    with tempfile.TemporaryDirectory() as tmp:
        config = MemoryConfig(url=f"sqlite:///{Path(tmp) / 'walk.db'}", index_in_background=False)
        async with await Memory.open(config=config) as mem:
            for sample in data:
                await mem.episodic.put_many([e.model_copy(update={"agent": AGENT}) for e in turns_of(sample)])
            await mem.index()
            await mem.consolidator.run("standard")
            await mem.index()
            for sample in data:
                prefix = f"{sample['sample_id']}/"
                known = {e.id.removeprefix(prefix) for e in turns_of(sample)}
                scope = Scope(user=sample["sample_id"], agent=AGENT)
                entities = (await mem.graph.entities(scope, limit=10_000))[0]
                stats = await mem.graph.stats(scope)
                print(f"{sample['sample_id']}: {stats.entities} entities, {stats.edges} edges", flush=True)
                for qa in sample["qa"]:
                    wanted = evidence.parse(qa.get("evidence", []), known) if qa["category"] in CATEGORIES else set()
                    if not wanted:
                        continue
                    hits = await mem.search(scope, qa["question"], k=DEPTH, tiers=("episodic", "semantic"))
                    walked = await walk(mem, scope, qa["question"], entities)
                    rows["search"][qa["category"]].append(metrics(ranked_turns(hits, prefix), wanted))
                    rows["search + graph walk"][qa["category"]].append(
                        metrics(fused(hits, walked, prefix, weight), wanted)
                    )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--conversations", type=int, default=None)
    parser.add_argument("--weight", type=float, default=1.0, help="the walk's weight in the fusion")
    args = parser.parse_args()
    data = json.loads(args.data.read_text())[: args.conversations]
    rows = asyncio.run(run(data, args.weight))
    print(f"\n| row | R@10 | MRR | {' | '.join(f'{CATEGORIES[c]} R@10' for c in sorted(CATEGORIES))} |")
    print("|---|---|---|" + "---|" * len(CATEGORIES))
    for name, by_category in rows.items():
        every = np.array([m for values in by_category.values() for m in values])
        cells = [f"{np.mean([m[2] for m in by_category[c]]):.3f}" for c in sorted(CATEGORIES)]
        print(f"| {name} | {every[:, 2].mean():.3f} | {every[:, 4].mean():.3f} | {' | '.join(cells)} |")


if __name__ == "__main__":
    main()
