"""The fact side: apply_delta's four paths, resolution of `replaces`, atomicity, time travel.

Part of the store contract: every test runs on SQLite and on PostgreSQL (``mem_on_both``).
"""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from conftest import at, ep
from mnemonite import (
    AddDelta,
    DeleteDelta,
    DeltaValidationError,
    FactConflictError,
    Memory,
    NoopDelta,
    NotFoundError,
    Scope,
    UpdateDelta,
)

NOW = datetime(2025, 6, 1, tzinfo=UTC)


def prov(*episodes: str, rule: str = "r") -> dict[str, Any]:
    return {"source_episode_ids": list(episodes), "promotion_ts": NOW, "rule_id": rule, "confidence": 1.0}


def add(text: str, *episodes: str, **payload: Any) -> AddDelta:
    return AddDelta(fact_payload={"text": text, **payload}, **prov(*episodes))


async def snapshot(mem: Memory) -> tuple[Any, ...]:
    health = await mem.health()
    log = await mem.semantic.deltas(limit=10_000)
    return health.fact_count, health.active_fact_count, len(log)


@pytest.fixture
def mem(mem_on_both: Memory) -> Memory:
    return mem_on_both


@pytest.fixture
async def alice(mem: Memory) -> Memory:
    await mem.episodic.put_many(
        [ep("e1", "Alice lives in Paris", 0), ep("e2", "Alice moved to Berlin", 10), ep("e3", "Alice left Berlin", 20)],
        user="alice",
        session="s1",
        agent="rag",
    )
    await mem.episodic.put(ep("b1", "Bob likes tea"), user="bob", session="s1", agent="rag")
    return mem


async def test_add_inserts_a_fact_with_provenance(alice: Memory) -> None:
    record = await alice.semantic.apply_delta(add("Alice lives in Paris", "e1", subject="Alice"))
    fact = await alice.semantic.get(record.fact_id or "")
    assert (fact.user, fact.agent, fact.status) == ("alice", "rag", "active")
    assert fact.source_episode_ids == ["e1"] and fact.rule_id == "r"
    assert fact.valid_from == at(0)  # world time from the source episode
    assert fact.valid_to is None and fact.superseded_at is None


async def test_add_needs_a_scope(alice: Memory) -> None:
    with pytest.raises(DeltaValidationError, match="user and agent"):
        await alice.semantic.apply_delta(add("floating fact"))
    record = await alice.semantic.apply_delta(add("explicit", user="carol", agent="x"))
    assert (await alice.semantic.get(record.fact_id or "")).user == "carol"


async def test_payload_scope_must_agree_with_source_episodes(alice: Memory) -> None:
    with pytest.raises(DeltaValidationError, match="differs"):
        await alice.semantic.apply_delta(add("sneaky", "e1", user="bob", agent="rag"))


async def test_update_closes_the_old_fact_and_writes_lineage(alice: Memory) -> None:
    first = await alice.semantic.apply_delta(add("Alice lives in Paris", "e1"))
    update = UpdateDelta(replaces=["e1"], fact_payload={"text": "Alice lives in Berlin"}, **prov("e2"))
    second = await alice.semantic.apply_delta(update)
    assert second.closed_fact_ids == [first.fact_id]
    old = await alice.semantic.get(first.fact_id or "")
    new = await alice.semantic.get(second.fact_id or "")
    assert old.status == "superseded" and old.superseded_at == new.recorded_at
    assert old.valid_to == new.valid_from == at(10)
    lineage = await alice.semantic.lineage(new.id)
    assert [(x.new_id, x.old_id, x.relation) for x in lineage] == [(new.id, old.id, "SUPERSEDES")]
    assert [f.id for f in await alice.semantic.history(old.id)] == [old.id, new.id]
    assert [f.text for f in await alice.semantic.facts("alice")] == ["Alice lives in Berlin"]


async def test_update_by_fact_id(alice: Memory) -> None:
    first = await alice.semantic.apply_delta(add("Paris", "e1"))
    second = await alice.semantic.apply_delta(
        UpdateDelta(replaces=[first.fact_id or ""], fact_payload={"text": "Berlin"}, **prov("e2"))
    )
    assert second.closed_fact_ids == [first.fact_id]


async def test_delete_closes_without_successor(alice: Memory) -> None:
    first = await alice.semantic.apply_delta(add("Paris", "e1"))
    record = await alice.semantic.apply_delta(DeleteDelta(replaces=["e1"], **prov("e3")))
    assert record.fact_id is None and record.closed_fact_ids == [first.fact_id]
    fact = await alice.semantic.get(first.fact_id or "")
    assert fact.status == "forgotten" and fact.valid_to == at(20)
    assert await alice.semantic.facts("alice") == []


async def test_noop_is_audit_only(alice: Memory) -> None:
    before = await snapshot(alice)
    record = await alice.semantic.apply_delta(NoopDelta(**prov("e1")))
    assert record.kind == "noop" and record.applied_at is not None
    after = await snapshot(alice)
    assert after[:2] == before[:2] and after[2] == before[2] + 1


@pytest.mark.parametrize("ref", ["nope", "b1"])
async def test_unresolvable_replaces_changes_nothing(alice: Memory, ref: str) -> None:
    await alice.semantic.apply_delta(add("Paris", "e1"))
    before = await snapshot(alice)
    with pytest.raises(FactConflictError, match="no active fact"):
        await alice.semantic.apply_delta(UpdateDelta(replaces=["e1", ref], fact_payload={"text": "x"}, **prov("e2")))
    assert await snapshot(alice) == before
    assert [f.text for f in await alice.semantic.facts("alice")] == ["Paris"]


async def test_episode_with_several_active_facts_is_ambiguous(alice: Memory) -> None:
    await alice.semantic.apply_deltas([add("Paris", "e1"), add("France", "e1")])
    with pytest.raises(FactConflictError, match="2 active facts"):
        await alice.semantic.apply_delta(DeleteDelta(replaces=["e1"], **prov("e2")))


async def test_replacing_a_closed_fact_is_a_conflict(alice: Memory) -> None:
    first = await alice.semantic.apply_delta(add("Paris", "e1"))
    await alice.semantic.apply_delta(DeleteDelta(replaces=["e1"], **prov("e2")))
    with pytest.raises(FactConflictError, match="forgotten"):
        await alice.semantic.apply_delta(DeleteDelta(replaces=[first.fact_id or ""], **prov("e3")))


async def test_replaces_cannot_reach_into_another_scope(alice: Memory) -> None:
    bobs = await alice.semantic.apply_delta(add("Bob likes tea", "b1"))
    with pytest.raises(FactConflictError, match="another"):
        await alice.semantic.apply_delta(DeleteDelta(replaces=[bobs.fact_id or ""], **prov("e1")))
    assert (await alice.semantic.get(bobs.fact_id or "")).status == "active"


async def test_applying_the_same_delta_twice_applies_it_once(alice: Memory) -> None:
    delta = add("Paris", "e1")
    first = await alice.semantic.apply_delta(delta)
    again = await alice.semantic.apply_delta(delta.model_dump(mode="json"))
    assert again == first
    assert (await alice.health()).fact_count == 1


async def test_a_failing_batch_applies_nothing(alice: Memory) -> None:
    before = await snapshot(alice)
    bad = UpdateDelta(replaces=["missing"], fact_payload={"text": "x"}, **prov("e2"))
    with pytest.raises(FactConflictError):
        await alice.semantic.apply_deltas([add("Paris", "e1"), add("Berlin", "e2"), bad])
    assert await snapshot(alice) == before


async def test_invalid_payload_is_refused_before_any_change(alice: Memory) -> None:
    before = await snapshot(alice)
    for payload in ({}, {"text": ""}, {"text": "x", "memory_type": "gossip"}, {"text": "x", "colour": "red"}):
        with pytest.raises(DeltaValidationError, match="fact_payload"):
            await alice.semantic.apply_delta(AddDelta(fact_payload=payload, **prov("e1")))
    assert await snapshot(alice) == before


async def test_as_of_replays_what_memory_believed(alice: Memory) -> None:
    first = await alice.semantic.apply_delta(add("Paris", "e1"))
    await asyncio.sleep(0.002)
    between = datetime.now(UTC)
    await asyncio.sleep(0.002)
    await alice.semantic.apply_delta(UpdateDelta(replaces=["e1"], fact_payload={"text": "Berlin"}, **prov("e2")))
    then = await alice.semantic.facts("alice", as_of=between)
    assert [(f.id, f.text, f.status, f.valid_to, f.superseded_at) for f in then] == [
        (first.fact_id, "Paris", "active", None, None)
    ]
    assert [f.text for f in await alice.semantic.facts("alice")] == ["Berlin"]
    assert await alice.semantic.facts("alice", as_of=between - timedelta(days=1)) == []


async def test_valid_at_answers_world_time_questions(alice: Memory) -> None:
    await alice.semantic.apply_delta(add("Paris", "e1"))
    await alice.semantic.apply_delta(UpdateDelta(replaces=["e1"], fact_payload={"text": "Berlin"}, **prov("e2")))
    assert [f.text for f in await alice.semantic.facts("alice", valid_at=at(5))] == ["Paris"]
    assert [f.text for f in await alice.semantic.facts("alice", valid_at=at(15))] == ["Berlin"]
    assert await alice.semantic.facts("alice", valid_at=at(-5)) == []
    await alice.semantic.apply_delta(DeleteDelta(replaces=["e2"], **prov("e3")))
    assert [f.text for f in await alice.semantic.facts("alice", valid_at=at(15))] == []  # retracted


async def test_fact_reads_widen_over_agents_and_filter(mem: Memory) -> None:
    for agent in ("rag", "planner"):
        await mem.semantic.apply_delta(add(f"from {agent}", user="alice", agent=agent, predicate="p", channels=["c1"]))
    await mem.semantic.apply_delta(add("other user", user="alice2", agent="rag"))
    assert {f.text for f in await mem.semantic.facts("alice")} == {"from rag", "from planner"}
    assert [f.text for f in await mem.semantic.facts(Scope(user="alice", agent="rag"))] == ["from rag"]
    assert len(await mem.semantic.facts("alice", predicate="p", channel="c1")) == 2
    assert await mem.semantic.facts("alice", channel="c2") == []


async def test_unknown_ids_raise_not_found(mem: Memory) -> None:
    with pytest.raises(NotFoundError):
        await mem.semantic.get("nope")
    with pytest.raises(NotFoundError):
        await mem.semantic.history("nope")
