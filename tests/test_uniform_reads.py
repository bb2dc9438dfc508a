"""Every read takes a Scope first (a plain user id where a user-wide read makes sense); supersede parses."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from mnemonite import Episode, Memory, MemoryConfig, MemoryScopeError, Scope, SyncMemory

ALEX = Scope(user="alex", agent="a")


@pytest.fixture
async def mem(tmp_path: Path) -> AsyncIterator[Memory]:
    config = MemoryConfig(url=f"sqlite:///{tmp_path / 'm.db'}", index_in_background=False)
    async with await Memory.open(config=config) as memory:
        yield memory


async def test_fact_reads_take_a_scope_or_a_user_id(mem: Memory) -> None:
    mine = await mem.semantic.remember(ALEX, "I live in Berlin")
    other = await mem.semantic.remember(Scope(user="alex", agent="b"), "I like green tea")
    await mem.semantic.remember(Scope(user="alex2", agent="a"), "I live in Rome")
    assert [f.id for f in await mem.semantic.facts(ALEX)] == [mine.id]
    assert {f.id for f in await mem.semantic.facts("alex")} == {mine.id, other.id}
    assert {f.id for f in await mem.semantic.facts(Scope(user="alex"))} == {mine.id, other.id}
    assert len(await mem.semantic.conflicts("alex")) == 2
    assert len(await mem.semantic.conflicts(ALEX)) == 1
    await mem.semantic.purge(mine.id, reason="asked to")
    assert [p.reason for p in await mem.semantic.purges(ALEX)] == ["asked to"]
    assert [p.reason for p in await mem.semantic.purges("alex")] == ["asked to"]
    assert await mem.semantic.purges("alex2") == []


async def test_searches_and_salient_take_a_user_id(mem: Memory) -> None:
    await mem.episodic.put(Episode(content="The kettle is broken"), user="sam", session="S1", agent="a")
    await mem.episodic.put(Episode(content="The kettle is fine"), user="sam2", session="S1", agent="a")
    await mem.semantic.remember(Scope(user="sam", agent="a"), "Sam drinks tea with lemon")
    assert [h.record.content for h in await mem.episodic.search("sam", "kettle")] == ["The kettle is broken"]
    both = await mem.search("sam", "kettle tea")
    expected = {("episodic", "The kettle is broken"), ("semantic", "Sam drinks tea with lemon")}
    assert {(h.tier, h.text) for h in both} == expected
    assert [h.record.text for h in await mem.semantic.search("sam", "lemon")] == ["Sam drinks tea with lemon"]
    assert [s.episode.content for s in await mem.episodic.salient("sam")] == ["The kettle is broken"]


@pytest.mark.parametrize("bad", [None, 42, ("alex", "a")])
async def test_a_scope_that_is_neither_a_scope_nor_a_user_id_is_refused(mem: Memory, bad: object) -> None:
    with pytest.raises(MemoryScopeError, match=r"scope=.* must be a Scope or must be a string"):
        await mem.semantic.facts(bad)  # type: ignore[arg-type]
    with pytest.raises(MemoryScopeError):
        await mem.search(bad, "anything")  # type: ignore[arg-type]


async def test_a_positional_agent_is_no_longer_a_second_form(mem: Memory) -> None:
    with pytest.raises(TypeError):
        await mem.semantic.facts("alex", "a")  # type: ignore[misc]


async def test_supersede_reads_the_new_text_as_remember_does(mem: Memory) -> None:
    old = await mem.semantic.remember(ALEX, "I live in Berlin")
    new = await mem.semantic.supersede(old.id, "I live in Lisbon")
    remembered = await mem.semantic.remember(Scope(user="alex", agent="z"), "I live in Lisbon")
    triple = (new.subject, new.predicate, new.object)
    assert triple == (remembered.subject, remembered.predicate, remembered.object) == ("user", "lives_in", "lisbon")
    assert [f.id for f in await mem.semantic.facts(ALEX, predicate="lives_in")] == [new.id]
    # like a remembered fact, the new version carries its vector as soon as it commits
    [hit] = await mem.semantic.search(ALEX, "which city is home")
    assert hit.record.id == new.id and hit.cosine is not None


async def test_supersede_keeps_given_parts_and_old_links(mem: Memory) -> None:
    person = await mem.graph.create_entity(ALEX, name="Alex", entity_type="person")
    old = await mem.semantic.remember(ALEX, "Alex likes jazz", entities=[(person.id, "about")])
    new = await mem.semantic.supersede(old.id, "Alex likes blues now", subject="alex", predicate="likes")
    assert (new.subject, new.predicate) == ("alex", "likes")
    assert [link.entity_id for link in new.entities] == [person.id]
    unparsed = await mem.semantic.supersede(new.id, "blues, mostly")
    assert (unparsed.subject, unparsed.predicate, unparsed.object) == (None, None, None)


def test_sync_memory_delegates_the_same_forms(tmp_path: Path) -> None:
    with SyncMemory.open(f"sqlite:///{tmp_path / 's.db'}", embedder=None) as mem:
        fact = mem.semantic.remember(ALEX, "I work at Acme")
        assert [f.id for f in mem.semantic.facts("alex")] == [fact.id]
        assert mem.semantic.supersede(fact.id, "I work at Globex").object == "globex"
