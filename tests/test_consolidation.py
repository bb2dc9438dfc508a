"""Consolidation: claims, the outbox, atomic runs, cadences and persisted rule state.

Part of the store contract: the tests on ``mem`` run on SQLite and on PostgreSQL.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from conftest import ep
from mnemonite import ConsolidationRule, FactConflictError, Memory, MemoryConfig, NotFoundError, Scope, StoreError

NIGHTLY = ConsolidationRule(id="nightly", when_filter="metadata.intent != 'noop'")


@pytest.fixture
def mem(mem_on_both: Memory) -> Memory:
    return mem_on_both


async def put(mem: Memory, *episodes: object, user: str = "alice") -> None:
    await mem.episodic.put_many(episodes, user=user, session="s1", agent="rag")  # type: ignore[arg-type]


async def test_consolidate_then_apply_as_in_the_spec(mem: Memory) -> None:
    await put(mem, ep("e1", "Paris", 0, subject="alice", predicate="lives in"), ep("e2", "hi", 1, intent="noop"))
    deltas = await mem.episodic.consolidate(NIGHTLY)
    assert [d.kind for d in deltas] == ["add"]
    for delta in deltas:
        await mem.semantic.apply_delta(delta)
    facts = await mem.semantic.facts(Scope(user="alice", agent="rag"), as_of=datetime.now(UTC))
    assert [f.text for f in facts] == ["Paris"]


async def test_a_rule_never_sees_an_episode_twice(mem: Memory) -> None:
    await put(mem, ep("e1"), ep("e2"))
    assert len(await mem.episodic.consolidate(NIGHTLY)) == 2
    assert await mem.episodic.consolidate(NIGHTLY) == []
    await put(mem, ep("e3"))
    assert [d.source_episode_ids for d in await mem.episodic.consolidate(NIGHTLY)] == [["e3"]]
    other = ConsolidationRule(id="other")
    assert len(await mem.episodic.consolidate(other)) == 3  # each rule has its own progress


async def test_emitted_deltas_wait_in_the_outbox_until_applied(mem: Memory) -> None:
    await put(mem, ep("e1"), ep("e2"))
    deltas = await mem.episodic.consolidate(NIGHTLY)
    pending = await mem.semantic.deltas(pending=True)
    assert [r.delta_id for r in pending] == [d.delta_id for d in deltas]
    await mem.semantic.apply_delta(deltas[0])
    applied = await mem.semantic.apply_pending()  # e.g. after a crash between the two steps
    assert [r.delta_id for r in applied] == [deltas[1].delta_id]
    assert await mem.semantic.deltas(pending=True) == []
    assert (await mem.health()).fact_count == 2


async def test_memory_consolidate_applies_atomically(mem: Memory) -> None:
    await put(
        mem,
        ep("e1", "Paris", 0, subject="a", predicate="p"),
        ep("e2", "Berlin", 1, subject="a", predicate="p"),
        ep("e3", "ok", 2, intent="noop"),
    )
    run = await mem.consolidate(ConsolidationRule(id="all"))
    assert [d.kind for d in run.deltas] == ["add", "update", "noop"]
    assert all(d.applied_at is not None for d in run.deltas)
    assert run.episodes_scanned == 3 and run.remaining == 0
    assert [f.text for f in await mem.semantic.facts("alice")] == ["Berlin"]


async def test_a_delta_that_cannot_apply_is_rejected_and_the_run_goes_on(mem: Memory) -> None:
    await put(mem, ep("e1", "x", 0), ep("e2", "y", 1, intent="delete", replaces=["no-such-fact"]), ep("e3", "z", 2))
    await mem.add_rule(ConsolidationRule(id="all"))
    run = await mem.consolidate("all")
    assert [d.kind for d in run.deltas] == ["add", "delete", "add"]
    bad = run.deltas[1]
    assert bad.applied_at is None and bad.rejected_at is not None
    assert bad.rejected_reason is not None and bad.rejected_reason.startswith("FactConflictError")
    health = await mem.health()
    assert (health.fact_count, health.pending_delta_count) == (2, 0)
    assert (await mem.consolidate("all")).deltas == []  # the rejected delta is not retried
    logged = {r.delta_id: r for r in await mem.semantic.deltas()}
    assert logged[bad.delta_id].rejected_reason == bad.rejected_reason


async def test_apply_pending_rejects_a_poison_delta_and_applies_the_rest(mem: Memory) -> None:
    await put(mem, ep("e1", "x", 0), ep("e2", "y", 1, intent="update", replaces=["nothing"]))
    await mem.episodic.consolidate(ConsolidationRule(id="r"))
    records = await mem.semantic.apply_pending()
    assert [(r.kind, r.applied_at is not None, r.rejected_at is not None) for r in records] == [
        ("add", True, False),
        ("update", False, True),
    ]
    assert await mem.semantic.deltas(pending=True) == []
    with pytest.raises(FactConflictError):  # applied directly, the same delta still raises
        await mem.semantic.apply_delta(records[1].delta.model_copy(update={"delta_id": "fresh"}))


async def test_large_backlogs_run_in_bounded_batches(tmp_path: Path) -> None:
    mem = await Memory.open(config=MemoryConfig(url=f"sqlite:///{tmp_path / 'm.db'}", max_episodes_per_run=4))
    try:
        await put(mem, *[ep(f"e{i}", minutes=i) for i in range(10)])
        runs = [await mem.consolidate(NIGHTLY) for _ in range(3)]
        assert [r.episodes_scanned for r in runs] == [4, 4, 2]
        assert [r.remaining for r in runs] == [6, 2, 0]
        assert (await mem.health()).fact_count == 10
    finally:
        await mem.close()


async def test_every_n_cadence(mem: Memory) -> None:
    await mem.add_rule(ConsolidationRule(id="every3", cadence={"every": 3}))
    await put(mem, ep("e1"), ep("e2"))
    assert await mem.run_due() == []
    await put(mem, ep("e3"))
    (run,) = await mem.run_due()
    assert len(run.deltas) == 3
    assert await mem.run_due() == []


async def test_cron_cadence_fires_when_the_time_comes(mem: Memory) -> None:
    state = await mem.add_rule(ConsolidationRule(id="nightly", cadence={"cron": "0 3 * * *"}))
    await put(mem, ep("e1"))
    fire = state.next_run_at()
    assert fire is not None and fire.hour == 3 and fire > state.registered_at
    assert await mem.run_due(now=fire - timedelta(seconds=1)) == []
    (run,) = await mem.run_due(now=fire)
    assert len(run.deltas) == 1
    (after,) = await mem.rules()
    assert after.last_run_at is not None and after.runs == 1
    next_fire = after.next_run_at()
    assert next_fire is not None and next_fire > after.last_run_at


async def test_streaming_rule_fires_after_each_put(tmp_path: Path) -> None:
    mem = await Memory.open(config=MemoryConfig(url=f"sqlite:///{tmp_path / 'm.db'}", consolidate_on_put=True))
    try:
        await mem.add_rule(ConsolidationRule(id="stream", cadence={"every": 1}))
        await mem.episodic.put(ep("e1", "Paris"), user="u", session="s", agent="a")
        assert [f.text for f in await mem.semantic.facts("u")] == ["Paris"]
        await mem.episodic.put(ep("e2", "Rome"), user="u", session="s", agent="a")
        assert (await mem.health()).fact_count == 2
    finally:
        await mem.close()


async def test_a_failing_rule_does_not_make_a_stored_put_look_failed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    mem = await Memory.open(config=MemoryConfig(url=f"sqlite:///{tmp_path / 'm.db'}", consolidate_on_put=True))
    try:
        await mem.add_rule(ConsolidationRule(id="stream", cadence={"every": 1}))

        async def broken(rule: object) -> None:
            raise StoreError("the rule's query failed")

        monkeypatch.setattr(mem, "consolidate", broken)
        stored = await mem.episodic.put(ep("e1", "Paris"), user="u", session="s", agent="a")
        assert [e.id for e in await mem.episodic.recent("u")] == [stored.id]
        assert "a due rule failed" in caplog.text and "the rule's query failed" in caplog.text
        monkeypatch.undo()
        await mem.episodic.put(ep("e2", "Rome"), user="u", session="s", agent="a")  # it runs again, over both
        assert sorted(f.text for f in await mem.semantic.facts("u")) == ["Paris", "Rome"]
    finally:
        await mem.close()


async def test_rule_state_survives_reopening(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'm.db'}"
    async with await Memory.open(url) as mem:
        await mem.add_rule(NIGHTLY)
        await put(mem, ep("e1"))
        await mem.consolidate("nightly")
        await put(mem, ep("e2"))
    async with await Memory.open(url) as mem:
        (state,) = await mem.rules()
        assert state.rule == NIGHTLY and state.runs == 1 and state.episodes_since == 1
        run = await mem.consolidate("nightly")
        assert [d.delta.source_episode_ids for d in run.deltas] == [["e2"]]


async def test_unknown_rule_ids(mem: Memory) -> None:
    with pytest.raises(NotFoundError):
        await mem.consolidate("nope")
    with pytest.raises(NotFoundError):
        await mem.remove_rule("nope")


async def test_redefining_a_rule_keeps_its_progress(mem: Memory) -> None:
    await put(mem, ep("e1"))
    await mem.consolidate(NIGHTLY)
    state = await mem.add_rule(NIGHTLY.model_copy(update={"when_filter": "user = 'alice'"}))
    assert state.checkpoint == 1 and state.rule.when_filter == "user = 'alice'"
    await mem.remove_rule("nightly")
    assert await mem.rules() == []
