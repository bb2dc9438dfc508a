"""The adaptive router: the spec's keyword routes, GRAPH's fallback, reasons on every result, and a memory
without these components behaving as before."""

from __future__ import annotations

import pytest

from mnemonite import Episode, Memory, MemoryConfig, Scope, SyncMemory
from mnemonite.concepts import EventNode
from mnemonite.errors import InvalidInputError
from mnemonite.models.search import SearchFilter, SearchHit
from mnemonite.search.hops import HOP_DEPTH, fuse_hops, second_query
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
        ("What activities has Melanie done?", "multihop"),  # a plural asked for
        ("Which cities have both Jon and Gina visited?", "multihop"),
        ("How many times did the build fail?", "multihop"),  # a set cue comes before the graph's 'how'
        ("What kinds of tea does Alice like?", "multihop"),
        ("Where has Bob travelled?", "multihop"),  # present perfect: what has been done, over time
        ("What does the tattoo symbolize?", "flat"),  # 'does' is no plural
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


HOBBIES = [
    "I picked up pottery as a new hobby this spring, throwing clay on the wheel",
    "the kiln fired my clay bowls and the glaze came out deep blue",
    "I picked up the kids from school at three",
    "the hobby shop downtown sells model trains",
    "we have new neighbours who moved in on Friday",
    "I picked up a parcel at the post office",
    "my new hobby is pottery and my first clay mug cracked in the kiln",
    "the office printer jammed again",
]


async def test_multihop_route_adds_a_second_hop_from_the_best_hit(memory_url: str) -> None:
    mem = await Memory.open(config=MemoryConfig(url=memory_url, index_in_background=False))
    try:
        stored = [Episode(id=f"h{i}", content=t) for i, t in enumerate(HOBBIES)]
        await mem.episodic.put_many(stored, user="alice", session="s1", agent="a")
        await mem.index()
        question = "what hobbies have I picked up?"
        flat = await mem.retrieve("alice", question, 8, route="flat")
        routed = await mem.retrieve("alice", question, 8)
        assert routed.route == "multihop" and routed.reason.startswith("asks for a plural")
        assert f"second hop from the best hit ({flat.hits[0].record.id})" in routed.reason
        assert [h.record.id for h in routed.hits[:3]] == [h.record.id for h in flat.hits[:3]]  # the guard
        # The kiln record shares the best hit's topic (pottery, clay) and none of the question's words: it gains
        # on the record that shares only the words "picked up".
        score = {route: {h.record.id: h.score for h in r.hits} for route, r in (("flat", flat), ("hop", routed))}
        assert score["hop"]["h1"] / score["hop"]["h5"] > 1.2 * score["flat"]["h1"] / score["flat"]["h5"]
        first = await mem.search("alice", question, HOP_DEPTH)
        second = await mem.search("alice", second_query(question, first), HOP_DEPTH)
        expected = fuse_hops(first, second, weight=mem._router.hop_weight)[:8]
        assert [(h.record.id, h.score) for h in routed.hits] == [(h.record.id, h.score) for h in expected]
        assert (await mem.retrieve("bob", question, route="multihop")).hits == []  # nothing found: no second hop
        for bad_question, bad_k in (("   ", 5), (question, 0)):
            with pytest.raises(InvalidInputError):
                await mem.retrieve("alice", bad_question, bad_k, route="multihop")
    finally:
        await mem.close()


def _hit(record: str, score: float) -> SearchHit:
    return SearchHit(record=Episode(id=record, content=f"text of {record}"), tier="episodic", score=score)


def test_fuse_hops_keeps_the_guarded_head_and_lifts_what_both_hops_found() -> None:
    first = [_hit("a", 1.0), _hit("b", 0.9), _hit("c", 0.5), _hit("d", 0.45)]
    second = [_hit("d", 2.0), _hit("e", 1.8), _hit("a", 0.2)]
    fused = fuse_hops(first, second, weight=0.75, guard=1)
    assert [h.record.id for h in fused] == ["a", "d", "b", "e", "c"]  # d: 0.45 + 0.75; e: second hop only
    assert [h.score for h in fused] == sorted((h.score for h in fused), reverse=True)
    assert fused[1].score <= fused[0].score
    assert [h.record.id for h in fuse_hops(first, [], guard=3)] == ["a", "b", "c", "d"]
    assert [h.record.id for h in fuse_hops(first, second, guard=10)] == ["a", "b", "c", "d", "e"]


def test_second_query_keeps_the_best_hits_own_words() -> None:
    header = "[8 May 2023] Mel:"
    first = [_hit("a", 1.0).model_copy(update={"record": Episode(id="a", content=f"{header} pottery class")})]
    first += [_hit(f"x{i}", 0.5).model_copy(update={"record": Episode(id=f"x{i}", content=f"{header} hello")})
              for i in range(20)]  # fmt: skip
    assert second_query("what has Mel done?", first) == "what has Mel done? pottery class"
