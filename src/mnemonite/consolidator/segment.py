"""Episode formation and extractive summaries, rule-based (no model).

`segment` cuts a session's turns where the topic shifts, in the manner of TextTiling: the
vocabulary of the turns before a gap is compared with the vocabulary after it, and a gap whose
similarity is well below the session's average (or a long pause) starts a new episode.
`summarise` keeps the sentences whose words the conversation uses most.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence
from datetime import timedelta
from itertools import pairwise

from mnemonite.models.consolidator import Turn
from mnemonite.search.query import STOP_WORDS

__all__ = ["segment", "summarise", "words"]

_WORD = re.compile(r"[a-z][a-z0-9']+")
_SENTENCE = re.compile(r"(?<=[.!?])\s+")
_PAUSE = timedelta(minutes=30)
_WINDOW = 3
_MIN_TURNS = 4


def words(text: str) -> list[str]:
    """Content words, lower-cased, crudely stemmed (plural and verb endings)."""
    found = [w.strip("'") for w in _WORD.findall(text.lower())]
    return [re.sub(r"(?:ing|ed|es|s)$", "", w) or w for w in found if w not in STOP_WORDS and len(w) > 2]


def _similarity(left: Counter[str], right: Counter[str]) -> float:
    shared = sum(min(left[w], right[w]) for w in left.keys() & right.keys())
    total = min(sum(left.values()), sum(right.values()))
    return shared / total if total else 0.0


def segment(turns: Sequence[Turn]) -> list[list[Turn]]:
    """Consecutive runs of turns about one topic (at least four turns each, unless the session is shorter)."""
    if len(turns) < 2 * _MIN_TURNS:
        return [list(turns)] if turns else []
    bags = [Counter(words(turn.content)) for turn in turns]
    scores = []
    for gap in range(1, len(turns)):
        left = sum((bags[i] for i in range(max(0, gap - _WINDOW), gap)), Counter[str]())
        right = sum((bags[i] for i in range(gap, min(len(turns), gap + _WINDOW))), Counter[str]())
        scores.append(_similarity(left, right))
    mean = sum(scores) / len(scores)
    cuts, start = [], 0
    for gap, score in enumerate(scores, start=1):
        paused = turns[gap].timestamp - turns[gap - 1].timestamp > _PAUSE
        deep = score < 0.5 * mean and _is_local_minimum(scores, gap - 1)
        if (paused or deep) and gap - start >= _MIN_TURNS and len(turns) - gap >= _MIN_TURNS:
            cuts.append(gap)
            start = gap
    bounds = [0, *cuts, len(turns)]
    return [list(turns[a:b]) for a, b in pairwise(bounds)]


def _is_local_minimum(scores: Sequence[float], i: int) -> bool:
    return all(scores[i] <= scores[j] for j in (i - 1, i + 1) if 0 <= j < len(scores))


def summarise(texts: Sequence[str], sentences: int = 3, max_chars: int = 600) -> str:
    """The ``sentences`` sentences that best cover the texts' frequent words, in their original order."""
    candidates = [s.strip() for text in texts for s in _SENTENCE.split(text) if len(s.split()) >= 4]
    if not candidates:
        return " ".join(texts)[:max_chars]
    frequency = Counter(w for s in candidates for w in set(words(s)))

    def score(sentence: str) -> float:
        found = set(words(sentence))
        return sum(frequency[w] for w in found) / (1.0 + math.sqrt(len(sentence.split())))

    best = sorted(range(len(candidates)), key=lambda i: -score(candidates[i]))[:sentences]
    return " ".join(candidates[i] for i in sorted(best))[:max_chars]
