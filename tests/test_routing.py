"""The adaptive router: the spec's keyword routes, GRAPH's fallback, reasons on every result, and a memory
without these components behaving as before."""

from __future__ import annotations

import pytest

from mnemonite import Episode, Memory, MemoryConfig, Scope, SyncMemory
from mnemonite.concepts import EventNode
from mnemonite.models.search import SearchFilter
from mnemonite.search.routing import route_for

ALICE = Scope(user="alice", session="s1", agent="a")


@pytest.mark.parametrize(
    ("question", "route"),
    [
        ("what did we discuss last time?", "sequential"),
        ("What did we talk about previously?", "sequential"),
        ("anything recent?", "sequential"),
        ("how does authentication relate to authorization?", "graph"),
        ("Why did the deploy fail?", "graph"),
        ("explain the relationship between caching and latency", "graph"),
        ("what is the API endpoint?", "flat"),
        ("what is the " + "very " * 20 + "long name of the service we use?", "graph"),
        ("What did Caroline paint before the trip?", "flat"),  # a sequential cue qualifying a subject
        ("however this showcase goes", "flat"),  # whole words only
    ],
)
def test_keyword_routes(question: str, route: str) -> None:
    chosen, reason = route_for(question)
    assert chosen == route and reason


async def _conversation(mem: Memory) -> list[Episode]:
    texts = [
        "I switched our login to OAuth authentication tokens",
        "authorization rules decide which tokens may read invoices",
        "lunch was a tomato soup",
    ]
    stored = [Episode(id=f"m{i}", content=t) for i, t in enumerate(texts)]
    await mem.episodic.put_many(stored, user="alice", session="s1", agent="a")
    await mem.index()
    return stored


async def test_routes_run_their_retrieval_and_say_why(memory_url: str) -> None:
    mem = await Memory.open(config=MemoryConfig(url=memory_url, index_in_background=False))
    try:
        await _conversation(mem)
        sequential = await mem.retrieve(ALICE, "what did we discuss last time?", 2)
        assert sequential.route == "sequential" and [h.record.id for h in sequential.hits] == ["m2", "m1"]
        flat = await mem.retrieve("alice", "tomato soup")
        assert flat.route == "flat" and flat.hits[0].record.id == "m2" and flat.reason == "no routing cue"
        empty = await mem.retrieve(ALICE, "how does authentication relate to authorization?")
        assert empty.route == "flat" and empty.fell_back and "graph gave nothing" in empty.reason
        assert empty.hits == (await mem.retrieve(ALICE, "how does authentication relate to authorization?")).hits

        events = [EventNode(text=e.content, record_id=e.id) for e in await mem.episodic.recent(ALICE, limit=3)]
        await mem.concepts.consolidate(ALICE, events[1:])
        graph = await mem.retrieve(ALICE, "how does authentication relate to authorization?", 3)
        assert graph.route == "graph" and not graph.fell_back and graph.graph is not None
        assert {h.record.id for h in graph.hits[:2]} == {"m0", "m1"}
        forced = await mem.retrieve(ALICE, "how does authentication relate to authorization?", route="flat")
        assert forced.route == "flat" and forced.reason == "route given"
    finally:
        await mem.close()


async def test_a_graph_never_leads_to_another_users_records(memory_url: str) -> None:
    mem = await Memory.open(config=MemoryConfig(url=memory_url, index_in_background=False))
    try:
        secret = Episode(id="bob1", content="bob's OAuth authentication secret rotation")
        await mem.episodic.put(secret, user="bob", session="s1", agent="a")
        await mem.concepts.consolidate(Scope(user="bob", agent="a"), [EventNode(text=secret.content, record_id="bob1")])
        await mem.episodic.put(Episode(id="al1", content="alice likes tea"), user="alice", session="s1", agent="a")
        routed = await mem.retrieve(ALICE, "how does OAuth authentication work?")
        assert "bob1" not in {h.record.id for h in routed.hits}
        assert routed.fell_back  # bob's graph is his alone: alice's graph of this agent is empty, so flat
        assert routed.graph is None or "oauth" not in " ".join(s.node.label for s in routed.graph.concepts).lower()
    finally:
        await mem.close()


async def test_with_nothing_configured_memory_behaves_as_before(memory_url: str) -> None:
    mem = await Memory.open(config=MemoryConfig(url=memory_url, index_in_background=False))
    try:
        await _conversation(mem)
        hits = await mem.search("alice", "OAuth tokens")
        again = await mem._engine.search("OAuth tokens", SearchFilter(scope=Scope(user="alice")), 10)
        assert [(h.record.id, h.score) for h in hits] == [(h.record.id, h.score) for h in again]
        await mem.episodic.recent(ALICE)
        await mem.retrieve("alice", "what is the soup?")
        stats = await mem.lifecycle.stats("alice")
        assert (stats.hot, stats.warm, stats.cold) == (0, 0, 3)  # no record was moved by reads
        graph = await mem.concepts.load_graph(ALICE)
        assert graph.version == 0 and not graph.nodes  # nothing consolidated on its own
    finally:
        await mem.close()


@pytest.mark.parametrize("memory_url", ["sqlite"], indirect=True)
def test_sync_memory_routes(memory_url: str) -> None:
    with SyncMemory.open(config=MemoryConfig(url=memory_url, index_in_background=False)) as mem:
        mem.episodic.put(Episode(content="hello world"), user="alice", session="s1", agent="a")
        routed = mem.retrieve(ALICE, "what did we discuss last time?")
        assert routed.route == "sequential" and routed.hits[0].text == "hello world"
        assert mem.lifecycle.stats("alice").cold == 1
