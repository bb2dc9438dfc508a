"""The in-memory BM25 index scores exactly like SQLite FTS5 (porter unicode61), however it was grown."""

from __future__ import annotations

import sqlite3

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mnemonite.search.lexical import Column, LexicalIndex, Tokenizer

WORDS = ["hiking", "hikes", "mountain", "Mountains", "running", "ran", "café", "cafe", "naïve", "résumé", "the", "x"]

corpora = st.lists(st.lists(st.sampled_from(WORDS), min_size=0, max_size=12).map(" ".join), min_size=1, max_size=60)


def fts5_scores(texts: list[str], words: list[str]) -> dict[int, float]:
    db = sqlite3.connect(":memory:")
    db.execute("CREATE VIRTUAL TABLE f USING fts5(c, tokenize = 'porter unicode61')")
    db.executemany("INSERT INTO f (rowid, c) VALUES (?, ?)", list(enumerate(texts, start=1)))
    match = " OR ".join(f'"{w}"' for w in words)
    rows = db.execute("SELECT rowid, -bm25(f) FROM f WHERE f MATCH ?", (match,)).fetchall()
    return {int(seq): float(score) for seq, score in rows}


def grown(texts: list[str], cuts: list[int]) -> LexicalIndex:
    """An index of ``texts`` (seqs 1...) added in runs of the ``cuts`` sizes, cycling."""
    index = LexicalIndex()
    rows = list(enumerate(texts, start=1))
    at = 0
    for cut in cuts * len(rows):
        index.add(rows[at : at + cut])
        at += cut
        if at >= len(rows):
            break
    return index


@settings(max_examples=60, deadline=None)
@given(corpora, st.lists(st.integers(1, 9), min_size=1, max_size=20), st.lists(st.sampled_from(WORDS), min_size=1))
def test_scores_equal_fts5_bm25_however_appended(texts: list[str], cuts: list[int], query: list[str]) -> None:
    index = grown(texts, cuts)
    assert len(index) == len(texts)
    # One word per stem: FTS5 scores each OR-ed phrase, so a repeated stem would count twice there.
    words = list({index.tokenizer.ids(w)[0]: w.lower() for w in query}.values())
    expected = fts5_scores(texts, words)
    got = dict(index.search(words, limit=len(texts)))
    assert set(got) == {seq for seq, score in expected.items() if score > 0}
    for seq, score in got.items():
        assert score == pytest.approx(expected[seq], rel=1e-4, abs=1e-6)


@settings(max_examples=80, deadline=None)
@given(
    corpora, st.lists(st.sampled_from(WORDS), min_size=1), st.integers(1, 8), st.sets(st.integers(1, 2400)) | st.none()
)
def test_the_limit_keeps_the_best_scores_oldest_first_among_ties(
    texts: list[str], query: list[str], limit: int, allowed: set[int] | None
) -> None:
    texts = texts * 40  # many equal scores
    index = LexicalIndex()
    index.add(list(enumerate(texts, start=1)))
    every = index.search(query, limit=len(texts))  # no cut: every matching text
    chosen = None if allowed is None else np.asarray(sorted(allowed), dtype=np.int64)
    expected = sorted(((s, c) for s, c in every if allowed is None or s in allowed), key=lambda r: (-r[1], r[0]))
    assert index.search(query, limit=limit, allowed=chosen) == expected[:limit]


def test_results_are_best_first_limited_and_restricted_to_allowed_rows() -> None:
    index = LexicalIndex()
    index.add([(10, "mountain hiking trip today"), (20, "mountain trip"), (30, "sea kayaking")])
    index.add([(40, "mountain mountain"), (50, "city walk"), (60, "lake swim"), (70, "forest run")])
    ranked = index.search(["mountain"], limit=2)
    assert [seq for seq, _ in ranked] == [40, 20]
    assert ranked[0][1] > ranked[1][1]
    allowed = index.search(["mountain"], limit=10, allowed=np.asarray([10, 30, 99], dtype=np.int64))
    assert [seq for seq, _ in allowed] == [10]
    assert index.search(["volcano"], limit=10) == []
    assert LexicalIndex().search(["mountain"], limit=10) == []


def test_tokenizer_stems_and_folds_diacritics_like_fts5() -> None:
    tokens = Tokenizer()
    assert tokens.ids("Hiking hikes") == tokens.ids("hike HIKE")
    assert tokens.ids("naïve café") == tokens.ids("naive cafe")
    assert tokens.lookup(["unknownword"]) == []


def test_column_grows_without_losing_rows() -> None:
    column = Column(np.float32, 3)
    for start in range(0, 100, 7):
        column.extend(np.full((7, 3), start, dtype=np.float32))
    assert column.view.shape == (105, 3)
    assert column.view[7:14].tolist() == [[7.0] * 3] * 7


def specificity_by_hand(texts: list[str]) -> list[float]:
    """The mean of log(n / df) / log(n) over each text's distinct stems, counted from scratch."""
    tokens = Tokenizer()
    stems = [set(tokens.ids(text)) for text in texts]
    n = len(texts)
    df: dict[int, int] = {}
    for terms in stems:
        for term in terms:
            df[term] = df.get(term, 0) + 1
    return [float(np.mean([np.log(n / df[t]) / np.log(n) for t in terms])) if terms else 0.0 for terms in stems]


@settings(max_examples=40, deadline=None)
@given(corpora, st.lists(st.integers(1, 9), min_size=1, max_size=20))
def test_specificity_is_the_mean_normalised_idf_of_a_texts_words_however_appended(
    texts: list[str], cuts: list[int]
) -> None:
    index = grown(texts, cuts)
    every = np.arange(len(texts))
    got = index.specificity(every)
    assert ((got >= 0) & (got <= 1 + 1e-6)).all()
    # Refreshed for every text when the index has grown by a quarter; a text added since is scored with the
    # frequencies at its adding, so it may differ from a count from scratch until the next refresh.
    index.add([(len(texts) + 1 + i, text) for i, text in enumerate(texts * 2)])  # grows past a refresh
    assert index.specificity(np.arange(3 * len(texts))) == pytest.approx(specificity_by_hand(texts * 3), abs=1e-5)


def test_chatter_is_less_specific_than_a_text_that_names_things_and_questions_ask() -> None:
    from mnemonite.search.lexical import asking_share

    chatter = ["That is so great to hear!", "How are you doing today?", "Thanks so much, that is so kind of you."]
    index = LexicalIndex()
    index.add(list(enumerate([*chatter * 5, "I am reading Dune by Frank Herbert, so good!"], start=1)))
    chat, named = index.specificity(np.asarray([0, 15]))
    assert named > chat
    assert asking_share("[9:02 am on 4 May, 2023] Jo: Are you reading anything?") == 1.0  # the time, the speaker
    assert asking_share("Jo: I love it. Do you?") == pytest.approx(len("Do you?") / len("I love it. Do you?"), abs=0.05)
    assert asking_share("What a day! [shares a photo of a beach]") == 0.0
    assert asking_share("") == 0.0
    prior = index.prior(np.arange(16), 2.0, 0.1)  # over its mean: the index's average record keeps its level
    assert prior.mean() == pytest.approx(1.0) and prior[15] > prior[1]  # naming things beats asking how you are
