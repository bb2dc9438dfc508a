"""Consolidator tiers and budgets: which phases run, and how much language-model use a day may cost.

The ceilings bound model use only. Rule-based work costs no tokens, so every tier runs all three
phases by rules (the specification's default ``free`` tier is "effectively a no-op"; here memory
learns from the first conversation at zero cost, deliberately): a tier's phases are those a model
may serve. A phase uses a model only when the tier lists it, one is configured (``llm_url`` and the
phase's model) and the day's budget allows the call.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import Field, field_validator, model_validator

from mnemonite.errors import ConfigurationError, CustomTierMisconfiguredError, MnemoniteError
from mnemonite.models.base import Model
from mnemonite.models.consolidator import PHASES, Phase
from mnemonite.models.rules import ConsolidationRule

__all__ = ["CONSOLIDATOR_TIER_DEFAULTS", "DEFAULT_PRICES", "ConsolidatorConfig", "TierDefaults"]

Tier = Literal["free", "cheap", "standard", "full", "custom"]
OnExceed = Literal["pause", "log"]


class TierDefaults(Model):
    """One row of `CONSOLIDATOR_TIER_DEFAULTS` (``None``: the operator must set it, tier ``custom``).

    ``phases``: those a model may serve (the others, like every phase without a model, run by rules)."""

    phases: tuple[Phase, ...] | None
    max_tokens_per_day: int | None
    max_cost_per_day: float | None
    on_exceed: OnExceed | None


CONSOLIDATOR_TIER_DEFAULTS: dict[str, TierDefaults] = {
    "free": TierDefaults(phases=("light",), max_tokens_per_day=0, max_cost_per_day=0.0, on_exceed="pause"),
    "cheap": TierDefaults(
        phases=("light", "standard"), max_tokens_per_day=50_000, max_cost_per_day=0.20, on_exceed="pause"
    ),
    "standard": TierDefaults(
        phases=("light", "standard", "deep"), max_tokens_per_day=200_000, max_cost_per_day=1.00, on_exceed="log"
    ),
    "full": TierDefaults(
        phases=("light", "standard", "deep"), max_tokens_per_day=1_000_000, max_cost_per_day=5.00, on_exceed="log"
    ),
    "custom": TierDefaults(phases=None, max_tokens_per_day=None, max_cost_per_day=None, on_exceed=None),
}

# USD per million (prompt, completion) tokens; a model not listed is priced by "default".
DEFAULT_PRICES: dict[str, tuple[float, float]] = {
    "gpt-4o-mini": (0.15, 0.60),
    "gpt-4.1-mini": (0.40, 1.60),
    "gpt-4.1-nano": (0.10, 0.40),
    "gpt-4o": (2.50, 10.00),
    "default": (1.00, 4.00),
}

_CADENCE: dict[str, dict[str, Any]] = {
    "light": {"every": 20},
    "standard": {"cron": "0 3 * * *"},
    "deep": {"cron": "0 4 * * 0"},
}


class ConsolidatorConfig(Model):
    """How the background consolidator runs (``MemoryConfig.consolidator``).

    - ``tier``: a row of `CONSOLIDATOR_TIER_DEFAULTS`: which phases a model may serve, the ceilings and
      ``on_exceed``; ``max_tokens_per_day``, ``max_cost_per_day`` and ``on_exceed`` override it (``custom``
      requires both ceilings).
    - ``phases``: the phases that run (default: all three, by rules where no model serves them); set, it also
      limits model use to those phases.
    - ``on_exceed``: ``pause`` stops the phase when the next call would pass a ceiling (its jobs
      resume later, nothing half-applied); ``log`` logs it and finishes with the rule-based path.
    - ``llm_url`` (an OpenAI-compatible ``.../v1``), ``llm_api_key``, ``cheap_model`` (light and
      standard) and ``deep_model`` (deep): without them every phase is rule-based.
    - ``prices``: USD per million prompt and completion tokens, by model.
    - ``cadence``: per phase, ``{"every": N}`` new episodes or ``{"cron": "..."}`` (UTC), for ``watch``.
    - ``lease_seconds``: how long a claimed job is held without progress before another worker may take it.
    - ``extraction``: how the rule-based standard and deep phases read chat: ``"rules"`` (the default: the
      statement pack's rules) or ``"parser"`` (`mnemonite.reading.chat.ParsedExtractor`, where the semantic tier
      reads with the statement parser: more recall on labelled chat, more and longer statements on LoCoMo, whose
      retrieval it lowered; see `bench/README.md`).
    """

    error_type: ClassVar[type[MnemoniteError]] = ConfigurationError

    tier: Tier = "free"
    phases: tuple[Phase, ...] | None = None
    max_tokens_per_day: int | None = Field(default=None, ge=0)
    max_cost_per_day: float | None = Field(default=None, ge=0)
    on_exceed: OnExceed | None = None
    llm_url: str | None = None
    llm_api_key: str | None = Field(default=None, repr=False)
    cheap_model: str | None = None
    deep_model: str | None = None
    llm_timeout: float = Field(default=30.0, gt=0)
    llm_retries: int = Field(default=2, ge=0, le=10)
    max_completion_tokens: int = Field(default=1_000, ge=1)
    prices: dict[str, tuple[float, float]] = Field(default_factory=lambda: dict(DEFAULT_PRICES))
    cadence: dict[str, dict[str, Any]] = Field(default_factory=lambda: {k: dict(v) for k, v in _CADENCE.items()})
    lease_seconds: float = Field(default=300.0, gt=0)
    min_sessions: int = Field(default=2, ge=2, description="sessions a statement recurs in to be a pattern")
    extraction: Literal["rules", "parser"] = "rules"

    @field_validator("cadence")
    @classmethod
    def _cadences(cls, value: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
        for phase, cadence in value.items():
            if phase not in PHASES:
                raise ConfigurationError(f"cadence names an unknown phase {phase!r} (light, standard, deep)")
            ConsolidationRule(id=f"consolidator.{phase}", cadence=cadence)
        return value

    @model_validator(mode="after")
    def _custom(self) -> ConsolidatorConfig:
        if self.tier != "custom":
            return self
        missing = [name for name in ("max_tokens_per_day", "max_cost_per_day", "on_exceed", "phases")
                   if getattr(self, name) is None]  # fmt: skip
        phases = self.phases or ()
        if "standard" in phases and not self.cheap_model:
            missing.append("cheap_model (the standard phase is enabled)")
        if "deep" in phases and not self.deep_model:
            missing.append("deep_model (the deep phase is enabled)")
        if missing:
            raise CustomTierMisconfiguredError(f"the custom consolidator tier must set: {', '.join(missing)}")
        return self

    @property
    def defaults(self) -> TierDefaults:
        return CONSOLIDATOR_TIER_DEFAULTS[self.tier]

    @property
    def enabled(self) -> tuple[Phase, ...]:
        """The phases that run: ``phases``, else all three (rule-based ones cost nothing)."""
        return self.phases if self.phases is not None else PHASES

    @property
    def model_phases(self) -> tuple[Phase, ...]:
        """The phases a model may serve: those the tier lists (or ``phases``, when set), that run."""
        listed = self.phases if self.phases is not None else self.defaults.phases or ()
        return tuple(phase for phase in listed if phase in self.enabled)

    @property
    def token_ceiling(self) -> int:
        value = self.max_tokens_per_day
        return value if value is not None else self.defaults.max_tokens_per_day or 0

    @property
    def cost_ceiling(self) -> float:
        value = self.max_cost_per_day
        return value if value is not None else self.defaults.max_cost_per_day or 0.0

    @property
    def exceed(self) -> OnExceed:
        return self.on_exceed or self.defaults.on_exceed or "pause"

    def model_for(self, phase: Phase) -> str | None:
        """The model a phase calls (None: rule-based; so is a phase the tier does not list, and every phase of
        a tier whose ceilings are zero)."""
        if not self.llm_url or self.token_ceiling == 0 or self.cost_ceiling == 0 or phase not in self.model_phases:
            return None
        return (self.deep_model or self.cheap_model) if phase == "deep" else self.cheap_model

    def price(self, model: str, prompt_tokens: int, completion_tokens: int) -> float:
        """The cost in USD of one call, from the price table."""
        rate_in, rate_out = self.prices.get(model) or self.prices.get("default") or DEFAULT_PRICES["default"]
        return (prompt_tokens * rate_in + completion_tokens * rate_out) / 1_000_000
