"""The episodic tier: put, widening recent, idempotence, access tracking, salience ranking."""

from __future__ import annotations

from typing import Any

import pytest

from conftest import at, ep
from mnemonite import (
    Episode,
    EpisodeConflictError,
    InvalidInputError,
    Memory,
    MemoryScopeError,
    NotFoundError,
    SalienceContext,
    Scope,
)


@pytest.fixture
def mem(mem_on_both: Memory) -> Memory:
    return mem_on_both


@pytest.fixture
async def filled(mem: Memory) -> Memory:
    minute = 0
    for session in ("S1", "S2"):
        for agent in ("rag", "planner"):
            for _ in range(2):
                minute += 1
                await mem.episodic.put(
                    ep(f"{session}-{agent}-{minute}", minutes=minute), user="alice", session=session, agent=agent
                )
    await mem.episodic.put(ep("bob-1", minutes=99), user="bob", session="S1", agent="rag")
    return mem


async def test_spec_widening_table(filled: Memory) -> None:
    recent = filled.episodic.recent
    assert [e.id for e in await recent("alice", "S1", "rag")] == ["S1-rag-2", "S1-rag-1"]
    assert [e.id for e in await recent("alice", "S1")] == ["S1-planner-4", "S1-planner-3", "S1-rag-2", "S1-rag-1"]
    assert [e.id for e in await recent("alice", agent="rag")] == ["S2-rag-6", "S2-rag-5", "S1-rag-2", "S1-rag-1"]
    assert len(await recent("alice")) == 8
    assert [e.id for e in await recent("alice", limit=3)] == ["S2-planner-8", "S2-planner-7", "S2-rag-6"]
    assert [e.id for e in await recent(Scope(user="alice", agent="planner", session="S2"))] == [
        "S2-planner-8",
        "S2-planner-7",
    ]


async def test_recent_orders_by_caller_time_not_insertion(mem: Memory) -> None:
    await mem.episodic.put(ep("late", minutes=10), user="u", session="s", agent="a")
    await mem.episodic.put(ep("early", minutes=1), user="u", session="s", agent="a")
    assert [e.id for e in await mem.episodic.recent("u")] == ["late", "early"]


async def test_stored_episode_round_trips(mem: Memory) -> None:
    original = ep("e1", "hello", 3, subject="x", nested={"k": [1, 2]})
    stored = await mem.episodic.put(original.model_copy(update={"source_node": "n1"}), user="u", session="s", agent="a")
    got = await mem.episodic.get("e1")
    assert got.model_dump(exclude={"access_count", "last_accessed_at"}) == stored.model_dump(
        exclude={"access_count", "last_accessed_at"}
    )
    assert got.timestamp == at(3) and got.metadata == {"subject": "x", "nested": {"k": [1, 2]}}


async def test_put_is_idempotent_but_refuses_a_different_episode_under_the_same_id(mem: Memory) -> None:
    await mem.episodic.put(ep("e1", "hello"), user="u", session="s", agent="a")
    await mem.episodic.put(ep("e1", "hello"), user="u", session="s", agent="a")
    with pytest.raises(EpisodeConflictError):
        await mem.episodic.put(ep("e1", "changed"), user="u", session="s", agent="a")
    for content in ("hello", "a guess"):  # another user's episode is neither described nor compared
        with pytest.raises(EpisodeConflictError, match=r"^episode id 'e1' is taken: choose another id$"):
            await mem.episodic.put(ep("e1", content), user="other", session="s", agent="a")
    assert (await mem.health()).fragment_count == 1


async def test_a_retry_without_a_time_of_its_own_is_the_same_episode(mem: Memory) -> None:
    """An episode put without a timestamp takes "now", which its retry cannot repeat: the retry is a no-op."""
    first = await mem.episodic.put(Episode(id="e1", content="hello"), user="u", session="s", agent="a")
    again = await mem.episodic.put(Episode(id="e1", content="hello"), user="u", session="s", agent="a")
    assert again.timestamp == first.timestamp and (await mem.health()).fragment_count == 1
    with pytest.raises(EpisodeConflictError, match="another timestamp"):  # a time given is compared
        await mem.episodic.put(ep("e1", "hello", 3), user="u", session="s", agent="a")
    with pytest.raises(EpisodeConflictError, match="another content"):
        await mem.episodic.put(Episode(id="e1", content="changed"), user="u", session="s", agent="a")


async def test_put_many_is_all_or_nothing(mem: Memory) -> None:
    await mem.episodic.put(ep("e1", "hello"), user="u", session="s", agent="a")
    batch = [ep("e2"), ep("e3"), ep("e1", "different")]
    with pytest.raises(EpisodeConflictError):
        await mem.episodic.put_many(batch, user="u", session="s", agent="a")
    assert (await mem.health()).fragment_count == 1
    assert await mem.episodic.put_many([ep("e2"), ep("e3")], user="u", session="s", agent="a") == 2


async def test_scope_must_be_complete_and_consistent(mem: Memory) -> None:
    with pytest.raises(MemoryScopeError, match="session"):
        await mem.episodic.put(ep("e1"), user="u", agent="a")
    carried = ep("e2").model_copy(update={"user": "u", "session": "s", "agent": "a"})
    assert (await mem.episodic.put(carried)).user == "u"
    with pytest.raises(MemoryScopeError, match="carries"):
        await mem.episodic.put(carried.model_copy(update={"id": "e3"}), user="v")
    with pytest.raises(MemoryScopeError):
        await mem.episodic.put(ep("e4"), user=" ", session="s", agent="a")
    with pytest.raises(MemoryScopeError):
        await mem.episodic.recent(Scope(user="u"), "s")
    with pytest.raises(InvalidInputError):
        await mem.episodic.put({"content": "x"}, user="u", session="s", agent="a")  # type: ignore[arg-type]
    assert (await mem.health()).fragment_count == 1


async def test_limit_must_be_positive(mem: Memory) -> None:
    with pytest.raises(InvalidInputError, match="limit=0 must be at least 1"):
        await mem.episodic.recent("u", limit=0)


@pytest.mark.parametrize(
    "read",
    [
        lambda mem: mem.semantic.deltas(limit=-1),
        lambda mem: mem.semantic.conflicts(Scope(user="u"), limit=-1),
        lambda mem: mem.graph.search_entities(Scope(user="u"), "Alice", limit=0),
        lambda mem: mem.graph.edges_from("e", limit=-1),
        lambda mem: mem.graph.edges_to("e", limit=0),
        lambda mem: mem.tools.calls("u", limit=-1),
    ],
)
async def test_a_limit_below_one_never_means_all(mem: Memory, read: Any) -> None:
    with pytest.raises(InvalidInputError, match="must be at least 1"):
        await read(mem)


async def test_get_unknown_episode(mem: Memory) -> None:
    with pytest.raises(NotFoundError):
        await mem.episodic.get("nope")


async def test_reads_track_access(filled: Memory) -> None:
    assert (await filled.episodic.get("S1-rag-1")).access_count == 0
    await filled.episodic.recent("alice", "S1", "rag")
    await filled.episodic.recent("alice", "S1", "rag")
    touched = await filled.episodic.get("S1-rag-1")
    assert touched.access_count == 2 and touched.last_accessed_at is not None
    assert (await filled.episodic.get("bob-1")).access_count == 0


async def test_salient_ranks_by_recency_of_last_access(filled: Memory) -> None:
    # Every episode was created long ago; one of them is read now, which makes it salient again.
    await filled.episodic.recent("alice", "S1", "rag", limit=1)
    ranked = await filled.episodic.salient(Scope(user="alice"), limit=3, context=SalienceContext())
    assert ranked[0].episode.id == "S1-rag-2"
    assert ranked[0].salience > 0.99
    assert all(r.salience < 0.01 for r in ranked[1:])
    assert (await filled.episodic.get("S1-rag-2")).access_count == 2  # the salient read counts too


async def test_record_is_put_in_the_specifications_words(mem: Memory) -> None:
    scope = Scope(user="alice", session="S1", agent="rag")
    recorded = await mem.episodic.record(scope, "Alice booked the flight to Lima", timestamp=at(5), source_node="chat")
    assert (recorded.user, recorded.session, recorded.agent, recorded.source_node) == ("alice", "S1", "rag", "chat")
    assert [e.id for e in await mem.episodic.recent(scope)] == [recorded.id]
    for bad_scope in (Scope(user="alice"), "alice"):
        with pytest.raises(MemoryScopeError):
            await mem.episodic.record(bad_scope, "no session")  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError):
        await mem.episodic.record(scope, "   ")
    with pytest.raises(InvalidInputError):
        await mem.episodic.record(scope, "smuggled", user="bob")
    assert len(await mem.episodic.recent("alice")) == 1


async def test_recent_until_reads_a_page_of_the_past(mem: Memory) -> None:
    for minute in range(6):
        await mem.episodic.put(ep(f"m{minute}", minutes=minute), user="u", session="s", agent="a")
    assert [e.id for e in await mem.episodic.recent("u", limit=2, until=at(3))] == ["m3", "m2"]
    assert [e.id for e in await mem.episodic.recent("u", "s", limit=10, until=at(1.5))] == ["m1", "m0"]
    assert await mem.episodic.recent("u", until=at(-1)) == []
