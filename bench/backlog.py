"""A backlog larger than a search can embed at once: found, or marked, never a silent miss.

For 300, 2,000 and 20,000 short notes written with ``put_many`` and searched at once, one record (among the
first written, so the background indexer reaches it last) shares no word with the query and can only be found by
meaning. Per size: whether it was found, the search's time, what the result says was not searched by meaning
(``hits.unsearched``), and whether that mark is exact. Exactness is checked in a second memory of the same notes
with the background indexer off, so nothing changes under the search: there the mark must equal the records left
without a vector afterwards, and a search that says 0 must have found the record. Baseline of the same run: the
same search once everything is embedded (``index()`` first).

Then ``close()`` right after ``put_many`` of ``--close`` episodes (200,000 by default) with the defaults: how long it
takes, how many records it left waiting for a vector (the next open resumes them), and, as the baseline of the
same run, how long the write itself took.

    .venv/bin/python bench/backlog.py [--sizes 300 2000 20000] [--close 200000]
"""

from __future__ import annotations

import argparse
import asyncio
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from mnemonite import Episode, Memory, MemoryConfig, Scope

USER, AGENT = "sam", "assistant"
QUERY = "which pet naps on the couch"
TARGET = "The kitten dozes on the sofa every afternoon."  # no word in common with QUERY
WORDS = (
    "buy milk eggs bread call the plumber about leaking tap meeting moved to thursday remember dentist"
    " appointment book flights renew passport library books due water tomatoes pay rent pick up parcel email"
    " landlord gym class yoga tuesday invoice project deadline review slides"
).split()


def notes(n: int, seed: int = 7) -> list[Episode]:
    rng = random.Random(seed)
    made = [Episode(content=f"Note {i}: {' '.join(rng.sample(WORDS, 6))}.") for i in range(n - 1)]
    made.insert(min(3, len(made)), Episode(content=TARGET))  # written early: the indexer reaches it last
    return made


def found(hits: Any) -> bool:
    return any(hit.text == TARGET for hit in hits)


async def unembedded(mem: Memory) -> int:
    return (await mem.health()).pending_embeddings


async def one(n: int, folder: Path) -> dict[str, Any]:
    row: dict[str, Any] = {"n": n}
    async with await Memory.open(f"sqlite:///{folder}/live-{n}.db") as mem:  # the defaults: the indexer runs
        await mem.episodic.put_many(notes(n), user=USER, session="s1", agent=AGENT)
        started = time.perf_counter()
        hits = await mem.search(Scope(user=USER), QUERY, k=10)
        row.update(found=found(hits), seconds=time.perf_counter() - started, unsearched=hits.unsearched)
        await mem.close(finish_indexing=False)
    still = MemoryConfig(index_in_background=False, index_on_close=False)
    async with await Memory.open(f"sqlite:///{folder}/still-{n}.db", config=still) as mem:
        await mem.episodic.put_many(notes(n), user=USER, session="s1", agent=AGENT)
        hits = await mem.search(Scope(user=USER), QUERY, k=10)
        left = await unembedded(mem)
        row.update(still_found=found(hits), still_mark=hits.unsearched, still_left=left,
                   exact=hits.unsearched == left and (hits.unsearched > 0 or found(hits)))  # fmt: skip
        await mem.index()
        started = time.perf_counter()
        settled = await mem.search(Scope(user=USER), QUERY, k=10)
        row.update(settled_found=found(settled), settled_seconds=time.perf_counter() - started)
    return row


async def closing(n: int, folder: Path) -> dict[str, float]:
    """put_many of ``n`` short notes in batches of 5,000, then close() with the defaults."""
    mem = await Memory.open(f"sqlite:///{folder}/close-{n}.db")
    started = time.perf_counter()
    for start in range(0, n, 5_000):
        batch = notes(min(5_000, n - start), seed=start)
        await mem.episodic.put_many(batch, user=USER, session=f"s{start}", agent=AGENT)
    wrote = time.perf_counter() - started
    started = time.perf_counter()
    await mem.close()
    closed = time.perf_counter() - started
    async with await Memory.open(
        f"sqlite:///{folder}/close-{n}.db", config=MemoryConfig(index_on_close=False)
    ) as again:
        left = (await again.health()).pending_embeddings
    return {"wrote": wrote, "closed": closed, "left": left}


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[300, 2_000, 20_000])
    parser.add_argument("--close", type=int, default=200_000, help="episodes written before close() (0: skip)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        rows = [await one(n, Path(folder)) for n in args.sizes]
        shut = await closing(args.close, Path(folder)) if args.close else None
    print("| notes | found at once | search s | marked unsearched | indexer off: found / mark / left without a"
          " vector / mark exact | settled: found / search s |")  # fmt: skip
    print("|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['n']:,} | {'yes' if r['found'] else 'no'} | {r['seconds']:.2f} | {r['unsearched']:,} |"
              f" {'yes' if r['still_found'] else 'no'} / {r['still_mark']:,} / {r['still_left']:,} /"
              f" {'yes' if r['exact'] else 'NO'} | {'yes' if r['settled_found'] else 'no'} /"
              f" {r['settled_seconds']:.2f} |")  # fmt: skip
    if shut is not None:
        print(f"\n| put_many of {args.close:,} episodes | close() | left waiting for a vector (next open resumes) |")
        print("|---|---|---|")
        print(f"| {shut['wrote']:.1f} s | {shut['closed']:.1f} s | {shut['left']:,} |")


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
