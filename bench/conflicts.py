"""The conflict pipeline of `semantic.remember` against the labelled scenario sets, and its latency.

    python bench/conflicts.py                          # every set with both readers, then remember() latency
    python bench/conflicts.py --sets attrs_dev,r2_dev  # some sets (names below)
    python bench/conflicts.py --readers parser         # one reader (MemoryConfig.reader: rules, parser, auto)
    python bench/conflicts.py --facts 2000             # a quicker latency run (--facts 0: none)
    python bench/conflicts.py --strict-hot             # the spec's "HOT always dedups"
    python bench/conflicts.py --baseline 71999c0       # also time remember() with the code of a git ref

The sets (``bench/data/``; `bench/README.md` says in which order each was written, tuned on and measured):
``dev`` (conflicts.jsonl, the English pack was tuned on it); ``heldout`` (conflicts_heldout.jsonl, written before
the pack was changed); ``chat`` (conflicts_chat.jsonl, 70 statements in chat phrasing, read once for its misses);
``blind`` (conflicts_blind.jsonl, 80 chat statements, read once for its misses); ``blind2`` (conflicts_blind2.jsonl,
100 chat statements, only measured); ``attrs_dev`` and ``attrs`` (100 and 313 statements over attributes the pack
does not name, the first to tune the statement parser on, the second measured once); ``r2_dev`` and ``r2`` (120
and 230 chat statements, likewise); ``stress`` (conflicts_stress.jsonl, 2,626 generated cases from 71 phrasing
families, split train / test by family, reported per split; `bench/conflict_stress.py` writes it). Each case gets
its own (user, agent), the user being the case's ``user`` when it names one (a user id that is a plain word is one
of the user's names), with its ``aliases`` recorded through `add_names`; its ``existing`` facts are written first
(through `remember`, so they are embedded and logged like any fact), then its ``candidate`` goes through
`remember_with_decision`. The printed confusion matrix sets the labels (dedup, supersede, admit) against the
decisions (dedup, supersede, pending, admit); a dedup or supersede counts as correct only if it names the labelled
existing fact. Targets on each set: ≥ 95% of duplicates deduplicated, ≥ 90% of updates and retractions superseded,
0 admit-labelled cases superseded or deduplicated, 0 updates or retractions dropped as duplicates, ≤ 10% pending.

Latency: one scope holding N distinct facts (generated sentences about many subjects and
predicates), then 200 `remember` calls of new statements, timed one by one with the packaged
model, so embedding the candidate is inside every call.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path

from mnemonite import Memory, MemoryConfig, Scope
from mnemonite.models.conflict import ConflictThresholds

ROOT = Path(__file__).resolve().parent.parent
SETS = {
    "dev": "conflicts.jsonl",
    "heldout": "conflicts_heldout.jsonl",
    "chat": "conflicts_chat.jsonl",
    "blind": "conflicts_blind.jsonl",
    "blind2": "conflicts_blind2.jsonl",
    "attrs_dev": "conflicts_attrs_dev.jsonl",
    "attrs": "conflicts_attrs.jsonl",
    "r2_dev": "conflicts_r2_dev.jsonl",
    "r2": "conflicts_r2.jsonl",
    "stress": "conflicts_stress.jsonl",
}
DATA = {tag: Path(__file__).parent / "data" / name for tag, name in SETS.items()}
DECISIONS = ("dedup", "supersede", "pending", "admit")


async def scenarios(
    mem: Memory, cases: list[dict[str, object]], tag: str
) -> list[tuple[dict[str, object], str, bool, str]]:
    results = []
    for number, case in enumerate(cases):
        scope = Scope(user=str(case.get("user") or f"case{number}"), agent=f"{tag}{number}")
        if case.get("aliases"):
            await mem.semantic.add_names(scope, *case["aliases"])  # type: ignore[misc]
        ids = [(await mem.semantic.remember(scope, str(text))).id for text in case["existing"]]  # type: ignore[attr-defined]
        decision = await mem.semantic.remember_with_decision(scope, str(case["candidate"]))
        target = case.get("target")
        right_fact = target is None or (ids[int(target)] in decision.matched_ids)  # type: ignore[call-overload]
        results.append((case, decision.kind, right_fact, f"{decision.stage}: {decision.reason}"))
    return results


def report(name: str, results: list[tuple[dict[str, object], str, bool, str]], *, misses: bool = True) -> None:
    matrix: dict[str, Counter[str]] = defaultdict(Counter)
    by_category: dict[str, Counter[str]] = defaultdict(Counter)
    missed = []
    for case, kind, right_fact, why in results:
        label, category = str(case["expected"]), str(case["category"])
        matrix[label][kind] += 1
        correct = kind == label and right_fact
        by_category[category]["correct" if correct else "wrong"] += 1
        if not correct:
            missed.append(f"  {case['id']}: {case['candidate']!r} -> {kind} ({why})")
    print(f"## {len(results)} labelled cases from {name}\n")
    print("| label \\ decision | " + " | ".join(DECISIONS) + " | total |")
    print("|---" * (len(DECISIONS) + 2) + "|")
    for label in ("dedup", "supersede", "admit"):
        row = matrix[label]
        print(f"| {label} | " + " | ".join(str(row[d]) for d in DECISIONS) + f" | {sum(row.values())} |")
    print("\n| category | cases | correct |")
    print("|---|---|---|")
    for category, counts in by_category.items():
        total = counts["correct"] + counts["wrong"]
        print(f"| {category} | {total} | {counts['correct']} ({counts['correct'] / total:.0%}) |")
    targets(results)
    if missed and misses:
        print("\nnot as labelled:\n" + "\n".join(missed))
    print()


def targets(results: list[tuple[dict[str, object], str, bool, str]]) -> None:
    def share(label: str, decision: str) -> tuple[int, int]:
        rows = [r for r in results if r[0]["expected"] == label]
        return sum(kind == decision and ok for _, kind, ok, _ in rows), len(rows)

    deduped, duplicates = share("dedup", "dedup")
    superseded, updates = share("supersede", "supersede")
    admits = [kind for case, kind, _, _ in results if case["expected"] == "admit"]
    wrong = sum(kind in ("supersede", "dedup") for kind in admits)
    dropped = sum(kind == "dedup" for case, kind, _, _ in results if case["expected"] == "supersede")
    pending = sum(kind == "pending" for _, kind, _, _ in results)
    print(
        f"\nduplicates deduplicated naming the right fact: {deduped}/{duplicates} = {deduped / duplicates:.1%}"
        " (target >= 95%)"
    )
    print(
        f"updates and retractions superseded naming the right fact: {superseded}/{updates} ="
        f" {superseded / updates:.1%} (target >= 90%)"
    )
    print(f"admit-labelled cases superseded or deduplicated: {wrong} of {len(admits)} (target 0)")
    print(f"updates or retractions dropped as duplicates: {dropped} (target 0)")
    print(f"pending: {pending} of {len(results)} = {pending / len(results):.1%} (target <= 10%)")  # fmt: skip


SUBJECTS = [f"{name}" for name in ("Ana", "Ben", "Chen", "Dara", "Eli", "Fay", "Gus", "Hiro", "Ines", "Jon")]
TEMPLATES = [
    "{s} lives in {w} town number {n}",
    "{s} works at the {w} company, office {n}",
    "{s}'s favourite {w} is number {n}",
    "{s} has a {w} collection of {n} items",
    "{s} plays {w} every week since {n}",
    "{s} met a {w} friend in year {n}",
]
WORDS = "red green river stone maple silver quiet rapid ocean desert cedar copper harbor meadow violet".split()


def statement(r: random.Random, n: int) -> str:
    return r.choice(TEMPLATES).format(s=r.choice(SUBJECTS), w=r.choice(WORDS), n=n)


Timing = tuple[float, float, float, dict[str, int], float, float]


def _p(samples: list[float], q: int) -> float:
    return statistics.quantiles(samples, n=100, method="inclusive")[q - 1] if len(samples) > 1 else samples[0]


async def latency(mem: Memory, facts: int, calls: int) -> Timing:
    """p50 and p95 of remember_with_decision, load time, the decisions made, and the p50 and p95 of the
    calls that wrote (admit, supersede, pending: a dedup writes no fact), which codes that decide
    differently share."""
    scope = Scope(user="latency", agent="bench")
    r = random.Random(5)
    texts = [statement(r, n) for n in range(facts)]
    started = time.perf_counter()
    await mem.semantic.apply_deltas(
        [
            {"kind": "add", "source_episode_ids": [], "promotion_ts": "2026-01-01T00:00:00Z", "rule_id": "bench",
             "confidence": 1.0, "fact_payload": {"text": text, "user": "latency", "agent": "bench"}}
            for text in texts
        ]
    )  # fmt: skip
    await mem.index()
    load = time.perf_counter() - started
    await mem.semantic.remember(scope, statement(r, facts + 1))  # warm the caches
    samples, writes, kinds = [], [], Counter[str]()
    for n in range(calls):
        text = statement(r, facts + 10 + n)
        started = time.perf_counter()
        decision = await mem.semantic.remember_with_decision(scope, text)
        elapsed = (time.perf_counter() - started) * 1000
        samples.append(elapsed)
        kinds[decision.kind] += 1
        if decision.kind != "dedup":
            writes.append(elapsed)
    return _p(samples, 50), _p(samples, 95), load, dict(kinds), _p(writes or [0.0], 50), _p(writes or [0.0], 95)


def open_config(tmp: str, strict_hot: bool | None, reader: str | None = None) -> MemoryConfig:
    url = f"sqlite:///{Path(tmp) / 'conflicts.db'}"
    if strict_hot is None:  # the baseline's code may predate the switch
        return MemoryConfig(url=url, index_in_background=False)
    more = {"reader": reader} if reader else {}
    conflicts = ConflictThresholds(strict_hot=strict_hot)
    return MemoryConfig(url=url, index_in_background=False, conflicts=conflicts, **more)  # type: ignore[arg-type]


async def labelled(strict_hot: bool, sets: list[str], reader: str) -> None:
    print(f"# reader: {reader}\n")
    with tempfile.TemporaryDirectory() as tmp:
        async with await Memory.open(config=open_config(tmp, strict_hot, reader)) as mem:
            for tag in sets:
                path = DATA[tag]
                cases = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
                results = await scenarios(mem, cases, tag)
                splits = sorted({str(case["split"]) for case in cases if "split" in case})
                for split in splits:  # the generated set: phrasing families split train / test
                    rows = [row for row in results if row[0].get("split") == split]
                    report(f"{path.name}, {split} families (reader: {reader})", rows, misses=False)
                if not splits:
                    report(f"{path.name} (reader: {reader})", results)


async def run(
    facts: int, calls: int, strict_hot: bool, baseline: str | None, rounds: int, sets: list[str], readers: list[str]
) -> None:
    for reader in readers:
        await labelled(strict_hot, sets, reader)
    if facts <= 0:
        return
    # Rounds alternate the two codes, each on a fresh database, so that both see the same machine load.
    rows: list[tuple[str, int, float, float, float, dict[str, int], float, float]] = []
    for number in range(1, rounds + 1):
        for reader in readers:
            with tempfile.TemporaryDirectory() as tmp:
                async with await Memory.open(config=open_config(tmp, strict_hot, reader)) as mem:
                    rows.append((f"this tree, {reader}", number, *await latency(mem, facts, calls)))
        if baseline is not None:
            rows.append((f"`{baseline}`", number, *baseline_latency(baseline, facts, calls)))
    print("\n| code | round | existing facts | remember() p50 | p95 | decisions | calls that wrote: p50 | p95 |")
    print("|---|---|---|---|---|---|---|---|")
    for code, number, p50, p95, _, kinds, w50, w95 in rows:
        mix = ", ".join(f"{kinds.get(kind, 0)} {kind}" for kind in DECISIONS)
        print(f"| {code} | {number} | {facts:,} | {p50:.1f} ms | {p95:.1f} ms | {mix} | {w50:.1f} ms | {w95:.1f} ms |")
    print(f"(loading and embedding the {facts:,} facts took {rows[0][4]:.0f} s)")
    if baseline is not None:
        for label, column in (("all calls", 3), ("calls that wrote", 7)):
            theirs = statistics.median(float(str(row[column])) for row in rows if row[0] == f"`{baseline}`")
            for reader in readers:
                mine = statistics.median(float(str(row[column])) for row in rows if row[0] == f"this tree, {reader}")
                print(f"median p95 over {rounds} round(s), {label}: this tree ({reader}) {mine:.1f} ms,"
                      f" `{baseline}` {theirs:.1f} ms (x{mine / theirs:.2f})")  # fmt: skip


async def latency_only(facts: int, calls: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        async with await Memory.open(config=open_config(tmp, None)) as mem:
            print(json.dumps(await latency(mem, facts, calls)))


def baseline_latency(ref: str, facts: int, calls: int) -> Timing:
    """The same latency run with the package as it was at git ``ref``, in a process of its own."""
    with tempfile.TemporaryDirectory() as tmp:
        archive = subprocess.run(["git", "archive", ref, "src"], cwd=ROOT, capture_output=True, check=True).stdout
        subprocess.run(["tar", "-x", "-C", tmp], input=archive, check=True)
        env = {**os.environ, "PYTHONPATH": str(Path(tmp) / "src")}
        command = [sys.executable, __file__, "--latency-only", "--facts", str(facts), "--calls", str(calls)]
        out = subprocess.run(command, env=env, capture_output=True, text=True, check=True).stdout
    p50, p95, load, kinds, w50, w95 = json.loads(out.splitlines()[-1])
    return p50, p95, load, kinds, w50, w95


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--facts", type=int, default=10_000)
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--strict-hot", action="store_true", help="the spec's rule: HOT always dedups")
    parser.add_argument("--baseline", metavar="GIT_REF", help="also time remember() with the package at this ref")
    parser.add_argument("--rounds", type=int, default=3, help="latency rounds, alternating the two codes")
    parser.add_argument("--latency-only", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--sets", default=",".join(SETS), help=f"comma-separated, of {', '.join(SETS)}")
    parser.add_argument(
        "--readers", default="rules,parser", help="comma-separated readers (MemoryConfig.reader), each over every set"
    )
    args = parser.parse_args()
    if args.latency_only:
        asyncio.run(latency_only(args.facts, args.calls))
    else:
        sets, readers = args.sets.split(","), args.readers.split(",")
        unknown = [name for name in sets if name not in SETS]
        if unknown:
            parser.error(f"unknown set(s) {unknown}: choose among {', '.join(SETS)}")
        asyncio.run(run(args.facts, args.calls, args.strict_hot, args.baseline, args.rounds, sets, readers))


if __name__ == "__main__":
    main()
