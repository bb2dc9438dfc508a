"""Facts (the semantic tier), their lineage, and the audit record of every applied delta."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, SerializationInfo, field_serializer

from mnemonite.models.base import Model, Moment
from mnemonite.models.deltas import MemoryDelta
from mnemonite.models.sensitivity import SensitivityField, shown_values

FactStatus = Literal["active", "pending", "superseded", "forgotten"]
MemoryType = Literal["fact", "preference", "decision", "experience", "failure", "observation", "consolidation"]
DEFAULT_SALIENCE = 0.5
EventDateConfidence = Literal["exact", "approximate", "ambiguous"]
LineageRelation = Literal["SUPERSEDES", "CONSOLIDATES"]
Role = Literal["about", "by", "for", "mentions"]


class EntityLink(Model):
    """A fact's link to a graph entity, with the entity's role in the fact."""

    entity_id: str = Field(min_length=1)
    role: Role = "about"


class FactPayload(Model):
    """What a delta's ``fact_payload`` may hold. ``user``/``agent`` default to the source episodes' scope."""

    text: str = Field(min_length=1)
    user: str | None = None
    agent: str | None = None
    subject: str | None = None
    predicate: str | None = None
    object: str | None = None
    memory_type: MemoryType = "fact"
    valid_from: Moment | None = None
    valid_to: Moment | None = None
    tags: list[str] = Field(default_factory=list)
    channels: list[str] = Field(default_factory=list)
    summary: str | None = None
    event_date: Moment | None = None
    event_date_confidence: EventDateConfidence | None = None
    payload: dict[str, Any] = Field(default_factory=dict)
    status: Literal["active", "pending"] = Field(default="active", description="pending: awaiting a judge")
    entities: list[EntityLink] = Field(default_factory=list)
    token_count: int | None = Field(default=None, ge=0)
    summary_token_count: int | None = Field(default=None, ge=0)
    salience: float | None = Field(default=None, ge=0.0, le=1.0, description="None: the default salience (0.5)")
    sensitivity: SensitivityField = "internal"


MAY_REPLACE = "may_replace"  # the payload key of a candidate update: the ids of the facts it may replace


class Fact(Model):
    """A promoted, session-independent fact of a (user, agent), bi-temporal and never overwritten.

    World time: ``valid_from``/``valid_to`` say when the fact held. System time:
    ``recorded_at``/``superseded_at`` say when memory started and stopped believing it.
    """

    id: str
    user: str
    agent: str
    text: str
    subject: str | None = None
    predicate: str | None = None
    object: str | None = None
    payload: dict[str, Any] = Field(default_factory=dict)
    memory_type: MemoryType = "fact"
    status: FactStatus = "active"
    valid_from: Moment
    valid_to: Moment | None = None
    recorded_at: Moment
    superseded_at: Moment | None = None
    source_episode_ids: list[str] = Field(default_factory=list)
    rule_id: str
    confidence: float = Field(ge=0.0, le=1.0)
    promotion_ts: Moment
    salience: float = Field(default=DEFAULT_SALIENCE, ge=0.0, le=1.0)
    access_count: int = 0
    last_accessed_at: Moment | None = None
    tags: list[str] = Field(default_factory=list)
    channels: list[str] = Field(default_factory=list)
    summary: str | None = None
    event_date: Moment | None = None
    event_date_confidence: EventDateConfidence | None = None
    entities: list[EntityLink] = Field(default_factory=list, description="graph entities, each with its role")
    token_count: int | None = Field(default=None, description="tokens of the text (None: not counted)")
    summary_token_count: int | None = None
    sensitivity: SensitivityField = "internal"

    @field_serializer("payload", when_used="json")
    def _hide_kept_secrets(self, value: dict[str, Any], info: SerializationInfo) -> dict[str, Any]:
        return shown_values(value, info)

    @property
    def may_replace(self) -> list[str]:
        """The facts a pending candidate update may replace (``payload["may_replace"]``): the conflict pipeline
        read another value of an attribute they hold, without the certainty to supersede them."""
        found = self.payload.get(MAY_REPLACE) if self.status == "pending" else None
        return [str(i) for i in found] if isinstance(found, list) else []


class Lineage(Model):
    """``new_id`` SUPERSEDES or CONSOLIDATES ``old_id``, recorded at ``at``."""

    new_id: str
    old_id: str
    relation: LineageRelation
    at: Moment


class DeltaRecord(Model):
    """The audit row of one delta: emitted by consolidation, then applied to the facts or rejected.

    A consolidation run that cannot apply a delta (``replaces`` unresolvable, a bad payload)
    records why in ``rejected_reason`` and goes on with the rest; the delta is not retried.
    """

    delta_id: str
    kind: Literal["add", "update", "delete", "noop", "link"]
    rule_id: str
    delta: MemoryDelta
    emitted_at: Moment
    applied_at: Moment | None = None
    fact_id: str | None = None
    closed_fact_ids: list[str] = Field(default_factory=list)
    rejected_at: Moment | None = None
    rejected_reason: str | None = None


class FactFilter(Model):
    """Which facts a read returns.

    By default: the facts memory holds now (not superseded, not forgotten).
    ``as_of`` (system time) replays what memory believed at that moment; ``valid_at``
    (world time) asks what held at that moment, superseded history included and
    retracted (forgotten) facts excluded. ``agent=None`` widens to every agent. A ``status``
    without either moment reads every fact of that status, past ones too (``superseded``, ``forgotten``).
    """

    user: str
    agent: str | None = None
    as_of: Moment | None = None
    valid_at: Moment | None = None
    status: FactStatus | None = None
    subject: str | None = None
    predicate: str | None = None
    channel: str | None = None
    limit: int = Field(default=100, ge=1, le=100_000)
