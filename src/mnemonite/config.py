"""`MemoryConfig`: every setting in one frozen object. `from_env` and `default_cache_dir` are the only places
that read the environment."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import ClassVar, Literal

from pydantic import Field

from mnemonite.consolidator.budget import ConsolidatorConfig
from mnemonite.errors import ConfigurationError, MnemoniteError
from mnemonite.models.base import Model
from mnemonite.models.concepts import ConceptConfig
from mnemonite.models.conflict import ConflictThresholds
from mnemonite.models.lifecycle import LifecycleWindows
from mnemonite.models.sensitivity import Sensitivity
from mnemonite.salience import SalienceConfig
from mnemonite.search.hybrid import CACHE_BYTES, SearchOptions

DEFAULT_URL = "sqlite:///mnemonite.db"
_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


class MemoryConfig(Model):
    """How a `Memory` opens and behaves.

    - ``url``: ``sqlite:///path/to/file.db`` (relative), ``sqlite:////abs/path.db``, ``sqlite:///:memory:``,
      a bare SQLite path (``./m.db``, ``/tmp/m.db``) or ``postgresql://user@host/db``.
    - ``track_access``: reads update access counts and last-access times (salience recency uses them).
    - ``consolidate_on_put``: after each put, run the consolidation rules that are due.
    - ``max_episodes_per_run``: the most episodes one consolidation pass claims.
    - ``embedder``: ``"default"`` (the packaged offline MiniLM) or ``"none"`` (full-text search only);
      ``Memory.open(embedder=...)`` takes any `Embedder` instead.
    - ``embedder_strategy``: what to do when the embedder changes (see `mnemonite.embedding.registry`).
    - ``index_in_background``: embed new records after each write without blocking it.
    - ``index_on_close``: `Memory.close` embeds the records still waiting for a vector first, so the
      next process finds them by meaning at once, for up to ``index_on_close_seconds`` (then it logs how many
      remain: the next open resumes them); ``close(finish_indexing=True)`` embeds them all,
      ``close(finish_indexing=False)`` none.
    - ``search``: the default `SearchOptions` (fusion weights, boosts).
    - ``search_cache_bytes``: the memory the search engine may keep per process for users' in-memory
      full-text indexes and vectors, least recently used out first (the user being searched stays).
    - ``locale``: the locale pack `semantic.remember` reads change markers and predicates from
      (``"en"`` ships; `define_locale_pack` adds more).
    - ``reader``: how statements are read (subject, attribute, typed values, polarity): ``"auto"`` (the
      default) by the dependency parser where the ``parser`` extra is installed, else by the locale pack's rules;
      ``"parser"`` requires the parser (`ParserUnavailableError` at open without it); ``"rules"`` never loads it.
    - ``learn_graph``: the graph memory builds itself from the statements memory learns (the people, pets,
      places and organisations each fact names become entities, the relations it states edges that hold while
      the fact is believed; `mnemonite.learned_graph`). It reads with the parser: with ``reader="rules"`` (or
      without the ``parser`` extra) the graph changes only through `mem.graph`, as it does when this is off.
    - ``conflicts``: the embedding-zone thresholds of `semantic.remember` (`ConflictThresholds`).
    - ``salience``: the decay/boost engine of facts (`SalienceConfig`: decay rate per day, boost
      per access, min salience, consolidation decay).
    - ``consolidator``: the background consolidator's tier, budget, model endpoint, price table and
      cadences (`ConsolidatorConfig`; the default ``free`` tier is rule-based, no model).
    - ``working_sensitivity``, ``session_sensitivity``, ``procedural_sensitivity``, ``shared_sensitivity``:
      the sensitivity (public, internal, secret) of a row of that tier written without one.
    - ``episodic_sensitivity``, ``semantic_sensitivity``: the same for episodes and facts. Nothing here
      turns redaction off: secret text is shown only to a call given a `Reveal` (see `mnemonite.privacy`).
    - ``secrets_at_rest``: what a record keeps of a secret recognised in it without a tag (a card number,
      a key, a password said aloud; `mnemonite.recognisers`): ``"mask"`` (the default) stores only
      ``[secret: card number]``, so the value cannot leak from the file, a backup or a bug, and cannot be
      recovered either; ``"keep"`` also keeps the value beside the record, for a call holding a `Reveal`
      (`mnemonite.reveal_text`). Either way the value is never embedded, indexed or sent to a model.
    - ``busy_timeout``: seconds a write waits for a lock another process holds (SQLite's write
      lock, a PostgreSQL row or table lock) before `StoreBusyError`.
    - ``concepts``: the concept graph's thresholds (`ConceptConfig`: shift 0.30, merge 0.85, schematic 5).
    - ``lifecycle``: the hot/warm/cold windows (`LifecycleWindows`: 1 hour, 7 days, 1 and 3 accesses).
    - ``track_lifecycle``: searches count their hits as accesses, promoting them (off: tiers change only
      through `mem.lifecycle`).
    """

    error_type: ClassVar[type[MnemoniteError]] = ConfigurationError

    url: str = DEFAULT_URL
    track_access: bool = True
    consolidate_on_put: bool = False
    max_episodes_per_run: int = Field(default=50_000, ge=1)
    embedder: Literal["default", "none"] = "default"
    embedder_strategy: Literal["lock-on-first", "multi-active", "auto-migrate"] = "lock-on-first"
    index_in_background: bool = True
    index_on_close: bool = True
    index_on_close_seconds: float = Field(default=5.0, ge=0)
    search: SearchOptions = Field(default_factory=SearchOptions)
    search_cache_bytes: int = Field(default=CACHE_BYTES, ge=0)
    locale: str = Field(default="en", min_length=1)
    reader: Literal["auto", "parser", "rules"] = "auto"
    learn_graph: bool = True
    conflicts: ConflictThresholds = Field(default_factory=ConflictThresholds)
    salience: SalienceConfig = Field(default_factory=SalienceConfig)
    consolidator: ConsolidatorConfig = Field(default_factory=ConsolidatorConfig)
    # the agent tiers
    working_sensitivity: Sensitivity = "internal"
    session_sensitivity: Sensitivity = "internal"
    procedural_sensitivity: Sensitivity = "internal"
    shared_sensitivity: Sensitivity = "internal"
    # episodes and facts
    episodic_sensitivity: Sensitivity = "internal"
    semantic_sensitivity: Sensitivity = "internal"
    secrets_at_rest: Literal["mask", "keep"] = "mask"
    # reliability
    busy_timeout: float = Field(default=10.0, ge=0, le=3600, allow_inf_nan=False)
    # -- concept graph, lifecycle tiers --
    concepts: ConceptConfig = Field(default_factory=ConceptConfig)
    lifecycle: LifecycleWindows = Field(default_factory=LifecycleWindows)
    track_lifecycle: bool = False

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None, **overrides: object) -> MemoryConfig:
        """Read ``MNEMONITE_URL``, ``_TRACK_ACCESS``, ``_CONSOLIDATE_ON_PUT``, ``_INDEX_IN_BACKGROUND``,
        ``_INDEX_ON_CLOSE``, ``_EMBEDDER``, ``_EMBEDDER_STRATEGY`` and ``_BUSY_TIMEOUT`` (all prefixed
        ``MNEMONITE``), and the consolidator's ``MNEMONITE_CONSOLIDATOR_TIER``, ``_LLM_URL``, ``_LLM_API_KEY``,
        ``_CHEAP_MODEL``, ``_DEEP_MODEL``, ``_MAX_TOKENS_PER_DAY``, ``_MAX_COST_PER_DAY`` and ``_ON_EXCEED``."""
        env = os.environ if environ is None else environ
        values: dict[str, object] = {}
        if "MNEMONITE_URL" in env:
            values["url"] = env["MNEMONITE_URL"]
        for name, key in (
            ("track_access", "MNEMONITE_TRACK_ACCESS"),
            ("consolidate_on_put", "MNEMONITE_CONSOLIDATE_ON_PUT"),
            ("index_in_background", "MNEMONITE_INDEX_IN_BACKGROUND"),
            ("index_on_close", "MNEMONITE_INDEX_ON_CLOSE"),
        ):
            if key in env:
                values[name] = _flag(key, env[key])
        for name, key in (("embedder", "MNEMONITE_EMBEDDER"), ("embedder_strategy", "MNEMONITE_EMBEDDER_STRATEGY")):
            if key in env:
                values[name] = env[key].strip()
        consolidator = _consolidator_env(env)
        if consolidator:
            values["consolidator"] = consolidator
        if "MNEMONITE_BUSY_TIMEOUT" in env:
            values["busy_timeout"] = _seconds("MNEMONITE_BUSY_TIMEOUT", env["MNEMONITE_BUSY_TIMEOUT"])
        values.update({k: v for k, v in overrides.items() if v is not None})  # explicit arguments win
        return cls.model_validate(values)


def default_cache_dir(environ: Mapping[str, str] | None = None) -> Path:
    """Where files derived from models are kept (the int8 copy of the embedding model): ``MNEMONITE_CACHE_DIR``,
    else ``$XDG_CACHE_HOME/mnemonite``, else ``~/.cache/mnemonite``."""
    env = os.environ if environ is None else environ
    if env.get("MNEMONITE_CACHE_DIR"):
        return Path(env["MNEMONITE_CACHE_DIR"])
    return Path(env.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "mnemonite"


_CONSOLIDATOR_ENV = {
    "tier": "MNEMONITE_CONSOLIDATOR_TIER",
    "llm_url": "MNEMONITE_CONSOLIDATOR_LLM_URL",
    "llm_api_key": "MNEMONITE_CONSOLIDATOR_LLM_API_KEY",
    "cheap_model": "MNEMONITE_CONSOLIDATOR_CHEAP_MODEL",
    "deep_model": "MNEMONITE_CONSOLIDATOR_DEEP_MODEL",
    "max_tokens_per_day": "MNEMONITE_CONSOLIDATOR_MAX_TOKENS_PER_DAY",
    "max_cost_per_day": "MNEMONITE_CONSOLIDATOR_MAX_COST_PER_DAY",
    "on_exceed": "MNEMONITE_CONSOLIDATOR_ON_EXCEED",
}


def _consolidator_env(env: Mapping[str, str]) -> dict[str, str]:
    """The consolidator's settings named in the environment (validated by `ConsolidatorConfig`)."""
    return {name: env[key].strip() for name, key in _CONSOLIDATOR_ENV.items() if env.get(key, "").strip()}


def _flag(key: str, raw: str) -> bool:
    text = raw.strip().lower()
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    raise ConfigurationError(f"{key} must be true or false, got {raw!r}")


def _seconds(key: str, raw: str) -> float:
    try:
        return float(raw.strip())
    except ValueError:
        raise ConfigurationError(f"{key} must be a number of seconds, got {raw!r}") from None
