"""Scope keys: escaping, trailing separator, widening reads; no id ever reads another's rows."""

from __future__ import annotations

import pytest
from hypothesis import strategies as st

from mnemonite import MemoryScopeError, Scope
from mnemonite.scope import episode_key, episode_pattern, key_range

ADVERSARIAL = [
    "alice",
    "alice2",
    "Alice",
    "a%",
    "a_b",
    "ab",
    "x/y",
    "x",
    "y",
    "a\\b",
    "%",
    "_",
    "/",
    "\\",
    "é",
    "e\u0301",
    "\u200b",
    " a",
    "a ",
]
ids = st.one_of(st.sampled_from(ADVERSARIAL), st.text(alphabet="a%_/\\ 2é", min_size=1, max_size=4).filter(str.strip))


def test_key_has_trailing_separator_and_escapes() -> None:
    assert episode_key("alice", "S1", "rag") == "/user/alice/session/S1/agent/rag/"
    assert episode_key("a/b", "s_1", "x%") == "/user/a%2Fb/session/s%5F1/agent/x%25/"
    assert episode_key("a\\b", "s", "a") == "/user/a%5Cb/session/s/agent/a/"


def test_widening_patterns_match_the_spec_table() -> None:
    assert episode_pattern("alice", "S1", "rag") == "/user/alice/session/S1/agent/rag/"
    assert episode_pattern("alice", "S1", None) == "/user/alice/session/S1/agent/%/"
    assert episode_pattern("alice", None, None) == "/user/alice/session/%/agent/%/"
    assert episode_pattern("alice", None, "rag") == "/user/alice/session/%/agent/rag/"


def test_key_range_brackets_the_prefix() -> None:
    low, high = key_range(episode_pattern("a%", None, None))
    assert low == "/user/a%25/session/"
    assert high == "/user/a%25/session0"


@pytest.mark.parametrize("bad", ["", "   ", "\t", "a\x00b"])
def test_blank_or_nul_ids_are_refused(bad: str) -> None:
    with pytest.raises(MemoryScopeError):
        Scope(user=bad)
    with pytest.raises(MemoryScopeError):
        episode_key("alice", bad, "rag")


@pytest.mark.parametrize("typo", [{"agnet": "rag"}, {"tenant": "t"}, {"sesion": "s1"}])
def test_a_misspelt_component_is_refused_not_ignored(typo: dict[str, str]) -> None:
    """Ignored, a misspelt agent would widen a read to every agent of the user."""
    with pytest.raises(MemoryScopeError, match="unknown component"):
        Scope(user="alice", **typo)
