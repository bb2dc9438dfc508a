"""Hot / warm / cold over a long workload: tier shares over time, tokens per query and recall, against flat search.

    python bench/lifecycle.py [--records 100000] [--weeks 8] [--queries 10]

A memory grows by the same number of records every simulated day for ``--weeks`` weeks (100,000
in all by default), each a note of eight words from a small vocabulary plus a word of its own. Each
day has two sessions; each session starts with ``mem.lifecycle.sweep(now)`` and asks ``--queries``
questions. A question targets one stored record, drawn Zipf-like (s = 1.1) over a fixed popularity
order of the records stored so far, and names its own word and two of its other words. Each question
is searched twice, at the same simulated time: flat (`mem.search`, k = 10) and working set first
(`mem.lifecycle.search`, k = 10, enough = 1, min_cosine = 0.5: the hot and warm records, widening to
all of them when none is that close), whose hits count as accesses (promotion: 1 access -> warm, 3 in
7 days -> hot; sweeps: hot -> warm after an hour, warm -> cold after 7 days). Tokens are those of the
records a search returns (the prompt it would fill), counted by the packaged tokenizer's counter;
recall@10 is whether the target is among them.

The vectors come from a hashing embedder (words hashed into 1024 dimensions), not the packaged
model: the lifecycle's mechanics, not the model, are measured, and 100,000 records embed in seconds.
Exact vectors (``ann_min_rows=None``) for both paths.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import random
import re
import tempfile
import time
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np

from mnemonite import Episode, Memory, MemoryConfig, Scope
from mnemonite.embedding.base import BatchEmbedder, Vectors
from mnemonite.search import SearchOptions
from mnemonite.tokens import default_counter

START = datetime(2026, 1, 5, 8, tzinfo=UTC)
USER = Scope(user="agent-user")
VOCABULARY = [f"w{i}" for i in range(400)]
_WORD = re.compile(r"\w+")


class HashingEmbedder(BatchEmbedder):
    """Bag of words hashed into 1024 dimensions, L2-normalised."""

    _model_id, _dimensions = "bench-hashing-1024", 1024

    async def embed_batch(self, texts: Sequence[str]) -> Vectors:
        matrix = np.zeros((len(texts), self._dimensions), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in _WORD.findall(text.lower()):
                matrix[row, int(hashlib.blake2b(word.encode(), digest_size=4).hexdigest(), 16) % 1024] += 1.0
        norms = np.linalg.norm(matrix, axis=1, keepdims=True)
        return (matrix / np.maximum(norms, 1e-12)).astype(np.float32)


def note(i: int, rng: random.Random) -> tuple[str, list[str]]:
    words = rng.sample(VOCABULARY, 8)
    return f"note {i}: " + " ".join(words) + f" tag{i}x", words


def zipf_pick(rng: random.Random, order: list[int], upto: int) -> int:
    """A record among the first ``upto`` stored, by a Zipf-like draw over their popularity order."""
    ranks = [r for r in order if r < upto]
    weights = [1 / (k + 1) ** 1.1 for k in range(len(ranks))]
    return rng.choices(ranks, weights=weights, k=1)[0]


async def run(records: int, weeks: int, queries: int) -> list[dict[str, float]]:
    rng, counter = random.Random(7), default_counter()
    options = SearchOptions(ann_min_rows=None)
    per_day = records // (weeks * 7)
    order = list(range(records))
    rng.shuffle(order)
    rows: list[dict[str, float]] = []
    with tempfile.TemporaryDirectory() as tmp:
        config = MemoryConfig(url=f"sqlite:///{Path(tmp) / 'lifecycle.db'}", index_in_background=False)
        mem = await Memory.open(config=config, embedder=HashingEmbedder())
        texts: dict[int, tuple[str, list[str]]] = {}
        week: dict[str, float] = {}
        for day in range(weeks * 7):
            start = day * per_day
            batch = [note(i, rng) for i in range(start, start + per_day)]
            texts.update({start + j: t for j, t in enumerate(batch)})
            await mem.episodic.put_many(
                [Episode(id=f"n{start + j}", content=t, timestamp=START + timedelta(days=day)) for j, (t, _) in
                 enumerate(batch)], user=USER.user, session=f"d{day}", agent="a",
            )  # fmt: skip
            await mem.index()
            for session in range(2):
                now = START + timedelta(days=day, hours=1 + 8 * session)
                await mem.lifecycle.sweep(now=now)
                for n in range(queries):
                    target = zipf_pick(rng, order[: max(64, start + per_day)], start + per_day)
                    await _ask(mem, texts[target], target, now + timedelta(minutes=n), options, counter, week)
            if day % 7 == 6:
                rows.append(await _week_row(mem, day // 7 + 1, start + per_day, week))
                week = {}
        await mem.close(finish_indexing=False)
    return rows


async def _ask(
    mem: Memory,
    text: tuple[str, list[str]],
    target: int,
    now: datetime,
    options: SearchOptions,
    counter: object,
    week: dict[str, float],
) -> None:
    words = text[1]
    question = f"tag{target}x " + " ".join(random.Random(target).sample(words, 2))
    wanted = f"n{target}"
    started = time.perf_counter()
    flat = await mem.search(USER, question, 10, tiers=("episodic",), options=options)
    week["flat s"] = week.get("flat s", 0.0) + time.perf_counter() - started
    started = time.perf_counter()
    tiered = await mem.lifecycle.search(USER, question, 10, tiers=("episodic",), options=options, now=now)
    week["tiered s"] = week.get("tiered s", 0.0) + time.perf_counter() - started
    count = counter.count  # type: ignore[attr-defined]
    week["queries"] = week.get("queries", 0) + 1
    week["flat tokens"] = week.get("flat tokens", 0) + sum(count(h.text) for h in flat)
    week["tiered tokens"] = week.get("tiered tokens", 0) + sum(count(h.text) for h in tiered)
    week["flat hits"] = week.get("flat hits", 0) + any(h.record.id == wanted for h in flat)
    week["tiered hits"] = week.get("tiered hits", 0) + any(h.record.id == wanted for h in tiered)
    week["widened"] = week.get("widened", 0) + (len(tiered) == 10)


async def _week_row(mem: Memory, week_no: int, stored: int, week: dict[str, float]) -> dict[str, float]:
    stats = await mem.lifecycle.stats(USER)
    n = week["queries"]
    return {
        "week": week_no, "records": stored, "hot": stats.hot / stats.total, "warm": stats.warm / stats.total,
        "cold": stats.cold / stats.total, "flat tokens": week["flat tokens"] / n,
        "tiered tokens": week["tiered tokens"] / n, "flat R@10": week["flat hits"] / n,
        "tiered R@10": week["tiered hits"] / n, "widened": week["widened"] / n,
        "flat ms": 1000 * week["flat s"] / n, "tiered ms": 1000 * week["tiered s"] / n, "queries": n,
    }  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--records", type=int, default=100_000)
    parser.add_argument("--weeks", type=int, default=8)
    parser.add_argument("--queries", type=int, default=10, help="questions per session (two sessions a day)")
    args = parser.parse_args()
    rows = asyncio.run(run(args.records, args.weeks, args.queries))
    print(f"lifecycle: {args.records} records over {args.weeks} weeks, {2 * args.queries} questions a day\n")
    print("| week | records | hot | warm | cold | tokens / query flat | hot+warm first | fewer | R@10 flat |"
          " hot+warm first | widened | ms flat / tiered |")  # fmt: skip
    print("|---" * 12 + "|")
    for r in rows:
        fewer = 1 - r["tiered tokens"] / r["flat tokens"]
        print(f"| {r['week']:.0f} | {r['records']:.0f} | {r['hot']:.2%} | {r['warm']:.2%} | {r['cold']:.2%} |"
              f" {r['flat tokens']:.0f} | {r['tiered tokens']:.0f} | {fewer:.0%} | {r['flat R@10']:.3f} |"
              f" {r['tiered R@10']:.3f} | {r['widened']:.0%} |"
              f" {r['flat ms']:.0f} / {r['tiered ms']:.0f} |")  # fmt: skip
    total = {k: sum(r[k] * r["queries"] for r in rows) / sum(r["queries"] for r in rows) for k in rows[0]}
    fewer = 1 - total["tiered tokens"] / total["flat tokens"]
    lost = 100 * (total["flat R@10"] - total["tiered R@10"])
    print(
        f"\nall weeks: {fewer:.1%} fewer tokens per query, recall@10 {total['flat R@10']:.3f} flat vs"
        f" {total['tiered R@10']:.3f} hot+warm first ({lost:.1f} points lost; target: >= 30% fewer at <= 2 points)"
    )


if __name__ == "__main__":
    main()
