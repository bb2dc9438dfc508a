"""How sensitive a row is: ``public``, ``internal`` or ``secret`` (secret text is redacted on the way out)."""

from __future__ import annotations

from typing import Annotated, Any, Final, Literal, get_args

from pydantic import BeforeValidator, SerializationInfo

from mnemonite.errors import SensitivityError

__all__ = [
    "SECRETS_KEY",
    "SENSITIVITIES",
    "Sensitivity",
    "SensitivityField",
    "check_sensitivity",
    "hidden_values",
    "shown_values",
]

# Where a record keeps what was recognised in it: metadata (episodes, messages) or payload (facts).
SECRETS_KEY: Final = "secrets"

Sensitivity = Literal["public", "internal", "secret"]
SENSITIVITIES: tuple[str, ...] = get_args(Sensitivity)


def check_sensitivity(value: object, default: Sensitivity) -> Sensitivity:
    """``value`` when it is a sensitivity level, ``default`` when it is None; anything else is refused."""
    if value is None:
        return default
    if value not in SENSITIVITIES:
        raise SensitivityError(f"sensitivity must be one of {', '.join(SENSITIVITIES)}, got {value!r}")
    return value  # type: ignore[return-value]  # checked against the literal's values just above


def _level(value: object) -> Sensitivity:
    if value is None:
        raise SensitivityError(f"sensitivity must be one of {', '.join(SENSITIVITIES)}, got None")
    return check_sensitivity(value, "internal")


SensitivityField = Annotated[Sensitivity, BeforeValidator(_level)]
"""A model field holding a sensitivity: an unknown value raises `SensitivityError` itself."""


def hidden_values(held: dict[str, Any]) -> dict[str, Any]:
    """Metadata or a payload as it may be shown without a `Reveal`: the values kept of recognised secrets
    (``secrets_at_rest="keep"``) left out, their kinds and places kept."""
    note = held.get(SECRETS_KEY)
    if not isinstance(note, dict) or not any(isinstance(s, dict) and "value" in s for s in note.get("spans", [])):
        return held
    spans = [
        {k: v for k, v in span.items() if k != "value"} for span in note.get("spans", []) if isinstance(span, dict)
    ]
    return {**held, SECRETS_KEY: {**note, "spans": spans}}


def shown_values(held: dict[str, Any], info: SerializationInfo) -> dict[str, Any]:
    """A model's JSON form of metadata or a payload: kept secret values only with ``context={"reveal": True}``."""
    context = info.context if isinstance(info.context, dict) else {}
    return held if context.get("reveal") is True else hidden_values(held)
