"""Searches in one process, alone and concurrent, against the code of a git ref in the same run.

    python bench/concurrency.py                         # this tree against the last commit
    python bench/concurrency.py --baseline f15d5fb --rounds 2

One memory per code, in a process of its own (the package at ``--baseline`` is extracted with ``git archive``):
2,000 notes of one user, embedded; a fresh open; then 32 searches at once on that user (the first searches of a
user nobody searched yet: its rows are read in, its approximate index built; errors and tracebacks in the log
counted); 300 searches one after the other (p50, p95); 64 concurrent searches, five times (searches per
second). The packaged model embeds every query. Runs alternate between the two codes (``--rounds`` each).
"""

from __future__ import annotations

import argparse
import asyncio
import io
import json
import logging
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


async def measure() -> dict[str, float]:
    from mnemonite import Episode, Memory, Scope

    caught = io.StringIO()
    handler = logging.StreamHandler(caught)
    handler.setLevel(logging.WARNING)
    logging.getLogger().addHandler(handler)
    with tempfile.TemporaryDirectory() as tmp:
        url = f"sqlite:///{tmp}/m.db"
        async with await Memory.open(url) as mem:
            notes = [
                f"note {i}: talked about topic {i % 50} and city {i % 17} with friend {i % 23}" for i in range(2000)
            ]
            await mem.episodic.put_many([Episode(content=text) for text in notes], user="sam", session="s", agent="a")
            await mem.index()
        async with await Memory.open(url) as mem:
            sam = Scope(user="sam")
            started = time.perf_counter()
            await asyncio.gather(*[mem.search(sam, f"topic {i} city", k=5) for i in range(32)])
            first = time.perf_counter() - started
            alone = []
            for i in range(300):
                started = time.perf_counter()
                await mem.search(sam, f"what did we say about topic {i % 50} in city {i % 17}", k=10)
                alone.append((time.perf_counter() - started) * 1000)
            started = time.perf_counter()
            for r in range(5):
                await asyncio.gather(*[mem.search(sam, f"topic {i} city {r}", k=10) for i in range(64)])
            rate = 5 * 64 / (time.perf_counter() - started)
    alone.sort()
    log = caught.getvalue()
    return {"first_32_s": first, "p50_ms": alone[150], "p95_ms": alone[285], "concurrent_per_s": rate,
            "errors_logged": log.count("ERROR") + log.count("Traceback")}  # fmt: skip


def run_code(source: Path | None) -> dict[str, float]:
    """One measurement in a process of its own, with the package at ``source`` (None: this tree)."""
    env = dict(os.environ)
    if source is not None:
        env["PYTHONPATH"] = str(source / "src")
    out = subprocess.run([sys.executable, __file__, "--one"], env=env, capture_output=True, text=True, check=True)
    return json.loads(out.stdout.splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--baseline", default="HEAD", metavar="GIT_REF")
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--one", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        logging.getLogger().setLevel(logging.WARNING)  # into `measure`'s counter only
        print(json.dumps(asyncio.run(measure())))
        return
    with tempfile.TemporaryDirectory() as tmp:
        archive = subprocess.run(["git", "archive", args.baseline, "src"], cwd=ROOT, capture_output=True, check=True)
        subprocess.run(["tar", "-x", "-C", tmp], input=archive.stdout, check=True)
        ours, theirs = [], []
        for _ in range(args.rounds):
            ours.append(run_code(None))
            theirs.append(run_code(Path(tmp)))
    print(f"| measure | this tree | `{args.baseline}` | ratio |  (medians of {args.rounds} alternating rounds)")
    print("|---|---|---|---|")
    for key, name in (("first_32_s", "32 first searches at once, s"), ("errors_logged", "errors and tracebacks logged"),
                      ("p50_ms", "one search alone, p50 ms"), ("p95_ms", "one search alone, p95 ms"),
                      ("concurrent_per_s", "64 concurrent searches, per s")):  # fmt: skip
        mine = statistics.median(r[key] for r in ours)
        base = statistics.median(r[key] for r in theirs)
        ratio = f"{mine / base:.2f}x" if base else ""
        print(f"| {name} | {mine:,.2f} | {base:,.2f} | {ratio} |")


if __name__ == "__main__":
    main()
