"""`MemoryConfig`: every setting in one frozen object. `from_env` and `default_cache_dir` are the only places
that read the environment."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import ClassVar, Literal

from pydantic import Field

from mnemonite.errors import ConfigurationError, MnemoniteError
from mnemonite.models.base import Model
from mnemonite.models.concepts import ConceptConfig
from mnemonite.models.conflict import ConflictThresholds
from mnemonite.models.lifecycle import LifecycleWindows
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
      next process finds them by meaning at once (``close(finish_indexing=False)`` skips it once).
    - ``search``: the default `SearchOptions` (fusion weights, boosts).
    - ``search_cache_bytes``: the memory the search engine may keep per process for users' in-memory
      full-text indexes and vectors, least recently used out first (the user being searched stays).
    - ``locale``: the locale pack `semantic.remember` reads change markers and predicates from
      (``"en"`` ships; `define_locale_pack` adds more).
    - ``conflicts``: the embedding-zone thresholds of `semantic.remember` (`ConflictThresholds`).
    - ``salience``: the decay/boost engine of facts (`SalienceConfig`: decay rate per day, boost
      per access, min salience, consolidation decay).
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
    search: SearchOptions = Field(default_factory=SearchOptions)
    search_cache_bytes: int = Field(default=CACHE_BYTES, ge=0)
    locale: str = Field(default="en", min_length=1)
    conflicts: ConflictThresholds = Field(default_factory=ConflictThresholds)
    salience: SalienceConfig = Field(default_factory=SalienceConfig)
    # -- concept graph, lifecycle tiers --
    concepts: ConceptConfig = Field(default_factory=ConceptConfig)
    lifecycle: LifecycleWindows = Field(default_factory=LifecycleWindows)
    track_lifecycle: bool = False

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None, **overrides: object) -> MemoryConfig:
        """Read ``MNEMONITE_URL``, ``_TRACK_ACCESS``, ``_CONSOLIDATE_ON_PUT``, ``_INDEX_IN_BACKGROUND``,
        ``_INDEX_ON_CLOSE``, ``_EMBEDDER`` and ``_EMBEDDER_STRATEGY`` (all prefixed ``MNEMONITE``)."""
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
        values.update({k: v for k, v in overrides.items() if v is not None})  # explicit arguments win
        return cls.model_validate(values)


def default_cache_dir(environ: Mapping[str, str] | None = None) -> Path:
    """Where files derived from models are kept (the int8 query model): ``MNEMONITE_CACHE_DIR``,
    else ``$XDG_CACHE_HOME/mnemonite``, else ``~/.cache/mnemonite``."""
    env = os.environ if environ is None else environ
    if env.get("MNEMONITE_CACHE_DIR"):
        return Path(env["MNEMONITE_CACHE_DIR"])
    return Path(env.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "mnemonite"


def _flag(key: str, raw: str) -> bool:
    text = raw.strip().lower()
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    raise ConfigurationError(f"{key} must be true or false, got {raw!r}")
