"""`MemoryConfig`: every setting in one frozen object. `from_env` is the only place that reads the environment."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import ClassVar

from pydantic import Field

from memstrata.errors import ConfigurationError, MemstrataError
from memstrata.models.base import Model

DEFAULT_URL = "sqlite:///memstrata.db"
_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


class MemoryConfig(Model):
    """How a `Memory` opens and behaves.

    - ``url``: ``sqlite:///path/to/file.db`` (relative), ``sqlite:////abs/path.db``, or ``sqlite:///:memory:``.
    - ``track_access``: reads update access counts and last-access times (salience recency uses them).
    - ``consolidate_on_put``: after each put, run the consolidation rules that are due.
    - ``max_episodes_per_run``: the most episodes one consolidation pass claims.
    """

    error_type: ClassVar[type[MemstrataError]] = ConfigurationError

    url: str = DEFAULT_URL
    track_access: bool = True
    consolidate_on_put: bool = False
    max_episodes_per_run: int = Field(default=50_000, ge=1)

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None, **overrides: object) -> MemoryConfig:
        """Read ``MEMSTRATA_URL``, ``MEMSTRATA_TRACK_ACCESS`` and ``MEMSTRATA_CONSOLIDATE_ON_PUT``."""
        env = os.environ if environ is None else environ
        values: dict[str, object] = {}
        if "MEMSTRATA_URL" in env:
            values["url"] = env["MEMSTRATA_URL"]
        for name, key in (
            ("track_access", "MEMSTRATA_TRACK_ACCESS"),
            ("consolidate_on_put", "MEMSTRATA_CONSOLIDATE_ON_PUT"),
        ):
            if key in env:
                values[name] = _flag(key, env[key])
        values.update({k: v for k, v in overrides.items() if v is not None})
        return cls.model_validate(values)


def _flag(key: str, raw: str) -> bool:
    text = raw.strip().lower()
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    raise ConfigurationError(f"{key} must be true or false, got {raw!r}")
