"""Purging episodes (privacy requests): what a user said goes for good, and what was derived from it is named."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from conftest import ep
from mnemonite import ConsolidationRule, InvalidInputError, Memory, MemoryConfig, NotFoundError, Scope

ALEX = Scope(user="alex")
RULE = ConsolidationRule(id="r", cadence={"every": 1})


@pytest.fixture
async def mem(memory_url: str) -> AsyncIterator[Memory]:
    opened = await Memory.open(config=MemoryConfig(url=memory_url, index_in_background=False, index_on_close=False))
    yield opened
    await opened.close()


async def said(mem: Memory) -> None:
    meta = {"subject": "alex", "predicate": "lives in", "object": "Lisbon"}
    await mem.episodic.put(ep("home", "I live in Lisbon", **meta), user="alex", session="s1", agent="a")
    await mem.episodic.put(ep("pet", "My dog is called Rex"), user="alex", session="s1", agent="a")
    await mem.episodic.put(ep("bob", "I live in Lisbon too"), user="bob", session="s1", agent="a")
    await mem.consolidate(RULE)


async def test_an_episode_is_gone_from_every_read_and_its_facts_are_named(mem: Memory) -> None:
    await said(mem)
    await mem.search(ALEX, "Lisbon", k=5)  # caches hold it now
    derived = [f.id for f in await mem.semantic.facts(Scope(user="alex", agent="a")) if "home" in f.source_episode_ids]
    record = await mem.episodic.purge("home", reason="user asked")
    assert record.episode_ids == ["home"] and record.derived_fact_ids == derived and record.fact_ids == []
    with pytest.raises(NotFoundError):
        await mem.episodic.get("home")
    assert [e.id for e in await mem.episodic.recent("alex")] == ["pet"]
    for query in ("Lisbon", "where do I live", "home town"):
        hits = await mem.search(ALEX, query, k=10, tiers=("episodic",))
        assert "home" not in [h.record.id for h in hits]
    assert [f.id for f in await mem.semantic.facts(Scope(user="alex", agent="a"))]  # kept: derived=False
    assert (await mem.semantic.purges("alex"))[-1] == record
    assert (await mem.episodic.get("bob")).content == "I live in Lisbon too"  # another user's words stay
    assert (await mem.consolidate(RULE)).episodes_scanned == 0  # nothing comes back through consolidation


async def test_derived_facts_are_purged_with_their_episode_when_asked(mem: Memory) -> None:
    await said(mem)
    record = await mem.episodic.purge("home", reason="forget everything", derived=True)
    assert record.fact_ids == record.derived_fact_ids and record.fact_ids
    remaining = await mem.semantic.facts(Scope(user="alex", agent="a"))
    assert all("home" not in f.source_episode_ids for f in remaining)
    hits = await mem.search(ALEX, "Lisbon", k=10)
    assert all("Lisbon" not in h.text for h in hits)


async def test_a_whole_user_is_purged_and_nobody_else(mem: Memory) -> None:
    await said(mem)
    record = await mem.episodic.purge_scope("alex", reason="account deleted", derived=True)
    assert sorted(record.episode_ids) == ["home", "pet"] and record.agent == "a"
    assert await mem.episodic.recent("alex") == [] and await mem.semantic.facts(Scope(user="alex", agent="a")) == []
    assert [e.id for e in await mem.episodic.recent("bob")] == ["bob"]
    assert await mem.search(ALEX, "dog", k=5) == []


@pytest.mark.parametrize("victim", ["alex%", "al", "bo_", "nobody"])
async def test_wrong_ids_and_scopes_change_nothing(mem: Memory, victim: str) -> None:
    await said(mem)
    before = await mem.health()
    with pytest.raises(NotFoundError):
        await mem.episodic.purge_scope(Scope(user=victim, session="none"), reason="x")
    with pytest.raises(NotFoundError):
        await mem.episodic.purge(victim, reason="x")
    with pytest.raises(InvalidInputError):
        await mem.episodic.purge("home", reason="  ")
    assert await mem.health() == before
