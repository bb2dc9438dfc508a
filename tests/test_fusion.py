"""Fusion is pure: bounded, monotone, and order-preserving."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from mnemonite.search import linear_fusion, rrf_fusion
from mnemonite.search.query import mentioned, terms

scores = st.dictionaries(st.integers(0, 50), st.floats(0, 100, allow_nan=False), max_size=20)
cosines = st.dictionaries(st.integers(0, 50), st.floats(-1, 1, allow_nan=False), max_size=20)
alphas = st.floats(0, 1, allow_nan=False)


@given(scores, cosines, alphas)
def test_linear_fusion_is_bounded_and_covers_both_signals(
    lex: dict[int, float], cos: dict[int, float], alpha: float
) -> None:
    fused = linear_fusion(lex, cos, alpha)
    assert set(fused) == set(lex) | set(cos)
    assert all(-1e-9 <= value <= 1 + 1e-9 for value in fused.values())


@given(cosines, alphas, st.floats(0.1, 10), st.floats(0.1, 10))
def test_more_lexical_evidence_never_ranks_lower(cos: dict[int, float], alpha: float, low: float, high: float) -> None:
    low, high = sorted((low, high))
    fused = linear_fusion({1: low, 2: high, 3: 10.0}, {1: cos.get(0, 0.0), 2: cos.get(0, 0.0)}, alpha)
    assert fused[2] >= fused[1]


@given(st.lists(st.integers(0, 100), unique=True, min_size=1, max_size=30), st.integers(1, 100))
def test_rrf_of_one_list_keeps_its_order(ranking: list[int], k: int) -> None:
    fused = rrf_fusion([ranking], [1.0], k)
    assert sorted(fused, key=lambda item: -fused[item]) == ranking
    assert max(fused.values()) <= 1 / (k + 1)


def test_rrf_rewards_agreement() -> None:
    fused = rrf_fusion([[1, 2, 3], [3, 2, 1], [2]], [1.0, 1.0, 1.0], 60)
    assert max(fused, key=fused.__getitem__) == 2


def test_terms_and_names() -> None:
    assert terms("When did Caroline go to the LGBTQ support group?", exclude=["Caroline"]) == [
        "go",
        "lgbtq",
        "support",
        "group",
    ]
    assert terms("the the the") == []
    assert mentioned("What did caroline paint?", ["Caroline", "Mel", "Carol"]) == ["Caroline"]


@given(scores, cosines, alphas, st.floats(0, 1000, allow_nan=False))
def test_a_shared_top_scales_full_text_down_never_up(
    lex: dict[int, float], cos: dict[int, float], alpha: float, top: float
) -> None:
    """Several tiers fused on one BM25 scale: a top above this list's best lowers its full-text part;
    one below it changes nothing (the list's own best still scores the whole weight)."""
    own = linear_fusion(lex, cos, alpha)
    shared = linear_fusion(lex, cos, alpha, top)
    assert set(shared) == set(own)
    assert all(-1e-9 <= value <= own[item] + 1e-9 for item, value in shared.items())
    if top <= max(lex.values(), default=0.0):
        assert shared == own
