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
import math
import re
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Final, Literal, Protocol, runtime_checkable

from pydantic import Field, field_validator

from mnemonite.errors import InvalidInputError
from mnemonite.models.base import Model

__all__ = [
    "DEFAULT_RECOGNISERS",
    "PatternRecogniser",
    "Recogniser",
    "SecretPattern",
    "SecretScanner",
    "SecretSpan",
    "marker",
]

Level = Literal["secret", "internal"]
Check = Literal["luhn", "iban", "verhoeff", "mod11", "dni", "cpf", "entropy", "password", "none"]
_NO_DIGITS = str.maketrans("", "", "0123456789")
_MARKER_KINDS = re.compile(r"\[secret: [A-Za-z][A-Za-z ]{1,30}\]")


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


# -- the published checks -----------------------------------------------------------------------


def _digits(value: str) -> str:
    return "".join(c for c in value if c.isdigit())


def luhn(value: str) -> bool:
    digits = [int(c) for c in _digits(value)]
    total = sum(digits[-1::-2]) + sum(sum(divmod(2 * d, 10)) for d in digits[-2::-2])
    return bool(digits) and total % 10 == 0


_IBAN_LENGTHS: Final = dict(
    item.split(":")
    for item in (
        "AD:24 AE:23 AL:28 AT:20 AZ:28 BA:20 BE:16 BG:22 BH:22 BR:29 BY:28 CH:21 CR:22 CY:28 CZ:24 DE:22 DK:18"
        " DO:28 EE:20 EG:29 ES:24 FI:18 FO:18 FR:27 GB:22 GE:22 GI:23 GL:18 GR:27 GT:28 HR:21 HU:28 IE:22 IL:23"
        " IQ:23 IS:26 IT:27 JO:30 KW:30 KZ:20 LB:28 LC:32 LI:21 LT:20 LU:20 LV:21 MC:27 MD:24 ME:22 MK:19 MR:27"
        " MT:31 MU:30 NL:18 NO:15 PK:24 PL:28 PS:29 PT:25 QA:29 RO:24 RS:22 SA:24 SC:31 SE:24 SI:19 SK:24 SM:27"
        " ST:25 SV:28 TL:23 TN:24 TR:26 UA:29 VA:22 VG:24 XK:20"
    ).split()
)


def iban(value: str) -> bool:
    code = re.sub(r"[\s-]", "", value).upper()
    if _IBAN_LENGTHS.get(code[:2]) != str(len(code)) or not code.isalnum():
        return False
    moved = code[4:] + code[:4]
    return int("".join(str(int(c, 36)) for c in moved)) % 97 == 1


_VERHOEFF_D = [
    [0, 1, 2, 3, 4, 5, 6, 7, 8, 9],
    [1, 2, 3, 4, 0, 6, 7, 8, 9, 5],
    [2, 3, 4, 0, 1, 7, 8, 9, 5, 6],
    [3, 4, 0, 1, 2, 8, 9, 5, 6, 7],
    [4, 0, 1, 2, 3, 9, 5, 6, 7, 8],
    [5, 9, 8, 7, 6, 0, 4, 3, 2, 1],
    [6, 5, 9, 8, 7, 1, 0, 4, 3, 2],
    [7, 6, 5, 9, 8, 2, 1, 0, 4, 3],
    [8, 7, 6, 5, 9, 3, 2, 1, 0, 4],
    [9, 8, 7, 6, 5, 4, 3, 2, 1, 0],
]
_VERHOEFF_P = [
    [0, 1, 2, 3, 4, 5, 6, 7, 8, 9],
    [1, 5, 7, 6, 2, 8, 3, 0, 9, 4],
    [5, 8, 0, 3, 7, 9, 6, 1, 4, 2],
    [8, 9, 1, 6, 0, 4, 3, 5, 2, 7],
    [9, 4, 5, 3, 1, 2, 6, 8, 7, 0],
    [4, 2, 8, 6, 5, 7, 3, 9, 0, 1],
    [2, 7, 9, 3, 8, 0, 6, 4, 1, 5],
    [7, 0, 4, 6, 9, 1, 3, 2, 5, 8],
]


def verhoeff(value: str) -> bool:
    check = 0
    for i, c in enumerate(reversed(_digits(value))):
        check = _VERHOEFF_D[check][_VERHOEFF_P[i % 8][int(c)]]
    return check == 0


def mod11(value: str) -> bool:
    """The Dutch BSN's 11-test: 9 digits weighted 9..2 and -1 sum to a multiple of 11."""
    digits = [int(c) for c in _digits(value)]
    if len(digits) != 9:
        return False
    return (sum(d * w for d, w in zip(digits, range(9, 1, -1), strict=False)) - digits[8]) % 11 == 0


def dni(value: str) -> bool:
    """A Spanish DNI (8 digits) or NIE (X/Y/Z and 7 digits) with its check letter."""
    code = re.sub(r"[\s-]", "", value).upper()
    body = code[:-1].replace("X", "0").replace("Y", "1").replace("Z", "2")
    return body.isdigit() and "TRWAGMYFPDXBNJZSQVHLCKE"[int(body) % 23] == code[-1]


def cpf(value: str) -> bool:
    digits = [int(c) for c in _digits(value)]
    if len(digits) != 11 or len(set(digits)) == 1:
        return False
    for n in (9, 10):
        total = sum(d * w for d, w in zip(digits[:n], range(n + 1, 1, -1), strict=True))
        if (total * 10 % 11) % 10 != digits[n]:
            return False
    return True


def entropy(value: str) -> float:
    """Shannon entropy of the characters, in bits per character."""
    counts = Counter(value)
    return -sum(n / len(value) * math.log2(n / len(value)) for n in counts.values())


def random_enough(value: str) -> bool:
    """A token rather than a word, a placeholder or a path: mixed letters and digits, varied characters."""
    if len(value) < 16 or _PLACEHOLDER.search(value):
        return False
    has_digit = any(c.isdigit() for c in value)
    has_alpha = any(c.isalpha() for c in value)
    return has_digit and has_alpha and len(set(value)) >= 10 and entropy(value) >= 3.2


_PLACEHOLDER = re.compile(r"(?i)x{4}|\.{3}|your|example|placeholder|redacted|<|>|\*{3}|0{6}|abcdef|123456")
# Words after "my password is" that describe it rather than give it.
_NOT_PASSWORDS: Final = frozenset(
    """a an the my your his her our their its this that it same different too so very not no never still
    weak strong long short secure insecure safe unsafe wrong right correct incorrect expired changed saved stored
    written reset required needed easy hard simple complicated complex good bad fine ok okay great terrible awful
    something nothing anything everything what which where when how why who whatever there here in on at for to of
    with without from by about like just also only really now then again already always case sensitive
    protected encrypted hidden visible blank empty set unset forgotten lost stolen leaked compromised managed
    being getting going changing different somewhere someplace literally basically probably definitely actually
    in secret private confidential personal below above attached following""".split()
)


def _password(value: str) -> bool:
    word = value.strip("\"'`\u201c\u201d\u2018\u2019.,;:!?()[]{}")
    if len(word) < 4 or word.lower() in _NOT_PASSWORDS or _PLACEHOLDER.search(word) or _MARKER_KINDS.search(word):
        return False
    return not word.isalpha() or len(word) >= 6 or word.lower() != word


_CHECKS: Final[dict[str, Callable[[str], bool]]] = {
    "luhn": luhn,
    "iban": iban,
    "verhoeff": verhoeff,
    "mod11": mod11,
    "dni": dni,
    "cpf": cpf,
    "entropy": random_enough,
    "password": _password,
    "none": lambda value: True,
}


# -- patterns -------------------------------------------------------------------------------------


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

    @field_validator("pattern")
    @classmethod
    def _compiles(cls, value: str) -> str:
        try:
            re.compile(value)
        except re.error as error:
            raise InvalidInputError(f"secret pattern {value!r} does not compile: {error}") from None
        return value


class PatternRecogniser:
    """A `SecretPattern` compiled: finds its spans and keeps those its check confirms."""

    def __init__(self, spec: SecretPattern) -> None:
        self.spec = spec
        self._regex = re.compile(spec.pattern, re.IGNORECASE if spec.ignore_case else 0)
        self._check = _CHECKS[spec.check]
        self._group = "value" if "value" in self._regex.groupindex else 0
        self._words = tuple(spec.hints)

    def may_match(self, lowered: str, digits: int) -> bool:
        """Whether the text can hold a match at all (a cheap test before the expression runs)."""
        if digits < self.spec.min_digits:
            return False
        return not self._words or any(word in lowered for word in self._words)

    def find(self, text: str) -> Iterable[SecretSpan]:
        for match in self._regex.finditer(text):
            start, end = match.span(self._group)
            if start < end and self._check(text[start:end]):
                yield SecretSpan(start, end, self.spec.kind, self.spec.level)


_SEP = r"[ \t]?"  # one space between the words that announce a value
_FOR = r"(?:\s+(?:for|to|of|on|at)\s+(?:the\s+|my\s+|our\s+)?[\w.@'&-]{1,30}(?:\s[\w.@'&-]{1,20})?)?"
_SAYS = r"\s*(?:is|was|=|:|->|=>|is\s+now|will\s+be|'s|\u2019s|of)?\s*[:=]?\s*[\"'`\u201c\u2018]?"
_TOKEN_CHARS = r"[A-Za-z0-9_\-./+=~]"
_CARD_START = r"(?:4\d|5[1-5]|2[2-7]|3[47]|3[068]|6[0245]|35|62)"


def _p(
    kind: str,
    pattern: str,
    check: Check = "none",
    level: Level = "secret",
    ignore_case: bool = False,
    hints: str = "",
    digits: int = 0,
) -> SecretPattern:
    return SecretPattern(
        kind=kind,
        pattern=pattern,
        check=check,
        level=level,
        ignore_case=ignore_case,
        hints=hints.split("|") if hints else [],
        min_digits=digits,
    )


DEFAULT_PATTERNS: Final[tuple[SecretPattern, ...]] = (
    # private keys: the whole PEM block (an unterminated one to the end of its base64 lines)
    _p(
        "private key",
        r"-----BEGIN [A-Z ]{0,20}PRIVATE KEY(?: BLOCK)?-----(?:[\s\S]{0,20000}?-----END [A-Z ]{0,20}"
        r"PRIVATE KEY(?: BLOCK)?-----|(?:\s*[A-Za-z0-9+/=:,-]{1,100}){1,400})",
        hints="-----begin",
    ),
    # keys and tokens with a published prefix
    _p("API key", r"(?<![\w-])sk-ant-(?:api|admin|sid)\d{2}-[A-Za-z0-9_\-]{20,}", "entropy", hints="sk-ant-"),
    _p("API key", r"(?<![\w-])sk-(?!ant-)(?:proj-|svcacct-|admin-|None-)?[A-Za-z0-9_\-]{20,}", "entropy", hints="sk-"),
    _p(
        "API key",
        r"(?<!\w)(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,})",
        "entropy",
        hints="ghp_|gho_|ghu_|ghs_|ghr_|github_pat_",
    ),
    _p(
        "API key",
        r"(?<![A-Z0-9])(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}(?![A-Z0-9])",
        "entropy",
        hints="akia|asia|abia|acca",
    ),
    _p("API key", r"(?<![\w-])AIza[0-9A-Za-z_\-]{35}(?![\w-])", "entropy", hints="aiza"),
    _p("API key", r"(?<![\w-])xox[abposr]-[A-Za-z0-9-]{10,}", "entropy", hints="xox"),
    _p("API key", r"(?<!\w)(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}", "entropy", hints="_live_|_test_"),
    _p(
        "API key",
        r"(?<!\w)(?:glpat-[A-Za-z0-9_\-]{20}|npm_[A-Za-z0-9]{36}|hf_[A-Za-z0-9]{30,}|SG\.[\w-]{22}\.[\w-]{43})",
        hints="glpat-|npm_|hf_|sg.",
    ),
    _p("API key", r"(?<![\w.-])eyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}", hints="eyj"),
    # an AWS secret access key or any token announced as one
    _p(
        "API key",
        r"(?:aws_secret_access_key|secret[_ ]access[_ ]key)"
        + _SAYS
        + r"(?P<value>[A-Za-z0-9/+=]{40})(?![A-Za-z0-9/+=])",
        ignore_case=True,
        hints="secret",
    ),
    _p(
        "API key",
        r"\b(?:api[_ -]?key|api[_ -]?token|access[_ -]?token|auth[_ -]?token|refresh[_ -]?token|token|secret"
        r"|secret[_ -]?key|client[_ -]?secret|bearer|authorization:\s*bearer)"
        r"[\"']?" + _FOR + _SAYS + r"(?P<value>" + _TOKEN_CHARS + r"{16,200})",
        "entropy",
        ignore_case=True,
        hints="key|token|secret|bearer",
    ),
    # payment cards: 13-19 digits in the card networks' ranges, Luhn-valid, grouped as cards are
    _p(
        "card number",
        r"(?<![\d.,/-])(?:" + _CARD_START + r"\d{2}(?:[ -]?\d{4}){2}[ -]?\d{4}(?:[ -]?\d{1,3})?"
        r"|3[47]\d{2}[ -]?\d{6}[ -]?\d{5}|3[068]\d{2}[ -]?\d{6}[ -]?\d{4})(?![\d.,]\d|-\d)",
        "luhn",
        digits=12,
    ),
    _p(
        "IBAN",
        r"(?<![A-Za-z0-9])[A-Za-z]{2}\d{2}(?:[ -]?[A-Za-z0-9]{4}){2,7}(?:[ -]?[A-Za-z0-9]{1,3})?(?![A-Za-z0-9])",
        "iban",
        digits=4,
    ),
    # government identifiers: those with a checksum bare, the others only announced
    _p("government id", r"(?<![\d-])(?!000|666|9\d\d)\d{3}-(?!00)\d{2}-(?!0000)\d{4}(?![\d-])", digits=9),
    _p(
        "government id",
        r"(?<![A-Za-z0-9])(?!BG|GB|NK|KN|TN|NT|ZZ)[A-CEGHJ-PR-TW-Z][A-CEGHJ-NPR-TW-Z] ?\d{2} ?\d{2} ?\d{2}"
        r" ?[A-D](?![A-Za-z0-9])",
        digits=6,
    ),
    _p("government id", r"(?<![\w-])(?:\d{8}|[XYZ]\d{7})-?[A-Z](?![\w-])", "dni", digits=7),
    _p("government id", r"(?<![\d.])\d{3}\.\d{3}\.\d{3}-\d{2}(?![\d-])", "cpf", digits=11),
    _p("government id", r"(?<![\d ])[2-9]\d{3} \d{4} \d{4}(?![\d ]\d)", "verhoeff", digits=12),
    _p(
        "government id",
        r"\b(?:bsn|burgerservicenummer|sofi)\b\D{0,20}(?P<value>\d{9})\b",
        "mod11",
        ignore_case=True,
        digits=9,
        hints="bsn|burgerservicenummer|sofi",
    ),
    _p(
        "government id",
        r"\b(?:aadhaar|aadhar)\b\D{0,20}(?P<value>[2-9]\d{3} ?\d{4} ?\d{4})\b",
        "verhoeff",
        ignore_case=True,
        digits=12,
        hints="aadha",
    ),
    _p("government id", r"\bcpf\b\D{0,20}(?P<value>\d{11})\b", "cpf", ignore_case=True, digits=11, hints="cpf"),
    _p(
        "government id",
        r"\b(?:sin|social insurance(?: number)?|nas)\b\D{0,20}(?P<value>\d{3}[ -]?\d{3}[ -]?\d{3})\b",
        "luhn",
        ignore_case=True,
        digits=9,
        hints="sin|social|nas",
    ),
    _p(
        "government id",
        r"\b(?:ssn|social security(?: number| no\.?| #)?|passport(?: number| no\.?| #)?|national id"
        r"(?: number)?|tax id|tax file number|tfn|driver'?s licen[cs]e(?: number| no\.?)?|licen[cs]e number|nino"
        r"|ni number|national insurance(?: number)?|personnummer|steuer-?id)\b\D{0,16}?"
        r"(?P<value>[A-Z]{0,3}\d(?:[ -]?\d|[A-Z0-9]){4,17})(?![A-Za-z0-9])",
        ignore_case=True,
        digits=5,
        hints="ssn|social|passport|national|tax|tfn|licen|nino|ni number|personnummer|steuer",
    ),
    # passwords and PINs said aloud
    _p(
        "password",
        r"\b(?:password|passwd|passphrase|pass ?word|pwd|pw|wi-?fi (?:key|pass))"
        r"\b" + _FOR + r"\s*(?:is|was|=|:|->|is\s+now|is\s+still|will\s+be|'s|\u2019s|now|:=)\s*[\"'`\u201c\u2018]?"
        r"(?P<value>[^\s\"'`\u201d\u2019]{4,64}?)[\"'`\u201d\u2019]?(?=[\s,;!?)]|[.:](?:\s|$)|$)",
        "password",
        ignore_case=True,
        hints="pass|pw|wifi|wi-fi",
    ),
    _p(
        "password",
        r"\b(?:login|creds|credentials|user(?:name)? and password)\b\s*(?:is|are|:|=)?\s*[\w.@+-]{2,60}"
        r" ?/ ?(?P<value>[^\s/]{4,64})(?=[\s,;!?)]|$)",
        "password",
        ignore_case=True,
        hints="login|cred|user",
    ),
    _p(
        "password",
        r"\b(?:user(?:name)?|login|email)\s*[:=]\s*\S{2,60}\s*[,;/ ]\s*(?:pass(?:word)?|pw|pwd)\s*[:=]\s*"
        r"(?P<value>\S{4,64})",
        "password",
        ignore_case=True,
        hints="pass|pw",
    ),
    _p(
        "PIN",
        r"\b(?:pin(?: ?(?:code|number|no\.?|#))?|passcode|pass code|door code|alarm code|gate code|lock code"
        r"|entry code|keypad code|safe code|unlock code|security code|access code|cvv2?|cvc|csc|otp|one[- ]time code"
        r"|verification code|2fa code)\b"
        + _FOR
        + r"\s*(?:is|was|=|:|is\s+now|'s|\u2019s|of)?\s*[:#]?\s*[\"'`\u201c\u2018]?"
        r"(?P<value>\d{3,8})(?![\d,.]\d|\s?(?:am|pm|%|mg|kg|km|usd|eur|dollars|euros|times|people|years|days)\b)",
        ignore_case=True,
        digits=3,
        hints="pin|code|cvv|cvc|csc|otp",
    ),
    # personal but not secret: the record is at least internal, the text is not masked
    _p(
        "email address",
        r"(?<![\w.+-])[A-Za-z0-9._%+-]{1,64}@[A-Za-z0-9-]{1,63}(?:\.[A-Za-z0-9-]{1,63})*\.[A-Za-z]{2,24}"
        r"(?![\w-])",
        level="internal",
        hints="@",
    ),
    _p(
        "phone number",
        r"(?<![\w+.-])(?:\+\d{1,3}[ .-]?)?(?:\(\d{1,4}\)[ .-]?)?\d{2,4}(?:[ .-]\d{2,4}){1,3}(?![\w-]|\.\d)",
        "none",
        level="internal",
        digits=7,
    ),
)


class _Phones(PatternRecogniser):
    """Phone numbers: 7 to 15 digits in the groups people write, not a date, a time or an amount."""

    _DATE = re.compile(r"^\d{1,4}[ .-]\d{1,2}[ .-]\d{1,4}$")
    _LOCAL = re.compile(r"\d{3}[ .-]\d{4}$")  # 555-0134: a local number of seven digits

    def find(self, text: str) -> Iterable[SecretSpan]:
        for span in super().find(text):
            value = text[span.start : span.end]
            digits = _digits(value)
            if not 7 <= len(digits) <= 15 or (self._DATE.match(value) and len(digits) <= 8):
                continue
            if value.startswith("+") or "(" in value or len(digits) >= 9 or self._LOCAL.search(value):
                yield span


def _recogniser(spec: SecretPattern) -> Recogniser:
    return _Phones(spec) if spec.kind == "phone number" else PatternRecogniser(spec)


DEFAULT_RECOGNISERS: Final[tuple[Recogniser, ...]] = tuple(_recogniser(spec) for spec in DEFAULT_PATTERNS)


class SecretScanner:
    """Runs recognisers over a text and keeps one span where several overlap: secret before internal,
    then the longer."""

    def __init__(self, recognisers: Sequence[Recogniser] = DEFAULT_RECOGNISERS) -> None:
        self.recognisers = tuple(recognisers)

    @classmethod
    def with_patterns(cls, patterns: Iterable[SecretPattern], extra: Iterable[Recogniser] = ()) -> SecretScanner:
        """The default recognisers, ``patterns`` (a locale pack's own) and ``extra`` ones."""
        for recogniser in extra:
            if not isinstance(recogniser, Recogniser):
                raise InvalidInputError(f"a recogniser needs a find(text) method, got {type(recogniser).__name__}")
        return cls((*DEFAULT_RECOGNISERS, *(_recogniser(p) for p in patterns), *extra))

    def scan(self, text: str) -> list[SecretSpan]:
        """The spans of ``text``, in order, none overlapping another."""
        if not text or text.isspace():
            return []
        lowered, digits = text.lower(), len(text) - len(text.translate(_NO_DIGITS))
        found = [
            span
            for recogniser in self.recognisers
            if not isinstance(recogniser, PatternRecogniser) or recogniser.may_match(lowered, digits)
            for span in recogniser.find(text)
        ]
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
