"""Salience: how much a memory matters right now, in [0, 1].

The default scorer follows the structure of Park et al. 2023 (Generative Agents)::

    score = w_recency * exp(-Δt / τ) + w_relevance * relevance + w_importance * importance

Recency is measured from the *last access* (creation if never read), so memories in use
stay salient regardless of age; τ defaults to one day. The rule-based default weighs
recency alone (w_relevance = w_importance = 0); the other terms switch on by weight.

Facts carry a stored salience managed by the decay/boost engine of graph memory::

    S_now = S_base * decay_rate ** days_since_last_access_or_creation

boosted by ``boost_amount`` (capped at 1.0) on each access, faded by ``decay_all`` and by
consolidation (x ``consolidation_decay``), and combined with relevance multiplicatively.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Protocol, runtime_checkable

from pydantic import AwareDatetime, Field

from mnemonite._time import utcnow
from mnemonite.models.base import Model
from mnemonite.models.episode import Episode
from mnemonite.models.fact import DEFAULT_SALIENCE, Fact
from mnemonite.models.graph import ScoredFact

__all__ = [
    "RuleBasedScorer",
    "SalienceConfig",
    "SalienceContext",
    "SalienceScorer",
    "boost_salience",
    "combine_scores",
    "compute_salience",
    "importance_of",
    "rank_by_salience",
]

ONE_DAY_SECONDS = 86_400.0


class SalienceContext(Model):
    """When and how to score: the moment, the decay constant τ and the weights."""

    now: AwareDatetime = Field(default_factory=utcnow)
    tau_seconds: float = Field(default=ONE_DAY_SECONDS, gt=0)
    w_recency: float = Field(default=1.0, ge=0)
    w_relevance: float = Field(default=0.0, ge=0)
    w_importance: float = Field(default=0.0, ge=0)
    query: str | None = None


@runtime_checkable
class SalienceScorer(Protocol):
    """Anything that scores an episode in [0, 1] for a context."""

    async def score(self, memory: Episode, context: SalienceContext) -> float: ...


Relevance = Callable[[Episode, SalienceContext], float]


def importance_of(memory: Episode) -> float:
    """``metadata.importance`` in [0, 1]; Park's 1-10 scale is divided by 10; absent is 0."""
    raw = memory.metadata.get("importance")
    if isinstance(raw, bool) or not isinstance(raw, int | float) or math.isnan(raw):
        return 0.0
    value = raw / 10.0 if raw > 1 else raw
    return min(1.0, max(0.0, float(value)))


class RuleBasedScorer:
    """The default scorer. ``relevance`` (e.g. a cosine to the query) is 0 unless given."""

    def __init__(self, relevance: Relevance | None = None) -> None:
        self._relevance = relevance

    def recency(self, memory: Episode, context: SalienceContext) -> float:
        last = memory.last_accessed_at or memory.timestamp
        elapsed = max(0.0, (context.now - last).total_seconds())
        return math.exp(-elapsed / context.tau_seconds)

    async def score(self, memory: Episode, context: SalienceContext) -> float:
        relevance = self._relevance(memory, context) if self._relevance and context.w_relevance else 0.0
        score = (
            context.w_recency * self.recency(memory, context)
            + context.w_relevance * relevance
            + context.w_importance * importance_of(memory)
        )
        return max(0.0, min(1.0, score))


class SalienceConfig(Model):
    """The decay/boost engine's parameters (the spec's defaults)."""

    decay_rate: float = Field(default=0.995, gt=0.0, le=1.0, description="salience kept per day without access")
    boost_amount: float = Field(default=0.05, ge=0.0, le=1.0, description="added on each access, capped at 1.0")
    min_salience: float = Field(default=0.1, ge=0.0, le=1.0, description="ranking drops memories below it")
    default_salience: float = Field(default=DEFAULT_SALIENCE, ge=0.0, le=1.0)
    consolidation_decay: float = Field(default=0.5, ge=0.0, le=1.0, description="x on sources when consolidated")


def compute_salience(base: float, last_access_or_creation: datetime, now: datetime, decay_rate: float) -> float:
    """``base * decay_rate ** days`` since the last access (or creation); never grows for a future time."""
    days = max(0.0, (now - last_access_or_creation).total_seconds() / ONE_DAY_SECONDS)
    return float(base * decay_rate**days)


def boost_salience(current: float, boost: float) -> float:
    """``current + boost``, capped at 1.0."""
    return min(1.0, current + boost)


def combine_scores(salience: float, relevance: float) -> float:
    """The final score: salience x relevance."""
    return salience * relevance


def fact_salience(fact: Fact, config: SalienceConfig, now: datetime) -> float:
    """A fact's stored salience decayed from its last access, or from when it was recorded."""
    return compute_salience(fact.salience, fact.last_accessed_at or fact.recorded_at, now, config.decay_rate)


def rank_by_salience(
    candidates: Sequence[Fact] | Sequence[tuple[Fact, float]], config: SalienceConfig, now: datetime | None = None
) -> list[ScoredFact]:
    """Score each fact (decayed salience x relevance, 1.0 when not given), drop those under
    ``min_salience``, best first (ties: newest first)."""
    moment = now or utcnow()
    scored = []
    for item in candidates:
        fact, relevance = item if isinstance(item, tuple) else (item, 1.0)
        salience = fact_salience(fact, config, moment)
        if salience >= config.min_salience:
            scored.append(
                ScoredFact(fact=fact, salience=salience, relevance=relevance, score=combine_scores(salience, relevance))
            )
    scored.sort(key=lambda s: (-s.score, -s.fact.recorded_at.timestamp(), s.fact.id))
    return scored
