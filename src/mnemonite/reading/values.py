"""Typed values and how they compare: "2,400 dollars" is "$2400", "half past seven in the evening" is "19:30",
"three dozen" is 36, "May 3rd" is "3 May".

`value_of` turns the words of a value (with the kind the parser's entity recogniser gave them, if any) into a
`Value` whose ``norm`` is equal for two ways of writing the same value.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

Kind = str  # money, quantity, number, percent, date, time, person, place, org, thing

_ENTITY_KINDS = {
    "MONEY": "money",
    "QUANTITY": "quantity",
    "CARDINAL": "number",
    "PERCENT": "percent",
    "DATE": "date",
    "TIME": "time",
    "PERSON": "person",
    "GPE": "place",
    "LOC": "place",
    "FAC": "place",
    "ORG": "org",
    "PRODUCT": "thing",
    "WORK_OF_ART": "thing",
    "NORP": "thing",
    "LANGUAGE": "thing",
    "EVENT": "thing",
    "ORDINAL": "number",
}

_WORDS = {
    "zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9,
    "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14, "fifteen": 15, "sixteen": 16,
    "seventeen": 17, "eighteen": 18, "nineteen": 19, "twenty": 20, "thirty": 30, "forty": 40, "fifty": 50,
    "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90, "a": 1, "an": 1, "half": 0.5, "couple": 2,
}  # fmt: skip
_SCALES = {"hundred": 100, "thousand": 1_000, "k": 1_000, "grand": 1_000, "million": 1_000_000,
           "mil": 1_000_000, "dozen": 12, "billion": 1_000_000_000, "bn": 1_000_000_000}  # fmt: skip
_CURRENCY = {"$": "usd", "dollar": "usd", "dollars": "usd", "bucks": "usd", "usd": "usd", "€": "eur", "euro": "eur",
             "euros": "eur", "eur": "eur", "£": "gbp", "pound": "gbp", "pounds": "gbp", "quid": "gbp", "gbp": "gbp",
             "¥": "jpy", "yen": "jpy", "chf": "chf", "francs": "chf"}  # fmt: skip
_UNITS = {"kg": "kg", "kgs": "kg", "kilo": "kg", "kilos": "kg", "kilogram": "kg", "kilograms": "kg", "lb": "lb",
          "lbs": "lb", "pound": "lb", "pounds": "lb", "km": "km", "kms": "km", "kilometre": "km", "kilometres": "km",
          "kilometer": "km", "kilometers": "km", "mile": "mi", "miles": "mi", "mi": "mi", "mg": "mg", "milligram": "mg",
          "milligrams": "mg", "ml": "ml", "cm": "cm", "m": "m", "metre": "m", "metres": "m", "meter": "m",
          "meters": "m", "ft": "ft", "foot": "ft", "feet": "ft", "inch": "in", "inches": "in", "hour": "h",
          "hours": "h", "hr": "h", "hrs": "h", "h": "h", "minute": "min", "minutes": "min", "min": "min",
          "mins": "min", "step": "step", "steps": "step", "mph": "mph", "percent": "%", "%": "%", "cup": "cup",
          "cups": "cup", "day": "day", "days": "day", "week": "week", "weeks": "week", "year": "year",
          "years": "year", "month": "month", "months": "month", "decade": "decade", "decades": "decade",
          "fortnight": "fortnight", "fortnights": "fortnight", "fortnightly": "fortnight", "yrs": "year",
          "yr": "year", "gb": "gb", "mb": "mb", "tb": "tb",
          "mbps": "mbps", "gbps": "gbps", "calories": "kcal", "kcal": "kcal"}  # fmt: skip
_TO_MINUTES = {"h": 60}
# durations said in a larger unit: "two decades" is 20 years, "every fortnight" every 14 days, "a week" 7 days
_TO_SMALLER = {"decade": ("year", 10), "fortnight": ("day", 14), "week": ("day", 7)}
_FREQUENCIES = {"daily": 1, "nightly": 1, "weekly": 7, "fortnightly": 14, "monthly": 30, "yearly": 365,
                "annually": 365}  # fmt: skip
FREQUENCY_WORDS = frozenset(_FREQUENCIES)  # "weekly", "fortnightly": values said as one adverb
_CODE = re.compile(r"(?=[a-z]*\d)(?=\d*[a-z])[a-z0-9]{2,6}")
_MONTHS = {m: i for i, m in enumerate(("january", "february", "march", "april", "may", "june", "july", "august",
                                       "september", "october", "november", "december"), 1)}  # fmt: skip
_MONTHS.update({m[:3]: i for m, i in list(_MONTHS.items())})
_MONTHS["sept"] = 9
_DAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")

_NUMBER = re.compile(r"(?<![\w.,])(\d{1,3}(?:,\d{3})+|\d+(?:\.\d+)?)(?![\w])")
_GLUED = re.compile(r"(\d)(?!(?:st|nd|rd|th)\b)([a-zA-Z]{1,5})\b")
_CLOCK = re.compile(r"\b(\d{1,2})(?:[:.h](\d{2}))?\s*(a\.?m\.?|p\.?m\.?)?(?![\w])", re.IGNORECASE)
_HHMM = re.compile(r"\b\d{1,2}[:h]\d{2}\b|\b\d{1,2}\s*[ap]\.?m\b", re.IGNORECASE)
_TOKEN = re.compile(r"[$€£¥%]|[^\W_]+(?:[.'][^\W_]+)*")
_ORDINAL = re.compile(r"^(\d+)(?:st|nd|rd|th)$")


@dataclass(frozen=True)
class Value:
    """One value a statement gives: its words, its kind and a comparable form."""

    text: str
    kind: Kind
    norm: str
    unit: str = ""

    @property
    def measured(self) -> bool:
        """A value that is an amount, a time, a date or a code ("v5"): an attribute holding it holds one at a time."""
        return self.kind in ("money", "quantity", "number", "percent", "date", "time", "code")

    def same(self, other: Value) -> bool:
        """The same value, however written (a number with or without its unit or currency matches)."""
        if self.norm and self.norm == other.norm:
            return self.unit == other.unit or not (self.unit and other.unit)
        return False


def value_of(text: str, entity: str | None = None) -> Value | None:
    """The `Value` of the words ``text`` (``entity``: the entity label the parser gave them), or None for words
    that name nothing (a pronoun, an article)."""
    said = text
    text = _GLUED.sub(r"\1 \2", text)  # "10mg" -> "10 mg", "4k" -> "4 k"; not "3rd"
    words = [w.lower() for w in _TOKEN.findall(text)]
    if not words:
        return None
    kind = _ENTITY_KINDS.get(entity or "", "")
    if kind in ("time", "date") or _temporal(words) or _HHMM.search(text):
        found = _clock(text, words)
        if found is not None:
            return Value(said, "time", found)
        day = _date(words)
        if day is not None:
            return Value(said, "date", day)
        if kind in ("time", "date"):
            kind = ""
    if len(words) == 1 and words[0] in _FREQUENCIES:  # "weekly", "fortnightly"
        return Value(said, "quantity", _fmt(_FREQUENCIES[words[0]]), "day")
    if len(words) == 1 and _CODE.fullmatch(words[0]):  # "v5", "mg4", "7a": a grade, a model, a seat
        return Value(said, "code", words[0])
    number = _amount(text, words)
    if number is not None:
        return _measured(said, words, number, kind)
    return Value(said, kind or "thing", " ".join(words))


def _measured(said: str, words: list[str], number: float, kind: str) -> Value:
    """An amount: money with its currency, a percentage, a quantity in a unit (durations in the smaller one)."""
    currency = next((_CURRENCY[w] for w in words if w in _CURRENCY), "")
    if currency or kind == "money":
        return Value(said, "money", _fmt(number), currency)
    if "%" in words or "percent" in words:
        return Value(said, "percent", _fmt(number), "%")
    unit = next((_UNITS[w] for w in words if w in _UNITS), "")
    if unit in _TO_MINUTES:  # "an hour" is "60 minutes"
        number, unit = number * _TO_MINUTES[unit], "min"
    if unit in _TO_SMALLER:
        smaller, times = _TO_SMALLER[unit]
        number, unit = number * times, smaller
    return Value(said, "quantity" if unit else "number", _fmt(number), unit)


def _temporal(words: list[str]) -> bool:
    if "quarter" in words and ("to" in words or "past" in words):
        return True  # "quarter to six"
    if len(words) >= 2 and words[0] == "half" and _hour_word(words[1]):
        return True  # "half seven"
    return any(w in _MONTHS or w in _DAYS or w in ("am", "pm", "noon", "midnight", "o'clock", "past") for w in words)


def _hour_word(word: str) -> bool:
    """An hour said in a word ("seven"), not an article ("half an hour")."""
    return word not in ("a", "an", "couple", "half") and 1 <= _WORDS.get(word, 0) <= 12


def _fmt(number: float) -> str:
    return str(int(number)) if float(number).is_integer() else f"{number:g}"


def _amount(text: str, words: list[str]) -> float | None:
    """The number the words say, in digits or in words ("2,400", "4k", "three dozen", "twenty-five")."""
    found = _NUMBER.search(text)
    if found is not None:
        digits = found.group(1)
        value = float(digits.replace(",", ""))
        rest = text[found.end() :].split()
        after = rest[0].lower() if rest else ""
        return value * _SCALES.get(after, 1)
    parts = [w for part in words for w in part.split("-")]
    fraction = _fraction(parts)
    return fraction if fraction is not None else _said_in_words(parts)


def _fraction(parts: list[str]) -> float | None:
    """ "three quarters (of an hour)", "a quarter", "half an hour", "half a day"."""
    if "quarter" in parts or "quarters" in parts:
        i = parts.index("quarter") if "quarter" in parts else parts.index("quarters")
        before = _WORDS.get(parts[i - 1], 1) if i and parts[i - 1] not in ("a", "an") else 1
        return before / 4
    if len(parts) > 1 and parts[0] == "half" and (parts[1] in _UNITS or parts[1] in ("a", "an")):
        return 0.5 * (_SCALES.get(parts[2], 1) if len(parts) > 2 else 1)  # "half a dozen" is 6
    return None


def _said_in_words(parts: list[str]) -> float | None:
    """A number in words: "twenty-five", "three dozen", "a hundred", "an hour and a half"."""
    total, current, seen = 0.0, 0.0, False
    for i, word in enumerate(parts):
        if word in ("a", "an"):  # "a hundred", "a dozen", "an hour"; not "a ten-mile ride"
            if i + 1 < len(parts) and (parts[i + 1] in _SCALES or parts[i + 1] in _UNITS) and not seen:
                current, seen = 1.0, True
            continue
        if word in _WORDS:
            current += _WORDS[word]
            seen = True
        elif word in _SCALES and (seen or current):
            current = (current or 1) * _SCALES[word]
            if _SCALES[word] >= 1000:
                total, current = total + current, 0.0
            seen = True
        elif seen and word not in ("and",) and word not in _UNITS:  # "an hour and a half"
            break
    if not seen and any(w in _UNITS and _UNITS[w] in _TO_SMALLER for w in parts):
        return 1.0  # "every fortnight", "each week": one of the unit
    return total + current if seen else None


def _clock(text: str, words: list[str]) -> str | None:
    """A time of day as HH:MM ("7:30pm", "19:30", "half past seven in the evening", "noon")."""
    for word, said in (("noon", "12:00"), ("midday", "12:00"), ("midnight", "00:00")):
        if word in words:
            return said
    evening = any(w in ("pm", "p.m", "evening", "night", "afternoon", "tonight") for w in words)
    found = _past_or_to(words) or _digits(text, words)
    if found is None:
        return None
    hour, minute, later = found
    if not (0 <= hour <= 24 and 0 <= minute < 60):
        return None
    if (evening or later) and hour < 12:
        hour += 12
    return f"{hour % 24:02d}:{minute:02d}"


def _past_or_to(words: list[str]) -> tuple[int, int, bool] | None:
    """ "half past seven", "quarter to eight", "ten past six"."""
    if len(words) >= 2 and words[0] == "half" and _hour_word(words[1]):
        return int(_WORDS[words[1]]), 30, False  # "half seven": half past seven
    if "past" not in words and "to" not in words:
        return None
    i = words.index("past") if "past" in words else words.index("to")
    before, after = words[:i], words[i + 1 : i + 2]
    minute = {"half": 30, "quarter": 15}.get(before[-1] if before else "")
    if minute is None and before:
        minute = int(_amount(before[-1], [before[-1]]) or 0) or None
    hour = _amount(" ".join(after), after) if after else None
    if minute is None or hour is None:
        return None
    if words[i] == "to":
        return (int(hour) - 1) % 24, 60 - minute, False
    return int(hour), minute, False


def _digits(text: str, words: list[str]) -> tuple[int, int, bool] | None:
    """ "7:30pm", "19:30", "7 o'clock"."""
    found = _CLOCK.search(text)
    if found is not None and (found.group(2) or found.group(3) or "o'clock" in words):
        return int(found.group(1)), int(found.group(2) or 0), (found.group(3) or "").lower().startswith("p")
    if "o'clock" in words and words.index("o'clock"):
        i = words.index("o'clock")
        value = _amount(words[i - 1], [words[i - 1]])
        return (int(value), 0, False) if value is not None else None
    return None


def _date(words: list[str]) -> str | None:
    """A day of the year ("3 May", "May 3rd", "the 3rd of May", "3 May 1990"), or a weekday."""
    month = next((_MONTHS[w.rstrip(".")] for w in words if w.rstrip(".") in _MONTHS), None)
    if month is None:
        day_name = next((w for w in words if w in _DAYS or w.rstrip("s") in _DAYS), None)
        return day_name.rstrip("s") if day_name else None
    day = year = None
    for word in words:
        ordinal = _ORDINAL.match(word)
        number = int(ordinal.group(1)) if ordinal else (int(word) if word.isdigit() else None)
        if number is None:
            continue
        if 1 <= number <= 31 and day is None:
            day = number
        elif number >= 1000:
            year = number
    parts = [f"{year:04d}"] if year else []
    parts += [f"{month:02d}"] + ([f"{day:02d}"] if day else [])
    return "-".join(parts)
