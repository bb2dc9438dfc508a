"""Scope keys: escaping, trailing separator, widening reads; no id ever reads another's rows."""

from __future__ import annotations

import asyncio
import itertools

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memstrata import Episode, MemoryScopeError, Scope, SQLiteMemoryStore
from memstrata.scope import episode_key, episode_pattern, key_range

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


def _matches(scope: tuple[str, str, str], user: str, session: str | None, agent: str | None) -> bool:
    return scope[0] == user and session in (None, scope[1]) and agent in (None, scope[2])


async def _check_isolation(scopes: list[tuple[str, str, str]]) -> None:
    store = SQLiteMemoryStore(":memory:")
    await store.bootstrap()
    try:
        for i, (u, s, a) in enumerate(scopes):
            await store.put(Episode(id=f"e{i}", content=f"c{i}"), user=u, session=s, agent=a)
        users = {u for u, _, _ in scopes}
        sessions = {s for _, s, _ in scopes} | {None}
        agents = {a for _, _, a in scopes} | {None}
        for user, session, agent in itertools.product(users, sessions, agents):
            got = {e.id for e in await store.recent(user, session, agent, limit=1000)}
            want = {f"e{i}" for i, sc in enumerate(scopes) if _matches(sc, user, session, agent)}
            assert got == want, (user, session, agent)
    finally:
        await store.close()


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(ids, ids, ids), min_size=1, max_size=8))
def test_no_read_returns_another_scopes_rows(scopes: list[tuple[str, str, str]]) -> None:
    asyncio.run(_check_isolation(scopes))


async def test_prefix_and_case_neighbours_stay_apart(store: SQLiteMemoryStore) -> None:
    for user in ("alice", "alice2", "Alice", "ali", "alic_"):
        await store.put(Episode(id=f"id-{user}", content=user), user=user, session="S1", agent="rag")
    for user in ("alice", "alice2", "Alice", "ali", "alic_"):
        assert [e.id for e in await store.recent(user, limit=10)] == [f"id-{user}"]
