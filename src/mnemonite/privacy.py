"""Sensitivity of what memory holds, and redaction of secret text wherever it leaves memory.

Every episode and fact carries a `Sensitivity`: ``public``, ``internal`` or ``secret`` (the default
per tier is in `MemoryConfig.sensitivity`). Secret text becomes `MARKER` in exports, tracing spans,
tool results and prompts sent to an LLM endpoint (the judge). Showing it needs a `Reveal` passed to
that one call: no environment variable, config field or global switch turns redaction off, so a
deployment cannot lose it by accident.

Secrets nobody tagged are recognised at every tier's write (`SecretGuard`, over the recognisers of
`mnemonite.recognisers`): a card number, an IBAN, a key, a password said aloud is replaced in the
stored text by ``[secret: card number]`` before anything is stored, embedded, indexed or extracted,
and the record's sensitivity rises to ``secret`` (an e-mail address or a phone number raises it to
``internal``). What the record keeps of the value is `MemoryConfig.secrets_at_rest`: ``"mask"``
(nothing: the value is gone) or ``"keep"`` (the value, under the record's ``metadata["secrets"]``
or a fact's ``payload["secrets"]``, shown only to a call holding a `Reveal`: `reveal_text`).
An episode, message or fact that is secret only because of what was recognised reads as its masked
text; one the caller tagged secret (and a block or procedure, which keep no note) reads as `MARKER`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Literal, TypeVar

from pydantic import BaseModel

from mnemonite.errors import InvalidInputError, SecretScanError
from mnemonite.models.sensitivity import SECRETS_KEY, SENSITIVITIES, Sensitivity, SensitivityField, hidden_values
from mnemonite.recognisers import SecretScanner, SecretSpan, marker

__all__ = [
    "MARKER",
    "SECRETS_KEY",
    "SENSITIVITIES",
    "Guarded",
    "Reveal",
    "SecretGuard",
    "SecretsAtRest",
    "Sensitivity",
    "SensitivityField",
    "check_reveal",
    "hidden_values",
    "is_revealed",
    "redact",
    "redact_record",
    "reveal_text",
    "secret_note",
]

MARKER: Final = "[secret: redacted]"
# The text fields of each record kind that redaction replaces; ids, times and scores stay.
_TEXT_FIELDS: Final = ("content", "text", "summary", "object", "value")

_NOTES: Final = ("metadata", "payload")
_TEXTS: Final = {"metadata": "content", "payload": "text"}
_RANK: Final = {"public": 0, "internal": 1, "secret": 2}
SecretsAtRest = Literal["mask", "keep"]

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
    """An episode, fact (or any model with ``sensitivity``) with its text fields redacted when secret.

    With a `Reveal`, the values kept of recognised secrets are put back in the text. Without one, a
    record secret only because of what was recognised in it reads as stored (``[secret: PIN]`` where
    the value was) and one tagged secret reads as `MARKER`.
    """
    if is_revealed(reveal):
        return _revealed(record)
    note = secret_note(record)
    if getattr(record, "sensitivity", "secret") != "secret" or (note is not None and note.get("raised")):
        return record if note is None or not _has_values(note) else _without_values(record)
    fields = type(record).model_fields
    update: dict[str, object] = {name: MARKER for name in _TEXT_FIELDS if getattr(record, name, None) is not None}
    if "metadata" in fields:
        update["metadata"] = {}
    if "payload" in fields:
        update["payload"] = {}
    return record.model_copy(update={k: v for k, v in update.items() if k in fields})


def secret_note(record: object) -> dict[str, Any] | None:
    """What was recognised in a record (``{"raised": bool, "spans": [{"kind", "at", "value"?}]}``), or None."""
    for name in _NOTES:
        held = getattr(record, name, None)
        if isinstance(held, Mapping) and isinstance(note := held.get(SECRETS_KEY), dict):
            return note
    return None


def reveal_text(record: BaseModel, reveal: Reveal) -> str:
    """A record's text with the values kept of its recognised secrets put back (``secrets_at_rest="keep"``).

    Needs a `Reveal`; a value that was not kept (``"mask"``) stays a marker.
    """
    if not is_revealed(reveal):
        raise InvalidInputError("reveal_text needs a mnemonite.Reveal capability")
    for name in _NOTES:
        if (text_field := _TEXTS[name]) in type(record).model_fields:
            return _restore(str(getattr(record, text_field)), secret_note(record))
    raise InvalidInputError(f"a {type(record).__name__} keeps no recognised secrets")


def _has_values(note: Mapping[str, Any]) -> bool:
    return any(isinstance(span, dict) and "value" in span for span in note.get("spans", []))


def _without_values(record: R) -> R:
    name = next(n for n in _NOTES if isinstance(getattr(record, n, None), dict))
    return record.model_copy(update={name: hidden_values(getattr(record, name))})


def _revealed(record: R) -> R:
    note = secret_note(record)
    if note is None or not _has_values(note):
        return record
    name = next(n for n in _NOTES if isinstance(getattr(record, n, None), dict))
    text_field = _TEXTS[name]
    if text_field not in type(record).model_fields:
        return record
    return record.model_copy(update={text_field: _restore(str(getattr(record, text_field)), note)})


def _restore(text: str, note: Mapping[str, Any] | None) -> str:
    spans = [s for s in (note or {}).get("spans", []) if isinstance(s, dict) and "value" in s]
    for span in sorted(spans, key=lambda s: -int(s.get("at", 0))):
        at, shown = int(span.get("at", -1)), marker(str(span.get("kind", "")))
        if at >= 0 and text[at : at + len(shown)] == shown:
            text = text[:at] + str(span["value"]) + text[at + len(shown) :]
    return text


# -- recognised at the write boundary -------------------------------------------------------------


@dataclass(frozen=True)
class Guarded:
    """A text as it may be stored: recognised secrets masked, the sensitivity it raised, the note to keep."""

    text: str
    sensitivity: Sensitivity
    spans: tuple[dict[str, Any], ...] = field(default=())
    raised: bool = False

    def note(self) -> dict[str, Any] | None:
        """What the record keeps under ``secrets`` (None when nothing secret was found)."""
        return {"raised": self.raised, "spans": list(self.spans)} if self.spans else None

    def into(self, held: Mapping[str, Any] | None) -> dict[str, Any]:
        """``held`` (metadata or payload) with this note in place of any the caller gave."""
        kept = {k: v for k, v in (held or {}).items() if k != SECRETS_KEY}
        note = self.note()
        return {**kept, SECRETS_KEY: note} if note is not None else kept


class SecretGuard:
    """Recognises secrets in text on its way into memory and masks them (see the module's docstring)."""

    def __init__(self, scanner: SecretScanner | None = None, at_rest: SecretsAtRest = "mask") -> None:
        if at_rest not in ("mask", "keep"):
            raise InvalidInputError(f"secrets_at_rest must be 'mask' or 'keep', got {at_rest!r}")
        self.scanner = scanner or SecretScanner()
        self.at_rest = at_rest

    def text(self, text: str, sensitivity: Sensitivity) -> Guarded:
        """``text`` masked, and ``sensitivity`` raised by what was found in it (never lowered)."""
        spans = self._scan(text)
        if not spans:
            return Guarded(text, sensitivity)
        level = max((sensitivity, *(s.level for s in spans)), key=_RANK.__getitem__)
        secret = [s for s in spans if s.level == "secret"]
        masked, notes = self._mask(text, secret)
        raised = level == "secret" and sensitivity != "secret"
        return Guarded(masked, level, tuple(notes), raised)

    def texts(self, texts: Sequence[str], sensitivity: Sensitivity) -> tuple[list[str], Sensitivity]:
        """Several fields of one record (a block's value and description): each masked, one sensitivity.
        Values are not kept for these: only a record's main text keeps them."""
        masked, level = [], sensitivity
        for text in texts:
            guarded = self.text(text, sensitivity)
            masked.append(guarded.text)
            level = max(level, guarded.sensitivity, key=_RANK.__getitem__)
        return masked, level

    def data(self, value: Any, sensitivity: Sensitivity, kinds: list[str] | None = None) -> tuple[Any, Sensitivity]:
        """JSON-like data (a tool call's arguments, an event's payload, a record's metadata) with every string
        masked, a note of recognised secrets left as it is; ``kinds`` collects the kinds of what was masked."""
        if isinstance(value, str):
            guarded = self.text(value, sensitivity)
            if kinds is not None:
                kinds += [str(span["kind"]) for span in guarded.spans]
            return guarded.text, guarded.sensitivity
        if isinstance(value, Mapping):
            out: dict[Any, Any] = {}
            for key, item in value.items():
                out[key], sensitivity = (
                    (item, sensitivity) if key == SECRETS_KEY else self.data(item, sensitivity, kinds)
                )
            return out, sensitivity
        if isinstance(value, list | tuple):
            items = []
            for item in value:
                masked, sensitivity = self.data(item, sensitivity, kinds)
                items.append(masked)
            return items, sensitivity
        return value, sensitivity

    def _scan(self, text: str) -> list[SecretSpan]:
        try:
            return self.scanner.scan(text)
        except Exception as error:  # a recogniser of a pack failing must not let the clear text through
            raise SecretScanError(
                f"recognising secrets failed ({type(error).__name__}: {error}); nothing written"
            ) from error

    def _mask(self, text: str, spans: list[SecretSpan]) -> tuple[str, list[dict[str, Any]]]:
        parts, notes, last, length = [], [], 0, 0
        for span in spans:
            parts.append(text[last : span.start])
            length += span.start - last
            note: dict[str, Any] = {"kind": span.kind, "at": length}
            if self.at_rest == "keep":
                note["value"] = text[span.start : span.end]
            notes.append(note)
            shown = marker(span.kind)
            parts.append(shown)
            length += len(shown)
            last = span.end
        parts.append(text[last:])
        return "".join(parts), notes
