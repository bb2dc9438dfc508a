"""Concept extraction: the key phrases a topic names (rule-based, no model call), or any `ConceptExtractor`.

The default is RAKE (Rose et al. 2010): phrases are the runs of words between stop words and
punctuation, scored by the degree over frequency of their words, so a phrase whose words keep
company with each other ("database schema design") outranks words said in passing.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from mnemonite.models.concepts import ExtractedConcept
from mnemonite.search.query import STOP_WORDS

__all__ = ["ConceptExtractor", "KeyPhraseExtractor"]

# Conversation fillers that carry no topic of their own, on top of the search stop words.
_FILLERS = frozenset(
    """yes yeah yep ok okay oh hey hi hello thanks thank really also like just got get gets getting going go goes
    went gone know think thought want wanted make made sure well much many lot lots thing things something anything
    everything one ones way sounds sound good great awesome cool nice amazing wow glad happy let lets us im youre
    dont didnt doesnt cant wont ive id ill thats theres whats it's i'm that's you're let's always never ever still even
    new time times day days today tonight tomorrow yesterday""".split()
)
_SPLIT = re.compile(r"[.,;:!?()\[\]{}\"\u201c\u201d\n\t]+|\s[-\u2013\u2014]\s")
_WORD = re.compile(r"[^\W_]+(?:'[^\W_]+)?", re.UNICODE)
MAX_PHRASE_WORDS = 3


@runtime_checkable
class ConceptExtractor(Protocol):
    """Turns a topic's texts into concepts. An LLM-backed one (the consolidator's provider, under its
    budget) plugs in here; the default is `KeyPhraseExtractor`."""

    async def extract(self, texts: Sequence[str], limit: int) -> list[ExtractedConcept]: ...


class KeyPhraseExtractor:
    """Rule-based key phrases (RAKE), best first; each described by the sentence it first occurs in."""

    def __init__(self, *, min_chars: int = 3) -> None:
        self.min_chars = min_chars

    async def extract(self, texts: Sequence[str], limit: int) -> list[ExtractedConcept]:
        """The ``limit`` best phrases of ``texts`` (none when they name nothing but stop words)."""
        phrases, where = self._phrases(texts)
        scores = _rake(phrases)
        best = sorted(scores, key=lambda p: (-scores[p], p))[:limit]
        return [ExtractedConcept(label=p, description=where[p], weight=round(scores[p], 3)) for p in best]

    def _phrases(self, texts: Sequence[str]) -> tuple[list[tuple[str, ...]], dict[str, str]]:
        phrases: list[tuple[str, ...]] = []
        where: dict[str, str] = {}
        for text in texts:
            for chunk in _SPLIT.split(text):
                for phrase in self._runs(chunk):
                    phrases.append(phrase)
                    where.setdefault(" ".join(phrase), " ".join(chunk.split())[:200])
        return phrases, where

    def _runs(self, chunk: str) -> list[tuple[str, ...]]:
        runs: list[tuple[str, ...]] = []
        current: list[str] = []
        for word in (w.lower() for w in _WORD.findall(chunk)):
            if word in STOP_WORDS or word in _FILLERS or len(word) < self.min_chars or word.isdigit():
                runs += _pieces(current)
                current = []
            else:
                current.append(word)
        return runs + _pieces(current)


def _pieces(words: list[str]) -> list[tuple[str, ...]]:
    """A run of content words as phrases of at most ``MAX_PHRASE_WORDS``."""
    return [tuple(words[i : i + MAX_PHRASE_WORDS]) for i in range(0, len(words), MAX_PHRASE_WORDS)]


def _rake(phrases: list[tuple[str, ...]]) -> dict[str, float]:
    frequency: Counter[str] = Counter()
    degree: Counter[str] = Counter()
    for phrase in phrases:
        for word in phrase:
            frequency[word] += 1
            degree[word] += len(phrase)
    counted = Counter(" ".join(p) for p in phrases)
    return {
        " ".join(p): sum(degree[w] / frequency[w] for w in p) * (1 + 0.5 * (counted[" ".join(p)] - 1))
        for p in {tuple(p) for p in phrases}
    }
