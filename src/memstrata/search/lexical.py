"""An in-memory BM25 index over one scope's texts, grown as records arrive.

SQLite's FTS5 ranks by scoring every row that matches any query term, and its table is
shared by all users, so a five-word query over a large memory costs tens of milliseconds
before the scope filter even applies. The search engine therefore keeps, per scope it
searches, an inverted index in numpy arrays: texts are tokenised the way the FTS5 tables
are (``porter unicode61``: Unicode words, lower-cased, diacritics removed, Porter-stemmed),
new records are appended as a small segment, and segments are merged when there are too
many. Scoring is FTS5's BM25 (k1 = 1.2, b = 0.75, the same idf), with the scope's own
document count and average length.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np
import numpy.typing as npt
import Stemmer

K1 = 1.2
B = 0.75
MAX_SEGMENTS = 8
COMMON_SHARE = 1 / 64  # a term in more of the documents than this is "common" to `LexicalIndex.search`
_WORD = re.compile(r"[^\W_]+", re.UNICODE)

Seqs = npt.NDArray[np.int64]
Scores = npt.NDArray[np.float32]


class Tokenizer:
    """Words to term ids (stemmed, diacritics removed); ids are stable for the tokenizer's life."""

    def __init__(self) -> None:
        self._stemmer = Stemmer.Stemmer("porter")
        self._ids: dict[str, int] = {}  # surface word -> term id
        self._terms: dict[str, int] = {}  # stem -> term id

    @property
    def vocabulary(self) -> int:
        return len(self._terms)

    def ids(self, text: str) -> list[int]:
        """Term ids of every word of ``text``, in order (new words get new ids)."""
        words = _WORD.findall(text.lower())
        known = self._ids
        missing = [w for w in words if w not in known]
        if missing:
            self._learn(missing)
        return [known[w] for w in words]

    def lookup(self, words: Sequence[str]) -> list[int]:
        """Term ids of query words that occur in the index (unknown words are dropped)."""
        found = []
        for word in words:
            term = self._terms.get(self._stem(word.lower()))
            if term is not None and term not in found:
                found.append(term)
        return found

    def _learn(self, words: list[str]) -> None:
        for word in dict.fromkeys(words):
            self._ids[word] = self._terms.setdefault(self._stem(word), len(self._terms))

    def _stem(self, word: str) -> str:
        if not word.isascii():
            word = "".join(c for c in unicodedata.normalize("NFKD", word) if not unicodedata.combining(c))
        return str(self._stemmer.stemWord(word))


class _Postings(NamedTuple):
    docs: npt.NDArray[np.int32]  # ascending
    tfs: npt.NDArray[np.float32]
    idf: float
    most: float  # the most the term adds to any document's score


class _Segment:
    """Postings of a run of documents grouped by term: document ordinals and term frequencies."""

    def __init__(self, terms: npt.NDArray[np.int64], docs: npt.NDArray[np.int64], tfs: npt.NDArray[np.float32]) -> None:
        order = np.argsort(terms, kind="stable")  # docs stay ascending within a term
        terms = terms[order]
        self.docs = docs[order].astype(np.int32)
        self.tfs = tfs[order]
        self.terms, first = np.unique(terms, return_index=True)
        self.offsets = np.append(first, len(terms))
        self.most = np.maximum.reduceat(self.tfs, first) if len(first) else self.tfs[:0]  # highest tf per term

    def __len__(self) -> int:
        return len(self.docs)

    @classmethod
    def of_tokens(cls, terms: npt.NDArray[np.int64], docs: npt.NDArray[np.int64]) -> _Segment:
        """From one (term, doc) pair per token."""
        unique, counts = np.unique(terms * (1 << 32) + docs, return_counts=True)
        return cls(unique >> 32, unique & 0xFFFFFFFF, counts.astype(np.float32))

    @classmethod
    def merged(cls, segments: Sequence[_Segment]) -> _Segment:
        return cls(
            np.concatenate([np.repeat(s.terms, np.diff(s.offsets)) for s in segments]),
            np.concatenate([s.docs.astype(np.int64) for s in segments]),
            np.concatenate([s.tfs for s in segments]),
        )

    def postings(self, term: int) -> tuple[npt.NDArray[np.int32], npt.NDArray[np.float32], float]:
        """The term's documents, their term frequencies, and the highest of those (0 if absent)."""
        at = int(np.searchsorted(self.terms, term))
        if at == len(self.terms) or self.terms[at] != term:
            return np.empty(0, dtype=np.int32), np.empty(0, dtype=np.float32), 0.0
        lo, hi = self.offsets[at], self.offsets[at + 1]
        return self.docs[lo:hi], self.tfs[lo:hi], float(self.most[at])


class Column:
    """A growable 1- or 2-D numpy array (capacity doubles), so appending a few rows never copies them all."""

    def __init__(self, dtype: type[np.generic], width: int | None = None) -> None:
        self._shape: tuple[int, ...] = () if width is None else (width,)
        self._data = np.empty((16, *self._shape), dtype=dtype)
        self._size = 0

    def __len__(self) -> int:
        return self._size

    def extend(self, rows: npt.ArrayLike) -> None:
        rows = np.asarray(rows, dtype=self._data.dtype)
        need = self._size + len(rows)
        if need > len(self._data):
            grown = np.empty((max(need, 2 * len(self._data)), *self._shape), dtype=self._data.dtype)
            grown[: self._size] = self._data[: self._size]
            self._data = grown
        self._data[self._size : need] = rows
        self._size = need

    @property
    def view(self) -> npt.NDArray[Any]:
        return self._data[: self._size]


class LexicalIndex:
    """BM25 over (seq, text) rows appended in increasing ``seq`` order."""

    def __init__(self) -> None:
        self.tokenizer = Tokenizer()
        self._seqs = Column(np.int64)
        self._lengths = Column(np.float32)
        self._total = 0.0
        self._segments: list[_Segment] = []
        self._shortest = float("inf")  # the fewest words of a document that has any
        self._scores = np.zeros(0, dtype=np.float32)  # scratch: all zero between searches
        self._owner = np.zeros(0, dtype=np.intp)  # scratch of `_distinct`

    def __len__(self) -> int:
        return len(self._seqs)

    @property
    def seqs(self) -> Seqs:
        return self._seqs.view

    def add(self, rows: Sequence[tuple[int, str]]) -> None:
        if not rows:
            return
        base = len(self._seqs)
        terms: list[int] = []
        docs: list[int] = []
        lengths = np.empty(len(rows), dtype=np.float32)
        for offset, (_, text) in enumerate(rows):
            ids = self.tokenizer.ids(text)
            terms += ids
            docs += [base + offset] * len(ids)
            lengths[offset] = len(ids)
        self._seqs.extend([seq for seq, _ in rows])
        self._lengths.extend(lengths)
        self._total += float(lengths.sum())
        if (lengths > 0).any():
            self._shortest = min(self._shortest, float(lengths[lengths > 0].min()))
        if terms:
            self._segments.append(_Segment.of_tokens(np.asarray(terms, np.int64), np.asarray(docs, np.int64)))
        # Merge like a binary counter: segment sizes shrink geometrically, so there are O(log n) of them
        # and each posting is re-sorted O(log n) times over the index's life.
        while len(self._segments) > 1 and len(self._segments[-2]) <= 2 * len(self._segments[-1]):
            self._segments[-2:] = [_Segment.merged(self._segments[-2:])]

    def search(self, words: Sequence[str], limit: int, allowed: Seqs | None = None) -> list[tuple[int, float]]:
        """(seq, BM25) best first for documents holding any of ``words``; ``allowed`` (sorted seqs) restricts.

        Costs what the query terms' postings cost, not the index's size: scores accumulate in a
        scratch array that only the touched entries are read from and reset in. Terms are added
        rarest first; once the most the remaining (common) terms could add to any document is
        less than the ``limit``-th best score so far, no document holding only those can make
        the result (MaxScore), and they are scored only for the documents that still can.
        Ties: older first.
        """
        terms = self.tokenizer.lookup(words)
        n = len(self._seqs)
        if not terms or not self._segments or limit < 1:
            return []
        lists = sorted((p for p in map(self._postings, terms) if len(p.docs)), key=lambda p: len(p.docs))
        if not lists:
            return []
        if len(self._scores) < n:
            self._scores = np.zeros(max(n, 2 * len(self._scores)), dtype=np.float32)
            self._owner = np.zeros(len(self._scores), dtype=np.intp)
        scores = self._scores
        touched: list[npt.NDArray[np.int32]] = []
        try:
            for postings in lists:
                if len(postings.docs) > n * COMMON_SHARE and touched:  # common from here on: can they be skipped?
                    pruned = self._rare_first(touched, lists[len(touched) :], limit, allowed)
                    if pruned is not None:
                        hits, found = pruned
                        break
                scores[postings.docs] += self._weights(postings.docs, postings.tfs, postings.idf)  # once per doc
                touched.append(postings.docs)
            else:
                hits, found = self._allowed(self._distinct(touched), allowed)
        finally:
            for docs in touched:
                scores[docs] = 0
        if len(hits) > limit:  # the limit best; of those tied with the last, the oldest
            last = np.partition(found, len(found) - limit)[len(found) - limit]
            above, tied = np.flatnonzero(found > last), np.flatnonzero(found == last)
            tied = tied[np.argsort(hits[tied], kind="stable")[: limit - len(above)]]
            keep = np.concatenate([above, tied])
            hits, found = hits[keep], found[keep]
        order = np.lexsort((hits, -found))
        seqs = self._seqs.view
        return list(zip(seqs[hits[order]].tolist(), found[order].astype(float).tolist(), strict=True))

    def _postings(self, term: int) -> _Postings:
        """A term's documents (ascending), their term frequencies, its idf and the most it adds to a score."""
        parts = [segment.postings(term) for segment in self._segments]
        docs = np.concatenate([p[0] for p in parts])
        tfs = np.concatenate([p[1] for p in parts])
        n = len(self._seqs)
        idf = max(float(np.log((n - len(docs) + 0.5) / (len(docs) + 0.5))), 1e-6)
        most = max((p[2] for p in parts), default=0.0)  # highest term frequency
        shortest = K1 * (1 - B + B * self._shortest / (self._total / n or 1.0))
        return _Postings(docs, tfs, idf, idf * most * (K1 + 1) / (most + shortest) if most else 0.0)

    def _weights(self, docs: npt.NDArray[np.int32], tfs: npt.NDArray[np.float32], idf: float) -> Scores:
        """One term's BM25 share in each of ``docs``."""
        average = self._total / len(self._seqs) or 1.0
        norm = K1 * (1 - B + B * self._lengths.view[docs] / average)
        weights: Scores = (idf * tfs * (K1 + 1) / (tfs + norm)).astype(np.float32, copy=False)
        return weights

    def _allowed(self, hits: npt.NDArray[np.int32], allowed: Seqs | None) -> tuple[npt.NDArray[np.int32], Scores]:
        """The allowed ``hits`` and their scores so far."""
        if allowed is not None:
            seqs = self._seqs.view[hits]
            at = np.minimum(np.searchsorted(allowed, seqs), max(len(allowed) - 1, 0))
            hits = hits[allowed[at] == seqs] if len(allowed) else hits[:0]
        return hits, self._scores[hits]

    def _rare_first(
        self, touched: list[npt.NDArray[np.int32]], common: Sequence[_Postings], limit: int, allowed: Seqs | None
    ) -> tuple[npt.NDArray[np.int32], Scores] | None:
        """Every document that can make the top ``limit``, fully scored, when the ``common`` terms cannot
        lift a document the rarer (``touched``) terms missed into it; None when they might."""
        hits, found = self._allowed(self._distinct(touched), allowed)
        if len(found) < limit:
            return None
        floor = float(np.partition(found, len(found) - limit)[len(found) - limit])  # scores only grow from here
        ceiling = sum(p.most for p in common) * (1 + 1e-5) + 1e-6  # float32 sums: a margin for rounding
        if ceiling >= floor:
            return None
        keep = found + ceiling >= floor
        order = np.argsort(hits[keep])
        hits, found = hits[keep][order], found[keep][order]
        for postings in common:  # documents ascending: a binary search each
            at = np.minimum(np.searchsorted(postings.docs, hits), len(postings.docs) - 1)
            match = postings.docs[at] == hits
            found[match] += self._weights(hits[match], postings.tfs[at[match]], postings.idf)
        return hits, found

    def _distinct(self, touched: list[npt.NDArray[np.int32]]) -> npt.NDArray[np.int32]:
        """The documents of the ``touched`` lists (each without repeats), once each, in linear time."""
        if len(touched) == 1:
            return touched[0]
        docs = np.concatenate(touched)
        slots = np.arange(len(docs), dtype=np.intp)
        self._owner[docs] = slots
        distinct: npt.NDArray[np.int32] = docs[self._owner[docs] == slots]
        return distinct


def positions(seqs: Seqs, wanted: Seqs) -> npt.NDArray[np.intp]:
    """Where the ``wanted`` seqs sit in the sorted ``seqs`` (those absent are left out)."""
    at = np.searchsorted(seqs, wanted)
    inside = at < len(seqs)
    at = at[inside]
    found: npt.NDArray[np.intp] = at[seqs[at] == wanted[inside]]
    return found
