"""semantic.remember: the five-stage pipeline on a real SQLite file with the packaged model."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from embedding_server import chat_server
from mnemonite import (
    AddDelta,
    ConfigurationError,
    ConflictThresholds,
    Episode,
    FactConflictError,
    InvalidInputError,
    JudgeVerdict,
    Memory,
    MemoryConfig,
    NotFoundError,
    OpenAIJudge,
    Scope,
    define_locale_pack,
)
from mnemonite.conflicts import ENGLISH, canonical, text_hash
from mnemonite.models.search import SearchFilter

ALEX = Scope(user="alex", agent="a")


@pytest.fixture
async def mem(memory_url: str) -> AsyncIterator[Memory]:
    async with await Memory.open(config=MemoryConfig(url=memory_url, index_in_background=False)) as memory:
        yield memory


def test_canonical_text_and_hash() -> None:
    assert canonical("  I live\tin   BERLIN \n") == "i live in berlin"
    assert text_hash("I live in Berlin") == text_hash(" i  live in berlin")
    assert text_hash("I live in Berlin") != text_hash("I live in Bern")


@pytest.mark.parametrize(
    ("text", "triple"),
    [
        ("I live in Berlin", ("user", "lives_in", "berlin")),
        ("Berlin is where I live.", ("user", "lives_in", "berlin")),
        ("I've just moved to Lisbon", ("user", "lives_in", "lisbon")),
        ("Sam works at Globex", ("sam", "works_at", "globex")),
        ("My favourite colour is now green", ("user", "favourite_colour", "green")),
        ("Green is my favorite colour", ("user", "favourite_colour", "green")),
        ("I don't eat meat anymore", ("user", "eat", "meat")),
        ("I quit smoking", ("user", "smok", "")),
        ("Chris and I got divorced", ("user", "partner", "married chris")),
        ("Leo and I got engaged", ("user", "partner", "engaged leo")),
        ("Ada and I broke up", ("user", "partner", "ada")),
        ("I split up with Tomas last week", ("user", "partner", "tomas")),
        ("I got divorced in 2020", ("user", "partner", "divorced")),
        ("I divorced Sam", ("user", "partner", "married sam")),
        ("I married Sam", ("user", "partner", "married sam")),
        ("I'm single again", ("user", "partner", "single")),
        ("I started seeing someone called Dev", ("user", "partner", "dating dev")),
        ("My husband is Omar", ("user", "partner", "omar")),
        ("my husband is omar", ("user", "partner", "omar")),
        ("My husband is vegetarian", ("user's husband", "diet", "vegetarian")),
        ("My boss is Kenji", ("user", "manager", "kenji")),
        ("My boss is strict", ("user's boss", "is", "strict")),
        ("I'm a nurse", ("user", "is_a", "nurse")),
        ("Ines works at the quiet company, office 310", ("ines", "works_at", "quiet company")),
        ("My sister lives in Munich", ("user's sister", "lives_in", "munich")),
        ("She moved to Lyon", ("?she", "lives_in", "lyon")),
        ("I have a new manager, Tom", ("user", "manager", "tom")),
        ("Kenji is my boss", ("user", "manager", "kenji")),
        ("I'd rather drink tea than coffee", ("user", "likes", "tea")),
        ("I am a software engineer by profession", ("user", "job_title", "software engineer")),
        ("My new email is jo@new.example", ("user", "email", "jo@new.example")),
        ("I have a peanut allergy", ("user", "is", "allergic to peanut")),
        ("My brother, who met his wife in Berlin, now lives in Kiel", ("user's brother", "lives_in", "kiel")),
        ("I left Initech and joined Hooli", ("user", "works_at", "hooli")),
        ("On flights I prefer a window seat", ("user", "likes", "window seat")),
        ("My sister Ana is a nurse", ("user's sister ana", "is_a", "nurse")),  # the name is part of the subject
        ("My boss Maria is strict", ("user's boss maria", "is", "strict")),
        ("My brother Tom lives in Oslo", ("user's brother tom", "lives_in", "oslo")),
        ("My sister really is a nurse", ("user's sister", "is_a", "nurse")),  # not a name: not capitalised
        ("My username is jo_doe", ("user's username", "is", "jo_doe")),  # an underscore of the text stays
        # a chat statement that opens with a verb in the past is the speaker's; a name before its verb stays
        ("quit smoking 3 months ago, haven't touched one since", ("user", "smok", "")),
        ("Started at Datadog two weeks ago", ("user", "works_at", "datadog")),
        ("finally sold my car", ("user", "has", "car")),
        ("Jared moved to Boston", ("jared", "lives_in", "boston")),
        ("Marco moved back to Milan", ("marco", "lives_in", "milan")),
        ("I'm twenty-nine", ("user", "age", "29")),  # number words are read as digits
        ("I have twenty one cats", ("user", "count_cat", "21")),
        ("my husband's a firefighter", ("user's husband", "is_a", "firefighter")),  # "a firefighter" is no name
        # a title at a place of work is a job (one at a time); a member or a regular of a place is not
        ("I'm a junior designer at Figma", ("user", "job_title", "junior designer at figma")),
        ("I'm a member at the local gym", ("user", "is_a", "member at the local gym")),
        ("I'm a pro at chess", ("user", "is_a", "pro at chess")),
        ("Linda's my manager", ("user", "manager", "linda")),
        ("my boss is called Linda", ("user", "manager", "linda")),
        ("been playing guitar for years", ("user", "play", "guitar for years")),
        ("radiohead is my all-time favorite band", ("user", "favourite_band", "radiohead")),
        ("my fav band is Radiohead", ("user", "favourite_band", "radiohead")),
        ("my dad retired from Boeing", ("user's dad", "works_at", "boeing")),
        # a name, an adjective or a title before the verb keeps its place: not the speaker's
        ("Jared quit his job", ("jared", "works_at", "job")),
        ("Jared, my brother, moved to Austin", ("jared", "lives_in", "austin")),
        ("Fried chicken is my favourite food", ("user", "favourite_food", "fried chicken")),
        ("Lost in Translation is my favourite film", ("user", "favourite_film", "lost in translation")),
        ("We married in twenty twenty-one", ("user", "partner", "married in 20 21")),  # two tens, two numbers
    ],
)
def test_english_pack_splits_triples(text: str, triple: tuple[str, str, str]) -> None:
    found = ENGLISH.split(text)
    assert found is not None and (found.subject, found.predicate, found.object) == triple


async def test_each_stage_decides(mem: Memory) -> None:
    first = await mem.semantic.remember_with_decision(ALEX, "I live in Berlin")
    assert (first.kind, first.stage) == ("admit", "embedding")
    assert await mem.index() == 0  # its vector was stored with it: nothing left for the indexer
    exact = await mem.semantic.remember_with_decision(ALEX, "  i live in   BERLIN ")
    assert (exact.kind, exact.stage, exact.fact_id) == ("dedup", "exact", first.fact_id)
    paraphrase = await mem.semantic.remember_with_decision(ALEX, "Berlin is where I live")
    assert paraphrase.kind == "dedup" and paraphrase.fact_id == first.fact_id
    moved = await mem.semantic.remember_with_decision(ALEX, "I just moved to Tbilisi for the new gig.")
    assert (moved.kind, moved.stage, moved.matched_ids) == ("supersede", "subject_predicate", [first.fact_id])
    rome = await mem.semantic.remember_with_decision(ALEX, "I live in Rome")
    assert (rome.kind, rome.stage, rome.matched_ids) == ("supersede", "subject_predicate", [moved.fact_id])
    other = await mem.semantic.remember_with_decision(ALEX, "Bob lives in Paris")
    assert other.kind == "admit"
    assert {f.text for f in await mem.semantic.facts(ALEX)} == {"I live in Rome", "Bob lives in Paris"}
    chain = await mem.semantic.history(rome.fact_id)
    assert [f.text for f in chain] == ["I live in Berlin", "I just moved to Tbilisi for the new gig.", "I live in Rome"]
    assert chain[0].valid_to is not None and chain[-1].valid_to is None
    log = await mem.semantic.conflicts(ALEX)
    assert [d.kind for d in log] == ["admit", "dedup", "dedup", "supersede", "supersede", "admit"]
    assert all(d.reason for d in log) and log[3].candidate_text == "I just moved to Tbilisi for the new gig."
    assert [r.rule_id for r in await mem.semantic.deltas(limit=10)] == ["remember"] * 6  # one audit trail


async def test_hot_zone_always_dedups_and_thresholds_are_configurable(memory_url: str) -> None:
    strict = MemoryConfig(url=memory_url, index_in_background=False,
                          conflicts=ConflictThresholds(hot=0.5, near_dup=0.45, conflict_check=0.4))  # fmt: skip
    async with await Memory.open(config=strict) as mem:
        await mem.semantic.remember(ALEX, "I enjoy long mountain hikes")
        decision = await mem.semantic.remember_with_decision(ALEX, "I really enjoy long hikes in the mountains")
        assert (decision.kind, decision.stage, decision.zone) == ("dedup", "embedding", "HOT")
        assert decision.cosine is not None and decision.cosine >= 0.5


async def test_conflict_check_zone_is_pending_until_judged(mem: Memory) -> None:
    mem.semantic.judge = _Judge("admit")  # a judge will see them: what parsing cannot settle waits for it
    await mem.semantic.remember(ALEX, "My team ships the mobile app every Friday")
    pending = await mem.semantic.remember_with_decision(ALEX, "Our app release process is quite slow")
    assert (pending.kind, pending.zone) == ("pending", "CONFLICT_CHECK")
    hits = await mem.semantic.search(ALEX, "app release process")
    assert any(h.record.id == pending.fact_id and h.record.status == "pending" and h.pending for h in hits)
    assert not any(h.pending for h in hits if h.record.id != pending.fact_id)


class _Judge:
    def __init__(self, kind: str) -> None:
        self.kind, self.seen = kind, 0

    async def judge(self, candidate: Any, existing: Any) -> JudgeVerdict:
        self.seen += 1
        target = existing[0].id if existing and self.kind != "admit" else None
        return JudgeVerdict(kind=self.kind, target_id=target, reason=f"test judge says {self.kind}")  # type: ignore[arg-type]


@pytest.mark.parametrize("verdict", ["supersede", "dedup", "admit"])
async def test_judge_resolves_pending_rows(mem: Memory, verdict: str) -> None:
    judge = _Judge(verdict)
    mem.semantic.judge = judge
    old = await mem.semantic.remember(ALEX, "My team ships the mobile app every Friday")
    pending = await mem.semantic.remember_with_decision(ALEX, "Our app release process is quite slow")
    assert pending.kind == "pending"
    mem.semantic.judge = None
    [decision] = await mem.semantic.resolve_pending(ALEX, judge)
    assert (decision.kind, decision.stage) == (verdict, "judge") and judge.seen == 1
    current = {f.id: f for f in await mem.semantic.facts(ALEX)}
    expected = {"supersede": {pending.fact_id}, "dedup": {old.id}, "admit": {old.id, pending.fact_id}}[verdict]
    assert set(current) == expected and all(f.status == "active" for f in current.values())
    assert await mem.semantic.resolve_pending(ALEX, judge) == [] and judge.seen == 1
    with pytest.raises(InvalidInputError, match="no judge"):
        await mem.semantic.resolve_pending(ALEX)


@pytest.mark.parametrize("verdict", ["dedup", "supersede"])
async def test_a_turn_whose_pending_fact_a_judge_merged_is_not_marked_superseded(mem: Memory, verdict: str) -> None:
    """A judge's dedup closes the pending fact, but the kept fact holds what the turn said (CONSOLIDATES lineage);
    a judge's supersede retracts the older turn's fact."""
    for i, text in (("t1", "We ship the mobile app every Friday"), ("t2", "Our app release process is quite slow")):
        await mem.episodic.put(Episode(id=i, content=text), user="alex", session="s", agent="a")
    judge = _Judge(verdict)
    mem.semantic.judge = judge
    old = await mem.semantic.remember(ALEX, "My team ships the mobile app every Friday", source_episode_ids=["t1"])
    pending = await mem.semantic.remember_with_decision(
        ALEX, "Our app release process is quite slow", source_episode_ids=["t2"]
    )
    assert pending.kind == "pending"
    before = datetime.now(UTC)
    [decision] = await mem.semantic.resolve_pending(ALEX, judge)
    assert decision.kind == verdict
    stale = await mem._store.superseded_among(["t1", "t2"])
    assert stale == ({"t1"} if verdict == "supersede" else set())
    assert await mem._store.superseded_among(["t1", "t2"], before) == set()  # as it stood before the verdict
    if verdict == "dedup":
        assert any(
            e.relation == "CONSOLIDATES" and e.old_id == pending.fact_id for e in await mem.semantic.lineage(old.id)
        )
        await mem.semantic.forget(old.id)  # the kept fact forgotten too: now neither turn holds
        assert await mem._store.superseded_among(["t1", "t2"]) == {"t1", "t2"}


def answering(answer: dict[str, Any] | str) -> Callable[[dict[str, Any]], str]:
    """A judge reply; FIRST_ID becomes the id of the first fact offered."""

    def reply(body: dict[str, Any]) -> str:
        listed = body["messages"][1]["content"]
        content = answer if isinstance(answer, str) else json.dumps(answer)
        return content.replace("FIRST_ID", listed.split('id "')[1].split('"')[0] if 'id "' in listed else "")

    return reply


async def test_openai_compatible_judge(mem: Memory) -> None:
    mem.semantic.judge = _Judge("admit")  # configured: what parsing cannot settle is left pending for it
    old = await mem.semantic.remember(ALEX, "My team ships the mobile app every Friday")
    pending = await mem.semantic.remember_with_decision(ALEX, "Our app release process is quite slow")
    verdict = {"kind": "supersede", "target_id": "FIRST_ID", "reason": "release cadence changed"}
    with chat_server(answering(verdict)) as (
        url,
        seen,
    ):
        judge = OpenAIJudge(url, "judge-model")
        [decision] = await mem.semantic.resolve_pending(ALEX, judge)
        await judge.aclose()
    assert (decision.kind, decision.matched_ids, decision.reason) == ("supersede", [old.id], "release cadence changed")
    assert seen[0]["model"] == "judge-model" and pending.candidate_text in seen[0]["messages"][1]["content"]
    assert [f.id for f in await mem.semantic.facts(ALEX)] == [pending.fact_id]


@pytest.mark.parametrize("answer", ["not json", {"kind": "supersede", "target_id": "made-up"}, {"kind": "explode"}])
async def test_a_bad_judge_answer_leaves_the_fact_pending(mem: Memory, answer: Any) -> None:
    mem.semantic.judge = _Judge("admit")
    await mem.semantic.remember(ALEX, "My team ships the mobile app every Friday")
    await mem.semantic.remember(ALEX, "Our app release process is quite slow")
    with chat_server(answering(answer)) as (url, _):
        assert await mem.semantic.resolve_pending(ALEX, OpenAIJudge(url, "m")) == []
    assert len(await mem.semantic.facts(ALEX, status="pending")) == 1
    judge = OpenAIJudge("http://127.0.0.1:9/v1", "m", timeout=0.5)
    assert await mem.semantic.resolve_pending(ALEX, judge) == []  # unreachable: logged, still pending


async def test_explicit_supersede_forget_and_as_of(mem: Memory) -> None:
    before = datetime.now(UTC)
    old = await mem.semantic.remember(ALEX, "Alex's phone number is 555-0100")
    new = await mem.semantic.supersede(old.id, "Alex's phone number is 555-0199")
    assert [f.id for f in await mem.semantic.history(new.id)] == [old.id, new.id]
    assert (await mem.semantic.conflicts(ALEX))[-1].stage == "explicit"
    middle = datetime.now(UTC)
    gone = await mem.semantic.forget(new.id)
    assert gone.status == "forgotten" and gone.superseded_at is not None
    assert await mem.semantic.facts(ALEX) == []
    assert [f.id for f in await mem.semantic.facts(ALEX, as_of=middle)] == [new.id]
    assert await mem.semantic.facts(ALEX, as_of=before - timedelta(seconds=1)) == []
    with pytest.raises(FactConflictError, match="already forgotten"):
        await mem.semantic.forget(new.id)
    with pytest.raises(FactConflictError, match="only a current fact"):
        await mem.semantic.supersede(old.id, "Alex's phone number is 555-0123")
    with pytest.raises(NotFoundError):
        await mem.semantic.supersede("no-such-fact", "x")
    with pytest.raises(NotFoundError):
        await mem.semantic.forget("no-such-fact")


async def test_purge_removes_the_chain_everywhere_and_is_audited(mem: Memory) -> None:
    old = await mem.semantic.remember(ALEX, "I live at 12 Secret Lane")
    new = await mem.semantic.remember(ALEX, "I moved to 99 Hidden Road")
    keep = await mem.semantic.remember(ALEX, "I like green tea")
    record = await mem.semantic.purge(new.id, reason="user asked to erase their address")
    assert set(record.fact_ids) == {old.id, new.id}
    for fact_id in (old.id, new.id):
        with pytest.raises(NotFoundError):
            await mem.semantic.get(fact_id)
    assert [f.id for f in await mem.semantic.facts(ALEX)] == [keep.id]
    assert all(h.record.id == keep.id for h in await mem.semantic.search(ALEX, "secret lane hidden road address"))
    texts = [d.candidate_text for d in await mem.semantic.conflicts(ALEX)]
    assert "I live at 12 Secret Lane" not in texts and "[purged]" in texts
    bodies = [r.delta.model_dump_json() for r in await mem.semantic.deltas(limit=100)]
    assert not any("Secret Lane" in b or "Hidden Road" in b for b in bodies)
    assert [p.reason for p in await mem.semantic.purges("alex")] == ["user asked to erase their address"]
    with pytest.raises(InvalidInputError, match="reason"):
        await mem.semantic.purge(keep.id, reason="  ")
    with pytest.raises(NotFoundError):
        await mem.semantic.purge(old.id, reason="again")


async def test_concurrent_identical_remembers_make_one_fact(mem: Memory) -> None:
    decisions = await asyncio.gather(
        *[mem.semantic.remember_with_decision(ALEX, "I drive a red bike") for _ in range(5)]
    )
    facts = await mem.semantic.facts(ALEX)
    assert len(facts) == 1
    assert sorted(d.kind for d in decisions) == ["admit"] + ["dedup"] * 4
    assert {d.fact_id for d in decisions} == {facts[0].id}


@pytest.mark.parametrize("text", ["", "   ", "x" * 8_001])
async def test_bad_text_is_refused_and_changes_nothing(mem: Memory, text: str) -> None:
    with pytest.raises(InvalidInputError):
        await mem.semantic.remember(ALEX, text)
    with pytest.raises(InvalidInputError, match="agent"):
        await mem.semantic.remember(Scope(user="alex"), "I live in Berlin")
    assert await mem.semantic.facts(ALEX) == [] and await mem.semantic.conflicts(ALEX) == []


async def test_consolidation_deltas_and_remember_share_one_write_path(mem: Memory) -> None:
    base = {"source_episode_ids": [], "promotion_ts": datetime.now(UTC), "rule_id": "nightly", "confidence": 0.9}
    added = await mem.semantic.apply_delta(
        AddDelta(fact_payload={"text": "I live in Oslo", "user": "alex", "agent": "a"}, **base)
    )
    decision = await mem.semantic.remember_with_decision(ALEX, "I live in Bergen")  # the delta's fact is compared too
    assert (decision.kind, decision.matched_ids) == ("supersede", [added.fact_id])
    assert [r.rule_id for r in await mem.semantic.deltas()] == ["nightly", "remember"]


async def test_a_second_locale_pack(memory_url: str, tmp_path: Path) -> None:
    define_locale_pack({
        "name": "de",
        "change_markers": [r"\bumgezogen\b", r"\bnicht mehr\b"],
        "negation_markers": [r"\bnicht mehr\b", r"\bnicht\b"],
        "first_person": ["ich"],
        "name_patterns": [r"(?i:\bich bin|\bich heiße)\s+(?P<name>[A-Z]\w+)"],
        "normalisers": [
            {"pattern": r"(?P<subject>\w+) (?:wohne|wohnt) in (?P<object>.+)", "predicate": "lives_in"},
            {"pattern": r"(?P<subject>\w+) (?:bin|ist) nach (?P<object>.+?) umgezogen", "predicate": "lives_in"},
        ],
    })  # fmt: skip
    config = MemoryConfig(url=memory_url, index_in_background=False, locale="de")
    async with await Memory.open(config=config) as mem:
        old = await mem.semantic.remember(ALEX, "Ich wohne in Berlin")
        moved = await mem.semantic.remember_with_decision(ALEX, "Ich bin nach Hamburg umgezogen")
        assert (moved.kind, moved.matched_ids) == ("supersede", [old.id])
        other = await mem.semantic.remember_with_decision(ALEX, "Lena wohnt in Köln")
        assert other.kind == "admit"
        jonas = Scope(user="u-9", agent="a")
        await mem.semantic.remember(jonas, "Ich heiße Jonas")
        bonn = await mem.semantic.remember(jonas, "Ich wohne in Bonn")
        named = await mem.semantic.remember_with_decision(jonas, "Jonas ist nach Trier umgezogen")
        assert (await mem.semantic.names(jonas), named.kind, named.matched_ids) == (["jonas"], "supersede", [bonn.id])
    with pytest.raises(ConfigurationError, match="no locale pack"):
        await Memory.open(config=MemoryConfig(url=f"sqlite:///{tmp_path / 'x.db'}", locale="xx"))
    with pytest.raises(InvalidInputError, match="named groups"):
        define_locale_pack(
            {"name": "bad", "change_markers": ["x"], "normalisers": [{"pattern": "x", "predicate": "p"}]}
        )


async def test_memory_conflict_spans(mem: Memory) -> None:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("test")
    original = trace.get_tracer
    trace.get_tracer = lambda *args, **kwargs: tracer  # type: ignore[assignment]
    try:
        await mem.semantic.remember(ALEX, "I live in Berlin")
        await mem.semantic.remember(ALEX, "I live in Rome")
    finally:
        trace.get_tracer = original  # type: ignore[assignment]
    spans = exporter.get_finished_spans()
    assert [s.name for s in spans] == ["memory.conflict", "memory.conflict"]
    assert [s.attributes["mnemonite.decision"] for s in spans if s.attributes] == ["admit", "supersede"]


async def test_a_triple_given_by_the_caller_is_used(mem: Memory) -> None:
    old = await mem.semantic.remember(ALEX, "Home base: Oslo", subject="user", predicate="lives_in", object="oslo")
    assert (old.subject, old.predicate, old.object) == ("user", "lives_in", "oslo")
    new = await mem.semantic.remember_with_decision(
        ALEX, "Home base: Bergen", subject="user", predicate="lives_in", object="bergen"
    )
    assert (new.kind, new.stage, new.matched_ids) == ("supersede", "subject_predicate", [old.id])


async def test_another_process_drops_its_cache_after_a_purge(memory_url: str) -> None:
    config = MemoryConfig(url=memory_url, index_in_background=False)
    async with await Memory.open(config=config) as writer, await Memory.open(config=config) as reader:
        fact = await writer.semantic.remember(ALEX, "My locker code is 4711")
        assert [h.record.id for h in await reader.semantic.search(ALEX, "locker code")] == [fact.id]
        await writer.semantic.purge(fact.id, reason="secret")
        assert await reader.semantic.search(ALEX, "locker code") == []
        assert len(reader._engine._users["fact", "alex"].lexical) == 0  # the text is gone from its cache too


async def test_neighbours_skip_closed_facts_however_many_are_closer(mem: Memory) -> None:
    tea = await mem.semantic.remember(ALEX, "I like green tea")
    fact = await mem.semantic.remember(ALEX, "Alex's phone number is 555-0100")
    for n in range(1, 10):  # nine closed versions, all closer to the query than the tea fact
        fact = await mem.semantic.supersede(fact.id, f"Alex's phone number is 555-01{n:02d}")
    await mem.semantic.forget(fact.id)
    embedder = mem._engine.active
    assert embedder is not None
    vector = await embedder.embed("Alex's phone number is 555-0100")
    flt = SearchFilter(scope=ALEX, tiers=("semantic",))
    assert [f.id for f, _ in await mem._engine.nearest("fact", flt, vector, 1)] == [tea.id]
    decision = await mem.semantic.remember_with_decision(ALEX, "Alex's phone number is 555-0100")
    assert decision.kind == "admit" and decision.fact_id != fact.id  # closed facts are never duplicates


# -- who "I" is, polarity before identity, decisions without a judge ---------------------------


async def test_first_person_and_the_users_names_are_one_subject(mem: Memory) -> None:
    berlin = await mem.semantic.remember(ALEX, "Alex lives in Berlin")  # the user id "alex" is one of the names
    moved = await mem.semantic.remember_with_decision(ALEX, "I just moved to Tbilisi for the new gig.")
    assert (moved.kind, moved.matched_ids) == ("supersede", [berlin.id])
    jo = Scope(user="u-17", agent="a")
    assert await mem.semantic.add_names(jo, "Jo", "Joanna") == ["jo", "joanna"]
    acme = await mem.semantic.remember(jo, "I work at Acme")
    joined = await mem.semantic.remember_with_decision(jo, "Joanna joined Initech")
    assert (joined.kind, joined.matched_ids) == ("supersede", [acme.id])
    stranger = await mem.semantic.remember_with_decision(jo, "Priya works at Globex")
    assert stranger.kind == "admit"
    assert [f.text for f in await mem.semantic.facts(jo, predicate="works_at")] == ["Priya works at Globex",
                                                                                 "Joanna joined Initech"]  # fmt: skip


async def test_names_are_learned_from_what_the_user_says(mem: Memory) -> None:
    dana = Scope(user="u-4", agent="a")
    await mem.semantic.remember(dana, "I'm Dana")
    austin = await mem.semantic.remember(dana, "I live in Austin")
    assert await mem.semantic.names(dana) == ["dana"]
    moved = await mem.semantic.remember_with_decision(dana, "Dana moved to Houston")
    assert (moved.kind, moved.matched_ids) == ("supersede", [austin.id])
    assert await mem.semantic.names(Scope(user="u-5", agent="a")) == []  # names belong to one scope
    await mem.semantic.remember(dana, "I'm German, and I'm Catholic")
    await mem.semantic.remember(dana, "Call me Dee")
    assert await mem.semantic.names(dana) == ["dana", "dee"]


@pytest.mark.parametrize("name", ["", "  ", "she", "I", "user", "4ever", "x" * 50, "a/b", 7])
async def test_a_bad_name_is_refused_and_changes_nothing(mem: Memory, name: Any) -> None:
    jo = Scope(user="u-17", agent="a")
    await mem.semantic.add_names(jo, "Jo")
    with pytest.raises(InvalidInputError):
        await mem.semantic.add_names(jo, "Joanna", name)
    assert await mem.semantic.names(jo) == ["jo"]


async def test_relations_and_other_people_are_never_the_user(mem: Memory) -> None:
    mine = await mem.semantic.remember(ALEX, "I live in Berlin")
    sister = await mem.semantic.remember_with_decision(ALEX, "My sister lives in Munich")
    assert sister.kind == "admit"
    moved = await mem.semantic.remember_with_decision(ALEX, "My sister moved to Rome")
    assert (moved.kind, moved.matched_ids) == ("supersede", [sister.fact_id])
    retracted = await mem.semantic.remember_with_decision(ALEX, "My colleague Sara no longer lives in Berlin")
    assert retracted.kind in {"admit", "pending"}
    assert mine.id in {f.id for f in await mem.semantic.facts(ALEX)}


@pytest.mark.parametrize(
    ("held", "candidate"),
    [
        ("I'm allergic to cats", "I'm no longer allergic to cats"),
        ("I smoke", "I quit smoking"),
        ("I'm married to Chris", "Chris and I got divorced"),
        ("I'm on a keto diet", "I'm off the keto diet now"),
        ("I drink coffee every morning", "I don't drink coffee any more"),
    ],
)
async def test_a_retraction_supersedes_however_close_it_looks(memory_url: str, held: str, candidate: str) -> None:
    hot = ConflictThresholds(hot=0.5, near_dup=0.45, conflict_check=0.4)  # every pair here is in the HOT zone
    async with await Memory.open(config=MemoryConfig(url=memory_url, index_in_background=False, conflicts=hot)) as mem:
        old = await mem.semantic.remember(ALEX, held)
        decision = await mem.semantic.remember_with_decision(ALEX, candidate)
        assert (decision.kind, decision.matched_ids) == ("supersede", [old.id])
        assert old.id in decision.reason or decision.stage == "subject_predicate"
        assert "'" in decision.reason  # the marker that fired is named
        assert [f.text for f in await mem.semantic.facts(ALEX)] == [candidate]
    strict = hot.model_copy(update={"strict_hot": True})
    async with await Memory.open(config=MemoryConfig(url=memory_url, index_in_background=False,
                                                     conflicts=strict)) as mem:  # fmt: skip
        scope = Scope(user="strict", agent="a")
        old = await mem.semantic.remember(scope, held)
        decision = await mem.semantic.remember_with_decision(scope, candidate)
        assert (decision.kind, decision.zone, decision.matched_ids) == ("dedup", "HOT", [old.id])


async def test_an_exact_duplicate_of_a_retraction_still_dedups(mem: Memory) -> None:
    first = await mem.semantic.remember(ALEX, "I no longer eat meat")
    again = await mem.semantic.remember_with_decision(ALEX, "I no longer eat meat")
    assert (again.kind, again.stage, again.fact_id) == ("dedup", "exact", first.id)


@pytest.mark.parametrize(
    ("held", "candidate", "reason"),
    [
        ("I live in Berlin", "I go to school in Berlin", "differs from every held fact"),
        ("I speak Spanish", "I speak Portuguese too", "additive"),
        ("I have a dog named Rex", "We also got a cat named Luna", "additive"),
        ("I live in Berlin", "I'm thinking about moving to Lisbon", "'thinking about'"),
        ("I work at Deloitte", "I might quit my job next year", "'might'"),
    ],
)
async def test_without_a_judge_a_parsed_statement_is_decided(mem: Memory, held: str, candidate: str,
                                                             reason: str) -> None:  # fmt: skip
    old = await mem.semantic.remember(ALEX, held)
    decision = await mem.semantic.remember_with_decision(ALEX, candidate)
    assert decision.kind == "admit" and reason in decision.reason
    assert {f.id for f in await mem.semantic.facts(ALEX)} == {old.id, decision.fact_id}


@pytest.mark.parametrize(
    ("held", "candidate", "single"),
    [
        ("I'm 34", "I turned 35 yesterday", True),
        ("My manager is Priya", "I have a new manager, Tom", True),
        ("I have one kid", "I have two kids now", True),
        ("I use an iPhone", "I switched to an Android phone", False),
        ("My favourite band is Muse", "I like Radiohead best these days", True),
    ],
)
async def test_predicate_families_meet(mem: Memory, held: str, candidate: str, single: bool) -> None:
    old = await mem.semantic.remember(ALEX, held)
    decision = await mem.semantic.remember_with_decision(ALEX, candidate)
    assert (decision.kind, decision.matched_ids) == ("supersede", [old.id])
    assert ("single-valued" in decision.reason) is single


@pytest.mark.parametrize(
    "candidate",
    ["She moved to Lyon", "They live in Rome now", "moved to Rome",  "Ich wohne jetzt in Wien",
     "My brother, who used to live with me in Berlin before he got his job at the port and met his wife, now lives"
     " in Kiel"],
)  # fmt: skip
async def test_hard_input_never_supersedes_someone_elses_fact(mem: Memory, candidate: str) -> None:
    mine = await mem.semantic.remember(ALEX, "I live in Berlin")
    sister = await mem.semantic.remember(ALEX, "My sister lives in Paris")
    brother = await mem.semantic.remember(ALEX, "My brother lives in Hamburg")
    decision = await mem.semantic.remember_with_decision(ALEX, candidate)
    if candidate.startswith("My brother"):  # the later clause's subject is the first clause's: my brother
        assert (decision.kind, decision.matched_ids) == ("supersede", [brother.id])
    elif candidate == "moved to Rome":  # no subject at all: in chat, the speaker's own change
        assert (decision.kind, decision.matched_ids) == ("supersede", [mine.id])
    else:
        assert decision.kind in {"admit", "pending"} and not decision.matched_ids
    current = {f.id for f in await mem.semantic.facts(ALEX)}
    assert sister.id in current and (mine.id in current or decision.matched_ids == [mine.id])


async def test_an_alias_that_is_also_someone_elses_name(mem: Memory) -> None:
    sam = Scope(user="u-13", agent="a")
    await mem.semantic.add_names(sam, "Sam")
    leeds = await mem.semantic.remember(sam, "I live in Leeds")
    friend = await mem.semantic.remember_with_decision(sam, "My friend Sam lives in Bristol")
    brother = await mem.semantic.remember_with_decision(sam, "Sam's brother lives in Bath")
    assert (friend.kind, brother.kind) == ("admit", "admit")
    moved = await mem.semantic.remember_with_decision(sam, "Sam moved to York")
    assert (moved.kind, moved.matched_ids) == ("supersede", [leeds.id])


async def test_another_subject_in_the_hot_zone_is_admitted(memory_url: str) -> None:
    hot = ConflictThresholds(hot=0.5, near_dup=0.45, conflict_check=0.4)
    for strict, expected in ((False, "admit"), (True, "dedup")):
        config = MemoryConfig(url=memory_url, index_in_background=False,
                              conflicts=hot.model_copy(update={"strict_hot": strict}))  # fmt: skip
        async with await Memory.open(config=config) as mem:
            scope = Scope(user=f"hot-{strict}", agent="a")
            await mem.semantic.remember(scope, "I drive a Volvo")
            decision = await mem.semantic.remember_with_decision(scope, "My dad drives a Volvo")
            assert (decision.kind, decision.zone) == (expected, "HOT")


def test_the_labelled_sets_are_well_formed() -> None:
    root = Path(__file__).parent.parent / "bench" / "data"
    for name, least in (
        ("conflicts.jsonl", 150),
        ("conflicts_heldout.jsonl", 150),
        ("conflicts_chat.jsonl", 70),
        ("conflicts_blind.jsonl", 80),
        ("conflicts_blind2.jsonl", 100),
        ("conflicts_attrs.jsonl", 200),
        ("conflicts_attrs_dev.jsonl", 100),
        ("conflicts_r2.jsonl", 200),
        ("conflicts_r2_dev.jsonl", 100),
        ("conflicts_stress.jsonl", 2000),
    ):
        cases = [json.loads(line) for line in (root / name).read_text().splitlines() if line.strip()]
        assert len(cases) >= least and len({c["id"] for c in cases}) == len(cases)
        for case in cases:
            assert case["expected"] in {"dedup", "supersede", "admit"} and case["existing"]
            assert (case.get("target") is None) == (case["expected"] == "admit")
            assert case.get("target") is None or 0 <= case["target"] < len(case["existing"])


@pytest.mark.parametrize(
    ("held", "candidate", "expected"),
    [
        ("I'm single", "I'm engaged to Marta now", "supersede"),
        ("I am engaged to Leo", "Leo and I got married", "supersede"),
        ("My wife is Ines", "I'm married to Ines", "dedup"),
        ("I'm vegan", "My boyfriend isn't vegan", "admit"),
        ("My partner is Sam", "My partner is really tall", "admit"),
        ("I'm dating Kim", "Kim and I split up", "supersede"),
        ("I'm married to Ruth", "Ruth and I got divorced", "supersede"),
        ("I'm a junior designer", "I'm an art director now", "supersede"),
        ("I run in the mornings", "I run in the evenings now", "supersede"),
        ("I swim on Tuesdays", "I also swim on Fridays", "admit"),
        ("I have a cat called Miso", "I've got a cat named Miso", "dedup"),
    ],
)
async def test_predicate_families_relations_and_changes_of_one_predicate(
    mem: Memory, held: str, candidate: str, expected: str
) -> None:
    old = await mem.semantic.remember(ALEX, held)
    await mem.semantic.remember(ALEX, "I live in Porto")  # an unrelated fact never takes the change
    decision = await mem.semantic.remember_with_decision(ALEX, candidate)
    assert decision.kind == expected, decision.reason
    if expected != "admit":
        assert decision.matched_ids == [old.id]
    current = {f.id for f in await mem.semantic.facts(ALEX)}
    assert (old.id in current) == (expected != "supersede")


async def test_a_change_signal_never_replaces_an_adjective_or_a_possession_far_in_meaning(mem: Memory) -> None:
    tired = await mem.semantic.remember(ALEX, "I'm allergic to cats")
    dog = await mem.semantic.remember(ALEX, "I have a dog")
    for text in ("I'm tired now", "I have a new bike now"):
        decision = await mem.semantic.remember_with_decision(ALEX, text)
        assert decision.kind == "admit", decision.reason
    assert {tired.id, dog.id} <= {f.id for f in await mem.semantic.facts(ALEX)}


@pytest.mark.parametrize(
    ("held", "candidate", "changes"),
    [
        # news told with a change word is one more thing that happened, not the end of another
        ("I went to a climate meetup yesterday", "I just joined a new climate action group", False),
        ("I joined a hiking club last month", "I just joined a book club", False),
        ("I had an interview for a design job yesterday", "I just got accepted for a photography course", False),
        ("I'm taking a pottery course", "I just started salsa classes with my sister", False),
        ("I started volunteering at the food bank", "I just started volunteering at the animal shelter too", False),
        ("I love spending time with my old friends", "I'm now friends with one of the new volunteers", False),
        # "make" is income only with an amount
        ("I can make a real difference at the shelter", "I make a great pasta sauce", False),
        # "have" or "be" without an object denies nothing
        ("I have met some great people at the studio", "I have not", False),
        ("I'm not really into hiking", "I'm so excited to see how it all plays out", False),
        ("I live in Leeds", "btw I moved to York a few weeks ago", True),  # an opening aside, a time phrase
        ("I'm vegetarian", "I've gone vegan these days", True),  # the perfect of a change; a diet holds one value
        ("I smoke", "I quit smoking three weeks ago", True),
        ("I'm learning the cello", "I stopped learning the cello, just didn't have the time", True),  # the first denial
        ("My favourite film is Alien", "honestly my favourite film these days is Arrival", True),
        ("I have two dogs", "I have three dogs now", True),  # a count holds one value
        ("I'm single", "I have a boyfriend now", True),
        ("My doctor is Dr Reyes", "My doctor is now Dr Okafor", True),  # "is" of what a person has holds one value
        ("I go to yoga on Mondays", "I stopped going to yoga", True),  # "going to" after "stopped" is no plan
        ("I work as a nurse", "I just started a new job as a paramedic", True),
        # income with an amount, a new employer, a promotion of someone else
        ("I make 80k a year", "I make 95k a year now", True),
        ("I earn $40 an hour", "I'm making $45 an hour these days", True),
        ("I work at Initech", "I joined the Hooli team last week", True),
        ("My sister is a nurse", "My sister got promoted to head nurse", True),
        # the subject left out, as chat does: the speaker's own change
        ("I smoke about half a pack a day", "quit smoking a few months ago, haven't touched one since", True),
        ("I work at Initech", "started at Hooli two weeks ago", True),
        ("I have a Netflix subscription", "cancelled Netflix, wasn't watching it anyway", True),
        # a person named with the relation once, then by name alone
        ("My brother Marco lives in Chicago", "Marco finally moved out to Austin", True),
        ("My dad works at Boeing", "my dad retired from boeing this spring", True),
        # "a firefighter" is what the husband is, not who: his name is not replaced
        ("My husband is Gareth", "my husband's a firefighter", False),
        ("I'm in a running club", "joined a climbing club too last week", False),
        ("I'm a junior designer at Figma", "got promoted to senior designer last week", True),
        ("I'm a nurse at St. Luke's", "I'm a volunteer at the food bank on weekends", False),
        ("I'm learning Japanese on Duolingo", "gave up on Japanese honestly, no time", True),
        ("My boss is called Linda", "my new boss is Mo", True),
    ],
)
async def test_statements_said_the_way_people_chat(mem: Memory, held: str, candidate: str, changes: bool) -> None:
    """News told with a change word ends nothing held; a change said with chat around it still supersedes."""
    old = await mem.semantic.remember(ALEX, held)
    decision = await mem.semantic.remember_with_decision(ALEX, candidate)
    if changes:
        assert (decision.kind, decision.matched_ids) == ("supersede", [old.id]), decision.reason
    else:
        assert decision.kind in ("admit", "pending"), decision.reason
        assert old.id in {f.id for f in await mem.semantic.facts(ALEX)}


@pytest.mark.parametrize(
    ("held", "candidate"),
    [("I'm 29 years old", "I'm twenty-nine"), ("I have two kids", "I have 2 kids"),
     ("I have 3 kids", "I'm a mom of three"),
     ("My favourite band is Radiohead", "radiohead is my all time favorite band"),
     ("My sister Jess is a dentist", "Jess, my sister, works as a dentist"),
     ("I play guitar", "been playing guitar for years"), ("my boss is called Linda", "Linda's my manager")],
)  # fmt: skip
async def test_the_same_said_in_other_words_dedups(mem: Memory, held: str, candidate: str) -> None:
    old = await mem.semantic.remember(ALEX, held)
    decision = await mem.semantic.remember_with_decision(ALEX, candidate)
    assert (decision.kind, decision.matched_ids) == ("dedup", [old.id]), decision.reason


def test_number_words_and_the_month_may() -> None:
    assert ENGLISH.plan_marker("the course ends in May") is None
    assert ENGLISH.plan_marker("I may move to Rome") == ENGLISH.plan_marker("this may change soon") == "may"
    assert ENGLISH.plan_marker("starting May I work nights") is None
    assert ENGLISH.split("My dad retired at 65").predicate != "works_at"  # an age, not an employer
    ages = [ENGLISH.split(text) for text in ("I am thirty", "I am thirty-one", "I am twenty three years old")]
    assert [(t.predicate, t.object) for t in ages if t] == [("age", "30"), ("age", "31"), ("age", "23")]
    liked = ENGLISH.split("I like the red one")  # "one" alone is a pronoun, not a number
    assert liked is not None and liked.object == "red one"


async def test_a_name_two_held_relations_carry_is_neither(mem: Memory) -> None:
    brother = await mem.semantic.remember(ALEX, "My brother Sam lives in Chicago")
    friend = await mem.semantic.remember(ALEX, "My friend Sam lives in Rome")
    decision = await mem.semantic.remember_with_decision(ALEX, "Sam moved to Austin")
    assert decision.kind != "supersede" and not decision.matched_ids, decision.reason
    assert {brother.id, friend.id} <= {f.id for f in await mem.semantic.facts(ALEX)}


async def test_a_clause_about_an_unknown_it_does_not_make_a_statement_pending(mem: Memory) -> None:
    await mem.semantic.remember(ALEX, "I'm vegetarian")
    decision = await mem.semantic.remember_with_decision(ALEX, "I tried a new vegetarian place, it was great")
    assert decision.kind == "admit", decision.reason


@pytest.mark.parametrize(
    ("held", "candidate", "predicate"),
    [
        ("My boss is Greg", "Greg left, my new boss is a woman named Tanya", "manager"),
        ("My manager is Karen", "karen left the company, my new manager is Dev", "manager"),
        ("I work at Stripe", "started at Datadog two weeks ago, so no more Stripe for me", "works_at"),
    ],
)
async def test_a_later_clause_may_change_what_the_first_does_not(
    mem: Memory, held: str, candidate: str, predicate: str
) -> None:
    """A statement whose first reading ends nothing ("Greg left") is read on: another clause may replace a held
    fact, and the new fact is stored as that clause's (subject, predicate, object)."""
    old = await mem.semantic.remember(ALEX, held)
    decision = await mem.semantic.remember_with_decision(ALEX, candidate)
    assert (decision.kind, decision.matched_ids) == ("supersede", [old.id]), decision.reason
    assert decision.reason.startswith("another clause:")
    new = [f for f in await mem.semantic.facts(ALEX) if f.text == candidate]
    assert [(f.subject, f.predicate) for f in new] == [("user", predicate)]


async def test_another_clause_never_makes_a_statement_a_duplicate(mem: Memory) -> None:
    """A clause that repeats a held fact does not drop the statement: the rest of it may be new."""
    held = await mem.semantic.remember(ALEX, "I live in Leeds")
    decision = await mem.semantic.remember_with_decision(ALEX, "we adopted a puppy, I live in Leeds")
    assert decision.kind == "admit", decision.reason
    facts = {f.id: f.text for f in await mem.semantic.facts(ALEX)}
    assert held.id in facts and "we adopted a puppy, I live in Leeds" in facts.values()


@pytest.mark.parametrize(
    ("held", "candidate", "kind"),
    [
        # the same statement with another number: an update, however close the two look
        ("I take 10mg of lisinopril daily", "I take 20mg of lisinopril daily", "supersede"),
        ("My phone number is 555-1234", "My phone number is 555-9876", "supersede"),
        ("The meeting with Bob is at 3pm", "The meeting with Bob is at 4pm", "supersede"),
        ("My salary is 50000 dollars", "My salary is 65000 dollars", "supersede"),  # what a person has: one number
        ("I visited Paris in 2019", "I visited Paris in 2022", "admit"),  # another year is another visit
        # another name or day in its place: kept beside the fact, never dropped as a duplicate
        ("Lunch with Ana on Friday", "Lunch with Ana on Monday", "admit"),
        ("lunch with ana on friday", "lunch with ana on monday", "admit"),  # a day is a value however written
        ("I love my dog Rex", "I really love my dog Rex", "dedup"),  # a word added is no other value
    ],
)
async def test_a_near_identical_statement_with_another_value_is_never_dropped(
    mem: Memory, held: str, candidate: str, kind: str
) -> None:
    old = await mem.semantic.remember(ALEX, held)
    decision = await mem.semantic.remember_with_decision(ALEX, candidate)
    assert decision.kind == kind, decision.reason
    current = {f.text for f in await mem.semantic.facts(ALEX)}
    assert (held in current) == (kind != "supersede") and (candidate in current) == (kind != "dedup")
    if kind != "admit":
        assert decision.matched_ids == [old.id]


async def test_a_change_word_in_another_clause_reaches_only_its_own_predicate(mem: Memory) -> None:
    """ "used to" in the middle of a story ends no held fact of another kind."""
    held = await mem.semantic.remember(ALEX, "Caroline had a not-so-great experience on a hike")
    decision = await mem.semantic.remember_with_decision(
        ALEX, "Caroline used to go horseback riding with her dad as a kid and we'd go through the fields"
    )
    assert decision.kind == "admit", decision.reason
    assert held.id in {f.id for f in await mem.semantic.facts(ALEX)}
