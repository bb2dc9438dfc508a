"""Sensitivity of what memory holds, and redaction of secret text wherever it leaves memory.

Every episode and fact carries a `Sensitivity`: ``public``, ``internal`` or ``secret`` (the default
per tier is in `MemoryConfig.sensitivity`). Secret text becomes `MARKER` in exports, tracing spans,
tool results and prompts sent to an LLM endpoint (the judge). Showing it needs a `Reveal` passed to
that one call: no environment variable, config field or global switch turns redaction off, so a
deployment cannot lose it by accident.
"""

from __future__ import annotations

from typing import Final, TypeVar

from pydantic import BaseModel

from mnemonite.errors import InvalidInputError
from mnemonite.models.sensitivity import SENSITIVITIES, Sensitivity, SensitivityField

__all__ = [
    "MARKER",
    "SENSITIVITIES",
    "Reveal",
    "Sensitivity",
    "SensitivityField",
    "check_reveal",
    "is_revealed",
    "redact",
    "redact_record",
]

MARKER: Final = "[secret: redacted]"
# The text fields of each record kind that redaction replaces; ids, times and scores stay.
_TEXT_FIELDS: Final = ("content", "text", "summary", "object", "value")

R = TypeVar("R", bound=BaseModel)


class Reveal:
    """The capability to see secret text in one call: ``export_memory(..., reveal=Reveal("backup"))``.

    It says why (kept in the audit where the call writes one). Only an instance of this class
    reveals: ``True``, a string or a config value is refused.
    """

    __slots__ = ("reason",)

    def __init__(self, reason: str) -> None:
        if not isinstance(reason, str) or not reason.strip():
            raise InvalidInputError("Reveal needs a reason (why secret text may be shown to this call)")
        self.reason = reason.strip()

    def __repr__(self) -> str:
        return f"Reveal({self.reason!r})"


def check_reveal(reveal: object) -> Reveal | None:
    """``None`` or a `Reveal`; anything else (``True``, ``"yes"``) raises `InvalidInputError`."""
    if reveal is None or isinstance(reveal, Reveal):
        return reveal
    raise InvalidInputError(f"reveal must be a mnemonite.Reveal capability, got {type(reveal).__name__}")


def is_revealed(reveal: object) -> bool:
    """Whether this call may see secret text."""
    return check_reveal(reveal) is not None


def redact(text: str, sensitivity: str, reveal: Reveal | None = None) -> str:
    """``text``, or `MARKER` when it is secret and the call holds no `Reveal`."""
    if sensitivity == "secret" and not is_revealed(reveal):
        return MARKER
    return text


def redact_record(record: R, reveal: Reveal | None = None) -> R:
    """An episode, fact (or any model with ``sensitivity``) with its text fields redacted when secret."""
    if getattr(record, "sensitivity", "secret") != "secret" or is_revealed(reveal):
        return record
    fields = type(record).model_fields
    update: dict[str, object] = {name: MARKER for name in _TEXT_FIELDS if getattr(record, name, None) is not None}
    if "metadata" in fields:
        update["metadata"] = {}
    if "payload" in fields:
        update["payload"] = {}
    return record.model_copy(update={k: v for k, v in update.items() if k in fields})
