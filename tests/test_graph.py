"""Graph memory on a real SQLite file: entities, edges, walks, links, recall, salience, context_for, stats."""

from __future__ import annotations

import sqlite3
import uuid
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mnemonite import (
    BudgetConfig,
    DeltaValidationError,
    EntityConflictError,
    InvalidInputError,
    Memory,
    MemoryConfig,
    NotFoundError,
    RecallOptions,
    SalienceConfig,
    Scope,
    ScoredFact,
    SyncMemory,
    allocate_memory_budget,
    boost_salience,
    combine_scores,
    compute_salience,
    rank_by_salience,
)
from mnemonite.models import Fact

ALEX = Scope(user="alex", agent="a")
NOW = datetime(2026, 3, 1, tzinfo=UTC)


@pytest.fixture
async def mem(memory_url: str) -> AsyncIterator[Memory]:
    m = await Memory.open(memory_url, config=MemoryConfig(embedder="none"))
    yield m
    await m.close()


def fact(text: str, *, salience: float = 0.5, recorded: datetime = NOW, **fields: object) -> Fact:
    return Fact(id=text, user="u", agent="a", text=text, valid_from=recorded, recorded_at=recorded, rule_id="t",
                confidence=1.0, promotion_ts=recorded, salience=salience, **fields)  # type: ignore[arg-type]  # fmt: skip


# -- the salience engine --------------------------------------------------------------------------


def test_salience_decays_per_day_and_boost_is_capped() -> None:
    assert compute_salience(0.8, NOW, NOW, 0.995) == pytest.approx(0.8)
    assert compute_salience(0.8, NOW - timedelta(days=10), NOW, 0.995) == pytest.approx(0.8 * 0.995**10)
    assert compute_salience(0.8, NOW + timedelta(days=3), NOW, 0.995) == pytest.approx(0.8)  # no growth
    assert boost_salience(0.5, 0.05) == pytest.approx(0.55)
    assert boost_salience(0.98, 0.05) == 1.0
    assert combine_scores(0.5, 0.4) == pytest.approx(0.2)
    defaults = SalienceConfig()
    assert (defaults.decay_rate, defaults.boost_amount, defaults.min_salience, defaults.default_salience,
            defaults.consolidation_decay) == (0.995, 0.05, 0.1, 0.5, 0.5)  # fmt: skip


def test_rank_by_salience_filters_and_orders() -> None:
    old = fact("old", salience=0.9, recorded=NOW - timedelta(days=400))  # 0.9 * 0.995^400 ~ 0.12
    faded = fact("faded", salience=0.09)
    fresh = fact("fresh", salience=0.6)
    ranked = rank_by_salience([old, faded, fresh], SalienceConfig(), NOW)
    assert [s.fact.id for s in ranked] == ["fresh", "old"]
    assert ranked[1].salience == pytest.approx(0.9 * 0.995**400)
    weighed = rank_by_salience([(fresh, 0.1), (old, 1.0)], SalienceConfig(), NOW)
    assert [s.fact.id for s in weighed] == ["old", "fresh"]  # relevance multiplies


def test_allocate_memory_budget_packs_full_then_summary_then_skips() -> None:
    big = fact("big " * 30, token_count=30, summary="short", summary_token_count=2)
    mid = fact("mid", token_count=8)
    huge = fact("huge", token_count=50)
    ranked = [ScoredFact(fact=f, salience=1.0, score=1.0) for f in (mid, big, huge)]
    packed, used = allocate_memory_budget(ranked, 12)
    assert [(s.fact.id.split()[0], s.used_summary) for s in packed] == [("mid", False), ("big", True)]
    assert used == 10 and sum(s.tokens for s in packed) == 10
    assert allocate_memory_budget(ranked, 0) == ([], 0)


# -- entities and edges ---------------------------------------------------------------------------


async def test_entities_are_unique_per_scope_case_insensitively(mem: Memory) -> None:
    g = mem.graph
    alice = await g.create_entity(ALEX, name="Alice", entity_type="person", properties={"role": "engineer"})
    with pytest.raises(EntityConflictError):
        await g.create_entity(ALEX, name="  alice ", entity_type="person")
    other = await g.create_entity(Scope(user="bob", agent="a"), name="Alice", entity_type="person")
    assert other.id != alice.id  # another user's graph is separate
    assert (await g.entity(ALEX, "ALICE")).id == alice.id
    with pytest.raises(NotFoundError):
        await g.entity(Scope(user="alex", agent="b"), "Alice")
    with pytest.raises(EntityConflictError):  # a batch with a taken name inserts nothing
        await g.create_entities(
            ALEX, [{"name": "Carol", "entity_type": "person"}, {"name": "alice", "entity_type": "x"}]
        )
    with pytest.raises(NotFoundError):
        await g.entity(ALEX, "Carol")


async def test_update_list_search_and_delete_entities(mem: Memory) -> None:
    g = mem.graph
    made = await g.create_entities(ALEX, [{"name": f"tool {i:02d}", "entity_type": "tool"} for i in range(25)])
    acme = await g.create_entity(ALEX, name="Acme", entity_type="company", properties={"city": "Lyon"})
    page, total = await g.entities(ALEX, entity_type="tool", limit=10, offset=20)
    assert total == 25 and [e.name for e in page] == [f"tool {i}" for i in range(20, 25)]
    moved = await g.update_entity(acme.id, properties={"city": "Paris"})
    assert moved.properties == {"city": "Paris"} and moved.name == "Acme" and moved.updated_at >= acme.updated_at
    assert [e.id for e in await g.search_entities(ALEX, "paris")] == [acme.id]
    assert [e.id for e in await g.search_entities(ALEX, "acme")] == [acme.id]
    with pytest.raises(EntityConflictError):
        await g.update_entity(acme.id, name="Tool 03")
    await g.relate(ALEX, source=made[0].id, target=acme.id, relation="MADE_BY")
    await g.delete_entity(acme.id)
    assert await g.edges_from(made[0].id) == []  # its edges went with it
    with pytest.raises(NotFoundError):
        await g.delete_entity(acme.id)
    with pytest.raises(InvalidInputError):
        await g.create_entity(ALEX, name="  ", entity_type="tool")
    with pytest.raises(InvalidInputError):
        await g.entities(ALEX, limit=0)
    with pytest.raises(InvalidInputError):  # properties are stored as JSON
        await g.create_entity(ALEX, name="Odd", entity_type="tool", properties={"when": object()})
    with pytest.raises(InvalidInputError):
        await g.relate(ALEX, source=made[0].id, target=made[1].id, relation="USES", properties={"x": {1, 2}})
    renamed = await g.update_entity(made[0].id, name="  Tool   Zero ")
    assert renamed.name == "Tool Zero" and (await g.entity(ALEX, "tool zero")).id == made[0].id


async def test_relate_upserts_and_rejects_bad_edges(mem: Memory) -> None:
    g = mem.graph
    alice = await g.create_entity(ALEX, name="Alice", entity_type="person")
    acme = await g.create_entity(ALEX, name="Acme", entity_type="company")
    first = await g.relate(ALEX, source=alice.id, target=acme.id, relation="WORKS_AT", properties={"since": 2020})
    again = await g.relate(ALEX, source=alice.id, target=acme.id, relation="WORKS_AT", properties={"since": 2021})
    assert again.id == first.id and again.properties == {"since": 2021} and again.created_at == first.created_at
    assert [e.id for e in await g.edges_from(alice.id)] == [first.id]
    assert [e.id for e in await g.edges_to(acme.id)] == [first.id]
    with pytest.raises(InvalidInputError):
        await g.relate(ALEX, source=alice.id, target=alice.id, relation="KNOWS")  # self-loop
    with pytest.raises(NotFoundError):
        await g.relate(ALEX, source=alice.id, target="nope", relation="KNOWS")
    bob = await g.create_entity(Scope(user="bob", agent="a"), name="Bob", entity_type="person")
    with pytest.raises(NotFoundError):  # the other end lives in another user's graph
        await g.relate(ALEX, source=alice.id, target=bob.id, relation="KNOWS")
    with pytest.raises(NotFoundError):  # one bad edge in a batch: none is written
        await g.relate_many(ALEX, [(acme.id, alice.id, "EMPLOYS"), (alice.id, "ghost", "KNOWS")])
    assert await g.edges_from(acme.id) == []
    await g.unrelate(source=alice.id, target=acme.id, relation="WORKS_AT")
    with pytest.raises(NotFoundError):
        await g.unrelate(source=alice.id, target=acme.id, relation="WORKS_AT")


async def chain(mem: Memory, names: str) -> dict[str, str]:
    made = await mem.graph.create_entities(ALEX, [{"name": n, "entity_type": "node"} for n in names])
    return {e.name: e.id for e in made}


async def test_neighbors_by_depth_direction_and_relation(mem: Memory) -> None:
    g = mem.graph
    ids = await chain(mem, "ABCDE")
    await g.relate_many(ALEX, [(ids["A"], ids["B"], "KNOWS"), (ids["B"], ids["C"], "KNOWS"),
                               (ids["C"], ids["D"], "USES"), (ids["E"], ids["A"], "KNOWS")])  # fmt: skip
    name = {v: k for k, v in ids.items()}

    def pairs(edges: list) -> list[tuple[str, str, int]]:  # type: ignore[type-arg]
        return [(name[e.source], name[e.target], e.depth) for e in edges]

    assert pairs(await g.neighbors(ids["A"], direction="out")) == [("A", "B", 0)]
    assert pairs(await g.neighbors(ids["A"], direction="in")) == [("E", "A", 0)]
    assert pairs(await g.neighbors(ids["A"])) == [("A", "B", 0), ("E", "A", 0)]
    assert pairs(await g.neighbors(ids["A"], direction="out", depth=3)) == [
        ("A", "B", 0), ("B", "C", 1), ("C", "D", 2)]  # fmt: skip
    assert pairs(await g.neighbors(ids["A"], direction="out", depth=3, relation="KNOWS")) == [
        ("A", "B", 0), ("B", "C", 1)]  # fmt: skip
    assert len(await g.neighbors(ids["A"], depth=4, limit=2)) == 2
    for bad in ({"depth": 0}, {"depth": 99}, {"direction": "sideways"}):
        with pytest.raises(InvalidInputError):
            await g.neighbors(ids["A"], **bad)  # type: ignore[arg-type]
    with pytest.raises(NotFoundError):
        await g.neighbors("missing")


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(edges=st.sets(st.tuples(st.integers(0, 7), st.integers(0, 7)).filter(lambda e: e[0] != e[1]), max_size=30),
       depth=st.integers(1, 4))  # fmt: skip
def test_walks_match_a_reference_bfs_and_never_repeat(memory_url: str, edges: set[tuple[int, int]],
                                                      depth: int) -> None:  # fmt: skip
    """Random graphs, cycles included: each edge once, at the BFS distance of its nearer end."""
    scope = Scope(user=uuid.uuid4().hex, agent="a")  # each example its own graph in the one database
    with SyncMemory.open(memory_url, config=MemoryConfig(embedder="none")) as mem:
        made = mem.graph.create_entities(scope, [{"name": f"n{i}", "entity_type": "node"} for i in range(8)])
        ids = [e.id for e in made]
        mem.graph.relate_many(scope, [(ids[a], ids[b], "LINK") for a, b in edges])
        found = mem.graph.neighbors(ids[0], direction="both", depth=depth)
    distance = {0: 0}
    frontier = [0]
    for step in range(1, depth + 1):
        frontier = [n for f in frontier for a, b in edges for n in ((b,) if a == f else (a,) if b == f else ())]
        frontier = [n for n in dict.fromkeys(frontier) if n not in distance]
        distance.update({n: step for n in frontier})
    expected = {(a, b): min(distance.get(a, 99), distance.get(b, 99)) for a, b in edges}
    expected = {edge: d for edge, d in expected.items() if d < depth}
    got = {(ids.index(e.source), ids.index(e.target)): e.depth for e in found}
    assert len(found) == len(got)  # no edge twice
    assert got == expected
    assert [e.depth for e in found] == sorted(e.depth for e in found)  # type: ignore[type-var]


# -- facts linked to entities -------------------------------------------------------------------


async def test_remember_links_facts_to_entities_with_roles(mem: Memory) -> None:
    g = mem.graph
    alice = await g.create_entity(ALEX, name="Alice", entity_type="person")
    bob = await g.create_entity(ALEX, name="Bob", entity_type="person")
    links = [(alice.id, "about"), (bob.id, "by")]
    remembered = await mem.semantic.remember(
        ALEX, "Alice prefers async Python", memory_type="preference", entities=links, tags=["python"]
    )
    assert [(link.entity_id, link.role) for link in remembered.entities] == [(alice.id, "about"), (bob.id, "by")]
    assert remembered.token_count == mem.semantic.counter.count("Alice prefers async Python")
    assert remembered.salience == 0.5
    with pytest.raises(InvalidInputError):
        await mem.semantic.remember(ALEX, "Alice likes tea", entities=[(alice.id, "owner")])  # unknown role
    with pytest.raises(InvalidInputError):
        await mem.semantic.remember(ALEX, "Alice likes tea", memory_type="mood")  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError):
        RecallOptions(memory_type="mood")  # type: ignore[arg-type]
    dated = await mem.semantic.remember(ALEX, "Alice ran a marathon", event_date=NOW, event_date_confidence="exact")
    assert (dated.event_date, dated.event_date_confidence) == (NOW, "exact")
    await mem.semantic.forget(dated.id)
    with pytest.raises(DeltaValidationError):
        await mem.semantic.remember(ALEX, "Alice likes tea", entities=["ghost"])
    other = await g.create_entity(Scope(user="bob", agent="a"), name="Zed", entity_type="person")
    with pytest.raises(DeltaValidationError):  # an entity of another scope cannot be linked
        await mem.semantic.remember(ALEX, "Alice likes tea", entities=[other.id])
    assert [f.text for f in await mem.semantic.facts(ALEX)] == ["Alice prefers async Python"]  # nothing half-written
    newer = await mem.semantic.supersede(remembered.id, "Alice prefers async Rust")
    assert newer.entities == remembered.entities  # the new version keeps the links
    assert [s.fact.id for s in await g.recall(ALEX, entity_ids=[bob.id])] == [newer.id]


async def test_recall_filters_ranks_and_budgets(mem: Memory) -> None:
    g = mem.graph
    alice = await g.create_entity(ALEX, name="Alice", entity_type="person")
    texts = {
        "py": ("Alice writes Python services", "fact", ["python"]),
        "pref": ("Alice prefers Python type hints", "preference", ["python", "style"]),
        "tea": ("Alice drinks green tea", "preference", []),
    }
    made = {k: await mem.semantic.remember(ALEX, t, memory_type=m, tags=tags, entities=[alice.id])  # type: ignore[arg-type]
            for k, (t, m, tags) in texts.items()}  # fmt: skip
    await mem.semantic.remember(ALEX, "Python 3.13 was released", tags=["python"])  # not linked to Alice
    by_query = await g.recall(ALEX, query="python", entity_ids=[alice.id])
    assert {s.fact.id for s in by_query} == {made["py"].id, made["pref"].id}
    assert all(0 < s.relevance <= 1 for s in by_query) and max(s.relevance for s in by_query) == 1.0
    assert [s.fact.id for s in await g.recall(ALEX, RecallOptions(memory_type="preference", tags=["python"]))] == [
        made["pref"].id]  # fmt: skip
    assert len(await g.recall(ALEX, query="python")) == 3
    assert await g.recall(ALEX, query="the and of") == []
    await g.touch([made["tea"].id])
    top = await g.recall(ALEX, entity_ids=[alice.id])
    assert top[0].fact.id == made["tea"].id and top[0].fact.access_count == 1 and top[0].fact.salience == 0.55
    assert [s.fact.id for s in await g.recall(ALEX, min_salience=0.52)] == [made["tea"].id]
    budgeted = await g.recall(ALEX, entity_ids=[alice.id], max_tokens=made["tea"].token_count)
    assert [s.fact.id for s in budgeted] == [made["tea"].id]
    with pytest.raises(InvalidInputError):
        await g.recall(ALEX, limit=0)


async def test_decay_all_consolidate_and_lineage(mem: Memory) -> None:
    g = mem.graph
    alice = await g.create_entity(ALEX, name="Alice", entity_type="person")
    a = await mem.semantic.remember(ALEX, "Alice ran the Lyon half marathon", entities=[alice.id])
    b = await mem.semantic.remember(ALEX, "Alice ran the Paris marathon", entities=[(alice.id, "by")])
    assert await g.decay_all(ALEX, 0.5) == 2
    assert (await mem.semantic.get(a.id)).salience == 0.25
    merged = await g.consolidate([a.id, b.id], "Alice runs marathons", summary="runner")
    assert merged.memory_type == "consolidation" and merged.rule_id == "consolidate"
    assert {(link.entity_id, link.role) for link in merged.entities} == {(alice.id, "about"), (alice.id, "by")}
    assert (await mem.semantic.get(a.id)).salience == 0.125 and (await mem.semantic.get(a.id)).status == "active"
    assert {(x.new_id, x.old_id, x.relation) for x in await mem.semantic.lineage(merged.id)} == {
        (merged.id, a.id, "CONSOLIDATES"), (merged.id, b.id, "CONSOLIDATES")}  # fmt: skip
    with pytest.raises(NotFoundError):
        await g.consolidate([a.id, "ghost"], "x")
    forgotten = await mem.semantic.forget(b.id)
    with pytest.raises(NotFoundError):  # only current facts can be consolidated
        await g.consolidate([forgotten.id], "x")
    with pytest.raises(InvalidInputError):
        await g.decay_all(ALEX, 1.5)


# -- context_for, stats, promotion ----------------------------------------------------------------


async def test_context_for_phases_budget_and_format(mem: Memory) -> None:
    g = mem.graph
    alice = await g.create_entity(ALEX, name="Alice", entity_type="person", properties={"role": "engineer"})
    acme = await g.create_entity(ALEX, name="Acme", entity_type="company")
    bob = await g.create_entity(ALEX, name="Bob", entity_type="person")
    await g.relate(ALEX, source=alice.id, target=acme.id, relation="WORKS_AT")
    await g.relate(ALEX, source=bob.id, target=alice.id, relation="MANAGES")
    py = await mem.semantic.remember(ALEX, "Alice prefers async Python", memory_type="preference",
                                     entities=[(alice.id, "about")])  # fmt: skip
    long = await mem.semantic.remember(ALEX, "Alice maintains the Python billing service " + "and more " * 40,
                                       summary="Alice maintains billing (Python)", entities=[alice.id])  # fmt: skip
    await mem.semantic.remember(ALEX, "Alice enjoys hiking", entities=[alice.id])
    ctx = await g.context_for(ALEX, entity="alice", topic="python", max_tokens=2000)
    assert ctx.entity.id == alice.id and "role: engineer" in ctx.profile
    assert [e.relation for e in ctx.edges_out] == ["WORKS_AT"] and [e.relation for e in ctx.edges_in] == ["MANAGES"]
    assert {s.fact.id for s in ctx.memories} == {py.id, long.id}  # the topic narrows the memories
    assert ctx.total_candidates == 2 and ctx.total_tokens <= 2000
    text = ctx.format()
    assert "Alice WORKS_AT Acme" in text and "Bob MANAGES Alice" in text and "Alice prefers async Python" in text
    assert (await mem.semantic.get(py.id)).access_count == 1  # included = accessed
    small = await g.context_for(ALEX, entity="Alice", topic="python", max_tokens=30, touch=False)
    assert small.total_tokens <= 30
    assert [(s.fact.id, s.used_summary) for s in small.memories if s.fact.id == long.id] in ([], [(long.id, True)])
    everything = await g.context_for(ALEX, entity="Alice", topic="zeppelins")  # no match: salience alone
    assert len(everything.memories) == 3
    for bad in (0, -5):
        with pytest.raises(InvalidInputError):
            await g.context_for(ALEX, entity="Alice", max_tokens=bad)
    with pytest.raises(NotFoundError):
        await g.context_for(ALEX, entity="Nobody")
    with pytest.raises(InvalidInputError):
        BudgetConfig(max_tokens=100, entity_profile=80, graph=80)
    assert BudgetConfig().memory_budget == 1500


async def test_stats_and_triple_promotion(mem: Memory) -> None:
    g = mem.graph
    alice = await g.create_entity(ALEX, name="Alice", entity_type="person")
    acme = await g.create_entity(ALEX, name="Acme", entity_type="company")
    edge = await g.relate(ALEX, source=alice.id, target=acme.id, relation="WORKS_AT")
    decision = await g.promote(edge)
    promoted = await mem.semantic.get(decision.fact_id or decision.matched_ids[0])
    assert promoted.text == "Alice works at Acme" and promoted.rule_id == "kg-promotion"
    assert promoted.payload["promoted_from_edge"] == edge.id
    assert (promoted.subject, promoted.predicate, promoted.object) == ("Alice", "works at", "Acme")
    assert (await g.promote(edge)).kind == "dedup"  # promoting twice adds nothing
    await g.unrelate(source=alice.id, target=acme.id, relation="WORKS_AT")
    assert (await mem.semantic.get(promoted.id)).status == "active"  # one-way: the fact stays
    await mem.semantic.remember(ALEX, "Alice likes tea", memory_type="preference")
    old = await mem.semantic.remember(ALEX, "Alice drives a Fiat")
    await mem.semantic.forget(old.id)
    stats = await g.stats(ALEX)
    # the graph learned Fiat from "Alice drives a Fiat"; its edge ended when the fact was forgotten
    assert (stats.entities, stats.edges, stats.memories, stats.active_memories) == (3, 0, 3, 2)
    fiat = await g.entity(ALEX, "Fiat")
    [owned] = await g.edges_to(fiat.id, ended=True)
    assert (owned.source, owned.relation, owned.fact_id, owned.current) == (alice.id, "OWNS", old.id, False)
    assert stats.memories_by_type == {"fact": 1, "preference": 1}
    assert stats.total_memory_tokens == promoted.token_count + mem.semantic.counter.count("Alice likes tea")


def test_schema_refuses_self_loops_and_dangling_edges_below_the_api(tmp_path: Path) -> None:
    path = tmp_path / "g.db"
    with SyncMemory.open(f"sqlite:///{path}", config=MemoryConfig(embedder="none")) as mem:
        alice = mem.graph.create_entity(ALEX, name="Alice", entity_type="person")
    with sqlite3.connect(path) as db:
        db.execute("PRAGMA foreign_keys = ON")
        for target in (alice.id, "ghost"):
            with pytest.raises(sqlite3.IntegrityError):
                db.execute(
                    "INSERT INTO edges (id, scope_key, user_id, agent_id, source_id, target_id, relation, properties,"
                    " created_at, updated_at) VALUES ('x', 'k', 'alex', 'a', ?, ?, 'R', '{}', 't', 't')",
                    (alice.id, target),
                )


async def test_rows_read_back_unchecked_equal_validated_models(mem: Memory) -> None:
    """Entities and edges are rebuilt from rows without validation: they must be the models validation gives."""
    g = mem.graph
    alice = await g.create_entity(ALEX, name="Alice", entity_type="person", properties={"tags": ["a"], "n": 1})
    acme = await g.create_entity(ALEX, name="Acme", entity_type="company")
    await g.relate(ALEX, source=alice.id, target=acme.id, relation="WORKS_AT", properties={"since": 2020})
    read = [await g.get_entity(alice.id), await g.entity(ALEX, "acme"), *await g.neighbors(alice.id),
            *await g.edges_from(alice.id)]  # fmt: skip
    for model in read:
        assert set(model.__dict__) == set(type(model).model_fields)
        assert type(model).model_validate(model.model_dump()) == model
        assert model.model_dump_json() == type(model).model_validate_json(model.model_dump_json()).model_dump_json()
    assert read[0] == alice and read[1] == acme
