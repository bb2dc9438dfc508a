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
from typing import Any

import numpy as np
import numpy.typing as npt
import Stemmer

K1 = 1.2
B = 0.75
MAX_SEGMENTS = 8
_WORD = re.compile(r"[^\W_]+", re.UNICODE)

Seqs = npt.NDArray[np.int64]


class Tokenizer:
    """Words to term ids (stemmed, diacritics removed); ids are stable for the tokenizer's life."""

    def __init__(self) -> None:
        self._stemmer = Stemmer.Stemmer("porter")
        self._ids: dict[str, int] = {}  # surface word -> term id
        self._terms: dict[str, int] = {}  # stem -> term id

    @property
    def vocabulary(self) -> int:
        return len(self._terms)

    @property
    def nbytes(self) -> int:
        """About what the two maps hold: a dict slot, a short str and an int per entry (~120 bytes)."""
        return 120 * (len(self._ids) + len(self._terms))

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


class _Segment:
    """Postings of a run of documents grouped by term: document ordinals and term frequencies."""

    def __init__(self, terms: npt.NDArray[np.int64], docs: npt.NDArray[np.int64], tfs: npt.NDArray[np.float32]) -> None:
        order = np.argsort(terms, kind="stable")  # docs stay ascending within a term
        terms = terms[order]
        self.docs = docs[order].astype(np.int32)
        self.tfs = tfs[order]
        self.terms, first = np.unique(terms, return_index=True)
        self.offsets = np.append(first, len(terms))

    def __len__(self) -> int:
        return len(self.docs)

    @property
    def nbytes(self) -> int:
        return int(self.docs.nbytes + self.tfs.nbytes + self.terms.nbytes + self.offsets.nbytes)

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

    def postings(self, term: int) -> tuple[npt.NDArray[np.int32], npt.NDArray[np.float32]]:
        at = int(np.searchsorted(self.terms, term))
        if at == len(self.terms) or self.terms[at] != term:
            return np.empty(0, dtype=np.int32), np.empty(0, dtype=np.float32)
        lo, hi = self.offsets[at], self.offsets[at + 1]
        return self.docs[lo:hi], self.tfs[lo:hi]


class Column:
    """A growable 1- or 2-D numpy array (capacity doubles), so appending a few rows never copies them all."""

    def __init__(self, dtype: type[np.generic], width: int | None = None) -> None:
        self._shape: tuple[int, ...] = () if width is None else (width,)
        self._data = np.empty((16, *self._shape), dtype=dtype)
        self._size = 0

    def __len__(self) -> int:
        return self._size

    @property
    def nbytes(self) -> int:
        """The bytes allocated (capacity, not just the rows in use)."""
        return int(self._data.nbytes)

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


REFRESH_GROWTH = 1.25  # every document's specificity is recomputed when the index grew by this much since
# Word frequencies counted over a few documents say little: the specificity weight is scaled by n / (n + this).
PRIOR_SHRINK = 100


class LexicalIndex:
    """BM25 over (seq, text) rows appended in increasing ``seq`` order, and each document's specificity."""

    def __init__(self) -> None:
        self.tokenizer = Tokenizer()
        self._seqs = Column(np.int64)
        self._lengths = Column(np.float32)
        self._total = 0.0
        self._segments: list[_Segment] = []
        self._df = Column(np.int32)  # documents per term id
        self._specificity = Column(np.float32)  # per document, see `specificity`
        self._asking = Column(np.float32)  # per document, see `asking`
        self._refreshed = 0  # documents when every specificity was last recomputed
        self._sums = np.zeros(3)  # over every document: specificity, asking share, and their product

    def __len__(self) -> int:
        return len(self._seqs)

    @property
    def seqs(self) -> Seqs:
        return self._seqs.view

    @property
    def nbytes(self) -> int:
        """About the memory the index holds: postings, per-document and per-term columns, the vocabulary."""
        postings = sum(segment.nbytes for segment in self._segments)
        columns = self._seqs.nbytes + self._lengths.nbytes + self._specificity.nbytes + self._df.nbytes
        columns += self._asking.nbytes
        return postings + columns + self.tokenizer.nbytes

    def specificity(self, at: npt.NDArray[np.intp]) -> npt.NDArray[np.float32]:
        """Of the documents at positions ``at``: the mean inverse document frequency of their distinct words,
        over the most it can be (log of the number of documents), so in [0, 1] whatever the index's size.

        A text of words every other text uses ("That's great! How are you?") scores low; one that names
        things ("I'm reading Dune by Frank Herbert") high. Recomputed for every document each time the
        index has grown by a quarter; a document added since is scored with the frequencies at its adding.
        """
        return self._specificity.view[at]

    def asking(self, at: npt.NDArray[np.intp]) -> npt.NDArray[np.float32]:
        """Of the documents at positions ``at``: the share of their text in sentences that ask (`asking_share`)."""
        return self._asking.view[at]

    def prior(self, at: npt.NDArray[np.intp], specific: float, asking: float) -> npt.NDArray[np.float64]:
        """``(1 + specific' x specificity) x (1 - asking x asking share)`` of the documents at ``at``, over its
        mean across the index (so a tier's scores keep their level beside another tier's). ``specific'`` is
        ``specific x n / (n + PRIOR_SHRINK)`` for an index of n documents: frequencies of a few say little."""
        n = len(self._seqs)
        specific *= n / (n + PRIOR_SHRINK)
        spec, asked = self.specificity(at).astype(np.float64), self.asking(at).astype(np.float64)
        mean_spec, mean_asked, mean_both = self._sums / max(n, 1)  # the mean of the product, expanded
        mean = 1 + specific * mean_spec - asking * mean_asked - specific * asking * mean_both
        return (1 + specific * spec) * (1 - asking * asked) / (mean if mean > 0 else 1.0)

    def add(self, rows: Sequence[tuple[int, str]]) -> None:
        if not rows:
            return
        base = len(self._seqs)
        terms: list[int] = []
        docs: list[int] = []
        lengths = np.empty(len(rows), dtype=np.float32)
        asking = np.empty(len(rows), dtype=np.float32)
        for offset, (_, text) in enumerate(rows):
            asking[offset] = asking_share(text)
            ids = self.tokenizer.ids(text)
            terms += ids
            docs += [base + offset] * len(ids)
            lengths[offset] = len(ids)
        self._seqs.extend([seq for seq, _ in rows])
        self._lengths.extend(lengths)
        self._asking.extend(asking)
        self._total += float(lengths.sum())
        new = _Segment.of_tokens(np.asarray(terms, np.int64), np.asarray(docs, np.int64)) if terms else None
        if new is not None:
            self._segments.append(new)
        self._count(new, base, len(rows))
        # Merge like a binary counter: segment sizes shrink geometrically, so there are O(log n) of them
        # and each posting is re-sorted O(log n) times over the index's life.
        while len(self._segments) > 1 and len(self._segments[-2]) <= 2 * len(self._segments[-1]):
            self._segments[-2:] = [_Segment.merged(self._segments[-2:])]

    def _count(self, new: _Segment | None, base: int, added: int) -> None:
        """Document frequencies after adding ``added`` documents (postings ``new``), and their specificity."""
        if self.tokenizer.vocabulary > len(self._df):
            self._df.extend(np.zeros(self.tokenizer.vocabulary - len(self._df), dtype=np.int32))
        df = self._df.view
        if new is not None:
            df[new.terms] += np.diff(new.offsets).astype(np.int32)
        n = len(self._seqs)
        if n >= REFRESH_GROWTH * self._refreshed:  # every document again, with today's frequencies
            self._specificity = Column(np.float32)
            self._sums[:] = 0
            base, added, segments = 0, n, self._segments
            self._refreshed = n
        else:
            segments = [new] if new is not None else []
        specificity = self._specific(segments, base, added)
        self._specificity.extend(specificity)
        asked = self._asking.view[base : base + added].astype(np.float64)
        self._sums += (specificity.sum(dtype=np.float64), asked.sum(), float(specificity @ asked))

    def _specific(self, segments: Sequence[_Segment], base: int, count: int) -> npt.NDArray[np.float32]:
        """The specificity of documents ``base`` to ``base + count`` from their postings in ``segments``
        (one segment at a time: the largest holds about half the postings, so that bounds the temporaries)."""
        n = len(self._seqs)
        if n < 2 or not segments:
            return np.zeros(count, dtype=np.float32)
        idf = (np.log(n / np.maximum(self._df.view, 1)) / np.log(n)).astype(np.float32)
        total = np.zeros(count)
        words = np.zeros(count)
        for segment in segments:
            docs = segment.docs.astype(np.int64) - base
            inside = (docs >= 0) & (docs < count)
            weights = np.repeat(idf[segment.terms], np.diff(segment.offsets))
            total += np.bincount(docs[inside], weights=weights[inside], minlength=count)
            words += np.bincount(docs[inside], minlength=count)
        return (total / np.maximum(words, 1)).astype(np.float32)

    def search(self, words: Sequence[str], limit: int, allowed: Seqs | None = None) -> list[tuple[int, float]]:
        """(seq, BM25) best first for documents holding any of ``words``; ``allowed`` (sorted seqs) restricts."""
        terms = self.tokenizer.lookup(words)
        n = len(self._seqs)
        if not terms or not self._segments:
            return []
        seqs, lengths = self._seqs.view, self._lengths.view
        scores = np.zeros(n, dtype=np.float32)
        average = self._total / n or 1.0
        touched = []
        for term in terms:
            parts = [segment.postings(term) for segment in self._segments]
            docs = np.concatenate([p[0] for p in parts])
            if not len(docs):
                continue
            tfs = np.concatenate([p[1] for p in parts])
            idf = max(float(np.log((n - len(docs) + 0.5) / (len(docs) + 0.5))), 1e-6)
            norm = K1 * (1 - B + B * lengths[docs] / average)
            scores[docs] += idf * tfs * (K1 + 1) / (tfs + norm)
            touched.append(docs)
        if not touched:
            return []
        # The scored documents are the postings read, not every document: no scan of all n scores.
        hits = np.concatenate(touched)
        if allowed is not None:
            keep = np.zeros(n, dtype=bool)
            keep[positions(seqs, allowed)] = True
            hits = hits[keep[hits]]
        # A document is in each term's postings once at most, so the best ``limit`` documents score at
        # least the ``wide``-th best posting; of those tied at that score, the oldest come first.
        wide = limit * len(touched)
        if len(hits) > wide:
            values = scores[hits]
            least = np.sort(values)[-wide]  # SIMD sort: partitioning is slow where many scores are equal
            tied = hits[values == least]
            if len(tied) > wide:
                tied = np.partition(tied, wide - 1)[:wide]
            hits = np.concatenate([hits[values > least], tied])
        hits = np.unique(hits)
        hits = hits[np.lexsort((hits, -scores[hits]))[:limit]]  # ties: older first
        return list(zip(seqs[hits].tolist(), scores[hits].astype(float).tolist(), strict=True))


_ASIDE = re.compile(r"\[[^\]]*\]")  # [a time], [shares a picture]
_LABEL = re.compile(r"^\s*[^\W\d][\w .'-]{0,40}:\s")  # a leading "Speaker: "
_SENTENCE = re.compile(r"[^.!?]+[.!?]*")
_CLOSING = "\"'\u201d\u2019)]}*_ \t\n"


def asking_share(text: str) -> float:
    """The share of ``text`` (in characters) in sentences that end with a question mark; bracketed asides
    and a leading speaker's label are not counted."""
    total = asked = 0
    for sentence in _SENTENCE.findall(_LABEL.sub("", _ASIDE.sub(" ", text))):
        size = len(sentence.strip())
        total += size
        if sentence.rstrip(_CLOSING).endswith("?"):
            asked += size
    return asked / total if total else 0.0


def positions(seqs: Seqs, wanted: Seqs) -> npt.NDArray[np.intp]:
    """Where the ``wanted`` seqs sit in the sorted ``seqs`` (those absent are left out)."""
    at = np.searchsorted(seqs, wanted)
    inside = at < len(seqs)
    at = at[inside]
    found: npt.NDArray[np.intp] = at[seqs[at] == wanted[inside]]
    return found
