"""The rule-based consolidator on LoCoMo (development split), and extraction quality on a labelled set.

    python bench/consolidate.py [--data ../shared/bench/locomo/locomo-dev.json] [--conversations N]

Every LoCoMo dialog turn is stored as one episode as `bench/locomo.py` stores it (text
``[<session date>] <speaker>: <text>``, source node = the speaker, one user per conversation,
one session per LoCoMo session; both speakers are people other than the scope's user, so their
first person is resolved to their names). The standard phase then runs rule-based (no model;
the packaged embedder is on the write path of `remember`), and prints statements per turn, the
conflict pipeline's decisions and throughput. Retrieval: each question of categories 1-4
searches its conversation in the same memory, episodes alone and episodes + consolidated facts,
with the default options (where a fact stands in for the turns it was read from), with each fact
returned beside its turns (`facts_stand_in=False`), with turns whose facts were all superseded
since left where they scored instead of below what replaced them (`current_first=False`), and
without the source boost (which favours episodes whose speaker a question names, and facts
promoted from them); a fact hit counts as its source turns (provenance), in its rank. "Episodes
alone" is searched as a memory without facts searches its turns (`current_first=False`).
R@10 and MRR are as in
`bench/locomo.py`; "tokens / top-10" is the packaged tokenizer's count of the ten hits' texts,
the context an agent would be handed. Targets: R@10 and MRR not worse than episodes alone,
tokens per top-10 context at least 30% lower.

Extraction: `bench/data/extraction.jsonl` (169 chat turns written for this benchmark, not from
LoCoMo, with the atomic facts a careful reader would record; the extractor has since been tuned on
it) and `bench/data/extraction2.jsonl` (164 turns of 16 other conversations, labelled the same way
and written before that tuning; an assistant's turns are heard for the questions they ask).
Each turn's extracted statements are matched one-to-one with its gold facts when their content
words (stop words dropped, crudely stemmed) overlap with F1 >= 0.5; precision = matched /
extracted, recall = matched / gold.
LoCoMo is CC BY-NC 4.0, used here as test data only.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from locomo import CATEGORIES, DATA, DEPTH, Evidence, metrics, turns_of
from mnemonite import Fact, Memory, MemoryConfig, Scope
from mnemonite.consolidator.budget import ConsolidatorConfig
from mnemonite.consolidator.extract import Extractor
from mnemonite.consolidator.phases import MACHINE_SPEAKERS
from mnemonite.consolidator.segment import words
from mnemonite.models.search import SearchHit
from mnemonite.search import SearchOptions
from mnemonite.tokens import default_counter

LABELLED = Path(__file__).resolve().parent / "data" / "extraction.jsonl"  # seen: the extractor was tuned on it
LABELLED2 = Path(__file__).resolve().parent / "data" / "extraction2.jsonl"  # written before the second round, unseen
AGENT = "locomo"


def ranked_turns(hits: list[SearchHit], prefix: str) -> list[str]:
    """Turn ids in rank order; a fact stands for its source turns."""
    ranked: list[str] = []
    for hit in hits:
        ids = hit.record.source_episode_ids if isinstance(hit.record, Fact) else [hit.record.id]
        ranked.extend(i.removeprefix(prefix) for i in ids if i.removeprefix(prefix) not in ranked)
    return ranked


async def consolidate(data: list[dict[str, Any]], mem: Memory) -> dict[str, float]:
    episodes = [turns_of(sample) for sample in data]
    for batch in episodes:
        await mem.episodic.put_many([e.model_copy(update={"agent": AGENT}) for e in batch])
    await mem.index()
    started = time.perf_counter()
    [report] = await mem.consolidator.run("standard")
    seconds = time.perf_counter() - started
    await mem.index()
    turns = sum(len(batch) for batch in episodes)
    return {"turns": turns, "seconds": seconds, **report.model_dump(exclude={"phase", "paused", "llm"})}


async def retrieval(data: list[dict[str, Any]], mem: Memory) -> dict[str, list[list[float]]]:
    counter = default_counter()
    evidence = Evidence()
    rows: dict[str, list[list[float]]] = {}
    # Episodes alone are searched as a memory without facts searches them: each turn where it scored.
    as_scored = SearchOptions(current_first=False)
    plain, alone_plain = SearchOptions(source_boost=0.0), SearchOptions(source_boost=0.0, current_first=False)
    both = SearchOptions(facts_stand_in=False)
    arms = (("episodes alone", ("episodic",), as_scored),
            ("episodes + consolidated facts", ("episodic", "semantic"), None),
            ("episodes + facts, each fact beside its turns", ("episodic", "semantic"), both),
            ("episodes + facts, superseded turns where they scored", ("episodic", "semantic"), as_scored),
            ("episodes alone, no source boost", ("episodic",), alone_plain),
            ("episodes + facts, no source boost", ("episodic", "semantic"), plain))  # fmt: skip
    for sample in data:
        prefix = f"{sample['sample_id']}/"
        known = {e.id.removeprefix(prefix) for e in turns_of(sample)}
        scope = Scope(user=sample["sample_id"], agent=AGENT)
        for qa in sample["qa"]:
            wanted = evidence.parse(qa.get("evidence", []), known) if qa["category"] in CATEGORIES else set()
            if not wanted:
                continue
            for name, tiers, options in arms:
                hits = await mem.search(scope, qa["question"], k=DEPTH, tiers=tiers, options=options)
                tokens = sum(counter.count(hit.text) for hit in hits[:10])
                facts = sum(isinstance(hit.record, Fact) for hit in hits[:10])
                rows.setdefault(name, []).append([*metrics(ranked_turns(hits, prefix), wanted), tokens, facts])
    return rows


def _match(extracted: list[str], gold: list[str]) -> int:
    """How many extracted statements pair one-to-one with a gold fact (content-word F1 >= 0.5)."""
    left = [set(words(text)) for text in extracted]
    right = [set(words(text)) for text in gold]
    pairs = sorted(((_f1(a, b), i, j) for i, a in enumerate(left) for j, b in enumerate(right)), reverse=True)
    used_i, used_j = set(), set()
    for score, i, j in pairs:
        if score >= 0.5 and i not in used_i and j not in used_j:
            used_i.add(i)
            used_j.add(j)
    return len(used_i)


def _f1(a: set[str], b: set[str]) -> float:
    shared = len(a & b)
    return 0.0 if not shared else 2 * shared / (len(a) + len(b))


def extraction(path: Path) -> dict[str, float]:
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    counts: Counter[str] = Counter()
    extractors: dict[str, Extractor] = {}
    for row in rows:
        extractor = extractors.setdefault(row["conversation"], Extractor())
        found = []
        if row["speaker"].lower() in MACHINE_SPEAKERS:
            extractor.hear(row["text"], speaker=row["speaker"])
        else:
            found = [s.text for s in extractor.extract(row["text"], speaker=row["speaker"], about_user=False)]
        counts["turns"] += 1
        counts["extracted"] += len(found)
        counts["gold"] += len(row["facts"])
        counts["matched"] += _match(found, row["facts"])
    return {**counts, "precision": counts["matched"] / max(1, counts["extracted"]),
            "recall": counts["matched"] / max(1, counts["gold"])}  # fmt: skip


async def evaluate(
    data: list[dict[str, Any]], reader: str = "auto", extraction: str = "rules", learn_graph: bool = True
) -> tuple[dict[str, float], dict[str, list[list[float]]]]:
    with tempfile.TemporaryDirectory() as tmp:
        url = f"sqlite:///{Path(tmp) / 'consolidate.db'}"
        consolidator = ConsolidatorConfig(extraction=extraction)  # type: ignore[arg-type]
        config = MemoryConfig(url=url, index_in_background=False, reader=reader, consolidator=consolidator,  # type: ignore[arg-type]
                              learn_graph=learn_graph)  # fmt: skip
        async with await Memory.open(config=config) as mem:
            summary = await consolidate(data, mem)
            return summary, await retrieval(data, mem)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--conversations", type=int, default=None, help="only the first N conversations")
    parser.add_argument("--reader", default="auto", help="MemoryConfig.reader: auto, parser or rules")
    parser.add_argument("--extraction", default="rules", help="ConsolidatorConfig.extraction: rules or parser")
    parser.add_argument("--learn-graph", default="on", choices=("on", "off"), help="MemoryConfig.learn_graph")
    args = parser.parse_args()
    data = json.loads(args.data.read_text())[: args.conversations]
    summary, rows = asyncio.run(evaluate(data, args.reader, args.extraction, args.learn_graph == "on"))
    turns = summary["turns"]
    print(
        f"LoCoMo {args.data.name}: {len(data)} conversations, {int(turns)} turns, standard phase rule-based,"
        f" reader {args.reader}, extraction {args.extraction}, graph learned {args.learn_graph}\n"
    )
    print("| statements / turn | admitted | deduplicated | superseded | pending | topic episodes | turns / s |")
    print("|---|---|---|---|---|---|---|")
    print(f"| {summary['statements'] / turns:.2f} | {int(summary['admitted'])} | {int(summary['deduplicated'])} |"
          f" {int(summary['superseded'])} | {int(summary['pending'])} | {int(summary['topic_episodes'])} |"
          f" {turns / summary['seconds']:.1f} |")  # fmt: skip
    print(f"\n| search ({len(rows['episodes alone'])} questions) | R@10 | MRR | tokens / top-10 context"
          " | facts in the top 10 |")  # fmt: skip
    print("|---|---|---|---|---|")
    means = {name: np.mean(values, axis=0) for name, values in rows.items()}
    for name, mean in means.items():
        print(f"| {name} | {mean[2]:.3f} | {mean[4]:.3f} | {mean[5]:.0f} | {mean[6]:.2f} |")
    for base_name, mine_name in (("episodes alone", "episodes + consolidated facts"),
                                 ("episodes alone", "episodes + facts, each fact beside its turns"),
                                 ("episodes alone", "episodes + facts, superseded turns where they scored"),
                                 ("episodes alone, no source boost", "episodes + facts, no source boost")):  # fmt: skip
        base, mine = means[base_name], means[mine_name]
        print(f"\n{mine_name} / {base_name}: R@10 x{mine[2] / base[2]:.3f}, MRR x{mine[4] / base[4]:.3f}"
              f" (target >= 1.00); tokens x{mine[5] / base[5]:.3f} (target <= 0.70)")  # fmt: skip
    for path in (LABELLED, LABELLED2):
        ext = extraction(path)
        print(f"\nextraction on {path.name}: {int(ext['turns'])} turns, {int(ext['gold'])} gold facts,"
              f" {int(ext['extracted'])} statements extracted, {int(ext['matched'])} matched:"
              f" precision {ext['precision']:.3f}, recall {ext['recall']:.3f}")  # fmt: skip


if __name__ == "__main__":
    main()
