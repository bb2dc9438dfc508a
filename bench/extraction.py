"""Extraction from chat on the labelled sets: the rule-based extractor against the parser's, side by side.

    python bench/extraction.py                       # every set, both extractors
    python bench/extraction.py --sets extraction_dev3.jsonl

Each set holds chat turns (``conversation``, ``speaker``, ``text``) with the atomic facts a careful reader would
record (``facts``). Every conversation is read in order by a fresh extractor; an assistant's turns are heard for the
questions they ask. Each turn's extracted statements are matched one-to-one with its gold facts when their content
words (stop words dropped, crudely stemmed) overlap with F1 >= 0.5 (as in `bench/consolidate.py`); precision =
matched / extracted, recall = matched / gold. The order in which the sets were written, tuned on and measured is in
`bench/README.md`.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from consolidate import _match
from mnemonite.conflicts import locale_pack
from mnemonite.consolidator.extract import Extractor
from mnemonite.consolidator.phases import MACHINE_SPEAKERS
from mnemonite.reading import StatementReader
from mnemonite.reading.chat import ParsedExtractor

DATA = Path(__file__).resolve().parent / "data"
SETS = ("extraction.jsonl", "extraction2.jsonl", "extraction_dev3.jsonl", "extraction3.jsonl")


def measure(path: Path, make: Any, show: bool) -> dict[str, float]:
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    counts: Counter[str] = Counter()
    extractors: dict[str, Any] = {}
    started = time.perf_counter()
    for row in rows:
        extractor = extractors.setdefault(row["conversation"], make())
        found: list[str] = []
        if row["speaker"].lower() in MACHINE_SPEAKERS:
            extractor.hear(row["text"], speaker=row["speaker"])
        else:
            found = [s.text for s in extractor.extract(row["text"], speaker=row["speaker"], about_user=False)]
        matched = _match(found, row["facts"])
        counts["turns"] += 1
        counts["extracted"] += len(found)
        counts["gold"] += len(row["facts"])
        counts["matched"] += matched
        if show and (matched < len(found) or matched < len(row["facts"])):
            print(f"  {row['id']} {row['speaker']}: {row['text']!r}\n    gold {row['facts']}\n    got  {found}")
    seconds = time.perf_counter() - started
    return {**counts, "precision": counts["matched"] / max(1, counts["extracted"]),
            "recall": counts["matched"] / max(1, counts["gold"]), "turns/s": counts["turns"] / seconds}  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sets", default=",".join(SETS))
    parser.add_argument("--extractors", default="rules,parser")
    parser.add_argument("--show", action="store_true", help="print every turn not matched exactly")
    args = parser.parse_args()
    reader = StatementReader(locale_pack("en"))
    makers = {"rules": Extractor, "parser": lambda: ParsedExtractor(reader)}
    print("| set | extractor | turns | gold facts | extracted | matched | precision | recall | turns / s |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name in args.sets.split(","):
        for kind in args.extractors.split(","):
            m = measure(DATA / name, makers[kind], args.show)
            counts = f"{int(m['turns'])} | {int(m['gold'])} | {int(m['extracted'])} | {int(m['matched'])}"
            print(f"| {name} | {kind} | {counts} | {m['precision']:.3f} | {m['recall']:.3f} | {m['turns/s']:.0f} |")


if __name__ == "__main__":
    main()
