"""How sensitive a row is: ``public``, ``internal`` or ``secret`` (secret text is redacted on the way out)."""

from __future__ import annotations

from typing import Annotated, Literal, get_args

from pydantic import BeforeValidator

from mnemonite.errors import SensitivityError

__all__ = ["SENSITIVITIES", "Sensitivity", "SensitivityField", "check_sensitivity"]

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
