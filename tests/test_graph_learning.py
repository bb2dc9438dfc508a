"""The graph builds itself: what the parser reads of people, pets, places and organisations, the entities and edges
each fact adds (SQLite and PostgreSQL), how they end with the fact, and the consolidator's relation statements."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from mnemonite import Episode, Memory, MemoryConfig, Scope
from mnemonite.conflicts.pack import locale_pack
from mnemonite.reading import StatementReader
from mnemonite.reading.graph import GraphReading, statements

MAYA = Scope(user="maya", agent="a")
READER = StatementReader(locale_pack("en"))
USER = "USER"


def links(reading: GraphReading) -> set[tuple[str, str, str, bool]]:
    def name(index: int) -> str:
        mention = reading.mentions[index]
        return USER if mention.user else mention.name or f"<{mention.role}>"

    return {(name(link.source), link.relation, name(link.target), link.ended) for link in reading.links}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("My sister Ana lives in Porto with her husband Leo",
         {("Ana", "SIBLING_OF", USER, False), ("Leo", "PARTNER_OF", "Ana", False), ("Ana", "LIVES_IN", "Porto", False),
          ("Leo", "LIVES_IN", "Porto", False)}),
        ("We adopted a cat called Miso", {(USER, "HAS_PET", "Miso", False)}),
        ("I quit my job at Acme", {(USER, "WORKS_AT", "Acme", True)}),
        ("I moved from Hackney to Walthamstow",
         {(USER, "LIVES_IN", "Hackney", True), (USER, "LIVES_IN", "Walthamstow", False)}),
        ("Leo, Ana's husband, plays for Porto FC", {("Leo", "PARTNER_OF", "Ana", False),
                                                    ("Leo", "MEMBER_OF", "Porto FC", False)}),
        ("I work with Priya at Globex, a startup in Lisbon",
         {(USER, "COLLEAGUE_OF", "Priya", False), (USER, "WORKS_AT", "Globex", False),
          ("Globex", "LOCATED_IN", "Lisbon", False)}),
        ("my aunt kavita came over from leicester", {("Kavita", "RELATIVE_OF", USER, False)}),
        ("grew up in valencia, then moved to dublin for a job", {(USER, "FROM", "Valencia", False),
                                                                  (USER, "LIVES_IN", "Dublin", False)}),
        ("Kofi is my boyfriend", {("Kofi", "PARTNER_OF", USER, False)}),
        ("my sister moved to Lyon", {("<sister>", "LIVES_IN", "Lyon", False)}),
    ],
)  # fmt: skip
def test_the_parser_reads_who_and_what_a_statement_relates(
    text: str, expected: set[tuple[str, str, str, bool]]
) -> None:
    [reading] = READER.graphs([text], ["maya"])
    assert links(reading) == expected


def test_kinds_come_from_relations_and_capitals_for_emphasis_are_no_names() -> None:
    cork, dead, alice = READER.graphs(["she's from Cork, I think", "I am DEAD", "Alice drives a Fiat"])
    assert {(m.name, m.kind) for m in cork.mentions if m.named} == {("Cork", "place")}
    assert not any(m.named for m in dead.mentions)
    assert {(m.name, m.kind) for m in alice.mentions if m.named} == {("Alice", "person"), ("Fiat", "product")}


def test_relations_said_as_statements_of_their_own() -> None:
    pack = READER.pack
    [reading] = READER.graphs(["mum and dad flew in, and my brother is dev btw, sana is his wife"], ["maya"])
    said = statements(reading, pack.relation_nouns, pack.relation_phrases)
    assert "Dev is my brother" in said
    [theirs] = READER.graphs(["my sister Ana lives in Porto"], ["caroline"])
    assert statements(theirs, pack.relation_nouns, pack.relation_phrases, speaker="Caroline") == [
        "Ana is Caroline's sister", "Ana lives in Porto"]  # fmt: skip


async def _graph(mem: Memory, scope: Scope = MAYA) -> dict[str, tuple[str, set[tuple[str, str, bool]]]]:
    """name -> (type, {(relation, target name, current)}) of every entity of the scope, ended edges included."""
    entities, _ = await mem.graph.entities(scope, limit=1000)
    names = {e.id: e.name for e in entities}
    return {e.name: (e.entity_type, {(edge.relation, names[edge.target], edge.current)
                                     for edge in await mem.graph.edges_from(e.id, ended=True)})
            for e in entities}  # fmt: skip


async def test_a_statement_adds_entities_edges_and_links_in_its_own_audited_delta(mem_on_both: Memory) -> None:
    fact = await mem_on_both.semantic.remember(MAYA, "My sister Ana lives in Porto with her husband Leo")
    graph = await _graph(mem_on_both)
    assert graph == {
        "Maya": ("person", set()),
        "Ana": ("person", {("SIBLING_OF", "Maya", True), ("LIVES_IN", "Porto", True)}),
        "Leo": ("person", {("PARTNER_OF", "Ana", True), ("LIVES_IN", "Porto", True)}),
        "Porto": ("place", set()),
    }
    ana = await mem_on_both.graph.entity(MAYA, "Ana")
    assert (fact.entities[0].entity_id, fact.entities[0].role) == (ana.id, "about")
    assert {link.role for link in fact.entities[1:]} == {"mentions"} and len(fact.entities) == 4
    [sister] = await mem_on_both.graph.edges_from(ana.id, limit=1)
    assert (sister.fact_id, sister.valid_from) == (fact.id, fact.valid_from)
    assert sister.properties == {"as": "sister", "facts": [fact.id]}  # the word that said it, the facts that state it
    [record] = await mem_on_both.semantic.deltas(rule_id="remember")
    assert record.delta.kind == "add" and record.delta.graph is not None
    assert {e.name for e in record.delta.graph.entities} == {"Maya", "Ana", "Leo", "Porto"}
    me = await mem_on_both.graph.entity(MAYA, "maya")
    assert me.properties == {"self": True}


async def test_a_new_home_ends_the_old_edge_and_context_shows_the_present(mem_on_both: Memory) -> None:
    await mem_on_both.semantic.remember(MAYA, "I live in Porto")
    await mem_on_both.semantic.remember(MAYA, "I moved to Lisbon")
    assert (await _graph(mem_on_both))["Maya"][1] == {("LIVES_IN", "Porto", False), ("LIVES_IN", "Lisbon", True)}
    me = await mem_on_both.graph.entity(MAYA, "Maya")
    [home] = await mem_on_both.graph.edges_from(me.id)
    [then, now] = await mem_on_both.graph.edges_from(me.id, ended=True)
    assert home == now and then.valid_to is not None and then.valid_to <= now.valid_from
    context = (await mem_on_both.graph.context_for(MAYA, entity="Maya")).format()
    assert "Maya LIVES_IN Lisbon" in context and "LIVES_IN Porto" not in context
    assert [e.relation for e in await mem_on_both.graph.neighbors(me.id)] == ["LIVES_IN"]
    assert len(await mem_on_both.graph.neighbors(me.id, ended=True)) == 2
    assert (await mem_on_both.graph.stats(MAYA)).edges == 1


async def test_forget_ends_the_edges_and_purge_removes_what_only_the_fact_made(mem_on_both: Memory) -> None:
    kept = await mem_on_both.semantic.remember(MAYA, "I work at Spotify")
    fact = await mem_on_both.semantic.remember(MAYA, "Kofi is my boyfriend")
    kofi = await mem_on_both.graph.entity(MAYA, "Kofi")
    await mem_on_both.semantic.forget(fact.id)
    [ended] = await mem_on_both.graph.edges_from(kofi.id, ended=True)
    assert not ended.current and await mem_on_both.graph.edges_from(kofi.id) == []
    await mem_on_both.semantic.purge(fact.id, reason="asked to")
    assert set(await _graph(mem_on_both)) == {"Maya", "Spotify"}  # Maya and Spotify belong to another fact too
    [record] = [r for r in await mem_on_both.semantic.deltas(limit=10) if r.fact_id == fact.id]
    assert record.delta.graph is None  # the audit row keeps no name of what was purged
    assert (await mem_on_both.semantic.get(kept.id)).entities


async def test_names_said_two_ways_are_one_entity_and_two_anas_are_two(mem_on_both: Memory) -> None:
    for text in ("Kofi Mensah is my boyfriend", "Kofi lives in Leeds", "My sister Ana lives in Porto",
                 "Tom's sister Ana lives in Braga"):  # fmt: skip
        await mem_on_both.semantic.remember(MAYA, text)
    graph = await _graph(mem_on_both)
    assert graph["Kofi Mensah"][1] == {("PARTNER_OF", "Maya", True), ("LIVES_IN", "Leeds", True)}
    assert (await mem_on_both.graph.entity(MAYA, "Kofi Mensah")).properties["aliases"] == ["Kofi"]
    assert graph["Ana"][1] == {("SIBLING_OF", "Maya", True), ("LIVES_IN", "Porto", True)}
    assert graph["Ana (Tom's sister)"][1] == {("SIBLING_OF", "Tom", True), ("LIVES_IN", "Braga", True)}


async def test_a_relation_without_a_name_is_the_one_entity_in_that_role(mem_on_both: Memory) -> None:
    await mem_on_both.semantic.remember(MAYA, "My sister Ana lives in Porto")
    await mem_on_both.semantic.remember(MAYA, "my sister moved to Lyon last spring")
    assert (await _graph(mem_on_both))["Ana"][1] == {
        ("SIBLING_OF", "Maya", True), ("LIVES_IN", "Porto", False), ("LIVES_IN", "Lyon", True)}  # fmt: skip


async def test_a_guessed_type_is_corrected_and_a_hand_made_one_kept(mem_on_both: Memory) -> None:
    alice = await mem_on_both.graph.create_entity(MAYA, name="Alice", entity_type="person")
    await mem_on_both.semantic.remember(MAYA, "Alice likes tea")  # the recogniser may take Alice for anything
    await mem_on_both.semantic.remember(MAYA, "Alice drives a Fiat")
    graph = await _graph(mem_on_both)
    assert graph["Alice"] == ("person", {("OWNS", "Fiat", True)}) and graph["Fiat"][0] == "product"
    assert (await mem_on_both.graph.entity(MAYA, "Alice")).id == alice.id


async def test_the_graph_is_left_alone_when_asked(tmp_path: Path) -> None:
    for config in (MemoryConfig(embedder="none", learn_graph=False), MemoryConfig(embedder="none", reader="rules")):
        async with await Memory.open(f"sqlite:///{tmp_path / f'{config.reader}.db'}", config=config) as mem:
            fact = await mem.semantic.remember(MAYA, "My sister Ana lives in Porto")
            assert fact.entities == [] and (await mem.graph.entities(MAYA))[1] == 0
    async with await Memory.open(f"sqlite:///{tmp_path / 'told.db'}", config=MemoryConfig(embedder="none")) as mem:
        place = await mem.graph.create_entity(MAYA, name="Home", entity_type="place")
        fact = await mem.semantic.remember(MAYA, "My sister Ana lives in Porto", entities=[place.id])
        assert [link.entity_id for link in fact.entities] == [place.id]  # linked as told, nothing learned
        assert (await mem.graph.entities(MAYA))[1] == 1


async def test_a_consolidated_chat_builds_the_graph(tmp_path: Path) -> None:
    start = datetime(2026, 3, 1, 9, tzinfo=UTC)
    turns = ["hey, quick one: my mum Rosa is visiting from Lisbon next week",
             "my brother is dev btw, he works at Deloitte in Manchester"]  # fmt: skip
    async with await Memory.open(f"sqlite:///{tmp_path / 'chat.db'}", config=MemoryConfig(embedder="none")) as mem:
        await mem.episodic.put_many(
            [Episode(id=f"t{i}", content=text, timestamp=start + timedelta(minutes=i), source_node="user")
             for i, text in enumerate(turns)], user="maya", session="s", agent="a")  # fmt: skip
        await mem.consolidator.run("standard")
        texts = {fact.text for fact in await mem.semantic.facts(MAYA)}
        assert {"Rosa is my mum", "Dev works at Deloitte"} <= texts  # said in passing, recorded as statements
        graph = await _graph(mem)
        assert ("PARENT_OF", "Maya", True) in graph["Rosa"][1]
        assert {("SIBLING_OF", "Maya", True), ("WORKS_AT", "Deloitte", True)} <= graph["Dev"][1]
        dev = await mem.graph.entity(MAYA, "Dev")
        assert dev.entity_type == "person"


async def test_a_memory_from_before_builds_its_graph_once_resumably(memory_url: str) -> None:
    off = MemoryConfig(url=memory_url, embedder="none", learn_graph=False)
    async with await Memory.open(config=off) as mem:
        await mem.semantic.remember(MAYA, "My sister Ana lives in Porto")
        old = await mem.semantic.remember(MAYA, "I live in Leeds")
        await mem.semantic.supersede(old.id, "I live in York")
        await mem.semantic.remember(Scope(user="tom", agent="a"), "Tom works at Acme")
        await mem.semantic.remember(MAYA, "My brother Tomas lives in Faro", sensitivity="secret")
        assert (await mem.graph.entities(MAYA))[1] == 0
    async with await Memory.open(config=off.model_copy(update={"learn_graph": True})) as mem:
        seen: list[tuple[int, int]] = []
        report = await mem.graph.build(progress=lambda done, total: seen.append((done, total)))
        assert (report.scopes, report.facts_to_read, report.facts_read, report.facts_linked) == (2, 4, 4, 3)
        assert seen[-1] == (4, 4)
        assert "Tomas" not in await _graph(mem)  # a secret is not read
        graph = await _graph(mem)
        assert graph["Ana"][1] == {("SIBLING_OF", "Maya", True), ("LIVES_IN", "Porto", True)}
        assert graph["Maya"][1] == {("LIVES_IN", "York", True)}  # from the believed fact; Leeds was replaced
        assert "Acme" in await _graph(mem, Scope(user="tom", agent="a"))
        york = next(f for f in await mem.semantic.facts(MAYA) if f.text == "I live in York")
        assert {link.role for link in york.entities} == {"about", "mentions"}
        [linked] = [r for r in await mem.semantic.deltas(rule_id="graph-build", limit=10) if r.fact_id == york.id]
        assert linked.kind == "link" and linked.delta.graph is not None
        again = await mem.graph.build(MAYA)
        assert (again.facts_to_read, again.facts_linked) == (0, 0)  # resumed past what it read
        await mem.semantic.remember(MAYA, "Kofi is my boyfriend")  # learned as it is written
        assert (await mem.graph.build(MAYA)).facts_linked == 0


def test_graph_build_from_the_command_line(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from mnemonite import SyncMemory
    from mnemonite.cli import app

    path = tmp_path / "cli.db"
    with SyncMemory.open(f"sqlite:///{path}", config=MemoryConfig(embedder="none", learn_graph=False)) as mem:
        mem.semantic.remember(Scope(user="maya", agent="assistant"), "My sister Ana lives in Porto")
    runner = CliRunner()
    built = runner.invoke(app, ["graph", "build", "--db", str(path)])
    assert built.exit_code == 0, built.output
    assert "1 joined the graph: 3 new entities, 2 edges" in built.stdout
    walk = runner.invoke(app, ["graph", "neighbors", "Ana", "-u", "maya", "--db", str(path)])
    assert "SIBLING_OF" in walk.stdout and "Porto" in walk.stdout
    assert runner.invoke(app, ["graph", "build", "-a", "x", "--db", str(path)]).exit_code != 0


@pytest.mark.parametrize(
    ("text", "parsed"),
    [
        ("my sister is visiting", True),  # a relation noun
        ("I moved to Lisbon last year", True),  # a word of a relation and a name
        ("grew up in valencia", True),  # written in lower case: names may be too
        ("I went to the gym and it was great", False),  # a word of a relation, no name
        ("Hey Mel! Good to see you!", False),  # a name, no word of a relation
    ],
)
def test_only_messages_that_may_state_a_relation_are_parsed_for_one(text: str, parsed: bool) -> None:
    from mnemonite.reading.graph import may_relate

    pack = READER.pack
    assert may_relate(text, frozenset(pack.relation_nouns), frozenset(pack.relation_cues)) is parsed


async def test_a_pending_fact_holds_its_edges_once_approved(mem_on_both: Memory) -> None:
    from mnemonite.models import AddDelta
    from mnemonite.models.conflict import JudgeVerdict
    from mnemonite.models.deltas import GraphChange, LearnedEdge, LearnedEntity

    change = GraphChange(entities=[LearnedEntity(id="me", name="Maya", entity_type="person"),
                                   LearnedEntity(id="city", name="Lyon", entity_type="place")],
                         edges=[LearnedEdge(source="me", target="city", relation="LIVES_IN")])  # fmt: skip
    payload = {"text": "I live in Lyon", "user": "maya", "agent": "a", "status": "pending",
               "entities": [{"entity_id": "me", "role": "about"}]}  # fmt: skip
    [record] = await mem_on_both.semantic.apply_deltas([AddDelta(
        fact_payload=payload, source_episode_ids=[], promotion_ts=datetime.now(UTC), rule_id="t", confidence=1.0,
        graph=change)])  # fmt: skip
    assert record.fact_id is not None
    me = await mem_on_both.graph.entity(MAYA, "Maya")
    assert await mem_on_both.graph.edges_from(me.id, ended=True) == []  # pending: not believed yet
    await mem_on_both.semantic.decide_pending(record.fact_id, JudgeVerdict(kind="admit", reason="checked"))
    [home] = await mem_on_both.graph.edges_from(me.id)
    assert (home.relation, home.fact_id, home.current) == ("LIVES_IN", record.fact_id, True)


async def test_a_move_keeps_the_husband_and_a_hand_made_edge_stays_hand_made(mem_on_both: Memory) -> None:
    await mem_on_both.semantic.remember(MAYA, "I live in Porto with my husband Leo")
    await mem_on_both.semantic.remember(MAYA, "I moved to Lisbon")
    assert ("PARTNER_OF", "Maya", True) in (await _graph(mem_on_both))["Leo"][1]  # not ended by the move
    ana = await mem_on_both.graph.create_entity(MAYA, name="Ana", entity_type="person")
    porto = await mem_on_both.graph.entity(MAYA, "Porto")
    made = await mem_on_both.graph.relate(MAYA, source=ana.id, target=porto.id, relation="LIVES_IN")
    fact = await mem_on_both.semantic.remember(MAYA, "Ana lives in Porto")
    await mem_on_both.semantic.purge(fact.id, reason="asked to")
    [kept] = await mem_on_both.graph.edges_from(ana.id)
    assert (kept.id, kept.fact_id, kept.current) == (made.id, None, True)  # related by hand: no fact ends it


async def test_an_explicit_supersede_reads_the_new_text_and_an_older_statement_stays_in_the_past(
    mem_on_both: Memory,
) -> None:
    old = await mem_on_both.semantic.remember(MAYA, "My sister Ana lives in Porto")
    await mem_on_both.semantic.supersede(old.id, "My sister Ana lives in Lisbon")
    assert (await _graph(mem_on_both))["Ana"][1] == {
        ("SIBLING_OF", "Maya", True), ("LIVES_IN", "Porto", False), ("LIVES_IN", "Lisbon", True)}  # fmt: skip
    await mem_on_both.semantic.remember(MAYA, "I moved to York")
    await mem_on_both.semantic.remember(MAYA, "I lived in Leeds", valid_from=datetime(2020, 1, 1, tzinfo=UTC))
    assert {e for e in (await _graph(mem_on_both))["Maya"][1] if e[0] == "LIVES_IN"} == {
        ("LIVES_IN", "York", True), ("LIVES_IN", "Leeds", False)}  # fmt: skip


async def test_secrets_long_names_and_purges_leave_no_name_in_the_graph(mem_on_both: Memory) -> None:
    await mem_on_both.semantic.remember(MAYA, "My brother Tomas lives in Porto", sensitivity="secret")
    assert (await mem_on_both.graph.entities(MAYA))[1] == 0
    fact = await mem_on_both.semantic.remember(MAYA, "I work at " + " ".join(["ACME"] * 150))
    assert fact.status == "active"  # written; the graph skips a "name" no name is as long as
    a = await mem_on_both.semantic.remember(MAYA, "My sister Ana lives in Braga")
    b = await mem_on_both.semantic.remember(MAYA, "Ana lives in Braga with her dog Rex")
    await mem_on_both.semantic.purge(a.id, reason="asked to")
    await mem_on_both.semantic.purge(b.id, reason="asked to")
    assert not {"Ana", "Braga", "Rex"} & set(await _graph(mem_on_both))


async def test_an_entity_typed_by_hand_keeps_its_type(mem_on_both: Memory) -> None:
    await mem_on_both.semantic.remember(MAYA, "Jordan likes tea")
    jordan = await mem_on_both.graph.entity(MAYA, "Jordan")
    await mem_on_both.graph.update_entity(jordan.id, entity_type="person")
    await mem_on_both.semantic.remember(MAYA, "I visited Jordan")
    assert (await mem_on_both.graph.get_entity(jordan.id)).entity_type == "person"


async def test_edges_never_cross_scopes(mem_on_both: Memory) -> None:
    from mnemonite import DeltaValidationError
    from mnemonite.models import AddDelta
    from mnemonite.models.deltas import GraphChange, LearnedEdge

    theirs = await mem_on_both.graph.create_entity(Scope(user="tom", agent="a"), name="Acme", entity_type="org")
    mine = await mem_on_both.graph.create_entity(MAYA, name="Maya", entity_type="person")
    change = GraphChange(edges=[LearnedEdge(source=mine.id, target=theirs.id, relation="WORKS_AT")])
    delta = AddDelta(fact_payload={"text": "I work at Acme", "user": "maya", "agent": "a"}, source_episode_ids=[],
                     promotion_ts=datetime.now(UTC), rule_id="t", confidence=1.0, graph=change)  # fmt: skip
    with pytest.raises(DeltaValidationError):
        await mem_on_both.semantic.apply_deltas([delta])
    assert await mem_on_both.semantic.facts(MAYA) == []


async def test_an_edge_two_facts_state_holds_while_either_is_believed(mem_on_both: Memory) -> None:
    first = await mem_on_both.semantic.remember(MAYA, "My sister Ana lives in Porto")
    second = await mem_on_both.semantic.remember(MAYA, "Ana is my sister")
    ana = await mem_on_both.graph.entity(MAYA, "Ana")
    await mem_on_both.semantic.forget(second.id)
    sister = next(e for e in await mem_on_both.graph.edges_from(ana.id) if e.relation == "SIBLING_OF")
    assert (sister.fact_id, sister.properties["facts"]) == (first.id, [first.id])  # held by the first now
    third = await mem_on_both.semantic.remember(MAYA, "Ana lives in Porto with her dog Rex")
    await mem_on_both.semantic.purge(third.id, reason="asked to")
    assert {e.relation for e in await mem_on_both.graph.edges_from(ana.id)} == {"SIBLING_OF", "LIVES_IN"}
    await mem_on_both.semantic.forget(first.id)
    assert await mem_on_both.graph.edges_from(ana.id) == []  # no believed fact states them now


def test_the_command_line_shows_when_an_edge_held(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from mnemonite.cli import app

    db = ["-u", "maya", "--db", str(tmp_path / "held.db")]
    runner = CliRunner()
    assert runner.invoke(app, ["remember", "I live in Leeds", *db]).exit_code == 0
    assert runner.invoke(app, ["remember", "I quit my job at Acme", *db]).exit_code == 0
    walk = runner.invoke(app, ["graph", "neighbors", "Maya", "--ended", *db]).stdout
    assert "since " in walk  # where she lives, since the fact's time
    assert "until " in walk  # the job she quit: it held until then
