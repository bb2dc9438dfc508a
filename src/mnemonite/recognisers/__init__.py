"""Secrets recognised in text without a tag: card numbers, IBANs, keys, passwords said aloud.

People paste secrets into chats and nobody tags them. Every tier's write passes its text through a
`SecretScanner` (see `mnemonite.privacy.SecretGuard`); what it finds is a `SecretSpan` of a *kind*
("card number", "API key", ...) and a *level*: ``secret`` spans are masked as ``[secret: card number]``
before anything is stored, embedded or indexed, ``internal`` ones (e-mail addresses, phone numbers)
only raise the record's sensitivity.

Recognition is offline and bounded: regular expressions without nested repetition, each candidate
confirmed by the check its format publishes (Luhn for cards and Canadian SINs, mod 97 for IBANs,
Verhoeff for Aadhaar numbers, the 11-test for Dutch BSNs, the DNI letter, the CPF digits) or by the
words announcing it ("my password is ...") and the randomness of the value (for tokens).

A locale pack adds patterns of its own (`SecretPattern`, in `LocalePack.secrets`); any object with a
``find(text)`` method that yields `SecretSpan`\\ s is a `Recogniser` too.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterable, Sequence
from typing import Final

from mnemonite.errors import InvalidInputError
from mnemonite.recognisers.announced import ANNOUNCED
from mnemonite.recognisers.base import (
    Gated,
    PatternRecogniser,
    Recogniser,
    SecretPattern,
    SecretSpan,
    marker,
)
from mnemonite.recognisers.checks import MARKERS, cpf, dni, iban, luhn, mod11, verhoeff
from mnemonite.recognisers.patterns import DEFAULT_PATTERNS

__all__ = [
    "DEFAULT_RECOGNISERS",
    "PatternRecogniser",
    "Recogniser",
    "SecretPattern",
    "SecretScanner",
    "SecretSpan",
    "cpf",
    "dni",
    "iban",
    "luhn",
    "marker",
    "mod11",
    "verhoeff",
]

_NO_DIGITS = str.maketrans("", "", "0123456789")
_RUNS = re.compile(r"[A-Za-z0-9_\-.+/=~:]{16,}")  # what a key or token is written in, unbroken
_GROUPS = re.compile(r"\d(?:[ .()-]{0,2}\d)*")  # digits written as one number: "4111 1111", "(415) 555-0100"
_NOT_DIGITS = str.maketrans("", "", " .()-")

DEFAULT_RECOGNISERS: Final[tuple[Recogniser, ...]] = (*ANNOUNCED, *(PatternRecogniser(p) for p in DEFAULT_PATTERNS))


class SecretScanner:
    """Runs recognisers over a text and keeps one span where several overlap: secret before internal,
    then the longer."""

    def __init__(self, recognisers: Sequence[Recogniser] = DEFAULT_RECOGNISERS) -> None:
        self.recognisers = tuple(recognisers)
        # each recogniser with what a text must hold for it to run; a text looks for every hint once, then only
        # the recognisers one of its hints names, or that need no hint and whose digits the text holds, are tested
        self._gates = [
            (r, r.min_digits, r.min_run, r.grouped) if isinstance(r, Gated) else (r, 0, 0, False)
            for r in self.recognisers
        ]
        by_hint: dict[str, list[int]] = {}
        unhinted: list[tuple[int, int]] = []  # (min_digits, position)
        for at, r in enumerate(self.recognisers):
            hints = r.hints if isinstance(r, Gated) else ()
            for hint in hints:
                by_hint.setdefault(hint, []).append(at)
            if not hints:
                unhinted.append((self._gates[at][1], at))
        unhinted.sort()
        self._by_hint = {hint: tuple(ats) for hint, ats in by_hint.items()}
        self._unhinted_digits = [needs for needs, _ in unhinted]
        self._unhinted = [at for _, at in unhinted]
        self._hints = frozenset(by_hint)

    @classmethod
    def with_patterns(cls, patterns: Iterable[SecretPattern], extra: Iterable[Recogniser] = ()) -> SecretScanner:
        """The default recognisers, ``patterns`` (a locale pack's own) and ``extra`` ones."""
        for recogniser in extra:
            if not isinstance(recogniser, Recogniser):
                raise InvalidInputError(f"a recogniser needs a find(text) method, got {type(recogniser).__name__}")
        return cls((*DEFAULT_RECOGNISERS, *(PatternRecogniser(p) for p in patterns), *extra))

    def scan(self, text: str) -> list[SecretSpan]:
        """The spans of ``text``, in order, none overlapping another."""
        if not text or text.isspace():
            return []
        found = self._found(text)
        if "[secret: " in text:  # a value already masked is not found again (a second scan, a quoted marker)
            held = [m.span() for m in MARKERS.finditer(text)]
            found = [s for s in found if not any(s.start < end and start < s.end for start, end in held)]
        if len(found) < 2:
            return found
        found.sort(key=lambda s: (s.level != "secret", -(s.end - s.start), s.start))
        starts: list[int] = []  # the kept spans, by start: a new one must end before the next and start after the last
        kept: list[SecretSpan] = []
        for span in found:
            at = bisect.bisect_right(starts, span.start)
            if (at == 0 or kept[at - 1].end <= span.start) and (at == len(kept) or span.end <= kept[at].start):
                starts.insert(at, span.start)
                kept.insert(at, span)
        return kept

    def _found(self, text: str) -> list[SecretSpan]:
        """What the recognisers a text can hold find in it (overlapping, unordered)."""
        lowered, digits = text.lower(), len(text) - len(text.translate(_NO_DIGITS))
        chosen = set(self._unhinted[: bisect.bisect_right(self._unhinted_digits, digits)])
        for hint in self._hints:
            if hint in lowered:
                chosen.update(self._by_hint[hint])
        measures = _Measures(text)
        found: list[SecretSpan] = []
        for at in sorted(chosen):  # in the recognisers' order: the same spans kept whichever tie
            recogniser, needs, needs_run, grouped = self._gates[at]
            if digits >= needs and measures.holds(needs_run, needs if grouped else 0):
                found.extend(recogniser.find(text))
        return found


class _Measures:
    """What some recognisers need a text to hold, measured once and only when asked: its longest key-like run,
    and the most digits it writes as one number."""

    def __init__(self, text: str) -> None:
        self._text = text
        self._run = self._group = -1

    def holds(self, run: int, group: int) -> bool:
        if run:
            if self._run < 0:
                self._run = max((len(m.group()) for m in _RUNS.finditer(self._text)), default=0)
            if self._run < run:
                return False
        if group:
            if self._group < 0:
                self._group = max(
                    (len(m.group().translate(_NOT_DIGITS)) for m in _GROUPS.finditer(self._text)), default=0
                )
            if self._group < group:
                return False
        return True
