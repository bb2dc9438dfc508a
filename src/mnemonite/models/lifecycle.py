"""Hot / warm / cold: where a record sits in an agent's working set, and the rules that move it."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import ClassVar, Literal

from pydantic import AwareDatetime, Field, model_validator

from mnemonite.errors import ConfigurationError, MnemoniteError
from mnemonite.models.base import Model

__all__ = ["LifecycleTier", "LifecycleWindows", "SweepReport", "TierRow", "TierStats", "promote"]

LifecycleTier = Literal["hot", "warm", "cold"]


class LifecycleWindows(Model):
    """The lifecycle's windows and counts (the defaults are the spec's).

    - promotion on access: COLD -> WARM after ``warm_after`` accesses within ``window``,
      WARM -> HOT after ``hot_after``;
    - `sweep`: HOT -> WARM when not accessed for ``hot_ttl``, WARM -> COLD when not accessed
      for ``window`` (so no access in it).
    """

    hot_ttl: timedelta = timedelta(hours=1)
    window: timedelta = timedelta(days=7)
    warm_after: int = Field(default=1, ge=1, le=64)
    hot_after: int = Field(default=3, ge=1, le=64)

    error_type: ClassVar[type[MnemoniteError]] = ConfigurationError

    @model_validator(mode="after")
    def _ordered(self) -> LifecycleWindows:
        # Raised as the typed error itself: this validator runs outside the base's translation.
        if self.hot_ttl <= timedelta(0) or self.window <= timedelta(0):
            raise ConfigurationError("LifecycleWindows: hot_ttl and window must be positive")
        if self.hot_after < self.warm_after:
            raise ConfigurationError("LifecycleWindows: hot_after must be >= warm_after")
        return self


class TierRow(Model):
    """A record's lifecycle state: its tier and its latest accesses (newest first, at most ``hot_after``)."""

    kind: Literal["episode", "fact"]
    record_id: str
    tier: LifecycleTier
    accesses: tuple[AwareDatetime, ...] = ()
    changed_at: AwareDatetime


class TierStats(Model):
    """How many of a user's records sit in each tier (records never accessed are cold)."""

    hot: int
    warm: int
    cold: int

    @property
    def total(self) -> int:
        return self.hot + self.warm + self.cold


class SweepReport(Model):
    """What one `sweep` demoted."""

    hot_to_warm: int
    warm_to_cold: int
    at: AwareDatetime


def promote(row: TierRow, now: datetime, windows: LifecycleWindows) -> TierRow:
    """``row`` after one more access at ``now`` (lazy promotion; the spec's rules, no demotion here)."""
    recent = tuple(t for t in (now, *row.accesses) if now - t <= windows.window)[: windows.hot_after]
    tier = row.tier
    if tier == "cold" and len(recent) >= windows.warm_after:
        tier = "warm"
    if tier == "warm" and len(recent) >= windows.hot_after:
        tier = "hot"
    changed = now if tier != row.tier else row.changed_at
    return row.model_copy(update={"tier": tier, "accesses": recent, "changed_at": changed})
