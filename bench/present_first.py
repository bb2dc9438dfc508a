"""Present first: the record true now ranks above the one it replaced (``bench/data/present_first*.jsonl``).

Each case is a short history of one user, oldest first, in which a later statement replaced an earlier one
(a move, a new job, a new pet...), with distractors (small talk naming the user, other facts), and a question
about the present. Every case is stored under a user of its own in one memory, the way its ``where`` says:
``episodes`` (the turns, with their speakers and times), ``facts`` (each statement remembered, in order, with its
time as ``valid_from``) or ``both`` (the turns, then the consolidator's standard phase reads facts from them,
rule-based). ``mem.search(Scope(user), query, k=10)`` with the defaults; a hit stands for the current (or the
replaced) statement when its text is that statement, or when it is a fact read from that turn. A case counts
when the current statement's best hit ranks above the replaced one's (or the replaced one is not in the ten).

Rows: the defaults, then the same search with ``newer_first`` off (a later record on the same subject is not moved
up), and with ``current_first`` off too (turns whose facts were superseded are not moved down): the baseline of
the same run. No case is read by the search: the query alone.

    .venv/bin/python bench/present_first.py [--set bench/data/present_first.jsonl] [--show-misses]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
from collections import Counter, defaultdict
from datetime import datetime
from pathlib import Path
from typing import Any

from mnemonite import Episode, Memory, Scope, SearchOptions
from mnemonite.models import Fact

DATA = Path(__file__).resolve().parent / "data"
AGENT = "assistant"


def load(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def user_of(index: int, case: dict[str, Any]) -> str:
    return f"{case['user']}-{index}"


async def store(mem: Memory, cases: list[dict[str, Any]]) -> None:
    """Write every case's history under a user of its own; consolidate the ``both`` cases."""
    for index, case in enumerate(cases):
        user = user_of(index, case)
        items = case["history"]
        if case["where"] in ("episodes", "both"):
            for item in items:
                episode = Episode(content=item["text"], source_node=item["speaker"],
                                  timestamp=datetime.fromisoformat(item["at"]))  # fmt: skip
                await mem.episodic.put(episode, user=user, session=item["session"], agent=AGENT)
        else:
            for item in items:
                await mem.semantic.remember(Scope(user=user, agent=AGENT), item["text"],
                                            valid_from=datetime.fromisoformat(item["at"]))  # fmt: skip
    for index, case in enumerate(cases):
        if case["where"] == "both":
            await mem.consolidator.run("light", user=user_of(index, case))
            await mem.consolidator.run("standard", user=user_of(index, case))
    await mem.index()


def rank_of(hits: list[Any], text: str, turn_ids: set[str]) -> int | None:
    """The rank (0-based) of the first hit that is ``text``, or a fact read from one of ``turn_ids``."""
    for rank, hit in enumerate(hits):
        record = hit.record
        if hit.text.strip() == text.strip():
            return rank
        if isinstance(record, Fact) and turn_ids & set(record.source_episode_ids):
            return rank
    return None


async def measure(mem: Memory, cases: list[dict[str, Any]], options: SearchOptions | None) -> list[dict[str, Any]]:
    rows = []
    for index, case in enumerate(cases):
        user = user_of(index, case)
        turns = await mem.episodic.recent(Scope(user=user), limit=100)
        ids: dict[str, set[str]] = defaultdict(set)
        for turn in turns:
            ids[turn.content.strip()].add(turn.id)
        hits = await mem.search(Scope(user=user), case["query"], k=10, options=options)
        current = rank_of(hits, case["current"], ids[case["current"].strip()])
        replaced = rank_of(hits, case["replaced"], ids[case["replaced"].strip()])
        won = current is not None and (replaced is None or current < replaced)
        rows.append({"case": case, "current": current, "replaced": replaced, "won": won,
                     "top": hits[0].text if hits else None})  # fmt: skip
    return rows


def share(rows: list[dict[str, Any]]) -> str:
    return f"{sum(r['won'] for r in rows) / len(rows):.3f} ({sum(r['won'] for r in rows)}/{len(rows)})" if rows else "-"


def table(results: dict[str, list[dict[str, Any]]]) -> str:
    wheres = ("episodes", "facts", "both")
    lines = ["| search | current above replaced | episodes | facts | both | current first | replaced first |",
             "|---|---|---|---|---|---|---|"]  # fmt: skip
    for name, rows in results.items():
        by = {where: [r for r in rows if r["case"]["where"] == where] for where in wheres}
        first = sum(r["current"] == 0 for r in rows)
        stale = sum(r["replaced"] == 0 for r in rows)
        lines.append(f"| {name} | {share(rows)} | " + " | ".join(share(by[w]) for w in wheres)
                     + f" | {first} | {stale} |")  # fmt: skip
    return "\n".join(lines)


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--set", type=Path, default=DATA / "present_first.jsonl")
    parser.add_argument("--show-misses", action="store_true", help="print each case the defaults lose")
    args = parser.parse_args()
    cases = load(args.set)
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as folder:
        async with await Memory.open(f"sqlite:///{folder}/m.db") as mem:
            await store(mem, cases)
            results = {
                "mnemonite default": await measure(mem, cases, None),
                "+ newer_first for turns too ('all')": await measure(mem, cases, SearchOptions(newer_first="all")),
                "- newer_first off": await measure(mem, cases, SearchOptions(newer_first="off")),
                "- newer_first and current_first off": await measure(
                    mem, cases, SearchOptions(newer_first="off", current_first=False)
                ),
            }
    kinds = Counter(case["kind"] for case in cases)
    print(f"{args.set.name}: {len(cases)} cases ({', '.join(f'{k} {n}' for k, n in kinds.most_common())}),"
          f" {time.perf_counter() - started:.0f} s\n")  # fmt: skip
    print(table(results))
    lost = [r for r in results["mnemonite default"] if not r["won"]]
    by_kind = Counter(r["case"]["kind"] for r in lost)
    print(f"\nlost by kind: {dict(by_kind.most_common())}")
    if args.show_misses:
        for r in lost:
            c = r["case"]
            print(f"- {c['id']} [{c['where']}] {c['query']!r}: current at {r['current']}, replaced at {r['replaced']};"
                  f" top: {r['top']!r}")  # fmt: skip


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
