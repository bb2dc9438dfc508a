"""Salience: bounded to [0, 1], monotone in recency, recency measured from the last access."""

from __future__ import annotations

from datetime import timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conftest import T0
from mnemonite import Episode, RuleBasedScorer, SalienceContext

weights = st.floats(min_value=0, max_value=10, allow_nan=False)
ages = st.floats(min_value=0, max_value=10 * 365 * 86_400, allow_nan=False)
importance = st.one_of(
    st.none(),
    # Values an episode accepts: non-finite numbers, NUL and lone surrogates are refused at the boundary.
    st.floats(allow_nan=False, allow_infinity=False),
    st.integers(-100, 100),
    st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=3),
)


def aged(seconds: float, *, accessed: float | None = None, importance: object = None) -> Episode:
    meta = {} if importance is None else {"importance": importance}
    episode = Episode(content="x", timestamp=T0 - timedelta(seconds=seconds), metadata=meta)
    if accessed is not None:
        episode = episode.model_copy(update={"last_accessed_at": T0 - timedelta(seconds=accessed)})
    return episode


@given(age=ages, wr=weights, wv=weights, wi=weights, imp=importance, tau=st.floats(min_value=1, max_value=1e9))
async def test_score_is_always_within_bounds(
    age: float, wr: float, wv: float, wi: float, imp: object, tau: float
) -> None:
    context = SalienceContext(now=T0, tau_seconds=tau, w_recency=wr, w_relevance=wv, w_importance=wi)
    scorer = RuleBasedScorer(relevance=lambda _e, _c: 5.0)
    score = await scorer.score(aged(age, importance=imp), context)
    assert 0.0 <= score <= 1.0


@given(a=ages, b=ages)
async def test_older_scores_lower(a: float, b: float) -> None:
    young, old = sorted((a, b))
    scorer, context = RuleBasedScorer(), SalienceContext(now=T0)
    assert await scorer.score(aged(old), context) <= await scorer.score(aged(young), context)


async def test_recency_uses_last_access_not_creation() -> None:
    scorer, context = RuleBasedScorer(), SalienceContext(now=T0)
    ancient_but_used = aged(365 * 86_400, accessed=60)
    fresh = aged(3600)
    assert await scorer.score(ancient_but_used, context) > await scorer.score(fresh, context)


async def test_default_tau_is_one_day() -> None:
    score = await RuleBasedScorer().score(aged(86_400), SalienceContext(now=T0))
    assert score == pytest.approx(0.36788, abs=1e-4)


async def test_importance_term_on_park_scale() -> None:
    context = SalienceContext(now=T0, w_recency=0, w_importance=1)
    assert await RuleBasedScorer().score(aged(0, importance=7), context) == pytest.approx(0.7)
    assert await RuleBasedScorer().score(aged(0, importance=0.4), context) == pytest.approx(0.4)
