"""Consolidation rules: when episodes are promoted into facts, and which ones."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, ClassVar

from croniter import croniter
from pydantic import AwareDatetime, Field, field_validator

from mnemonite.consolidation.filter import parse_filter
from mnemonite.errors import ConsolidationRuleError, MnemoniteError
from mnemonite.models.base import Model
from mnemonite.models.fact import DeltaRecord

NIGHTLY: dict[str, Any] = {"cron": "0 3 * * *"}


class ConsolidationRule(Model):
    """A rule that turns stored episodes into typed deltas.

    ``cadence`` is ``{"every": N}`` (after N new episodes; ``{"every": 1}`` is streaming)
    or ``{"cron": "0 3 * * *"}`` (wall clock, UTC). The default is the nightly sleep-cycle
    batch. ``when_filter`` is a SQL-like condition over episode columns and
    ``metadata.<key>``; the empty string matches every episode. ``rule_id`` on every
    emitted delta is this rule's ``id``.
    """

    error_type: ClassVar[type[MnemoniteError]] = ConsolidationRuleError

    id: str = Field(min_length=1, max_length=128, pattern=r"^[A-Za-z0-9][A-Za-z0-9_.:\-]*$")
    cadence: dict[str, Any] = Field(default_factory=lambda: dict(NIGHTLY))
    when_filter: str = ""
    then_emits: list[str] = Field(default_factory=lambda: ["facts"], min_length=1)

    @field_validator("cadence")
    @classmethod
    def _cadence(cls, value: dict[str, Any]) -> dict[str, Any]:
        if set(value) == {"every"}:
            every = value["every"]
            if isinstance(every, bool) or not isinstance(every, int) or every < 1:
                raise ConsolidationRuleError(f"cadence every must be an integer >= 1, got {every!r}")
            return value
        if set(value) == {"cron"}:
            cron = value["cron"]
            if not isinstance(cron, str) or not croniter.is_valid(cron):
                raise ConsolidationRuleError(f"cadence cron is not a valid cron expression: {cron!r}")
            return value
        raise ConsolidationRuleError(f'cadence must be {{"every": N}} or {{"cron": "..."}}, got {value!r}')

    @field_validator("when_filter")
    @classmethod
    def _filter(cls, value: str) -> str:
        parse_filter(value)
        return value

    @field_validator("then_emits")
    @classmethod
    def _channels(cls, value: list[str]) -> list[str]:
        if not all(isinstance(v, str) and v.strip() for v in value):
            raise ConsolidationRuleError("then_emits must be a list of non-empty channel names")
        return value

    @property
    def streaming(self) -> bool:
        """True for ``{"every": 1}``: the rule fires after each episode."""
        return self.cadence.get("every") == 1


class RuleState(Model):
    """A registered rule and its persisted progress.

    ``checkpoint`` is the last episode sequence number the rule has consumed: a rule
    never sees an episode at or below it again. ``episodes_since`` counts the episodes
    stored after it (whether or not they match the filter).
    """

    rule: ConsolidationRule
    registered_at: AwareDatetime
    last_run_at: AwareDatetime | None = None
    checkpoint: int = 0
    episodes_since: int = 0
    runs: int = 0

    def next_run_at(self) -> datetime | None:
        """For a cron rule, the next firing time; ``None`` for count-based rules."""
        cron = self.rule.cadence.get("cron")
        if cron is None:
            return None
        base = self.last_run_at or self.registered_at
        fire: datetime = croniter(cron, base.astimezone(UTC)).get_next(datetime)
        return fire

    def is_due(self, now: datetime) -> bool:
        """True when the cadence says the rule should run at ``now``."""
        every = self.rule.cadence.get("every")
        if every is not None:
            return self.episodes_since >= int(every)
        fire = self.next_run_at()
        return fire is not None and fire <= now


class ConsolidationRun(Model):
    """What one consolidation pass did: the episodes it consumed and the deltas it applied."""

    rule_id: str
    ran_at: AwareDatetime
    episodes_scanned: int
    deltas: list[DeltaRecord]
    remaining: int = 0
