"""Salience: how much a memory matters right now, in [0, 1].

The default scorer follows the structure of Park et al. 2023 (Generative Agents)::

    score = w_recency * exp(-Δt / τ) + w_relevance * relevance + w_importance * importance

Recency is measured from the *last access* (creation if never read), so memories in use
stay salient regardless of age; τ defaults to one day. The rule-based default weighs
recency alone (w_relevance = w_importance = 0); the other terms switch on by weight.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Protocol, runtime_checkable

from pydantic import AwareDatetime, Field

from memstrata._time import utcnow
from memstrata.models.base import Model
from memstrata.models.episode import Episode

__all__ = ["RuleBasedScorer", "SalienceContext", "SalienceScorer", "importance_of"]

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
