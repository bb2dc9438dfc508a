"""What `semantic.remember` decided about a candidate fact, and the audit row each decision leaves."""

from __future__ import annotations

from typing import Literal

from pydantic import AwareDatetime, Field

from mnemonite.models.base import Model, new_id

DecisionKind = Literal["supersede", "dedup", "pending", "admit"]
Stage = Literal["exact", "embedding", "regex", "subject_predicate", "judge", "explicit"]
Zone = Literal["HOT", "NEAR_DUP", "CONFLICT_CHECK", "COLD"]
VerdictKind = Literal["supersede", "dedup", "admit"]


class ConflictThresholds(Model):
    """The embedding zones of stage 2: HOT ≥ hot (always a duplicate), NEAR-DUP ≥ near_dup,
    CONFLICT-CHECK > conflict_check, COLD otherwise; ``top_k`` nearest current facts are compared.

    By default a HOT match that the candidate negates or retracts is superseded, and one about
    another subject is admitted; ``strict_hot=True`` restores the spec's "HOT always dedups"."""

    hot: float = Field(default=0.95, gt=0, le=1)
    near_dup: float = Field(default=0.85, gt=0, le=1)
    conflict_check: float = Field(default=0.4, ge=-1, lt=1)
    change_signal: float = Field(
        default=0.6,
        ge=-1,
        le=1,
        description="a change signal with no (subject, predicate) to match changes the"
        " nearest fact only at this cosine or above",
    )
    top_k: int = Field(default=5, ge=1, le=100)
    strict_hot: bool = Field(
        default=False,
        description="the spec's rule: HOT always dedups, even a negation or retraction of the matched fact"
        " or a statement about someone else",
    )

    def zone(self, cosine: float | None) -> Zone:
        if cosine is None or cosine <= self.conflict_check:
            return "COLD"
        if cosine >= self.hot:
            return "HOT"
        return "NEAR_DUP" if cosine >= self.near_dup else "CONFLICT_CHECK"


class ConflictDecision(Model):
    """One decision of the five-stage pipeline (or of a judge, or of an explicit call).

    ``fact_id`` is the fact the caller should hold afterwards: the new fact (admit,
    pending, supersede) or the existing one it duplicates (dedup). ``matched_ids`` are the
    existing facts involved: the duplicate, or the facts superseded. ``cosine`` is the
    similarity to the nearest current fact when vectors were compared.
    """

    id: str = Field(default_factory=new_id)
    kind: DecisionKind
    stage: Stage
    zone: Zone | None = None
    cosine: float | None = None
    reason: str
    fact_id: str
    matched_ids: list[str] = Field(default_factory=list)
    user: str
    agent: str
    candidate_text: str
    decided_at: AwareDatetime


class JudgeVerdict(Model):
    """A judge's ruling on a pending fact: it supersedes ``target_id``, duplicates it, or stands alone."""

    kind: VerdictKind
    target_id: str | None = None
    reason: str = Field(default="", max_length=2000)


class PurgeRecord(Model):
    """The audit row left when facts or episodes are really removed (a privacy request); no text is kept.

    ``fact_ids``: the facts removed. ``episode_ids``: the episodes removed (an episode purge);
    ``derived_fact_ids``: the facts promoted from those episodes — removed too (then also in
    ``fact_ids``) or kept, as the purge was asked. ``agent`` is None for a purge of a whole user.
    """

    id: str = Field(default_factory=new_id)
    fact_ids: list[str]
    episode_ids: list[str] = Field(default_factory=list)
    derived_fact_ids: list[str] = Field(default_factory=list)
    user: str
    agent: str | None
    reason: str
    purged_at: AwareDatetime
