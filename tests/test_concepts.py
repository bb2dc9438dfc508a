"""The concept graph on both stores: semantic shifts, consolidation, merging, versions, graph queries, bad input."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import numpy as np
import pytest

from mnemonite import (
    ConfigurationError,
    EmbedderMismatchError,
    Episode,
    InvalidInputError,
    Memory,
    MemoryConfig,
    MemoryScopeError,
    Scope,
    SyncMemory,
)
from mnemonite.concepts import (
    ConceptConfig,
    EventNode,
    GraphBuilder,
    KeyPhraseExtractor,
    SemanticConsolidator,
    format_as_context,
)
from mnemonite.embedding.base import BatchEmbedder, Vectors

SESSION = Scope(user="alice", session="s1", agent="helper")
HELPER = Scope(user="alice", agent="helper")
PYTHON = [
    "I am writing Python async code with asyncio event loops",
    "the asyncio event loop runs my Python async coroutines",
    "Python async coroutines and asyncio tasks",
]
DATABASE = [
    "Now let us design the PostgreSQL database schema with tables and indexes",
    "the PostgreSQL database schema needs a foreign key index",
]


@pytest.fixture
async def mem(memory_url: str) -> AsyncIterator[Memory]:
    opened = await Memory.open(config=MemoryConfig(url=memory_url, index_in_background=False))
    yield opened
    await opened.close()


async def _said(mem: Memory, scope: Scope, texts: list[str]) -> list[EventNode]:
    events = []
    for text in texts:
        stored = await mem.episodic.put(
            Episode(content=text), user=scope.user, session=scope.session, agent=scope.agent
        )
        events.append(EventNode(text=text, record_id=stored.id))
    return events


async def test_a_change_of_topic_consolidates_the_finished_one_first(mem: Memory) -> None:
    python = await _said(mem, SESSION, PYTHON)
    shifts = [await mem.concepts.observe(SESSION, e) for e in python]
    assert shifts == [None, None, None]
    assert (await mem.concepts.load_graph(HELPER)).version == 0  # nothing is stored inside a topic
    graph = mem.concepts.event_graph(SESSION)
    assert graph is not None and graph.edges == [(python[0].id, python[1].id), (python[1].id, python[2].id)]

    database = await _said(mem, SESSION, DATABASE[:1])
    shift = await mem.concepts.observe(SESSION, database[0])
    assert shift is not None and shift.distance > 0.30 and shift.version == 1
    assert shift.events == tuple(e.id for e in python)
    stored = await mem.concepts.load_graph(HELPER)
    assert stored.version == 1
    labels = {n.label for n in stored.nodes.values()}
    assert any("async" in label or "asyncio" in label for label in labels)
    assert not any("database" in label for label in labels)  # the new topic is not mixed in
    taught = {s for n in stored.nodes.values() for s in n.sources}
    assert taught == {e.record_id for e in python}

    version = await mem.concepts.flush(SESSION)
    assert version is not None and version.version == 2 and version.session == "s1"
    assert mem.concepts.event_graph(SESSION) is None
    audit = await mem.concepts.versions(HELPER)
    assert [v.version for v in audit] == [2, 1]
    assert audit[1].shift_distance == pytest.approx(shift.distance, abs=1e-6)
    after = await mem.concepts.load_graph(HELPER)
    assert any(e.relation == "precedes" for e in after.edges)  # the Python topic precedes the database one


async def test_a_concept_seen_again_is_counted_not_duplicated_and_becomes_schematic(mem: Memory) -> None:
    topic = [EventNode(text="rate limiting for the public API gateway")]
    first = await mem.concepts.consolidate(HELPER, topic)
    assert first is not None and first.nodes_added and not first.nodes_merged
    nodes = len((await mem.concepts.load_graph(HELPER)).nodes)
    for _ in range(4):
        again = await mem.concepts.consolidate(HELPER, topic)
        assert again is not None and not again.nodes_added and set(again.nodes_merged) == set(first.nodes_added)
    graph = await mem.concepts.load_graph(HELPER)
    assert len(graph.nodes) == nodes and graph.version == 5
    assert all(n.frequency == 5 and n.metadata["category"] == "schematic" for n in graph.nodes.values())
    result = await mem.concepts.query(HELPER, "how does rate limiting work?")
    assert result.concepts and result.concepts[0].node.category == "schematic"
    text = format_as_context(result)
    assert text.startswith("Knowledge graph context:") and "[core concept]" in text


async def test_schematic_concepts_are_surfaced_first(mem: Memory) -> None:
    for _ in range(5):
        await mem.concepts.consolidate(HELPER, [EventNode(text="kubernetes deployments")])
    await mem.concepts.consolidate(HELPER, [EventNode(text="helm charts, kubernetes deployments")])
    result = await mem.concepts.query(HELPER, "helm charts", top_k=5)
    categories = [s.node.category for s in result.concepts]
    assert categories[0] == "schematic" and "regular" in categories
    assert categories == sorted(categories, key=lambda c: c != "schematic")


async def test_concurrent_consolidations_of_one_graph_never_repeat_or_skip_a_version(mem: Memory) -> None:
    topic = [EventNode(text="vector database indexing with HNSW graphs")]
    done = await asyncio.gather(*(mem.concepts.consolidate(HELPER, topic) for _ in range(8)))
    assert sorted(v.version for v in done if v is not None) == list(range(1, 9))
    audit = await mem.concepts.versions(HELPER)
    assert sorted(v.version for v in audit) == list(range(1, 9))
    graph = await mem.concepts.load_graph(HELPER)
    assert graph.version == 8
    assert {n.frequency for n in graph.nodes.values()} == {8}  # merged every time: nothing lost, no duplicate


async def test_graph_query_without_a_graph_is_empty(mem: Memory) -> None:
    result = await mem.concepts.query(Scope(user="alice", agent="nobody"), "how does anything relate?")
    assert result.empty and result.version == 0 and format_as_context(result) == ""


@pytest.mark.parametrize("text", ["", "   \n"])
def test_events_without_text_are_refused(text: str) -> None:
    with pytest.raises(InvalidInputError, match="text"):
        EventNode(text=text)


@pytest.mark.parametrize(
    "fields",
    [{"shift_threshold": 1.5}, {"shift_threshold": -0.1}, {"merge_at": 1.01}, {"min_cosine": -1}],
)
def test_thresholds_outside_zero_one_are_refused(fields: dict[str, float]) -> None:
    with pytest.raises(ConfigurationError):
        ConceptConfig(**fields)
    with pytest.raises(ConfigurationError):
        MemoryConfig(concepts=fields)


async def test_builder_and_consolidator_refuse_thresholds_outside_zero_one(mem: Memory) -> None:
    embedder = mem.concepts.builder.embedder
    with pytest.raises(InvalidInputError, match=r"\[0, 1\]"):
        GraphBuilder(embedder, mem.concepts.builder.consolidator, threshold=1.2)
    with pytest.raises(InvalidInputError, match=r"\[0, 1\]"):
        SemanticConsolidator(mem._store, embedder, merge_at=-0.5)


async def test_an_event_embedded_by_another_model_is_refused_and_changes_nothing(mem: Memory) -> None:
    await mem.concepts.observe(SESSION, EventNode(text="first event about gardening"))
    foreign = EventNode(text="tomatoes", embedding=(1.0,) * 384, model="some-other-model")
    with pytest.raises(EmbedderMismatchError):
        await mem.concepts.observe(SESSION, foreign)
    graph = mem.concepts.event_graph(SESSION)
    assert graph is not None and len(graph.events) == 1


class _OtherModel(BatchEmbedder):
    _model_id, _dimensions = "other-model", 8

    async def embed_batch(self, texts: list[str]) -> Vectors:  # type: ignore[override]
        return np.eye(8, dtype=np.float32)[[len(t) % 8 for t in texts]]


async def test_consolidating_with_another_model_than_the_graph_is_refused(mem: Memory) -> None:
    await mem.concepts.consolidate(HELPER, [EventNode(text="solar panels on the roof")])
    other = SemanticConsolidator(mem._store, _OtherModel())
    with pytest.raises(EmbedderMismatchError):
        await other.consolidate("alice", "helper", [EventNode(text="wind turbines")])
    graph = await mem.concepts.load_graph(HELPER)
    assert graph.version == 1 and [v.version for v in await mem.concepts.versions(HELPER)] == [1]


async def test_events_need_a_full_scope(mem: Memory) -> None:
    with pytest.raises(MemoryScopeError):
        await mem.concepts.observe(Scope(user="alice"), EventNode(text="hello there"))


async def test_a_topic_naming_nothing_writes_no_version(mem: Memory) -> None:
    assert await mem.concepts.consolidate(HELPER, [EventNode(text="oh yes, and then it was so")]) is None
    assert (await mem.concepts.load_graph(HELPER)).version == 0


async def test_without_an_embedder_the_concept_graph_says_so(memory_url: str) -> None:
    mem = await Memory.open(config=MemoryConfig(url=memory_url, embedder="none"))
    try:
        with pytest.raises(ConfigurationError, match="embedder"):
            await mem.concepts.observe(SESSION, EventNode(text="hello there"))
    finally:
        await mem.close()


async def test_key_phrases_prefer_words_that_keep_company() -> None:
    found = await KeyPhraseExtractor().extract(
        ["We tuned the database schema design.", "The database schema design needs review."], 3
    )
    assert found[0].label == "database schema design"
    assert await KeyPhraseExtractor().extract(["and so it was, yes"], 3) == []


@pytest.mark.parametrize("memory_url", ["sqlite"], indirect=True)
def test_sync_memory_delegates(memory_url: str) -> None:
    with SyncMemory.open(config=MemoryConfig(url=memory_url, index_in_background=False)) as mem:
        for text in PYTHON:
            mem.concepts.observe(SESSION, EventNode(text=text))
        version = mem.concepts.flush(SESSION)
        assert version is not None and mem.concepts.load_graph(HELPER).version == 1
        assert mem.concepts.versions(HELPER)[0].version == 1
        result = mem.concepts.query(HELPER, "how do asyncio coroutines work?")
        assert "Knowledge graph context" in mem.concepts.format_as_context(result)


async def test_a_copy_to_postgres_keeps_the_graph_its_versions_and_the_tiers(tmp_path: Path, postgres_url: str) -> None:
    from mnemonite.copy import copy_memory

    source = f"sqlite:///{tmp_path / 'source.db'}"
    mem = await Memory.open(config=MemoryConfig(url=source, index_in_background=False))
    try:
        events = await _said(mem, SESSION, PYTHON)
        await mem.concepts.consolidate(SESSION, events)
        await mem.concepts.consolidate(SESSION, events)
        await mem.lifecycle.access([await mem.episodic.get(events[0].record_id or "")])
        before = await mem.concepts.load_graph(HELPER)
    finally:
        await mem.close()
    await copy_memory(source, postgres_url)
    copied = await Memory.open(config=MemoryConfig(url=postgres_url, index_in_background=False))
    try:
        assert await copied.concepts.load_graph(HELPER) == before
        assert [v.version for v in await copied.concepts.versions(HELPER)] == [2, 1]
        assert (await copied.lifecycle.stats("alice")).warm == 1
        again = await copied.concepts.consolidate(HELPER, events)
        assert again is not None and again.version == 3 and not again.nodes_added  # vectors survived the copy
    finally:
        await copied.close()


async def test_an_episode_purge_reaches_the_concepts_and_tiers_derived_from_it(mem: Memory) -> None:
    put = mem.episodic.put
    one = await put(Episode(content="my secret diagnosis is asthma"), user="alice", session="s1", agent="helper")
    two = await put(Episode(content="weekend hiking trails nearby"), user="alice", session="s1", agent="helper")
    await mem.concepts.consolidate(HELPER, [EventNode(text=one.content, record_id=one.id)])
    shared = [EventNode(text="weekend hiking trails", record_id=i) for i in (one.id, two.id)]
    await mem.concepts.consolidate(HELPER, shared)
    await mem.lifecycle.access([one, two])
    before = await mem.concepts.query(HELPER, "what is the diagnosis?", top_k=10)  # the retriever caches the graph
    assert any("diagnosis" in s.node.label for s in before.concepts)
    await mem.episodic.purge(one.id, reason="privacy request")
    after = await mem.concepts.query(HELPER, "what is the diagnosis?", top_k=10)
    assert not any("diagnosis" in s.node.label or "asthma" in s.node.description for s in after.concepts)
    graph = await mem.concepts.load_graph(HELPER)
    assert graph.nodes and not any("diagnosis" in n.label or "asthma" in n.label for n in graph.nodes.values())
    assert all(n.sources == (two.id,) and n.description == n.label for n in graph.nodes.values())
    assert await mem.lifecycle.tiers("episode", [one.id, two.id]) == {one.id: "cold", two.id: "warm"}
    assert (await mem.lifecycle.stats("alice")).total == 1


async def test_graph_queries_while_the_graph_grows(mem: Memory) -> None:
    await mem.concepts.consolidate(HELPER, [EventNode(text="garden tomatoes and basil")])
    topics = [f"garden topic number {i} with compost bins and worms {i}" for i in range(5)]
    work = [mem.concepts.consolidate(HELPER, [EventNode(text=t)]) for t in topics]
    work += [mem.concepts.query(HELPER, "how do I grow tomatoes in the garden?") for _ in range(5)]
    done = await asyncio.gather(*work)
    assert all(not r.empty for r in done[5:])  # type: ignore[union-attr]
    assert (await mem.concepts.load_graph(HELPER)).version == 6


async def test_a_concept_graph_is_one_users_alone(mem: Memory) -> None:
    alice, bob = HELPER, Scope(user="bob", agent="helper")
    await mem.concepts.consolidate(alice, await _said(mem, SESSION, PYTHON))
    await mem.concepts.consolidate(alice, await _said(mem, SESSION, PYTHON[:1]))
    await mem.concepts.consolidate(bob, await _said(mem, Scope(user="bob", session="s9", agent="helper"), DATABASE))
    for scope, own, other in ((alice, "asyncio", "postgresql"), (bob, "postgresql", "asyncio")):
        graph = await mem.concepts.load_graph(scope)
        text = " ".join(f"{n.label} {n.description}" for n in graph.nodes.values()).lower()
        assert graph.user == scope.user and own in text and other not in text
        for question in ("how do asyncio coroutines work?", "how is the postgresql database schema indexed?"):
            result = await mem.concepts.query(scope, question, top_k=10)
            assert result.user == scope.user
            assert other not in mem.concepts.format_as_context(result).lower()
            assert all(s.node.id in graph.nodes for s in result.concepts)
    assert [v.version for v in await mem.concepts.versions(alice)] == [2, 1]
    assert [(v.user, v.version) for v in await mem.concepts.versions(bob)] == [("bob", 1)]
    assert (await mem.concepts.load_graph(Scope(user="carol", agent="helper"))).version == 0
    with pytest.raises(MemoryScopeError):
        await mem.concepts.load_graph(Scope(user="alice"))
