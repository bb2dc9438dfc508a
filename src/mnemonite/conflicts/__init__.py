"""The five-stage conflict pipeline of `semantic.remember`, and the locale packs it reads."""

from mnemonite.conflicts.english import ENGLISH
from mnemonite.conflicts.pack import (
    MAX_FACT_CHARS,
    USER,
    LocalePack,
    Normaliser,
    Triple,
    canonical,
    check_name,
    define_locale_pack,
    locale_pack,
    text_hash,
)
from mnemonite.conflicts.parsed import Parsed
from mnemonite.conflicts.pipeline import Outcome, decide, open_to_parsing, reconsider

__all__ = [
    "ENGLISH",
    "MAX_FACT_CHARS",
    "USER",
    "LocalePack",
    "Normaliser",
    "Outcome",
    "Parsed",
    "Triple",
    "canonical",
    "check_name",
    "decide",
    "define_locale_pack",
    "locale_pack",
    "open_to_parsing",
    "reconsider",
    "text_hash",
]
