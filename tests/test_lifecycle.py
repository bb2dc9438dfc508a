"""Hot / warm / cold on both stores: promotion on access, sweeps, races, stats, working-set-first search."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mnemonite import ConfigurationError, Episode, InvalidInputError, Memory, MemoryConfig, Scope
from mnemonite.models.lifecycle import LifecycleWindows, TierRow, promote

NOW = datetime(2026, 3, 1, 12, tzinfo=UTC)
ALICE = Scope(user="alice", session="s1", agent="a")


def _row(tier: str = "cold", accesses: tuple[datetime, ...] = ()) -> TierRow:
    return TierRow(kind="episode", record_id="e1", tier=tier, accesses=accesses, changed_at=NOW)  # type: ignore[arg-type]


def test_the_spec_rules_of_promotion() -> None:
    windows = LifecycleWindows()
    warm = promote(_row(), NOW, windows)
    assert warm.tier == "warm" and warm.accesses == (NOW,) and warm.changed_at == NOW
    second = promote(warm, NOW + timedelta(days=1), windows)
    assert second.tier == "warm"
    third = promote(second, NOW + timedelta(days=2), windows)
    assert third.tier == "hot"
    stale = promote(_row("warm", (NOW - timedelta(days=8), NOW - timedelta(days=9))), NOW, windows)
    assert stale.tier == "warm" and stale.accesses == (NOW,)  # accesses older than 7 days do not count


@given(st.lists(st.integers(min_value=0, max_value=30 * 24), min_size=1, max_size=12))
def test_promotion_never_demotes_and_keeps_at_most_three_accesses(hours: list[int]) -> None:
    windows, row, order = LifecycleWindows(), _row(), {"cold": 0, "warm": 1, "hot": 2}
    for hour in sorted(hours):
        after = promote(row, NOW + timedelta(hours=hour), windows)
        assert order[after.tier] >= order[row.tier] and len(after.accesses) <= 3
        row = after


@pytest.mark.parametrize(
    "fields", [{"hot_ttl": timedelta(0)}, {"window": timedelta(days=-1)}, {"warm_after": 3, "hot_after": 2}]
)
def test_bad_windows_are_refused(fields: dict[str, object]) -> None:
    with pytest.raises(ConfigurationError):
        LifecycleWindows(**fields)  # type: ignore[arg-type]


async def _episodes(mem: Memory, n: int) -> list[Episode]:
    stored = [Episode(id=f"e{i}", content=f"note number {i} about topic {i}") for i in range(n)]
    await mem.episodic.put_many(stored, user=ALICE.user, session=ALICE.session, agent=ALICE.agent)
    return [await mem.episodic.get(e.id) for e in stored]


async def test_access_promotes_and_sweep_demotes(mem_on_both: Memory) -> None:
    mem = mem_on_both
    e0, e1, _ = await _episodes(mem, 3)
    assert await mem.lifecycle.tiers("episode", ["e0"]) == {"e0": "cold"}
    await mem.lifecycle.access([e0, e1], now=NOW)
    for minutes in (10, 20):
        await mem.lifecycle.access([e0], now=NOW + timedelta(minutes=minutes))
    assert await mem.lifecycle.tiers("episode", ["e0", "e1", "e2"]) == {"e0": "hot", "e1": "warm", "e2": "cold"}
    assert await mem.lifecycle.stats("alice") == (await mem.lifecycle.stats(ALICE)).model_copy()
    stats = await mem.lifecycle.stats("alice")
    assert (stats.hot, stats.warm, stats.cold) == (1, 1, 1)

    early = await mem.lifecycle.sweep(now=NOW + timedelta(minutes=50))
    assert (early.hot_to_warm, early.warm_to_cold) == (0, 0)
    later = await mem.lifecycle.sweep(now=NOW + timedelta(hours=2))
    assert (later.hot_to_warm, later.warm_to_cold) == (1, 0)
    assert await mem.lifecycle.tiers("episode", ["e0"]) == {"e0": "warm"}
    week = await mem.lifecycle.sweep("alice", now=NOW + timedelta(days=8))
    assert (week.hot_to_warm, week.warm_to_cold) == (0, 2)
    stats = await mem.lifecycle.stats("alice")
    assert (stats.hot, stats.warm, stats.cold) == (0, 0, 3)


async def test_a_sweep_of_another_user_leaves_these_records_alone(mem_on_both: Memory) -> None:
    (e0,) = await _episodes(mem_on_both, 1)
    await mem_on_both.lifecycle.access([e0], now=NOW)
    report = await mem_on_both.lifecycle.sweep("bob", now=NOW + timedelta(days=30))
    assert report.warm_to_cold == 0
    assert await mem_on_both.lifecycle.tiers("episode", ["e0"]) == {"e0": "warm"}


async def test_concurrent_accesses_are_all_counted(mem_on_both: Memory) -> None:
    (e0,) = await _episodes(mem_on_both, 1)
    rows = await asyncio.gather(*(mem_on_both.lifecycle.access([e0], now=NOW) for _ in range(3)))
    assert sorted(len(r[0].accesses) for r in rows) == [1, 2, 3]
    assert await mem_on_both.lifecycle.tiers("episode", ["e0"]) == {"e0": "hot"}


async def test_sweeps_racing_accesses_lose_no_access(mem_on_both: Memory) -> None:
    mem = mem_on_both
    records = await _episodes(mem, 30)
    late = NOW + timedelta(hours=3)
    await mem.lifecycle.access(records, now=NOW)
    work = [mem.lifecycle.access(records[i % 2 :: 2], now=late + timedelta(seconds=i)) for i in range(6)]
    work += [mem.lifecycle.sweep(now=late + timedelta(minutes=5)) for _ in range(6)]
    await asyncio.gather(*work)
    tiers = await mem.lifecycle.tiers("episode", [r.id for r in records])
    # four accesses each (the last three within the hour before every sweep): a sweep may only demote
    # a record it saw untouched for an hour, and every later access promotes it again.
    assert set(tiers.values()) <= {"hot", "warm"}
    again = await mem.lifecycle.access(records, now=late + timedelta(minutes=10))
    assert {r.tier for r in again} == {"hot"} and {len(r.accesses) for r in again} == {3}


async def test_access_refuses_records_that_are_not_stored_ones(mem_on_both: Memory) -> None:
    with pytest.raises(InvalidInputError):
        await mem_on_both.lifecycle.access([Episode(content="never stored")])
    with pytest.raises(InvalidInputError):
        await mem_on_both.lifecycle.access(["e0"])  # type: ignore[list-item]


async def test_searches_leave_tiers_alone_unless_tracking_is_on(memory_url: str) -> None:
    config = MemoryConfig(url=memory_url, embedder="none")
    mem = await Memory.open(config=config)
    try:
        await _episodes(mem, 3)
        hits = await mem.search("alice", "note number 1")
        assert hits and (await mem.lifecycle.stats("alice")).cold == 3
    finally:
        await mem.close()
    mem = await Memory.open(config=config.model_copy(update={"track_lifecycle": True}))
    try:
        hits = await mem.search("alice", "note number 1", k=1)
        assert await mem.lifecycle.tiers("episode", [hits[0].record.id]) == {hits[0].record.id: "warm"}
    finally:
        await mem.close()


async def test_working_set_first_search_widens_only_when_it_must(memory_url: str) -> None:
    mem = await Memory.open(config=MemoryConfig(url=memory_url, index_in_background=False))
    try:
        texts = ["my cat Tom sleeps on the sofa", "the quarterly tax return is due in April", "we bought a red bike"]
        stored = [Episode(id=f"t{i}", content=t) for i, t in enumerate(texts)]
        await mem.episodic.put_many(stored, user="alice", session="s1", agent="a")
        await mem.index()
        await mem.lifecycle.access([await mem.episodic.get("t0")])
        warm = await mem.lifecycle.search("alice", "where does the cat sleep?", 3, min_cosine=0.3)
        assert [h.record.id for h in warm] == ["t0"]  # the working set held it: the cold records were not read
        widened = await mem.lifecycle.search("alice", "when is the tax return due?", 3, min_cosine=0.3)
        assert widened[0].record.id == "t1" and len(widened) == 3
        assert (await mem.lifecycle.tiers("episode", ["t1"]))["t1"] == "warm"  # found, so accessed
        with pytest.raises(InvalidInputError):
            await mem.lifecycle.search("alice", "cat", enough=0)
    finally:
        await mem.close()


async def test_a_search_filter_can_keep_only_the_working_set(mem_on_both: Memory) -> None:
    from mnemonite.models.search import SearchFilter

    records = await _episodes(mem_on_both, 4)
    await mem_on_both.lifecycle.access(records[1:2], now=NOW)
    working = SearchFilter(scope=Scope(user="alice"), lifecycle=("hot", "warm"))
    hits = await mem_on_both._engine.search("note number topic", working, 10)
    assert [h.record.id for h in hits] == ["e1"]
    cold = await mem_on_both._engine.search("note number topic", working.model_copy(update={"lifecycle": ("cold",)}))
    assert sorted(h.record.id for h in cold) == ["e0", "e2", "e3"]
