"""Secrets recognised without a tag: recall and precision on a labelled set, and what it costs a write.

    python bench/secret_recognition.py                    # the labelled sets (a few seconds)
    python bench/secret_recognition.py --locomo           # also: what is recognised in the LoCoMo turns
    python bench/secret_recognition.py --latency          # also write-path p95: this tree against the code before
    python bench/secret_recognition.py --latency --baseline REF   # ... against the package at another git ref

Eighteen sets, each line a chat text and the spans a careful reader marks: the secret kinds (card
number, IBAN, API key, private key, password, PIN, government id) and the personal ones (e-mail
address, phone number). ``secrets.jsonl`` to ``secrets10.jsonl`` were each written by a reader who had
not seen the recognisers and are only measured; ``secrets_dev.jsonl`` to ``secrets_dev8.jsonl`` were
written for tuning and tuned on.
The order in which they were written, tuned on and measured is in ``bench/README.md``.

A gold span is *found* when a recognised span overlaps it; *masked* when the recognised span is of a
secret kind (whatever its kind: what matters to the user is that the value is hidden) and *named*
when the kind is the same. Precision: of the recognised secret spans, those overlapping a gold
secret span. The confusion matrix sets gold kinds (rows) against recognised kinds (columns).

Latency: one memory per code (this tree, and the package at ``--baseline``, default the last commit
before recognition, in a process of its own), alternating rounds; each round times one by one
`episodic.put` and `session.push` of LoCoMo turns and `semantic.remember` of generated statements
beside 2,000 held facts, and prints p50/p95 of each with the ratio.
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
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
DATA = Path(__file__).parent / "data"
SETS = (
    "secrets_dev.jsonl",
    "secrets_dev2.jsonl",
    "secrets_dev3.jsonl",
    "secrets_dev4.jsonl",
    "secrets_dev5.jsonl",
    "secrets_dev6.jsonl",
    "secrets_dev7.jsonl",
    "secrets_dev8.jsonl",
    "secrets.jsonl",
    "secrets2.jsonl",
    "secrets3.jsonl",
    "secrets4.jsonl",
    "secrets5.jsonl",
    "secrets6.jsonl",
    "secrets7.jsonl",
    "secrets8.jsonl",
    "secrets9.jsonl",
    "secrets10.jsonl",
)
LOCOMO = ROOT.parent / "shared" / "bench" / "locomo" / "locomo-dev.json"
BEFORE = "66cb2a8"  # the code before recognition landed
SECRET_KINDS = ("card number", "IBAN", "API key", "private key", "password", "PIN", "government id")
INTERNAL_KINDS = ("email address", "phone number")


def spans_of(text: str, gold: list[dict[str, str]]) -> list[tuple[int, int, str]]:
    """Gold spans as (start, end, kind); a span text that occurs twice is taken at each place."""
    found = []
    for span in gold:
        start = text.find(span["text"])
        while start >= 0:
            found.append((start, start + len(span["text"]), span["kind"]))
            start = text.find(span["text"], start + 1)
    return sorted(set(found))


def secret_in(line: dict[str, Any]) -> bool:
    return any(span["kind"] in SECRET_KINDS for span in line["spans"])


def overlaps(a: tuple[int, int, Any], b: tuple[int, int, Any]) -> bool:
    return a[0] < b[1] and b[0] < a[1]


def recognition(path: Path) -> None:
    from mnemonite.recognisers import SecretScanner

    scanner = SecretScanner()
    lines = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    found, masked, named, total = Counter[str](), Counter[str](), Counter[str](), Counter[str]()
    confusion: dict[str, Counter[str]] = defaultdict(Counter)
    true_secret = false_secret = 0
    false_alarms: Counter[str] = Counter()
    started = time.perf_counter()
    predictions = [[(s.start, s.end, s.kind) for s in scanner.scan(line["text"])] for line in lines]
    elapsed = time.perf_counter() - started
    for line, predicted in zip(lines, predictions, strict=True):
        gold = spans_of(line["text"], line["spans"])
        for span in gold:
            kind = span[2]
            total[kind] += 1
            hits = [p for p in predicted if overlaps(p, span)]
            confusion[kind][hits[0][2] if hits else "(missed)"] += 1
            found[kind] += bool(hits)
            masked[kind] += any(p[2] in SECRET_KINDS for p in hits)
            named[kind] += any(p[2] == kind for p in hits)
        for p in predicted:
            if p[2] not in SECRET_KINDS:
                continue
            if any(overlaps(p, g) and g[2] in SECRET_KINDS for g in gold):
                true_secret += 1
            else:
                false_secret += 1
                false_alarms[p[2]] += 1
                confusion["(no secret)"][p[2]] += 1
    print(f"## Recognition on `{path.relative_to(ROOT)}` ({len(lines)} texts)\n")
    print("| kind | gold spans | masked (any secret kind) | named (same kind) | found (any kind) |")
    print("|---|---|---|---|---|")
    for kind in (*SECRET_KINDS, *INTERNAL_KINDS):
        n = total[kind] or 1
        print(f"| {kind} | {total[kind]} | {masked[kind] / n:.3f} | {named[kind] / n:.3f} | {found[kind] / n:.3f} |")
    secret_total = sum(total[k] for k in SECRET_KINDS)
    rates = [sum(c[k] for k in SECRET_KINDS) / secret_total for c in (masked, named, found)]
    print(f"| **all secret kinds** | {secret_total} | " + " | ".join(f"{r:.3f}" for r in rates) + " |")
    recognised = true_secret + false_secret
    precision = true_secret / max(recognised, 1)
    print(f"\nprecision over recognised secret spans: {true_secret}/{recognised} = {precision:.3f}"
          f" (false alarms by kind: {dict(false_alarms) or 'none'})")  # fmt: skip
    clean = [p for line, p in zip(lines, predictions, strict=True) if not secret_in(line)]
    flagged = sum(1 for p in clean if any(kind in SECRET_KINDS for *_, kind in p))
    print(f"texts without a secret span that were masked anywhere: {flagged} of {len(clean)}")
    print(f"scan time: {elapsed / len(lines) * 1e6:.0f} µs per text (mean over the set)\n")
    columns = [*SECRET_KINDS, *INTERNAL_KINDS, "(missed)"]
    print("| gold \\ recognised | " + " | ".join(columns) + " |")
    print("|---" * (len(columns) + 1) + "|")
    for kind in (*SECRET_KINDS, *INTERNAL_KINDS, "(no secret)"):
        print(f"| {kind} | " + " | ".join(str(confusion[kind][c] or "") for c in columns) + " |")
    print()


# -- latency ------------------------------------------------------------------------------------


def turns(limit: int) -> list[str]:
    if not LOCOMO.exists():
        r = random.Random(3)
        return [
            f"turn {n}: I went to the {r.choice(['park', 'gym', 'shop'])} at {r.randint(1, 12)} pm"
            for n in range(limit)
        ]
    found = []
    for sample in json.loads(LOCOMO.read_text()):
        conversation, n = sample["conversation"], 1
        while f"session_{n}" in conversation:
            found += [f"{t['speaker']}: {t['text']}" for t in conversation[f"session_{n}"]]
            n += 1
    return found[:limit]


def statement(r: random.Random, n: int) -> str:
    who = r.choice(["my sister", "my brother", "my boss", "my friend Sam", "I", "my neighbour", "my dad"])
    what = r.choice(["lives in", "works at", "likes", "drives", "plays", "studies", "visits"])
    thing = r.choice(["Porto", "Acme", "jazz", "a Volvo", "chess", "biology", "Lisbon", "tennis", "Globex"])
    return f"{who} {what} {thing} number {n}"


def _p(samples: list[float], q: int) -> float:
    return statistics.quantiles(samples, n=100)[q - 1] if len(samples) > 1 else samples[0]


async def write_latency(count: int, facts: int) -> dict[str, list[float]]:
    from mnemonite import Episode, Memory, MemoryConfig, Message, Scope

    texts = turns(count)
    r = random.Random(7)
    with tempfile.TemporaryDirectory() as tmp:
        config = MemoryConfig(url=f"sqlite:///{Path(tmp) / 'w.db'}", index_in_background=False)
        async with await Memory.open(config=config) as mem:
            scope = Scope(user="bench", session="s", agent="a")
            await mem.semantic.apply_deltas(
                [{"kind": "add", "source_episode_ids": [], "promotion_ts": "2026-01-01T00:00:00Z", "rule_id": "bench",
                  "confidence": 1.0, "fact_payload": {"text": statement(r, n), "user": "bench", "agent": "a"}}
                 for n in range(facts)]
            )  # fmt: skip
            await mem.index()
            timings: dict[str, list[float]] = {"episodic.put": [], "session.push": [], "semantic.remember": []}
            for text in texts:
                started = time.perf_counter()
                await mem.episodic.put(Episode(content=text), user="bench", session="s", agent="a")
                timings["episodic.put"].append((time.perf_counter() - started) * 1000)
            for text in texts:
                started = time.perf_counter()
                await mem.session.push(scope, Message("user", text))
                timings["session.push"].append((time.perf_counter() - started) * 1000)
            for n in range(min(count, 200)):
                started = time.perf_counter()
                await mem.semantic.remember(scope, statement(r, facts + n))
                timings["semantic.remember"].append((time.perf_counter() - started) * 1000)
            await mem.close(finish_indexing=False)
    return timings


def in_process(ref: str | None, count: int, facts: int) -> dict[str, list[float]]:
    """The write timings of this tree (``ref`` None) or of the package at git ``ref``, in a process of its own."""
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ)
        if ref is not None:
            archive = subprocess.run(["git", "archive", ref, "src"], cwd=ROOT, capture_output=True, check=True).stdout
            subprocess.run(["tar", "-x", "-C", tmp], input=archive, check=True)
            env["PYTHONPATH"] = str(Path(tmp) / "src")
        command = [sys.executable, __file__, "--latency-only", "--count", str(count), "--facts", str(facts)]
        out = subprocess.run(command, env=env, capture_output=True, text=True, check=True).stdout
    return dict(json.loads(out.splitlines()[-1]))


def latency(baseline: str, count: int, facts: int, rounds: int) -> None:
    mine: dict[str, list[float]] = defaultdict(list)
    theirs: dict[str, list[float]] = defaultdict(list)
    for n in range(rounds):
        order = [(None, mine), (baseline, theirs)] if n % 2 == 0 else [(baseline, theirs), (None, mine)]
        for ref, into in order:
            for name, samples in in_process(ref, count, facts).items():
                into[name].append(_p(samples, 95))
                into[name + " p50"].append(_p(samples, 50))
    print(f"## Write path, this tree against `{baseline}` ({rounds} alternating rounds, {count} LoCoMo turns, "
          f"{facts} held facts; medians of the rounds' p50 and p95, ms)\n")  # fmt: skip
    print("| write | p50 this tree | p50 baseline | p95 this tree | p95 baseline | p95 ratio |")
    print("|---|---|---|---|---|---|")
    for name in ("episodic.put", "session.push", "semantic.remember"):
        m95, t95 = statistics.median(mine[name]), statistics.median(theirs[name])
        m50, t50 = statistics.median(mine[name + " p50"]), statistics.median(theirs[name + " p50"])
        print(f"| {name} | {m50:.2f} | {t50:.2f} | {m95:.2f} | {t95:.2f} | {m95 / t95:.2f}x |")


def locomo() -> None:
    """How many LoCoMo turns hold a value recognised as secret (their text, as `bench/locomo.py` stores it)."""
    from mnemonite.recognisers import SecretScanner

    scanner = SecretScanner()
    texts = turns(1_000_000)
    started = time.perf_counter()
    found = Counter(span.kind for text in texts for span in scanner.scan(text))
    elapsed = time.perf_counter() - started
    secret = sum(n for kind, n in found.items() if kind in SECRET_KINDS)
    print(
        f"## LoCoMo turns: {len(texts)}; secret values recognised: {secret}; personal: "
        f"{sum(found.values()) - secret} ({dict(found) or 'none'}); {elapsed / len(texts) * 1e6:.0f} µs per turn\n"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--latency", action="store_true", help="also time the write path against --baseline")
    parser.add_argument("--sets", nargs="*", default=list(SETS), help="labelled sets under bench/data")
    parser.add_argument("--locomo", action="store_true", help="also count what is recognised in the LoCoMo turns")
    parser.add_argument("--baseline", default=BEFORE, metavar="GIT_REF")
    parser.add_argument("--count", type=int, default=1000, help="turns put and pushed per round")
    parser.add_argument("--facts", type=int, default=2000, help="facts held while remember() is timed")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--latency-only", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.latency_only:
        print(json.dumps(asyncio.run(write_latency(args.count, args.facts))))
        return
    for name in args.sets:
        recognition(DATA / name)
    if args.locomo:
        locomo()
    if args.latency:
        latency(args.baseline, args.count, args.facts, args.rounds)


if __name__ == "__main__":
    main()
