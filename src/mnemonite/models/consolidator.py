"""The consolidator's records: usage, claimed jobs, topic episodes, and what a run did."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

from pydantic import AwareDatetime, Field

from mnemonite.models.base import Model

Phase = Literal["light", "standard", "deep"]
PHASES: tuple[Phase, ...] = ("light", "standard", "deep")


@dataclass(frozen=True)
class Turn:
    """One stored message as the consolidator reads it."""

    seq: int
    id: str
    content: str
    speaker: str
    timestamp: datetime
    session: str
    metadata: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class ClaimedJob:
    """A phase's work on one scope, held by one worker until its lease ends."""

    phase: str
    scope_key: str
    user: str
    agent: str
    session: str
    checkpoint: int
    upto: int
    worker: str
    summary: str | None = None


class JobCounts(Model):
    """How many jobs of a phase wait, are claimed now, and are done."""

    phase: str
    waiting: int
    claimed: int
    done: int


class Usage(Model):
    """Language-model use of one phase on one day (UTC)."""

    phase: str = ""
    prompt_tokens: int = Field(default=0, ge=0)
    completion_tokens: int = Field(default=0, ge=0)
    cost: float = Field(default=0.0, ge=0)
    calls: int = Field(default=0, ge=0)
    runs: int = Field(default=0, ge=0)

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


class TopicEpisode(Model):
    """A stretch of one session about one topic: its turns and an extractive summary."""

    id: str
    scope_key: str
    user: str
    agent: str
    session: str
    first_seq: int
    last_seq: int
    turn_ids: list[str]
    summary: str
    created_at: AwareDatetime


class PhaseReport(Model):
    """What one phase did in one run.

    ``admitted`` / ``deduplicated`` / ``superseded`` / ``pending`` count the conflict pipeline's
    decisions on the statements sent through it; ``paused`` is set when the budget stopped the
    phase (its unfinished jobs resume on a later run); ``fallbacks`` counts jobs done by the
    rule-based path because the budget or the model said no.
    """

    phase: Phase
    jobs: int = 0
    turns: int = 0
    statements: int = 0
    admitted: int = 0
    deduplicated: int = 0
    superseded: int = 0
    pending: int = 0
    summaries: int = 0
    topic_episodes: int = 0
    judged: int = 0
    patterns: int = 0
    procedures: int = 0
    shared: int = 0
    calls: int = 0
    tokens: int = 0
    cost: float = 0.0
    fallbacks: int = 0
    paused: bool = False
    llm: bool = False


class ConsolidatorStatus(Model):
    """The consolidator's settings, today's usage against the ceilings, and the work waiting."""

    tier: str
    phases: list[Phase]
    model_phases: list[Phase]
    max_tokens_per_day: int
    max_cost_per_day: float
    on_exceed: Literal["pause", "log"]
    llm: str | None
    day: str
    usage: list[Usage]
    tokens_today: int
    cost_today: float
    jobs: list[JobCounts]
