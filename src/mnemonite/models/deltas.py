"""Typed memory deltas: the only way facts change.

Provenance (``source_episode_ids``, ``promotion_ts``, ``rule_id``, ``confidence``) is
mandatory on every variant, and ``replaces`` on update and delete, so a malformed delta
cannot land. ``delta_id`` makes applying idempotent: the same delta applied twice is
applied once.
"""

from __future__ import annotations

from typing import Annotated, Any, ClassVar, Literal

from pydantic import AwareDatetime, Field, TypeAdapter, ValidationError

from mnemonite.errors import DeltaValidationError, MnemoniteError
from mnemonite.models.base import Model, describe, new_id

__all__ = ["AddDelta", "DeleteDelta", "MemoryDelta", "NoopDelta", "UpdateDelta", "parse_delta"]

Confidence = Annotated[float, Field(ge=0.0, le=1.0)]
Ids = Annotated[list[Annotated[str, Field(min_length=1)]], Field(min_length=1)]


class _Delta(Model):
    error_type: ClassVar[type[MnemoniteError]] = DeltaValidationError

    delta_id: str = Field(default_factory=new_id, min_length=1)
    source_episode_ids: list[Annotated[str, Field(min_length=1)]]
    promotion_ts: AwareDatetime
    rule_id: str = Field(min_length=1)
    confidence: Confidence


class AddDelta(_Delta):
    """Insert a new fact."""

    kind: Literal["add"] = "add"
    fact_payload: dict[str, Any]


class UpdateDelta(_Delta):
    """Close the facts named in ``replaces`` and insert their successor."""

    kind: Literal["update"] = "update"
    replaces: Ids
    fact_payload: dict[str, Any]


class DeleteDelta(_Delta):
    """Close the facts named in ``replaces``; nothing is inserted."""

    kind: Literal["delete"] = "delete"
    replaces: Ids


class NoopDelta(_Delta):
    """Change nothing; leave an audit row."""

    kind: Literal["noop"] = "noop"


MemoryDelta = Annotated[AddDelta | UpdateDelta | DeleteDelta | NoopDelta, Field(discriminator="kind")]
_ADAPTER: TypeAdapter[MemoryDelta] = TypeAdapter(MemoryDelta)


def parse_delta(value: object) -> MemoryDelta:
    """Validate a delta object or a mapping/JSON into a MemoryDelta, or raise DeltaValidationError."""
    if isinstance(value, AddDelta | UpdateDelta | DeleteDelta | NoopDelta):
        return value
    try:
        if isinstance(value, str | bytes):
            return _ADAPTER.validate_json(value)
        return _ADAPTER.validate_python(value)
    except ValidationError as error:
        raise DeltaValidationError(f"invalid MemoryDelta: {describe(error)}") from None
