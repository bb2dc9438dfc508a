"""What a recogniser finds, and recognisers written as data (`SecretPattern`)."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Final, Literal, Protocol, runtime_checkable

from pydantic import Field, field_validator

from mnemonite.errors import InvalidInputError
from mnemonite.models.base import Model
from mnemonite.recognisers import checks

__all__ = ["Check", "Level", "PatternRecogniser", "Recogniser", "SecretPattern", "SecretSpan", "marker"]

Level = Literal["secret", "internal"]
Check = Literal[
    "luhn", "iban", "verhoeff", "mod11", "dni", "cpf", "entropy", "password", "strong password", "passphrase", "none"
]


def marker(kind: str) -> str:
    """What a secret of ``kind`` reads as wherever it is not revealed: ``[secret: card number]``."""
    return f"[secret: {kind}]"


@dataclass(frozen=True, order=True)
class SecretSpan:
    """A value found in a text: ``text[start:end]``, of ``kind``, at ``level``."""

    start: int
    end: int
    kind: str
    level: Level = "secret"


@runtime_checkable
class Recogniser(Protocol):
    """Finds the spans of one kind of sensitive value in a text."""

    def find(self, text: str) -> Iterable[SecretSpan]: ...


_CHECKS: Final[dict[str, Callable[[str], bool]]] = {
    "luhn": checks.luhn,
    "iban": checks.iban,
    "verhoeff": checks.verhoeff,
    "mod11": checks.mod11,
    "dni": checks.dni,
    "cpf": checks.cpf,
    "entropy": checks.random_enough,
    "password": checks.password_like,
    "strong password": checks.password_strong,
    "passphrase": checks.passphrase,
    "none": lambda value: True,
}


class SecretPattern(Model):
    """A recogniser written as data (what a locale pack adds): a regular expression whose group
    ``value`` (else the whole match) is the span, confirmed by ``check``."""

    kind: str = Field(min_length=1, max_length=30, pattern=r"^[A-Za-z][A-Za-z ]*$", description="what it is: 'tax id'")
    pattern: str = Field(min_length=1)
    level: Level = "secret"
    check: Check = "none"
    ignore_case: bool = False
    hints: list[str] = Field(
        default_factory=list, description="lower-case strings of which one must occur in the text for it to run"
    )
    min_digits: int = Field(default=0, ge=0, description="the digits a text must hold for the pattern to run")
    min_run: int = Field(
        default=0, ge=0, description="a key or token: the text must hold a run of this many letters, digits, _ or -"
    )
    grouped: bool = Field(
        default=False,
        description="the ``min_digits`` are written together, apart by at most two of space . - ( ): a number, "
        "not digits scattered over the text (a cheaper test that skips most texts)",
    )

    @field_validator("pattern")
    @classmethod
    def _compiles(cls, value: str) -> str:
        try:
            re.compile(value)
        except re.error as error:
            raise InvalidInputError(f"secret pattern {value!r} does not compile: {error}") from None
        return value


class Gated:
    """A recogniser that runs only on texts that can hold its kind: `SecretScanner` tests ``hints`` (one must
    occur), ``min_digits`` and ``min_run`` before any expression runs."""

    hints: tuple[str, ...] = ()
    min_digits: int = 0
    min_run: int = 0
    grouped: bool = False  # the min_digits stand together (see `SecretPattern.grouped`)

    def find(self, text: str) -> Iterable[SecretSpan]:
        raise NotImplementedError


class PatternRecogniser(Gated):
    """A `SecretPattern` compiled: finds its spans and keeps those its check confirms."""

    def __init__(self, spec: SecretPattern) -> None:
        self.spec = spec
        self._regex = re.compile(spec.pattern, re.IGNORECASE if spec.ignore_case else 0)
        self._check = _CHECKS[spec.check]
        self._group = "value" if "value" in self._regex.groupindex else 0
        self.hints = tuple(spec.hints)
        self.min_digits, self.min_run, self.grouped = spec.min_digits, spec.min_run, spec.grouped

    def find(self, text: str) -> Iterable[SecretSpan]:
        for match in self._regex.finditer(text):
            start, end = match.span(self._group)
            if start < end and self._check(text[start:end]):
                yield SecretSpan(start, end, self.spec.kind, self.spec.level)


def pattern(
    kind: str,
    regex: str,
    check: Check = "none",
    *,
    level: Level = "secret",
    ignore_case: bool = False,
    hints: str = "",
    digits: int = 0,
    run: int = 0,
    grouped: bool = False,
) -> SecretPattern:
    """A `SecretPattern`, ``hints`` written as ``"a|b"``."""
    return SecretPattern(
        kind=kind, pattern=regex, check=check, level=level, ignore_case=ignore_case,
        hints=hints.split("|") if hints else [], min_digits=digits, min_run=run, grouped=grouped,
    )  # fmt: skip
