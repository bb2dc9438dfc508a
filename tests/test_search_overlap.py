"""A search's store reads that do not depend on each other run at the same time, and what it skips or does not
redo (real SQLite and PostgreSQL)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conftest import T0, ep
from mnemonite import Episode, Memory, MemoryConfig, Scope, SearchHit
from mnemonite.search import hybrid

TURNS = [
    "We should book the flights to Lisbon before prices go up",
    "My sister is moving to Porto in the spring",
    "The dentist appointment moved to Thursday morning",
    "I started learning Portuguese with an app",
    "Our team ships the billing service next week",
    "The cat knocked the plant off the windowsill again",
    "Remind me to renew the passport, it expires in May",
    "I found a cheap hotel near the old town in Lisbon",
    "The billing service migration needs a database freeze",
    "We could take the train from Lisbon to Porto",
    "My knee hurts after the long run on Sunday",
    "Let's try the seafood place my sister recommended",
]


@pytest.fixture
async def timeline(memory_url: str) -> AsyncIterator[Memory]:
    """One user's conversation in two sessions, every turn embedded."""
    mem = await Memory.open(config=MemoryConfig(url=memory_url, index_in_background=False))
    for n, text in enumerate(TURNS):
        await mem.episodic.put(ep(f"t{n}", text, minutes=n), user="ana", session=f"s{n // 6}", agent="a")
    await mem.index()
    yield mem
    await mem.close()


def together(calls: int) -> Callable[[Callable[..., Awaitable[Any]]], Callable[..., Awaitable[Any]]]:
    """Wrap a store method so that each call waits (at most 5 s) until ``calls`` of them are in flight at once."""
    started: list[None] = []
    everyone = asyncio.Event()

    def wrap(method: Callable[..., Awaitable[Any]]) -> Callable[..., Awaitable[Any]]:
        async def waiting(*args: Any, **kwargs: Any) -> Any:
            started.append(None)
            if len(started) >= calls:
                everyone.set()
            await asyncio.wait_for(everyone.wait(), timeout=5)
            return await method(*args, **kwargs)

        return waiting

    return wrap


async def test_the_tiers_first_reads_leave_together(timeline: Memory, monkeypatch: pytest.MonkeyPatch) -> None:
    store = timeline._store
    monkeypatch.setattr(store, "positions", together(2)(store.positions))
    hits = await timeline.search(Scope(user="ana"), "trip to Lisbon", k=3)  # episodic and semantic tiers
    assert hits and hits[0].record.id in {"t0", "t7", "t9"}


async def test_episodes_read_back_equal_validated_ones(memory_url: str) -> None:
    """Rows are decoded without validating them again: the result is the model validation makes of them."""
    mem = await Memory.open(config=MemoryConfig(url=memory_url, embedder="none"))
    try:
        stored = [
            ep("plain", "a plain turn", minutes=1),
            ep("meta", "moved to Porto", minutes=2, intent="update", replaces="old", subject="ana", confidence=0.5),
            Episode(id="secret", content="pin is 4321", source_node="ana", sensitivity="secret", timestamp=T0),
        ]
        await mem.episodic.put_many(stored, user="ana", session="s/1", agent="a_b")
        await mem._store.touch_episodes(["meta"])
        for episode in await mem.episodic.recent("ana", limit=10):
            validated = Episode.model_validate(episode.model_dump())
            assert episode == validated and episode.model_dump_json() == validated.model_dump_json()
            assert repr(episode) == repr(validated)
        touched = await mem._store.get_episode("meta")
        assert touched is not None and touched.access_count >= 1 and touched.last_accessed_at is not None
    finally:
        await mem.close()


async def test_a_tier_without_rows_asks_postgresql_for_no_vectors(
    postgres_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    mem = await Memory.open(config=MemoryConfig(url=postgres_url, index_in_background=False))
    try:
        await mem.episodic.put(ep("t0", TURNS[0]), user="ana", session="s", agent="a")
        await mem.episodic.put(ep("b0", "Bruno booked flights to Lisbon"), user="bruno", session="s", agent="a")
        await mem.semantic.remember(Scope(user="bruno", agent="a"), "Bruno flies to Lisbon in May")
        await mem.index()
        asked: list[str] = []
        nearest_rows = mem._store.nearest_rows

        async def recorded(kind: str, *args: Any) -> Any:
            asked.append(kind)
            return await nearest_rows(kind, *args)

        monkeypatch.setattr(mem._store, "nearest_rows", recorded)
        hits = await mem.search(Scope(user="ana"), "flights to Lisbon", k=3)  # episodic and semantic tiers
        assert [h.record.id for h in hits] == ["t0"] and asked == ["episode"]
        hits = await mem.search(Scope(user="bruno"), "flights to Lisbon", k=3)
        assert {h.tier for h in hits} == {"episodic", "semantic"} and sorted(asked) == ["episode", "episode", "fact"]
    finally:
        await mem.close()


async def test_hits_equal_validated_ones(timeline: Memory) -> None:
    """Hits are built without validating the engine's numbers again: each equals the validated model."""
    hits = await timeline.search(Scope(user="ana"), "Lisbon hotel", k=5)
    assert hits
    for hit in hits:
        validated = SearchHit(**{name: getattr(hit, name) for name in SearchHit.model_fields})
        assert hit == validated and hit.model_dump_json() == validated.model_dump_json()
        assert all(type(getattr(hit, name)) in (int, float, type(None)) for name in ("score", "cosine", "fused"))


@given(
    st.dictionaries(st.integers(0, 10_000), st.sampled_from([0.0, 0.25, 0.5, 1.0]) | st.floats(0, 1), max_size=300),
    st.integers(0, 320),
)
def test_the_head_is_the_sorted_prefix(scores: dict[int, float], n: int) -> None:
    """However it is picked (a heap for a short head), the head is the sorted order's prefix, ties older first."""
    assert hybrid._head(scores, n) == sorted(scores, key=lambda s: (-scores[s], s))[:n]
