"""Turning a query into full-text terms, and finding the source names it mentions."""

from __future__ import annotations

import re
from collections.abc import Iterable

MAX_TERMS = 64
MAX_QUERY_CHARS = 10_000
_WORD = re.compile(r"[^\W_]+", re.UNICODE)
STOP_WORDS = frozenset(
    """a an the and or but if of at by for with about against between into through during before after above below
    to from up down in out on off over under again further then once here there when where why how all any both each
    few more most other some such no nor not only own same so than too very s t can will just don should now i me my
    myself we our ours you your he him his she her it its they them their what which who whom this that these those
    am is are was were be been being have has had having do does did doing would could""".split()
)


def terms(query: str, exclude: Iterable[str] = ()) -> list[str]:
    """Lower-cased words minus stop words and excluded names, in order, without repeats."""
    skip = {word.lower() for name in exclude for word in _WORD.findall(name)}
    seen: dict[str, None] = {}
    for word in _WORD.findall(query[:MAX_QUERY_CHARS].lower()):
        if word not in STOP_WORDS and word not in skip:
            seen.setdefault(word, None)
    return list(seen)[:MAX_TERMS]


def mentioned(query: str, names: Iterable[str]) -> list[str]:
    """The names that occur in the query as whole words (case-insensitive)."""
    lowered = query.lower()
    return [name for name in names if re.search(rf"(?<!\w){re.escape(name.lower())}(?!\w)", lowered)]


def without(query: str, names: Iterable[str]) -> str:
    """The query with the given names (and their possessive ``'s``) taken out, spaces tidied."""
    for name in names:
        query = re.sub(rf"(?<!\w){re.escape(name)}(?:['\u2019]s)?(?!\w)", " ", query, flags=re.IGNORECASE)
    return " ".join(query.split())
