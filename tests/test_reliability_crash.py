"""Crash injection and concurrency on both backends (the short mode of bench/reliability_crash.py), and its checks.

``python bench/reliability.py`` runs the long mode: 200 SIGKILLs per backend (``MNEMONITE_CRASH_KILLS``).
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from conftest import at, ep
from mnemonite import ConsolidationRule, Episode, Memory, MemoryConfig


def _load(name: str = "reliability_crash") -> ModuleType:
    path = Path(__file__).resolve().parent.parent / "bench" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


rc = _load()
driver = _load("reliability")


async def test_sigkill_at_random_moments_loses_nothing_and_leaves_no_partial_write(memory_url: str) -> None:
    outcome = await rc.crash(memory_url, kills=3, seed=7)
    assert outcome.tries == 3 and outcome.acknowledged > 0
    assert (outcome.failures, outcome.lost) == (0, 0), outcome.notes


async def test_eight_writers_consolidators_and_a_searcher_lose_and_duplicate_nothing(memory_url: str) -> None:
    """Beside the writers: the rule in a loop, a consolidator worker, concept consolidation and a searcher."""
    outcome = await rc.concurrency(memory_url, writers=8, batches=2, searchers=1)
    assert outcome.tries == 12 and outcome.acknowledged >= 8 * 2 * 4
    assert (outcome.failures, outcome.lost) == (0, 0), outcome.notes


async def test_an_episode_after_a_purge_of_the_newest_is_still_promoted(mem_on_both: Memory) -> None:
    rule = ConsolidationRule(id="r", cadence={"every": 1})
    where = {"user": "u", "session": "s", "agent": "a"}
    await mem_on_both.episodic.put_many([ep("e1"), ep("e2", minutes=1)], **where)
    await mem_on_both.consolidate(rule)
    await mem_on_both.episodic.purge("e2", reason="privacy request")
    await mem_on_both.episodic.put(ep("e3", minutes=2), **where)
    run = await mem_on_both.consolidate(rule)
    assert [d.delta.source_episode_ids for d in run.deltas] == [["e3"]]


async def test_the_indexer_embeds_an_episode_put_after_a_purge_of_the_newest(tmp_path: Path) -> None:
    async with await Memory.open(f"sqlite:///{tmp_path / 'm.db'}", config=MemoryConfig()) as mem:
        where = {"user": "u", "session": "s", "agent": "a"}
        await mem.episodic.put_many([ep("e1", "tea"), ep("e2", "coffee", minutes=1)], **where)
        await mem.index()
        await mem.episodic.purge("e2", reason="privacy request")
        await mem.episodic.put(ep("e3", "green tea", minutes=2), **where)
        assert await mem.index() == 1
        assert (await mem.health()).pending_embeddings == 0


async def test_the_indexer_embeds_a_fact_written_after_a_purge_of_the_newest(tmp_path: Path) -> None:
    def add(text: str) -> dict[str, object]:
        return {"kind": "add", "fact_payload": {"text": text, "user": "u", "agent": "a"}, "source_episode_ids": [],
                "rule_id": "import", "confidence": 1.0, "promotion_ts": "2025-01-01T00:00:00Z"}  # fmt: skip

    async with await Memory.open(f"sqlite:///{tmp_path / 'm.db'}", config=MemoryConfig()) as mem:
        await mem.semantic.apply_delta(add("I like tea"))
        chess = await mem.semantic.apply_delta(add("I like chess"))
        await mem.index()
        await mem.semantic.purge(str(chess.fact_id), reason="privacy request")
        await mem.semantic.apply_delta(add("I like jazz"))
        assert await mem.index() == 1


# -- the checks find what they look for --------------------------------------------------------


def snapshot(**changes: object) -> object:
    """A consistent little memory: a batch of two episodes promoted by the rule into a fact and its update."""
    delta = '{{"source_episode_ids": ["{}"]}}'
    memory = {
        "episodes": {"b-0": 1, "b-1": 2},
        "facts": {"f0": ("superseded", "t1"), "f1": ("active", None)},
        "lineage": {("f1", "f0", "SUPERSEDES")},
        "deltas": [
            (rc.RULE_ID, delta.format("b-0"), "t0", "f0", "[]", None),
            (rc.RULE_ID, delta.format("b-1"), "t1", "f1", '["f0"]', None),
        ],
        "checkpoint": 2,
        "entities": set(),
        "edges": set(),
        "purged": set(),
        "integrity": "ok",
    }
    return rc.Snapshot(**{**memory, **changes})


def journal(acked: list[dict[str, object]], in_flight: list[dict[str, object]] = ()) -> object:  # type: ignore[assignment]
    return rc.Journal(acked=list(acked), in_flight=list(in_flight))


def test_the_checks_pass_a_consistent_memory() -> None:
    done = journal([{"done": "put_many", "ids": ["b-0", "b-1"]}, {"done": "supersede", "old": "f0", "new": "f1"}])
    assert rc.problems(done, snapshot()) == ([], [])


def test_the_checks_find_a_lost_episode_and_a_partial_batch() -> None:
    acked = journal([{"done": "put_many", "ids": ["b-0", "b-1"]}])
    assert rc.lost(acked, snapshot(episodes={"b-0": 1}))
    flying = journal([], [{"begin": "put_many", "ids": ["c-0", "c-1"]}])
    assert rc.partial(flying, snapshot(episodes={"b-0": 1, "b-1": 2, "c-0": 3}))
    assert not rc.partial(flying, snapshot())  # none of it: whole


def test_the_checks_find_a_partial_or_lost_batch_of_deltas() -> None:
    batch = {"deltas": ["d1", "d2", "d3"]}
    assert rc.partial(journal([], [{"begin": "apply_deltas", **batch}]), snapshot(applied={"d1"}))
    assert not rc.partial(journal([], [{"begin": "apply_deltas", **batch}]), snapshot(applied=set()))
    assert rc.lost(journal([{"done": "apply_deltas", **batch}]), snapshot(applied={"d1", "d2"}))
    assert not rc.lost(journal([{"done": "apply_deltas", **batch}]), snapshot(applied={"d1", "d2", "d3"}))


def test_the_checks_find_an_episode_promoted_twice_or_skipped() -> None:
    twice = [*snapshot().deltas, (rc.RULE_ID, '{"source_episode_ids": ["b-0"]}', "t2", None, "[]", None)]
    assert rc.checkpoint_problems(snapshot(deltas=twice)) == ["episode b-0 promoted 2 times"]
    skipped = snapshot(episodes={"b-0": 1, "b-1": 2, "b-2": 3}, checkpoint=3)
    assert "skipped by the rule" in rc.checkpoint_problems(skipped)[0]


def test_the_checks_find_facts_and_deltas_that_disagree() -> None:
    assert rc.delta_problems(
        snapshot(facts={"f0": ("superseded", "t1"), "f1": ("active", None), "f2": ("active", None)})
    )
    assert rc.delta_problems(snapshot(facts={"f0": ("active", None), "f1": ("active", None)}))  # closed, not superseded
    flying = journal([], [{"begin": "supersede", "old": "f0"}])
    assert rc.partial(flying, snapshot(lineage=set()))  # closed without its lineage: half a supersede
    consolidated = {("f1", "f0", "SUPERSEDES"), ("f2", "f1", "CONSOLIDATES")}
    assert not rc.partial(journal([], [{"begin": "supersede", "old": "f1"}]), snapshot(lineage=consolidated))
    assert rc.integrity_problems(snapshot(integrity="*** in database main *** Page 7: btreeInitPage() returns 11"))


def test_the_driver_prints_one_table_and_whether_the_targets_are_met() -> None:
    row = {"check": "SIGKILL", "backend": "sqlite", "tries": 4, "failures": 0, "lost": 0, "leaked": 0, "seconds": 1.0}
    good = driver.table([row, {**row, "backend": "postgres"}])
    assert good.splitlines()[0] == "| check | backend | tries | failures | data lost | rows leaked | seconds |"
    assert "| SIGKILL | postgres | 4 | 0 | 0 | 0 | 1.0 |" in good and "— met (0 / 0 / 0)" in good
    assert "NOT met (0 / 2 / 0)" in driver.table([row, {**row, "lost": 2}])


def test_a_check_module_that_breaks_is_a_failed_row() -> None:
    broken = ModuleType("reliability_broken")
    broken.rows = lambda backend, url, quick: 1 / 0  # type: ignore[attr-defined]
    [row] = driver._rows_of(broken, "sqlite", "sqlite:///nowhere.db", True)
    assert (row["check"], row["failures"]) == ("reliability_broken broke: ZeroDivisionError", 1)


# -- the agent tiers' checks find what they look for ----------------------------------------------

KEY = "/user/crash/session/s/agent/a/"


def tiers(**rows: object) -> object:
    """A consistent snapshot of the tiers: a block and its logged write, a compacted session, a topic episode
    covering the standard job up to its checkpoint, a concept graph at version 2, an audited tool call."""
    block = '{"block": {"id": "b1", "value": "tea"}}'
    memory = {
        "blocks": [("b1", "notes", "tea")], "block_events": [(1, "working.define", block)],
        "messages": [("m1", "s1", "{}"), ("s1", None, '{"summary_of": ["m1"]}')],
        "procedures": [("p1",)], "groups": [("g1", 1)], "shared": [("i1", "f1")],
        "tool_calls": [("c1", "fact_remember", "ok", '{"fact_id": "f1"}')],
        "topics": [(KEY, '["b-0", "b-1"]')], "jobs": [("standard", KEY, "s", 2, 2, None)],
        "episode_seqs": [("b-0", 1, KEY), ("b-1", 2, KEY)], "message_seqs": [], "standard_facts": [],
        "concept_graphs": [("crash", "a", 2)], "concept_versions": [("crash", "a", 1), ("crash", "a", 2)],
        "concept_nodes": [("n1", 1, 2, "crash", "a")], "record_tiers": [("episode", "b-0")],
    }  # fmt: skip
    return snapshot(tiers={**memory, **rows})


def test_the_tier_checks_pass_a_consistent_memory() -> None:
    acked = [{"done": "block", "step": "define", "label": "notes", "value": "tea"},
             {"done": "tool", "tool": "fact_remember", "call": "c1", "ok": True, "output": {"fact_id": "f1"}},
             {"done": "procedure", "name": "p1"}, {"done": "concepts", "version": 2}]  # fmt: skip
    assert rc.problems(journal(acked), tiers()) == ([], [])


def test_the_tier_checks_find_a_block_and_its_log_apart_and_a_lost_value() -> None:
    assert rc.tiers.invariants(journal([]), tiers(blocks=[("b1", "notes", "coffee")]))
    lost_write = journal([{"done": "block", "step": "write", "label": "notes", "value": "green tea"}])
    assert rc.tiers.invariants(lost_write, tiers())
    flying = journal(lost_write.acked, [{"begin": "block", "step": "append", "label": "notes"}])
    assert not rc.tiers.invariants(flying, tiers(blocks=[("b1", "notes", "tea")], block_events=[]))


def test_the_tier_checks_find_partial_pushes_compactions_and_groups() -> None:
    flying = journal([], [{"begin": "push", "ids": ["m7", "m8"]}])
    assert rc.tiers.partial(flying, tiers(messages=[("m7", None, "{}")]))
    assert not rc.tiers.partial(flying, tiers())
    assert rc.tiers.invariants(journal([]), tiers(messages=[("m1", "s9", "{}")]))  # its summary is missing
    assert rc.tiers.invariants(journal([]), tiers(groups=[("g1", 0)]))  # a group without its owner


def test_the_tier_checks_find_turns_promoted_twice_or_skipped() -> None:
    twice = tiers(topics=[(KEY, '["b-0", "b-1"]'), (KEY, '["b-1"]')])
    assert "in two topic episodes" in rc.tiers.invariants(journal([]), twice)[0]
    skipped = tiers(topics=[(KEY, '["b-0"]')])
    assert "skipped" in rc.tiers.invariants(journal([]), skipped)[0]
    admitted = tiers(standard_facts=[("f1", "I like tea", "b-0"), ("f2", "I like tea", "b-0")])
    assert "admitted twice" in rc.tiers.invariants(journal([]), admitted)[0]


def test_the_tier_checks_find_concept_versions_that_skip_or_repeat() -> None:
    gap = tiers(concept_versions=[("crash", "a", 1), ("crash", "a", 3)], concept_graphs=[("crash", "a", 3)])
    assert rc.tiers.invariants(journal([]), gap)
    again = tiers(concept_versions=[("crash", "a", 1), ("crash", "a", 1)])
    assert rc.tiers.invariants(journal([]), again)
    assert rc.lost(journal([{"done": "concepts", "version": 3}]), tiers())


def test_the_tier_checks_find_an_audit_and_data_that_disagree() -> None:
    call = {"done": "tool", "tool": "fact_remember", "call": "c2", "ok": True, "output": {"fact_id": "f1"}}
    assert rc.lost(journal([call]), tiers())  # acknowledged, but its audit row is missing
    assert rc.tiers.invariants(journal([]), tiers(tool_calls=[("c1", "fact_remember", "ok", '{"fact_id": "f9"}')]))
    assert rc.tiers.invariants(journal([]), tiers(record_tiers=[("fact", "f9")]))
    removed = journal([{"done": "procedure", "name": "p1"}, {"done": "unprocedure", "name": "p1"}])
    assert rc.tiers.invariants(removed, tiers())  # removed, acknowledged, and back


async def test_a_standard_job_resumed_after_its_worker_died_keeps_each_turn_in_one_topic_episode(
    mem_on_both: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Found by the crash loop: the resumed job segmented its remaining turns again, and the turns the dead
    worker's topic episodes held already were in two."""
    said = ["I live in Paris", "I like tea", "I play chess", "I work at Siemens", "I like jazz", "I live in Oslo"]
    episodes = [Episode(id=f"t{i}", content=text, source_node="u", timestamp=at(i)) for i, text in enumerate(said)]
    await mem_on_both.episodic.put_many(episodes, user="u", session="s", agent="a")
    remember, calls = mem_on_both.semantic.remember_with_decision, []

    async def dies_on_the_third(*args: Any, **kwargs: Any) -> Any:
        calls.append(args)
        if len(calls) == 3:
            raise RuntimeError("the worker died here")
        return await remember(*args, **kwargs)

    monkeypatch.setattr(mem_on_both.semantic, "remember_with_decision", dies_on_the_third)
    with pytest.raises(RuntimeError, match="died"):
        await mem_on_both.consolidator.run("standard")
    await mem_on_both.consolidator.run("standard")
    held = [turn for topic in await mem_on_both.consolidator.topic_episodes("u") for turn in topic.turn_ids]
    assert sorted(held) == [f"t{i}" for i in range(6)]
