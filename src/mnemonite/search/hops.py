"""Multi-hop retrieval: a second search from the first one's best hit, fused under a guard.

A question that asks for a set ("what activities has Melanie done?", "which cities have both
visited?") is answered by several records, and the question's own words often match only one
of them well. The second hop searches again with the question plus the text of the first
search's best hit, so records that share what that hit is about (the activity, the place, the
people) rise, and fuses the two rankings: each hit's score divided by its list's best, summed
with ``weight`` for the second list. The first ``guard`` hits of the first search keep their
places, so a second hop can add evidence beside a single answer but never push that answer down.
Weight 0.75, guard 3 and the 20% share that makes a word common were chosen on the LoCoMo development
split (``bench/locomo.py``: on every question, multi-hop R@10 0.457 -> 0.483, overall R@10 0.742 -> 0.755, MRR
0.571 -> 0.573).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from mnemonite.models.search import SearchHit
from mnemonite.search import query as q

__all__ = ["HOP_DEPTH", "HOP_GUARD", "HOP_WEIGHT", "fuse_hops", "second_query"]

HOP_WEIGHT = 0.75
HOP_GUARD = 3
HOP_DEPTH = 50  # both searches read this deep, so a record ranked low by one still gets its share from the other
MAX_HOP_CHARS = 2_000  # the best hit's text appended to the question, cut to this many characters


COMMON_SHARE = 0.2  # a word in more than this share of the first hits says nothing about the best one...
COMMON_MIN = 3  # ...unless the hits are so few that a topic's own words fill that share


def second_query(question: str, first: Sequence[SearchHit]) -> str:
    """The second hop's query: the question followed by the best first hit's words that few other first hits
    share (what the record is about, not the words every record of its kind carries, such as a date header)."""
    seen = Counter(word for hit in first for word in set(q.terms(hit.text[:MAX_HOP_CHARS])))
    limit = max(COMMON_SHARE * len(first), COMMON_MIN)
    words = [w for w in q.terms(first[0].text[:MAX_HOP_CHARS]) if seen[w] <= limit]
    return " ".join([question, *words])


def fuse_hops(
    first: Sequence[SearchHit], second: Sequence[SearchHit], *, weight: float = HOP_WEIGHT, guard: int = HOP_GUARD
) -> list[SearchHit]:
    """The two hops' hits as one ranking, best first: the first ``guard`` hits of ``first`` in place, then
    every other hit by (its score / the best score of its list) summed over the two lists, ``second`` x ``weight``."""
    held = list(first[:guard])
    kept = {_key(h) for h in held}
    scores: dict[tuple[str, str], float] = {}
    records: dict[tuple[str, str], SearchHit] = {}
    for hits, share in ((first, 1.0), (second, weight)):
        top = max((h.score for h in hits), default=0.0) or 1.0
        for hit in hits:
            key = _key(hit)
            if key not in kept:
                scores[key] = scores.get(key, 0.0) + share * hit.score / top
                records.setdefault(key, hit)
    rest = sorted(scores, key=lambda key: (-scores[key], key))
    floor = held[-1].score if held else 1.0
    # Fused scores are relative; below the guarded head they are scaled so the list stays in descending order.
    scale = floor / max(max(scores.values(), default=1.0), 1e-12)
    return held + [records[key].model_copy(update={"score": scores[key] * scale}) for key in rest]


def _key(hit: SearchHit) -> tuple[str, str]:
    return hit.tier, hit.record.id
