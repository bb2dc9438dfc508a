"""Recognisers that read a little around a candidate: passwords and PINs said aloud or by what is done with
them ("log in with X", "admin / X", "the safe opens with 1-9-8-4"), card numbers, IBANs and phone numbers however
they are grouped, credentials inside URLs and headers."""

from __future__ import annotations

import base64
import binascii
import itertools
import re
from collections.abc import Callable, Iterator
from typing import Final

from mnemonite.recognisers import checks
from mnemonite.recognisers.base import Gated, SecretSpan

__all__ = ["ANNOUNCED"]

_TOKEN = re.compile(r"\S+")
_MAX_NAMES = 10_000  # a text naming "password" more often than this is read up to there: time stays bounded
_QUOTES = "\"'`\u201c\u201d\u2018\u2019([{<"
_CLOSING = "\"'`\u201c\u201d\u2018\u2019)]}>.,;:?"
# words that say "here comes the value", in the languages people mix into chat
_SAYS: Final = frozenset(
    "is was are were = == : - \u2013 \u2014 -> => > \u2192 :- now becomes es est ist lautet \u00e9 e \u00e8 era"
    " ser\u00e1 sera is: was: 's \u2019s it's its it\u2019s c'est cest c\u2019est \u00e4r er je jest \u662f"
    " \u306f \uff1a \u0435\u0441\u0442\u044c".split()
)
# words between the name and its value that say nothing of it ("the password was changed to X", "is my pin still X")
_FILLERS: Final = frozenset(
    "literally still just actually basically probably now simply currently officially always again also changed"
    " set updated reset to be ? it".split()
)
_ARTICLES: Final = frozenset("le la el der die das".split())  # "c'est le 7391": the value comes after
_PREPOSITIONS: Final = frozenset(
    "for to of on in at by de du des f\u00fcr von vom para voor van per di del da do pour".split()
)
_CHANGED = re.compile(r"(?i)\b(?:chang|set|reset|updat|switch|mak|turn)\w*\s+(?:\S+\s+){0,3}$")
_UNITS: Final = frozenset(
    "am pm % mg kg g km m cm mm ft meters metres miles min mins minutes hours hrs days weeks months years times"
    " people usd eur gbp dollars euros pounds lines words pages calories cal steps rpm mph kph bucks error errors"
    " status off".split()
)
_NUMBER_WORDS: Final = frozenset("zero oh one two three four five six seven eight nine".split())
_DIGITS: Final = frozenset("0123456789")
_THEN: Final = frozenset("so i.e. ie aka thus".split())  # ", so X": what the clause before described


def _clean(token: str, start: int) -> tuple[str, int]:
    """A token without the quotes and brackets around it, and where what is left starts."""
    lead = len(token) - len(token.lstrip(_QUOTES))
    core = token[lead:].rstrip(_CLOSING)
    return core, start + lead


class Announced(Gated):
    """A value said after the words that name it: "my password for the bank is X", "PIN: 4821",
    "DB_PASSWORD=X", "pw X" (a bare value only when it cannot be a word)."""

    def __init__(
        self,
        kind: str,
        names: str,
        value: Callable[[str], bool],
        bare: Callable[[str], bool],
        *,
        hints: str,
        digits: int = 0,
        words: bool = False,
        nearby: Callable[[str], bool] | None = None,
        before: bool = False,
    ) -> None:
        self.kind, self._value, self._bare, self._words, self._nearby = kind, value, bare, words, nearby
        self._before = before
        self._names = re.compile(rf"(?<![A-Za-z])(?:{names})(?![A-Za-z])", re.IGNORECASE)
        self.hints, self.min_digits = tuple(hints.split("|")), digits

    def find(self, text: str) -> Iterator[SecretSpan]:
        for name in itertools.islice(self._names.finditer(text), _MAX_NAMES):
            if text.endswith("[secret: ", 0, name.start()):
                continue  # the kind in a marker ("[secret: password]") names nothing
            if _compound(text, name.end()):
                continue  # "password manager", "pw hint:", "password-protected" name no value
            changed = bool(_CHANGED.search(text[max(0, name.start() - 40) : name.start()]))
            span = self._after(text, name.end(), changed)
            if span is None and self._nearby is not None and _a_noun(text, name):
                span = self._later(text, name.end())
            if span is None and self._before:
                span = _before(text, name.start())
            if span is not None:
                yield SecretSpan(*span, self.kind)

    def _after(self, text: str, at: int, changed: bool) -> tuple[int, int] | None:
        said = in_object = False
        lead = 0  # how many fillers came first: "is my pin still 4471" reads "4471" as said bare
        tokens = [(m.group(), at + m.start()) for m in _TOKEN.finditer(text[at : at + 240])][:16]
        for i, (raw, raw_start) in enumerate(tokens):
            token, start = raw, raw_start
            if not said:
                token, start, said = _attached(raw, raw_start)
                if not token:
                    continue
            word, begin = _clean(token, start)
            if said:
                found = self._value_at(text, tokens, i, word, begin, token[:1] in _QUOTES)
                if found is not None or (word.lower() not in _FILLERS and word.lower() not in _ARTICLES):
                    return found
                continue
            step = self._step(tokens, i, lead, word, token, in_object, changed)
            if step == "bare":
                return begin, begin + len(word)
            if step == "stop":
                return None
            said, in_object = said or step == "said", in_object or step == "object"
            lead += step == "lead"
        return None

    def _step(
        self, tokens: list[tuple[str, int]], i: int, lead: int, word: str, token: str, in_object: bool, changed: bool
    ) -> str:
        """What a word before the value does: "said" (the value comes next), "object" ("for the bank"),
        "skip", "lead" (a filler first: "is my pin still 4471"), "bare" (it is the value), or "stop"."""
        step = _step(i - lead, word, token, in_object, changed)
        if step != "stop" or i != lead:
            return step
        if not word:  # punctuation alone: a comma ends the clause ("password, pin: 1234"), a "?" does not
            return "stop" if any(c in token for c in ",;.") else "lead"
        if word.lower() in _FILLERS:
            return "lead"
        return "bare" if self._bare(word) and not self._unit_after(tokens, i) else "stop"

    def _later(self, text: str, at: int) -> tuple[int, int] | None:
        """A value later in the same clause that cannot be a word ("the password I set yesterday was X",
        "wifi password for guests (on the router) X"): ``nearby`` decides what can be one."""
        tokens = [(m.group(), at + m.start()) for m in _TOKEN.finditer(text[at : at + 160])][:14]
        for i, (token, start) in enumerate(tokens):
            word, begin = _clean(token, start)
            before = _clean(tokens[i - 1][0], 0)[0].lower() if i else ""
            named_else = before in _NAMING or word.startswith("-") or self._unit_after(tokens, i)
            if self._nearby is not None and word and not named_else and self._nearby(word):
                return begin, begin + len(word)
            if token.rstrip(")]}\"'").endswith((".", "!", "?", ";")):
                return None  # the sentence ended
            if token.endswith(",") and not (i + 1 < len(tokens) and self._then(tokens[i + 1][0])):
                return None  # the clause ended, unless the next gives the value: "the dog's name and year, so X"
        return None

    def _then(self, token: str) -> bool:
        """After a comma, what goes on with the value: "so X", or the value itself ("..., Biscuit1998")."""
        word = _clean(token, 0)[0].rstrip(".,;:!?")
        return token.lower() in _THEN or (self._nearby is not None and bool(word) and self._nearby(word))

    def _value_at(
        self, text: str, tokens: list[tuple[str, int]], i: int, word: str, begin: int, quoted: bool
    ) -> tuple[int, int] | None:
        if quoted:  # "the password is \"blue sky 42\"": the whole quoted phrase
            close = text.find(_PAIRS.get(text[begin - 1], text[begin - 1]), begin)
            if 0 < close - begin <= 64 and "\n" not in text[begin:close] and self._value(text[begin:close]):
                return begin, close
        if self._words and (word.lower() in _NUMBER_WORDS or word in _DIGITS):  # "four five nine one", "1 9 5 4"
            spoken = _NUMBER_WORDS if word.lower() in _NUMBER_WORDS else _DIGITS
            run = tokens[i : i + 8]
            count = next((n for n, (t, _) in enumerate(run) if _clean(t, 0)[0].lower() not in spoken), len(run))
            if count >= 3:
                last, last_start = run[count - 1]
                core, core_start = _clean(last, last_start)
                return begin, core_start + len(core)
            return None
        word = word.rstrip("#*") if self._words else word
        if not self._value(word) or self._unit_after(tokens, i):
            return None
        return begin, begin + len(word)

    def _unit_after(self, tokens: list[tuple[str, int]], i: int) -> bool:
        """A number followed by a unit is an amount, not a code ("1200 meters", "404 error")."""
        following = tokens[i + 1][0].lower().strip(_CLOSING) if i + 1 < len(tokens) else ""
        return self._words and following in _UNITS


_PAIRS: Final = {"\u201c": "\u201d", "\u2018": "\u2019", "(": ")", "[": "]", "{": "}", "<": ">"}


def _attached(token: str, start: int) -> tuple[str, int, bool]:
    """A token that carries its own "is": ``=X``, ``":``, ``:X``, ``-1234``: what follows it, and that it was said."""
    bare = token.lstrip(_QUOTES)
    if bare[:1] in (":", "=", "-", "\uff1a", "\u662f", "\u306f") and bare not in ("-", "->"):
        rest = bare.lstrip(":=-\uff1a\u662f\u306f").lstrip(_QUOTES) if bare[:1] != "-" else bare[1:]
        return rest, start + len(token) - len(rest), True
    return token, start, False


def _step(i: int, word: str, token: str, in_object: bool, changed: bool) -> str:
    """What a word before the value does: says it comes next, names what it is for, or ends the search."""
    low = word.lower()
    if low in _SAYS or token.lower() in _SAYS or (low == "to" and changed and i == 0):
        return "said"
    if token.endswith((":", "=")) and (in_object or i == 0):
        return "said"  # "password for gmail: X"
    if i == 0 and low in _PREPOSITIONS:
        return "object"
    if in_object and i <= 6:
        return "skip"
    return "stop"


# a value, then the words that make it one: "Fluffy123 is my gmail password", "chose \"Grandpa's Boat\" as the
# passphrase", "chaton2018 comme mot de passe"
_BEFORE = re.compile(
    '(?:["\u201c\u2018]([^"\\n\u201d\u2019]{3,64})["\u201d\u2019]|(?<!\\S)(\\S{6,64}))\\s+'
    r"(?i:is|was|as|a|an|comme|als|como|wie)\s+(?:[\w']+\s+){0,3}$"
)


def _before(text: str, at: int) -> tuple[int, int] | None:
    """A value said before the name of a password, in its clause: quoted, or one that cannot be a word."""
    window = text[max(0, at - 120) : at]
    match = _BEFORE.search(window)
    if match is None or any(c in ".!?;\n" for c in window[match.end(1 if match.group(1) else 2) :]):
        return None
    offset = at - len(window)
    if match.group(1) is not None:
        value = match.group(1)
        if not (checks.password_like(value) or checks.passphrase(value)):
            return None
        return offset + match.start(1), offset + match.end(1)
    word, begin = _clean(match.group(2), offset + match.start(2))
    before = window[: match.start(2)].split()[-1:]
    if not _strong(word) or (before and before[0].lower().strip(_CLOSING) in _NAMING):
        return None
    return begin, begin + len(word)


def _pin(value: str) -> bool:
    return re.fullmatch(r"\d{3,8}|[A-Za-z]\d{3,7}|\d{2,4}[A-Za-z]\d{1,4}|\d{1,3}(?:-\d{1,3}){2,4}", value) is not None


class _Wifi(Gated):
    """ "the wifi is BlueHouse_2019": the password, unless the text gives one later ("Wi-Fi: Home_5G, password: ..."),
    when what follows "wifi" is the network's name."""

    def __init__(self, announced: Announced) -> None:
        self._announced, self.hints = announced, announced.hints

    def find(self, text: str) -> Iterator[SecretSpan]:
        for span in self._announced.find(text):
            named = _NETWORK.search(text, 0, span.start) is not None
            if not named and _PASSWORD_LATER.search(text, span.end) is None:
                yield span


_NETWORK = re.compile(r"(?i)\b(?:wi-?fi|wlan)(?:'s)?\s+(?:network\s+)?(?:name|network|ssid|is\s+called|is\s+named)\b")
_PASSWORD_LATER = re.compile(r"(?i)\b(?:password|passwort|pass|pw|pwd|key|passphrase)\b")


def _wifi(value: str) -> bool:
    """What "the wifi is" gives: a value shaped as a password ("BlueHouse_2019"), not "down" or "slow"."""
    return checks.password_strong(value) and any(c.isdigit() for c in value) and not value.isupper()


def _strong(value: str) -> bool:
    """A bare value right after "pw": mixed letters and digits or symbols, so not a word."""
    return checks.password_strong(value)


# a word before a value that says it is something else: "for user jsmith2", "see file notes_v2"
_NAMING: Final = frozenset(
    "user username account login id for at via from see in file ticket case ref version of by named called".split()
)
_OWNERS = re.compile(r"(?i)\b(?:my|your|his|her|our|their|the|card|bank|phone|sim|debit|atm|new|old)\s+$")


def _a_noun(text: str, name: re.Match[str]) -> bool:
    """Whether a name read as a noun, so a value later in its clause may be its value: "code" and "pin" alone
    only after "my", "the bank", ... ("pin the tab at 1200 pixels", "the code review is at 1500" are not)."""
    said = name.group().lower()
    if said not in ("pin", "code") and not said.startswith("code "):
        return True
    return said == "pin" and _OWNERS.search(text, max(0, name.start() - 12), name.start()) is not None


_COMPOUNDS = re.compile(
    r"(?i)(?:\s+|-)(?:manager|managers|policy|policies|reset|field|hint|strength|requirements?|rules?|generator|vault"
    r"|protected|pad|prompt|screen|page|change|changes|expir\w*|length|less|free)\b"
)


def _compound(text: str, at: int) -> bool:
    """A name that is the first half of another noun ("password manager", "pin pad") names no value later on."""
    return _COMPOUNDS.match(text, at) is not None


def _pin_nearby(value: str) -> bool:
    """Digits later in a clause about a PIN: four to eight, not a year."""
    return re.fullmatch(r"\d{4,8}", value) is not None and re.fullmatch(r"(?:19|20)\d\d", value) is None


_PASSWORD_NAMES = (
    r"password|passwd|passphrase|pass ?word|pwd|pw|p/w|pword|passw|pasword|passwrod|passowrd|pssword|paswd"
    r"|passwort|kennwort|contrase(?:\u00f1|n)a|mot de passe|mdp|senha|wachtwoord|has(?:\u0142|l)o|parola d'ordine"
    r"|wi-?fi (?:key|pass)|security answer|secret answer|memorable (?:word|information)|secret word|code ?word"
    r"|safe ?word"
    r"|l(?:\u00f6|o)senord(?:et)?|adgangskode(?:n)?|salasana|heslo|jelsz(?:\u00f3|o)|(?:\u015f|s)ifre(?:m)?|kata sandi"
    r"|m\u1eadt kh\u1ea9u|\u043f\u0430\u0440\u043e\u043b\u044c|\u5bc6\u7801|\u5bc6\u78bc|\u30d1\u30b9\u30ef\u30fc\u30c9"
    r"|\ube44\ubc00\ubc88\ud638|\u092a\u093e\u0938\u0935\u0930\u094d\u0921"
    r"|passcode|pass code|pass(?=\s*[:=]|\s+(?:is|was)\b|\s+\S*[\d!#$%&*])"
)
# "code" alone names a PIN unless a word before it says it is another kind of code
_OTHER_CODES = "".join(
    f"(?<!{word} )"
    for word in "zip postal post area error status promo discount coupon source country dial tax sort product booking"
    " tracking reference confirmation dress morse qr bar iso airport hs gift referral invite invitation voucher"
    " exit return http response colour color".split()
)
_PIN_NAMES = (
    r"unlock(?=\s+(?:is|was)\s)"
    r"|pin(?:\s?(?:code|number|no\.?|#))?|passcode|pass code|puk(?: code)?|cvv2?|cvc2?|csc|otp|one[- ]time (?:code|pin)"
    r"|verification code|security code|2fa code|backup code|access code|entry code|unlock code|combination|combo"
    r"|keycode|key code|lockbox(?: code)?|buzzer code|intercom code|pincode|pin-code|c(?:\u00f3|o)digo|codice|kod"
    r"|digicode|tresorcode|t\u00fcrcode|torcode|alarmcode|zahlencode"
    r"|\u043a\u043e\u0434|\u6697\u8a3c\u756a\u53f7"
    r"|(?:door|gate|alarm|garage|lock|safe|locker|keypad|building|house|apartment|padlock)\s(?:code|combo|combination|pin)"
    r"|(?:alarm|safe|lockbox|keypad|gate|garage|door|locker|lock|padlock|key\s?box)"
    r"(?=\s*[:\u2013\u2014-]\s|\s+(?:at|in|on|of|for)\s+[^.:;\n]{1,40}:\s)"
    r"|(?:alarm|safe|lockbox|keypad|lock|padlock|key\s?box)"
    r"(?=\s+(?:is|was)\s+(?:\d|(?:zero|one|two|three|four|five|six|seven|eight|nine)\b))"
    r"|(?:keypad|lockbox|padlock|key\s?box)(?=\s+\d{3,8}(?:\s+then\b|\s*[,.;)!]|\s*$))"
    rf"|{_OTHER_CODES}code(?:\s(?:to|for)\s(?:the\s|my\s|our\s|your\s)?(?:\w+\s){{0,2}}?(?=is\b|:|was\b))?"
)


class _Cards(Gated):
    """Payment cards: 13-19 digits in the networks' ranges, Luhn-valid, in one grouping; not a number an
    order, a parcel or a phone is known by ("order 4539...", "IMEI 3569...")."""

    _CANDIDATE = re.compile(r"(?<![\d.,/-])\d(?:[ .-]?\d){12,18}(?!\d|[.,]\d|-\d)")
    _NETWORK = re.compile(r"^(?:2[2-7]|3[0-9]|4|5[0-8]|6[0-9])")
    _OTHER = re.compile(r"(?i)\b(?:order|invoice|tracking|ref|reference|imei|serial|isbn|confirmation|booking|awb"
                        r"|shipment|parcel|receipt|ticket|transaction|meid|iccid)\b")  # fmt: skip
    _CARD = re.compile(r"(?i)\b(?:card|visa|master ?card|amex|debit|credit|cc|maestro|discover|jcb|cvv)\b")
    min_digits = 13
    grouped = True

    def find(self, text: str) -> Iterator[SecretSpan]:
        for match in self._CANDIDATE.finditer(text):
            value = match.group()
            digits = "".join(c for c in value if c.isdigit())
            if not (13 <= len(digits) <= 19 and self._NETWORK.match(digits) and checks.luhn(digits)):
                continue
            if len({c for c in value if not c.isdigit()}) > 1:
                continue  # "4111-1111 1111.1111" is not how a card is written
            before = text[max(0, match.start() - 40) : match.start()]
            if self._OTHER.search(before) and not self._CARD.search(before):
                continue
            yield SecretSpan(match.start(), match.end(), "card number")


class _Ibans(Gated):
    """IBANs however they are spaced: the country's length of characters, mod 97."""

    _CANDIDATE = re.compile(r"(?<![A-Za-z0-9])[A-Za-z]{2}\d{2}(?:[ -]?[A-Za-z0-9]){10,32}")
    min_digits = 6

    def find(self, text: str) -> Iterator[SecretSpan]:
        for match in self._CANDIDATE.finditer(text):
            value = match.group()
            length = checks.IBAN_LENGTHS.get(value[:2].upper())
            if length is None:
                continue
            taken = end = 0
            for n, c in enumerate(value):
                if c.isalnum():
                    taken += 1
                    end = n + 1
                    if taken == length:
                        break
            following = value[end : end + 1]
            if taken == length and not following.isalnum() and checks.iban(value[:end]):
                yield SecretSpan(match.start(), match.start() + end, "IBAN")


class _Phones(Gated):
    """Phone numbers: 7 to 15 digits in the groups people write; a bare run of digits only when announced."""

    _GROUPED = re.compile(r"(?<![\w+.-])(?:\+\d{1,3}[ .-]?)?(?:\(\d{1,5}\)[ .-]?)?\d{2,5}(?:[ .-]\d{2,6}){1,4}"
                          r"(?![\w-]|[.,]\d)")  # fmt: skip
    _INTERNATIONAL = re.compile(r"(?<![\w+])\+\d{8,14}(?!\d)")
    _BARE = re.compile(r"(?i)\b(?:call|phone|tel|mobile|cell|whatsapp|text|number|ring|reach|sms|signal|telegram)\b"
                       r"\D{0,20}?(?<!\d)(0\d{8,11})(?!\d)")  # fmt: skip
    _DATE = re.compile(r"^\d{1,4}[ .-]\d{1,2}[ .-]\d{1,4}$")
    _LOCAL = re.compile(r"\d{3}[ .-]\d{4}$")
    min_digits = 7
    grouped = True

    def find(self, text: str) -> Iterator[SecretSpan]:
        for match in self._GROUPED.finditer(text):
            value = match.group()
            digits = sum(c.isdigit() for c in value)
            if not 7 <= digits <= 15 or (self._DATE.match(value) and digits <= 8):
                continue
            if value.startswith("+") or "(" in value or digits >= 9 or self._LOCAL.search(value):
                yield SecretSpan(match.start(), match.end(), "phone number", "internal")
        for regex in (self._INTERNATIONAL, self._BARE):
            for match in regex.finditer(text):
                group = 1 if match.re is self._BARE else 0
                yield SecretSpan(*match.span(group), "phone number", "internal")


class _Credentials(Gated):
    """A password inside a URL (``scheme://user:PASSWORD@host``) or a Basic authorization header."""

    _URL = re.compile(r"(?<![\w])[A-Za-z][A-Za-z0-9+.-]{1,20}://[^\s:/@]{1,64}:([^\s@/]{1,128})@[\w.-]")
    _BASIC = re.compile(r"(?i)\bbasic\s+([A-Za-z0-9+/]{8,}={0,2})(?![A-Za-z0-9+/=])")
    hints = ("://", "basic")

    def find(self, text: str) -> Iterator[SecretSpan]:
        for match in self._URL.finditer(text):
            value = match.group(1)
            if not (value.startswith(("${", "<", "{")) or checks.PLACEHOLDER.search(value)):
                yield SecretSpan(*match.span(1), "password")
        for match in self._BASIC.finditer(text):
            try:
                decoded = base64.b64decode(match.group(1), validate=True).decode("utf-8")
            except (binascii.Error, UnicodeDecodeError, ValueError):
                continue
            if ":" in decoded:
                yield SecretSpan(*match.span(1), "password")


# -- said by what is done with it ------------------------------------------------------------------------------

# what one does with a password or a code, the value next: "log back in with X", "it unlocks with X", "I typed X",
# "set it to X", "went with X", "punch in 3141", "the gate wants 550219"
_USED = re.compile(
    r"(?i)(?<![\w'])(?:log(?:s|ged|ging)?\s+(?:back\s+)?in\s+with|sign(?:s|ed|ing)?\s+in\s+with|get\s+in\s+with"
    r"|unlock(?:s|ed|ing)?(?:\s+[\w']+){0,4}?\s+with|opens?\s+with|opened\s+with|use[sd]?|using|typed?(?:\s+in)?"
    r"|types|typing|enter(?:ed|s|ing)?|punch(?:ed)?\s+in|key\s+in|try|tried|chose|choose|picked?|went\s+with"
    r"|go\s+with|(?:set|changed?|switched|reset)\s+(?:it|that|this|them|mine|everything)\s+to|switched\s+to"
    r"|wants|(?:locked|protected|secured|encrypted)\s+with|(?:jotted|wrote|written)\s+(?:it\s+)?(?:down\s+)?as|(?:it'?s|it\u2019s|its|is)\s+just"
    r"|everything\s+is|mit|usa|utilise|utilisez|benutze|nutze)\s+(?=\S)"
)
# what a text must speak of for a value that could be a name ("sunflower2019") to be taken as a password
_CREDENTIAL = re.compile(
    r"(?i)\b(?:log(?:ged|ging|s)?\s*(?:back\s+)?in|login|sign(?:ed)?\s*in|unlock\w*|account|wi-?fi|vpn|creds"
    r"|credentials|hacked|breach|caps\s*lock|no\s+caps|capitals?|lowercase|upper\s*case|locked|protected|encrypted"
    r"|entrar|anmelden|melde|connexion|connecter|pass\w*|pw|pwd|mot de passe|contrase\w+|kennwort)\b"
)
# what a code opens: digits after "opens with", "wants", "punch in" are a code only where one of these is named
_LOCKS = re.compile(
    r"(?i)\b(?:safe|alarm|keypad|gate|door|lockbox|lock|padlock|locker|garage|panel|ipad|iphone|phone|tablet"
    r"|laptop|screen|vault|box|storage|unit|entry|buzzer|intercom|code|pin)\b"
)
_SYMBOLS = frozenset("!#$%&*?+=^~@")
# after a value: it names an account, not a password ("use jsmith2 as the username")
_AS_NAME = re.compile(
    r"(?i)\s+as\s+(?:(?:the|my|your|a)\s+)?(?:user\s*name|username|user|login|id|email|handle|gamertag)\b"
)
_QUOTED = re.compile('["\'\u201c\u2018]([^"\n\u201d\u2019]{3,64}?)["\'\u201d\u2019](?![A-Za-z])')


class _Used(Gated):
    """Passwords and codes said by what is done with them, with no word naming them: "I log back in with
    OrangeCat!42", "it unlocks with Banana1!!", "set it to bluebirdhouse77" (in a text about logging in, an
    account, a wifi...), "try 'open sesame 42'", "the safe opens with 1-9-8-4", "punch in 3141 at the side door".

    A value must be one a word or a name cannot be: symbols among letters and digits; letters with digits only
    where the text speaks of credentials; a quoted phrase only where it names a password; digits only where it
    names a lock."""

    hints = (" / ", "-", ":", "\u2013", "\u2014", "with", "use", "using", "typ", "enter", "punch", "key in", "try",
             "tried", "chose", "choose", "pick", " to ", "wants", " as ", "just", "everything", "mit ", "usa ",
             "utilis", "nutze", "it", " is ", "user", "'s", "\u2019s", "was", "seems", "looks", "case", "caps",
             "spaces", "word", "capital", "zero")  # fmt: skip

    def find(self, text: str) -> Iterator[SecretSpan]:
        # Each reading runs only where its value can be: most texts hold none (a write pays for every reading)
        said, lowered = _Said(text), text.lower()
        candidate = _CANDIDATE.search(text) is not None  # a digit, an opening quote, a symbol inside a word
        formed = any(word in lowered for word in _FORM_HINTS) and said.form()
        if candidate:
            yield from self._used(text, said)
        if candidate or formed:
            yield from self._it_is(text, said)
        if formed:
            yield from _after_cues(text, _FORM_THEN)  # "all lowercase: bananabread"
        if any(word in lowered for word in _JUDGED_HINTS):
            yield from self._judged(text, said)
        if candidate or " / " in text:
            yield from self._listed(text, said)
        if "user" in lowered and ("pass" in lowered or "pw" in lowered):
            yield from _after_cues(text, _USER_THEN_PASSWORD)  # "username EmmaCraft08 password diamondsword"

    def _used(self, text: str, said: _Said) -> Iterator[SecretSpan]:
        for cue in itertools.islice(_USED.finditer(text), _MAX_NAMES):
            span = self._value(text, cue.end(), said)
            if span is not None:
                yield span

    @staticmethod
    def _judged(text: str, said: _Said) -> Iterator[SecretSpan]:
        for judged in itertools.islice(_JUDGED.finditer(text), _MAX_NAMES):  # "'ilovemydog' is too easy"
            value = judged.group(1) or judged.group(2)
            start = judged.start(1) if judged.group(1) else judged.start(2)
            if (judged.group(1) and checks.password_like(value)) or _password_shaped(value, said):
                yield SecretSpan(start, start + len(value), "password")

    @staticmethod
    def _it_is(text: str, said: _Said) -> Iterator[SecretSpan]:
        for cue in itertools.islice(_IT_IS.finditer(text), _MAX_NAMES):  # "no wait, it's Tangerine!9"
            word, begin = _word_at(text, cue.end())
            if (
                _password_shaped(word, said)
                or _PASSPHRASE.fullmatch(word)
                or (said.form() and checks.password_like(word) and word.isalnum())
            ):
                yield SecretSpan(begin, begin + len(word), "password")

    @staticmethod
    def _listed(text: str, said: _Said) -> Iterator[SecretSpan]:
        """Account lists: "Amazon - lemontree77 / Paypal - Lemon!Tree77", "Steam: wolf / wolfpack1337",
        "admin / printmaster", "username EmmaCraft08 password diamondsword". Where one value of a list is a
        password beyond doubt, the others of its shape are too."""
        held: list[tuple[int, str]] = []
        sure = False
        for cue in itertools.islice(itertools.chain(_PAIR.finditer(text), _LABEL.finditer(text)), _MAX_NAMES):
            word, begin = _word_at(text, cue.end())
            keyed = cue.re is _LABEL and _KEY_LABEL.match(text, cue.start()) is not None  # "Key: ghtR7kwpXq2m"
            account = cue.re is _PAIR and (
                cue.group(1).lower() in _ACCOUNTS or _LABELLED.search(text, 0, cue.start()) is not None
            )
            if _password_shaped(word, said) or ((account or keyed) and checks.password_strong(word)):
                sure = True
                yield SecretSpan(begin, begin + len(word), "password")
            elif account and cue.group(1).lower() in _ACCOUNTS and checks.password_like(word) and word.isalnum():
                yield SecretSpan(begin, begin + len(word), "password")
            elif (
                checks.password_strong(word)
                and not word.isupper()
                and not _VERSION.search(word)
                and not text.startswith(" / ", begin + len(word))  # "eBay - rossy57 / tackleb0x": a user name
            ):
                held.append((begin, word))
        if sure:
            for begin, word in held:
                yield SecretSpan(begin, begin + len(word), "password")

    @staticmethod
    def _value(text: str, at: int, said: _Said) -> SecretSpan | None:
        quoted = _QUOTED.match(text, at)
        if quoted is not None:
            phrase = quoted.group(1)
            if " " not in phrase and _password_shaped(phrase, said):
                return SecretSpan(*quoted.span(1), "password")
            if said.credential() and (checks.password_like(phrase) or checks.passphrase(phrase)):
                return SecretSpan(*quoted.span(1), "password")
            return None
        token = _TOKEN.match(text, at)
        word, begin = _clean(token.group(), at) if token is not None else ("", at)
        word = word.rstrip(".,;:")
        end = begin + len(word)
        if not word or _AS_NAME.match(text, end):
            return None
        if _pin(word) and any(c.isdigit() for c in word):
            code = not _unit_next(text, end) and re.fullmatch(r"(?:19|20)\d\d", word) is None and said.lock()
            return SecretSpan(begin, end, "PIN") if code else None
        return SecretSpan(begin, end, "password") if _password_shaped(word, said) else None


# what a value read without a word naming it holds: a digit, an opening quote, a symbol inside a word
_CANDIDATE = re.compile("\\d|(?<!\\w)[\"'\u201c\u2018]\\w|\\w[!#$%&*?+=^~@_-]\\w")
_FORM_HINTS: Final = ("case", "caps", "spaces", "word", "capital", "zero", "numbers", "sensitive")
_JUDGED_HINTS: Final = ("easy", "weak", "strong", "secure", "guessable", "hackable", "crackable")
# how a password's form is described when it is dictated: a plain word near such words is the password
_FORM = re.compile(
    r"(?i)\b(?:all\s+(?:lower\s*case|lowercase|caps|upper\s*case|numbers|one\s+word)|lower\s*case|no\s+caps"
    r"|no\s+spaces|with\s+(?:the\s+)?spaces|one\s+word|capital\s+[A-Za-z]\b|zeros?\s+not|case[\s-]sensitive)"
)
_FORM_THEN = re.compile(_FORM.pattern + r"\s*:\s*(?=\S)")
# "Otter-Lagoon-Pebble": three capitalised words joined by hyphens, a passphrase's shape
_PASSPHRASE = re.compile(r"[A-Z][a-z]{2,}(?:-[A-Z][a-z]{2,}){2,5}")
# a value judged as a password is: "'ilovemydog' is too easy", "Fluffy123 is weak"
_JUDGED = re.compile(
    "(?:[\"\u201c\u2018']([^\"'\n\u201d\u2019]{3,64})[\"'\u201d\u2019]|(?<!\\S)([^\\s\"'\u201c\u201d]{6,64}))"
    r"\s+(?:is|was|'s|seems|looks)\s+(?:(?:too|a|not|very|really|pretty|quite|so)\s+){0,2}"
    r"(?:easy|weak|strong|secure|insecure|guessable|hackable|crackable)\b"
)
# "user: bob_harlan / Qz7!vrT8", "admin / s3cr3t_Sauce": an account and its password, a slash between
_PAIR = re.compile(r"(?<![\w/])([\w.@+-]{2,64})\s+/\s+(?=\S)")
_KEY_LABEL = re.compile(r"(?i)\s*(?:key|wpa2?|psk|passkey|network\s+key|security\s+key|wifi\s+key)\s*[:\u2013\u2014-]")
# the accounts a device or a database comes with: "admin / printmaster" gives a password even if it is a word
_ACCOUNTS: Final = frozenset("admin administrator root user guest pi sa postgres test operator sysadmin".split())
# "Steam: xXdarkwolfXx / wolfpack1337": a labelled line holds an account and its password
_LABELLED = re.compile(r"[A-Za-z][\w.]{1,24}\s*:\s*$")
# "username EmmaCraft08 password diamondsword", "user: ana, pw: mango"
_USER_THEN_PASSWORD = re.compile(
    r"(?i)\buser(?:\s*name)?\s*[:=]?\s*\S{1,64}[\s,;/]+(?:and\s+)?(?:pass(?:word)?|pw|pwd)\s*[:=]?\s+(?=\S)"
)
# "no wait, it's sunflower22", "current is Harbour2023": a value right after "it is" (kept only if shaped as one)
_IT_IS = re.compile(
    r"(?i)(?<![\w'])(?:it'?s\s+now|it\u2019s\s+now|now\s+it'?s|it'?s|it\u2019s|its|it\s+is"
    r"|current(?:ly)?(?:\s+one)?\s+is|(?:new|old)\s+one\s+is)\s+(?=\S)"
)
# "amazon - Tr33house!", "xbox: KillerQueen_77": an account named at the start of a line or a clause, then its password
_LABEL = re.compile(
    r"(?:^|(?<=[\n,;(])|(?<=\.\s))\s*"
    r"(?!(?i:user|username|login|account|acct|email|e-mail|id|name|handle|gamertag|network|ssid|wi-?fi|wlan|usuario"
    r"|utilisateur|identifiant|benutzer|benutzername|utente|gebruiker|usu\u00e1rio)\b)"
    r"[A-Za-z][\w.]{1,24}(?:\s[A-Za-z][\w.]{1,24}){0,2}\s*(?:-|:|\u2013|\u2014)\s+(?=\S)"
)


class _Said:
    """What a text speaks of, looked up once and only when asked."""

    def __init__(self, text: str) -> None:
        self._text = text
        self._credential: bool | None = None
        self._lock: bool | None = None
        self._form: bool | None = None

    def credential(self) -> bool:
        if self._credential is None:
            self._credential = _CREDENTIAL.search(self._text) is not None
        return self._credential

    def form(self) -> bool:
        if self._form is None:
            self._form = _FORM.search(self._text) is not None
        return self._form

    def lock(self) -> bool:
        if self._lock is None:
            self._lock = _LOCKS.search(self._text) is not None
        return self._lock


_VERSION = re.compile(r"\d\.\d")  # "Ubuntu22.04", "Python3.12"


def _word_at(text: str, at: int) -> tuple[str, int]:
    """The token at ``at`` without quotes, brackets and the punctuation that ends a clause, and where it starts."""
    token = _TOKEN.match(text, at)
    if token is None:
        return "", at
    word, begin = _clean(token.group(), at)
    return word.rstrip(".,;:"), begin


def _password_shaped(word: str, said: _Said) -> bool:
    """A value no word or name is: letters with digits and a symbol ("Tr33house!", "Kx9#pLm2!"), or a symbol
    between letters of both cases ("Hello&World"); letters with digits alone ("sunflower2019") only in a text
    about logging in, an account, a wifi... ("Thanks!" and "That's" are words)."""
    if not checks.password_strong(word) or word.isupper() or _VERSION.search(word):
        return False
    core = word.rstrip("!?")
    digits, symbols = any(c.isdigit() for c in core), any(c in _SYMBOLS for c in word)
    inner = any(c in _SYMBOLS for c in core[1:-1]) and core.lower() != core and core.upper() != core
    if not (digits and any(c.isalpha() for c in core)) and not inner:
        return False
    return (digits and symbols) or inner or said.credential()


def _after_cues(text: str, cues: re.Pattern[str]) -> Iterator[SecretSpan]:
    """The password right after each cue: any value but a word that describes one or names an account."""
    for cue in itertools.islice(cues.finditer(text), _MAX_NAMES):
        word, begin = _word_at(text, cue.end())
        if checks.password_like(word) and not _AS_NAME.match(text, begin + len(word)):
            yield SecretSpan(begin, begin + len(word), "password")


def _unit_next(text: str, at: int) -> bool:
    """A number followed by a unit or a clock's word is an amount or a time ("wants 20 minutes", "at 10 pm")."""
    following = _TOKEN.match(text, at + 1) if at < len(text) and text[at].isspace() else None
    return following is not None and following.group().lower().strip(_CLOSING) in _UNITS


ANNOUNCED: Final[tuple[Gated, ...]] = (
    Announced(
        "PIN",
        _PIN_NAMES,
        _pin,
        _pin,
        nearby=_pin_nearby,
        hints="pin|code|cvv|cvc|csc|otp|puk|combo|combination|alarm|safe|lockbox|keypad|gate|garage|door|locker|lock"
        "|unlock|digicode|tresor|rcode|torcode|zahlencode"
        "|key box|keybox"
        "|digo|codice|kod|\u043a\u043e\u0434|\u6697\u8a3c\u756a\u53f7",
        words=True,
    ),
    Announced(
        "password",
        _PASSWORD_NAMES,
        checks.password_like,
        _strong,
        nearby=_strong,
        before=True,
        hints="pass|pw|p/w|pword|pasw|pssw|wifi|wi-fi|codeword|code word|safeword|safe word"
        "|kennwort|contrase|mot de passe|mdp|senha|wachtwoord|has"
        "|parola|answer|memorable|secret word|senord|adgangskode|salasana|heslo|jelsz|ifre|kata sandi|kh\u1ea9u"
        "|\u043f\u0430\u0440\u043e\u043b\u044c|\u5bc6\u7801|\u5bc6\u78bc|\u30d1\u30b9\u30ef\u30fc\u30c9"
        "|\ube44\ubc00\ubc88\ud638|\u092a\u093e\u0938\u0935\u0930\u094d\u0921",
    ),
    _Wifi(Announced("password", r"wi-?fi|wlan", _wifi, _wifi, nearby=_wifi, hints="wifi|wi-fi|wlan")),
    _Used(),
    _Cards(),
    _Ibans(),
    _Phones(),
    _Credentials(),
)
