"""The graph memory builds from chat alone: entities and relations after the standard phase, against labelled sets.

    python bench/graph_learning.py                                  # the development set, both extractions
    python bench/graph_learning.py --sets graph.jsonl --extraction rules
    python bench/graph_learning.py --show                           # every miss and every extra

Each line of a set is one chat between a user and an assistant (``turns``), with the entities a careful reader
would draw (``entities``: name, type, aliases), the relations true at its end (``relations``) and those that held
earlier and no longer do (``ended``). Every chat is stored as episodes of one user (the user's first name,
lower-cased, as the user id; the assistant's turns with source "assistant"), the consolidator's standard phase runs
rule-based (no model) with the chosen extraction, and the scope's graph is read back:

- entities: an entity matches the gold entity whose name or alias equals its name or one of its aliases
  (case-insensitive); the scope's own entity matches the user. Precision = matched / entities made, recall =
  gold entities found / gold entities. "typed" is the share of matched entities whose type is the gold one.
- relations: current edges (not ended) between matched entities, as (source, relation, target), symmetric
  relations either way round; precision = matching edges / current edges, recall = gold relations found / gold.
- ended: gold ended relations found among the edges that ended (recall), and how many of them are still current.

Targets (the graph issue): entity precision >= 0.90, recall >= 0.85; relation precision >= 0.85, recall >= 0.75.
The order in which the sets were written, tuned on and measured is in `bench/README.md`.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from mnemonite import Episode, Memory, MemoryConfig, Scope
from mnemonite.consolidator.budget import ConsolidatorConfig
from mnemonite.reading.graph import SYMMETRIC

DATA = Path(__file__).resolve().parent / "data"
AGENT = "assistant"


def _key(name: str) -> str:
    return " ".join(name.split()).casefold()


def _gold_names(chat: dict[str, Any]) -> dict[str, str]:
    """Every name or alias of a gold entity -> its name."""
    names: dict[str, str] = {}
    for entity in chat["entities"]:
        for name in [entity["name"], *entity.get("aliases", [])]:
            names.setdefault(_key(name), entity["name"])
    return names


def _triple(source: str, relation: str, target: str) -> tuple[str, str, str]:
    if relation in SYMMETRIC:
        source, target = sorted((source, target))
    return source, relation, target


async def build(mem: Memory, chat: dict[str, Any]) -> tuple[list[Any], list[Any]]:
    user = chat["user"].lower()
    start = datetime(2026, 3, 1, 9, tzinfo=UTC)
    episodes = [
        Episode(id=f"{chat['id']}-{i}", content=turn["text"], timestamp=start + timedelta(minutes=2 * i),
                source_node="user" if turn["speaker"] == "user" else "assistant")
        for i, turn in enumerate(chat["turns"])
    ]  # fmt: skip
    await mem.episodic.put_many(episodes, user=user, session=chat["id"], agent=AGENT)
    await mem.consolidator.run("standard")
    scope = Scope(user=user, agent=AGENT)
    entities, _ = await mem.graph.entities(scope, limit=10_000)
    edges = [edge for entity in entities for edge in await mem.graph.edges_from(entity.id, ended=True)]
    return entities, edges


def score(chat: dict[str, Any], entities: list[Any], edges: list[Any], show: bool) -> Counter[str]:
    counts, matched = _entities(chat, entities, show)
    return counts + _relations(chat, entities, edges, matched, show)


def _entities(chat: dict[str, Any], entities: list[Any], show: bool) -> tuple[Counter[str], dict[str, str]]:
    counts: Counter[str] = Counter()
    gold_names = _gold_names(chat)
    types = {e["name"]: e["type"] for e in chat["entities"]}
    matched: dict[str, str] = {}  # entity id -> gold name
    for entity in entities:
        names = [entity.name, *(a for a in entity.properties.get("aliases", []) if isinstance(a, str))]
        gold = chat["user"] if entity.properties.get("self") else next(
            (gold_names[_key(n)] for n in names if _key(n) in gold_names), None)  # fmt: skip
        if gold is not None:
            matched[entity.id] = gold
            counts["typed"] += types.get(gold) == entity.entity_type
        elif show:
            print(f"    {chat['id']} extra entity: {entity.name} ({entity.entity_type})")
    found = set(matched.values())
    counts["entities"] += len(entities)
    counts["entities matched"] += len(matched)
    counts["gold entities"] += len(chat["entities"])
    counts["gold entities found"] += len(found)
    for entity in chat["entities"] if show else []:
        if entity["name"] not in found:
            print(f"    {chat['id']} missed entity: {entity['name']} ({entity['type']})")
    return counts, matched


def _relations(
    chat: dict[str, Any], entities: list[Any], edges: list[Any], matched: dict[str, str], show: bool
) -> Counter[str]:
    counts: Counter[str] = Counter()
    names = {entity.id: entity.name for entity in entities}
    current, ended = set(), set()
    for edge in edges:
        source = matched.get(edge.source, f"?{names.get(edge.source)}")
        target = matched.get(edge.target, f"?{names.get(edge.target)}")
        (current if edge.current else ended).add(_triple(source, edge.relation, target))
    gold = {_triple(r["source"], r["relation"], r["target"]) for r in chat["relations"]}
    gold_ended = {_triple(r["source"], r["relation"], r["target"]) for r in chat.get("ended", [])}
    counts["edges"] += len(current)
    counts["edges matched"] += len(current & gold)
    counts["gold relations"] += len(gold)
    counts["gold ended"] += len(gold_ended)
    counts["ended found"] += len(ended & gold_ended)
    counts["ended still current"] += len(current & gold_ended)
    if show:
        for what, triples in (("extra edge", current - gold), ("missed edge", gold - current),
                              ("missed end", gold_ended - ended)):  # fmt: skip
            for triple in sorted(triples):
                print(f"    {chat['id']} {what}: {' '.join(triple)}")
    return counts


def load(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


async def measure(chats: list[dict[str, Any]], extraction: str, show: bool) -> tuple[Counter[str], float, int]:
    counts: Counter[str] = Counter()
    with tempfile.TemporaryDirectory() as folder:
        config = MemoryConfig(consolidator=ConsolidatorConfig(extraction=extraction), index_on_close=False)
        async with await Memory.open(f"{folder}/graph.db", config=config) as mem:
            started = time.perf_counter()
            for chat in chats:
                entities, edges = await build(mem, chat)
                counts += score(chat, entities, edges, show)
            seconds = time.perf_counter() - started
    turns = sum(len(chat["turns"]) for chat in chats)
    return counts, seconds, turns


def _ratio(a: int, b: int) -> str:
    return f"{a / b:.3f}" if b else "-"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sets", default="graph_dev.jsonl")
    parser.add_argument("--extraction", default="rules,parser")
    parser.add_argument("--show", action="store_true", help="print every missed or extra entity and edge")
    args = parser.parse_args()
    print("| set | extraction | entities P | entities R | typed | relations P | relations R | ended found |"
          " ended still current | turns / s |")  # fmt: skip
    print("|---|---|---|---|---|---|---|---|---|---|")
    for name in args.sets.split(","):
        for extraction in args.extraction.split(","):
            c, seconds, turns = asyncio.run(measure(load(DATA / name), extraction, args.show))
            found = _ratio(c["gold entities found"], c["gold entities"])
            print(
                f"| {name} | {extraction} | {_ratio(c['entities matched'], c['entities'])} |"
                f" {found} | {_ratio(c['typed'], c['entities matched'])} |"
                f" {_ratio(c['edges matched'], c['edges'])} | {_ratio(c['edges matched'], c['gold relations'])} |"
                f" {c['ended found']}/{c['gold ended']} | {c['ended still current']} | {turns / seconds:.0f} |",
                flush=True,
            )


if __name__ == "__main__":
    sys.exit(main())
