"""The checks identifiers publish (Luhn, mod 97, Verhoeff, ...) and the tests that tell a value from a word."""

from __future__ import annotations

import math
import re
from collections import Counter
from typing import Final

__all__ = [
    "IBAN_LENGTHS",
    "MARKERS",
    "PLACEHOLDER",
    "cpf",
    "dni",
    "entropy",
    "iban",
    "luhn",
    "mod11",
    "password_like",
    "random_enough",
    "verhoeff",
]

MARKERS: Final = re.compile(r"\[secret: [A-Za-z][A-Za-z ]{1,30}\]")


def _digits(value: str) -> str:
    return "".join(c for c in value if c.isdigit())


def luhn(value: str) -> bool:
    digits = [int(c) for c in _digits(value)]
    total = sum(digits[-1::-2]) + sum(sum(divmod(2 * d, 10)) for d in digits[-2::-2])
    return bool(digits) and total % 10 == 0


IBAN_LENGTHS: Final[dict[str, int]] = {
    item[:2]: int(item[3:])
    for item in (
        "AD:24 AE:23 AL:28 AT:20 AZ:28 BA:20 BE:16 BG:22 BH:22 BR:29 BY:28 CH:21 CR:22 CY:28 CZ:24 DE:22 DK:18"
        " DO:28 EE:20 EG:29 ES:24 FI:18 FO:18 FR:27 GB:22 GE:22 GI:23 GL:18 GR:27 GT:28 HR:21 HU:28 IE:22 IL:23"
        " IQ:23 IS:26 IT:27 JO:30 KW:30 KZ:20 LB:28 LC:32 LI:21 LT:20 LU:20 LV:21 MC:27 MD:24 ME:22 MK:19 MR:27"
        " MT:31 MU:30 NL:18 NO:15 PK:24 PL:28 PS:29 PT:25 QA:29 RO:24 RS:22 SA:24 SC:31 SE:24 SI:19 SK:24 SM:27"
        " ST:25 SV:28 TL:23 TN:24 TR:26 UA:29 VA:22 VG:24 XK:20"
    ).split()
}


def iban(value: str) -> bool:
    code = re.sub(r"[\s-]", "", value).upper()
    if IBAN_LENGTHS.get(code[:2]) != len(code) or not code.isalnum():
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
    if len(value) < 16 or PLACEHOLDER.search(value):
        return False
    has_digit = any(c.isdigit() for c in value)
    has_alpha = any(c.isalpha() for c in value)
    return has_digit and has_alpha and len(set(value)) >= 10 and entropy(value) >= 3.2


PLACEHOLDER = re.compile(r"(?i)x{4}|\.{3}|your|example|placeholder|redacted|<|>|\*{3}|0{6}|abcdef|123456|\$\{|\{\{|%\(")
# Words after "my password is" that describe it rather than give it.
_NOT_PASSWORDS: Final = frozenset(
    """a an the my your his her our their its this that it same different too so very not no never still
    weak strong long short secure insecure safe unsafe wrong right correct incorrect expired changed saved stored
    written reset required needed easy hard simple complicated complex good bad fine ok okay great terrible awful
    something nothing anything everything what which where when how why who whatever there here in on at for to of
    with without from by about like just also only really now then again already always case sensitive
    protected encrypted hidden visible blank empty set unset forgotten lost stolen leaked compromised managed
    being getting going changing different somewhere someplace literally basically probably definitely actually
    in secret private confidential personal below above attached following mine yours here there ready sent valid
    invalid unknown given shown needed more less enough case sensitive whatever same old new current temporary default
    one ones thing word words letters characters chars digits numbers number symbols long gone fine asking""".split()
)


def password_like(value: str) -> bool:
    """A value said as a password: not a word that describes one ("weak", "the same"), a placeholder or a marker."""
    word = value.strip("\"'`\u201c\u201d\u2018\u2019.,;:!?()[]{}")
    if len(word) < 4 or word.lower() in _NOT_PASSWORDS or PLACEHOLDER.search(word) or MARKERS.search(word):
        return False
    if word.lower().startswith(("http://", "https://", "www.")):
        return False
    # a lower-case word after "password is" gives it unless it describes it ("expiring", "saved", "easily")
    return not word.isalpha() or word.lower() != word or not word.endswith(_DESCRIBING)


_DESCRIBING = ("ing", "ed", "ly", "able", "ible")
_DATE_LIKE = re.compile(r"^\d{1,4}[-/.:]\d{1,2}(?:[-/.:]\d{1,4})?$|^[$\u20ac\u00a3]?\d[\d,.]*[kKmM%]?$")


def password_strong(value: str) -> bool:
    """A value that cannot be a word: letters with digits or symbols, not a link, an address, a date or an amount."""
    has_alpha = any(c.isalpha() for c in value)
    other = any(not c.isalpha() and c not in "'\u2019" for c in value)  # "l'ordi", "someone's" are words
    if len(value) < 6 or not (has_alpha and other) or not password_like(value) or _DATE_LIKE.match(value):
        return False
    return not (
        value.startswith(("http", "/", "#", "@", "-"))
        or any(c in value for c in "/\\")
        or _EMAIL_LIKE.search(value)
        or _FILE_OR_HOST.search(value)
    )


_EMAIL_LIKE = re.compile(r"@[\w-]+\.[A-Za-z]|@$")  # "P@ssw0rd99" is a password, "ana@mail.com" an address
# "report_Q3.pdf", "portal.example.com", "v2.14.1": a name with a dot before letters is a file or a host
_FILE_OR_HOST = re.compile(r"\.[A-Za-z]{2,5}$|^v?\d+(?:\.\d+)+$|\.(?:com|org|net|io|dev|app)\b")


def passphrase(value: str) -> bool:
    """Three or more plain words, none of them a word that describes a password ("long and hard to remember")."""
    words = value.lower().split()
    return len(words) >= 3 and all(w.isalpha() and w not in _DESCRIBE_PHRASE and w not in _GLUE for w in words)


_GLUE: Final = frozenset("and or but to of in on at for with is was be it i you we they he she my our the a an".split())
_DESCRIBE_PHRASE: Final = frozenset(
    """long short hard easy weak strong same different secure insecure simple complicated complex random memorable
    unique new old too very so not also just like something nothing written saved stored somewhere""".split()
)
