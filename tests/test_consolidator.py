"""The background consolidator, rule-based: tiers and budgets, the three phases, claims and resumption."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from mnemonite import (
    CONSOLIDATOR_TIER_DEFAULTS,
    ConfigurationError,
    ConsolidationRuleError,
    ConsolidatorBusyError,
    ConsolidatorConfig,
    CustomTierMisconfiguredError,
    Episode,
    InvalidInputError,
    Memory,
    MemoryConfig,
    Message,
    PhaseReport,
    Scope,
    SyncMemory,
)
from mnemonite.consolidator.runner import Consolidator

T0 = datetime(2025, 3, 1, 9, 0, tzinfo=UTC)
JO = Scope(user="jo", agent="chat")


def chat(session: str, *turns: tuple[str, str], start: datetime = T0, prefix: str = "") -> list[Episode]:
    return [
        Episode(id=f"{prefix}{session}-{i}", content=text, source_node=speaker, timestamp=start + timedelta(minutes=i),
                user="jo", session=session, agent="chat")
        for i, (speaker, text) in enumerate(turns)
    ]  # fmt: skip


@pytest.fixture
async def mem(memory_url: str) -> AsyncIterator[Memory]:
    async with await Memory.open(memory_url, config=MemoryConfig(embedder="none")) as memory:
        yield memory


# -- tiers and budgets ------------------------------------------------------------------------


def test_the_tier_table_is_the_specifications() -> None:
    table = {name: (row.phases, row.max_tokens_per_day, row.max_cost_per_day, row.on_exceed)
             for name, row in CONSOLIDATOR_TIER_DEFAULTS.items()}  # fmt: skip
    assert table == {
        "free": (("light",), 0, 0.0, "pause"),
        "cheap": (("light", "standard"), 50_000, 0.20, "pause"),
        "standard": (("light", "standard", "deep"), 200_000, 1.00, "log"),
        "full": (("light", "standard", "deep"), 1_000_000, 5.00, "log"),
        "custom": (None, None, None, None),
    }
    config = ConsolidatorConfig()  # every phase runs, by rules: the tier's phases are those a model may serve
    assert (config.tier, config.enabled, config.model_phases) == ("free", ("light", "standard", "deep"), ("light",))
    assert (config.token_ceiling, config.cost_ceiling) == (0, 0.0)
    assert ConsolidatorConfig(tier="cheap").model_phases == ("light", "standard")
    assert ConsolidatorConfig(tier="full", phases=("light",)).model_phases == ("light",)
    assert ConsolidatorConfig(tier="cheap").exceed == "pause" and ConsolidatorConfig(tier="full").exceed == "log"


@pytest.mark.parametrize(
    ("fields", "missing"),
    [
        ({"phases": ("light",), "on_exceed": "pause", "max_cost_per_day": 1.0}, "max_tokens_per_day"),
        ({"phases": ("light",), "on_exceed": "pause", "max_tokens_per_day": 10}, "max_cost_per_day"),
        ({"phases": ("light", "standard"), "on_exceed": "log", "max_tokens_per_day": 10, "max_cost_per_day": 1.0},
         "cheap_model"),
        ({"phases": ("deep",), "on_exceed": "log", "max_tokens_per_day": 10, "max_cost_per_day": 1.0},
         "deep_model"),
        ({"max_tokens_per_day": 10, "max_cost_per_day": 1.0, "on_exceed": "log"}, "phases"),
    ],
)  # fmt: skip
def test_a_custom_tier_needs_both_ceilings_and_the_models_its_phases_use(
    fields: dict[str, object], missing: str
) -> None:
    with pytest.raises(CustomTierMisconfiguredError, match=missing):
        ConsolidatorConfig(tier="custom", **fields)  # type: ignore[arg-type]
    with pytest.raises(CustomTierMisconfiguredError):
        MemoryConfig(consolidator={"tier": "custom", **fields})


def test_a_complete_custom_tier_is_accepted() -> None:
    config = ConsolidatorConfig(
        tier="custom", phases=("light", "standard", "deep"), max_tokens_per_day=1000, max_cost_per_day=0.5,
        on_exceed="log", cheap_model="small", deep_model="large",
    )  # fmt: skip
    assert (config.enabled, config.token_ceiling, config.cost_ceiling, config.exceed) == (
        ("light", "standard", "deep"), 1000, 0.5, "log")  # fmt: skip


@pytest.mark.parametrize(
    "fields",
    [{"tier": "gold"}, {"max_tokens_per_day": -1}, {"max_cost_per_day": -0.01}, {"on_exceed": "explode"},
     {"phases": ("light", "nap")}, {"lease_seconds": 0}, {"cadence": {"dream": {"every": 1}}}],
)  # fmt: skip
def test_malformed_consolidator_settings_are_configuration_errors(fields: dict[str, object]) -> None:
    with pytest.raises(ConfigurationError):
        ConsolidatorConfig(**fields)  # type: ignore[arg-type]


def test_a_bad_cadence_is_a_rule_error() -> None:
    with pytest.raises(ConsolidationRuleError):
        ConsolidatorConfig(cadence={"standard": {"cron": "not a cron"}})


async def test_bad_run_arguments_are_refused(mem: Memory) -> None:
    with pytest.raises(InvalidInputError):
        await mem.consolidator.run("nap")  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError):
        await mem.consolidator.run("standard", max_jobs=0)


# -- standard: statements through the conflict pipeline --------------------------------------


async def test_standard_splits_messages_into_atomic_facts_with_provenance(mem: Memory) -> None:
    await mem.episodic.put_many(chat("s1", ("jo", "Hi, I'm Jo. I live in Berlin and work at Siemens."),
                                     ("assistant", "Nice to meet you! Berlin is lovely in spring."),
                                     ("jo", "My sister Ana is a nurse. She lives in Porto.")))  # fmt: skip
    [report] = await mem.consolidator.run("standard")
    facts = {f.text: f for f in await mem.semantic.facts(JO, limit=50)}
    assert {"I live in Berlin", "I work at Siemens", "Ana lives in Porto", "My sister Ana is a nurse"} <= set(facts)
    assert not any("lovely" in text for text in facts)  # the assistant's messages are not facts about anyone
    berlin = facts["I live in Berlin"]
    assert (berlin.source_episode_ids, berlin.rule_id, berlin.valid_from) == (["s1-0"], "consolidator.standard", T0)
    assert (berlin.subject, berlin.predicate) == ("user", "lives_in")
    assert (report.jobs, report.turns, report.admitted) == (1, 3, len(facts))


async def test_a_later_message_supersedes_and_an_old_one_never_overwrites_news(mem: Memory) -> None:
    await mem.episodic.put_many(chat("s1", ("jo", "I live in Berlin.")))
    await mem.episodic.put_many(chat("s2", ("jo", "I moved to Munich last month."), start=T0 + timedelta(days=40)))
    [report] = await mem.consolidator.run("standard")
    assert [f.text for f in await mem.semantic.facts(JO)] == ["I moved to Munich last month"]
    assert report.superseded == 1
    # a message from before the move, consolidated only now, is history: Munich stays
    await mem.episodic.put_many(chat("s0", ("jo", "I live in Hamburg."), start=T0 - timedelta(days=10)))
    [late] = await mem.consolidator.run("standard")
    assert [f.text for f in await mem.semantic.facts(JO)] == ["I moved to Munich last month"]
    assert (late.statements, late.deduplicated, late.superseded) == (1, 1, 0)


async def test_running_again_promotes_nothing_twice_and_new_messages_are_picked_up(mem: Memory) -> None:
    await mem.episodic.put_many(chat("s1", ("jo", "I play the cello."), ("jo", "I have a dog named Biscuit.")))
    await mem.consolidator.run("standard")
    [again] = await mem.consolidator.run("standard")
    assert (again.jobs, again.statements) == (0, 0)
    await mem.episodic.put_many(chat("s1", ("jo", "I drink a lot of tea."), start=T0 + timedelta(hours=1), prefix="b"))
    [more] = await mem.consolidator.run("standard")
    assert (more.jobs, more.turns, more.admitted) == (1, 1, 1)
    texts = sorted(f.text for f in await mem.semantic.facts(JO))
    assert texts == ["I drink a lot of tea", "I have a dog named Biscuit", "I play the cello"]


async def test_user_limits_the_work_to_one_users_sessions(mem: Memory) -> None:
    await mem.episodic.put_many(chat("s1", ("jo", "I play the cello.")))
    await mem.episodic.put(
        Episode(content="I grow tomatoes.", source_node="sam"), user="sam", session="x", agent="chat"
    )
    [report] = await mem.consolidator.run("standard", user="sam")
    assert report.jobs == 1 and await mem.semantic.facts(JO) == []
    assert [f.text for f in await mem.semantic.facts(Scope(user="sam", agent="chat"))] == ["I grow tomatoes"]


async def test_a_worker_killed_mid_job_is_resumed_from_its_checkpoint(mem: Memory) -> None:
    await mem.episodic.put_many(chat("s1", ("jo", "I play the cello."), ("jo", "I grow tomatoes."),
                                     ("jo", "I drink a lot of tea.")))  # fmt: skip
    store = mem._store
    dead = await store.claim_job("standard", "dead-worker", lease=0.3)
    assert dead is not None
    turns = await store.job_turns(dead)
    await mem.semantic.remember(JO, "I play the cello", source_episode_ids=[turns[0].id])
    await store.advance_job(dead, turns[0].seq, lease=0.3)  # then the worker dies: no release
    [blocked] = await mem.consolidator.run("standard")
    assert blocked.jobs == 0  # its lease still holds
    await _sleep(0.4)
    [resumed] = await mem.consolidator.run("standard")
    assert (resumed.jobs, resumed.turns, resumed.admitted) == (1, 2, 2)
    assert sorted(f.text for f in await mem.semantic.facts(JO)) == [
        "I drink a lot of tea", "I grow tomatoes", "I play the cello"]  # fmt: skip
    with pytest.raises(ConsolidatorBusyError):
        await store.advance_job(dead, turns[1].seq, lease=1)  # the dead worker's claim is gone


async def _sleep(seconds: float) -> None:
    await asyncio.sleep(seconds)


async def test_topic_episodes_cut_a_session_where_the_topic_shifts(mem: Memory) -> None:
    cooking = [("jo", f"The sourdough bread needs flour, water and a starter, batch {i}.") for i in range(5)]
    travel = [("jo", f"Our train to Lisbon leaves at noon, platform {i}, tickets booked.") for i in range(5)]
    await mem.episodic.put_many(chat("s1", *cooking, *travel))
    [report] = await mem.consolidator.run("standard")
    episodes = await mem.consolidator.topic_episodes(JO)
    assert report.topic_episodes == 2
    assert [e.turn_ids for e in episodes] == [[f"s1-{i}" for i in range(5)], [f"s1-{i}" for i in range(5, 10)]]
    assert "sourdough" in episodes[0].summary and "Lisbon" in episodes[1].summary


# -- light ------------------------------------------------------------------------------------


async def test_light_summarises_sessions_without_promoting(mem: Memory) -> None:
    await mem.episodic.put_many(chat("s1", ("jo", "We booked the flights to Lisbon for June."),
                                     ("sam", "Great, I will rent a car for the day trip to Sintra.")))  # fmt: skip
    [report] = await mem.consolidator.run("light")
    assert (report.phase, report.summaries, report.llm, report.calls) == ("light", 1, False, 0)
    summaries = await mem.consolidator.summaries("jo")
    assert list(summaries) == ["/user/jo/session/s1/agent/chat/"] and "Lisbon" in summaries[next(iter(summaries))]
    assert await mem.semantic.facts(JO) == []  # light does not promote


async def test_the_default_tier_learns_from_the_first_conversation_at_no_cost(mem: Memory) -> None:
    await mem.episodic.put_many(chat("s1", ("jo", "I live in Berlin and I work at Siemens."), ("sam", "Nice!")))
    reports = await mem.consolidator.run()  # the free tier: every phase, by rules
    assert [r.phase for r in reports] == ["light", "standard", "deep"]
    assert sum(r.tokens + r.calls for r in reports) == 0 and not any(r.llm for r in reports)
    assert reports[0].summaries == 1 and reports[1].admitted >= 1
    assert "I live in Berlin" in " ".join(f.text for f in await mem.semantic.facts(JO))


async def test_status_shows_the_tier_usage_and_waiting_jobs(mem: Memory) -> None:
    await mem.episodic.put_many(chat("s1", ("jo", "I play the cello.")))
    await mem.consolidator.run("light")
    status = await mem.consolidator.status()
    assert (status.tier, status.phases, status.model_phases) == ("free", ["light", "standard", "deep"], ["light"])
    assert (status.max_tokens_per_day, status.on_exceed) == (0, "pause")
    assert [(u.phase, u.runs, u.tokens) for u in status.usage] == [("light", 1, 0)]
    assert [(j.phase, j.waiting, j.done) for j in status.jobs] == [("light", 0, 1)]


# -- deep -------------------------------------------------------------------------------------


async def test_deep_finds_cross_session_patterns_procedures_and_tool_sequences(mem: Memory) -> None:
    days = [T0 + timedelta(days=d) for d in range(3)]
    await mem.episodic.put_many(chat("s1", ("jo", "I go running on Sundays."), start=days[0]))
    await mem.episodic.put_many(chat("s2", ("jo", "As always, I go running on Sundays."), start=days[1]))
    await mem.episodic.put_many(chat("s3", ("jo", "How do I make a sourdough starter?"),
                                     ("assistant", "Mix equal weights of flour and water. Cover the jar loosely."
                                      " Feed it every morning for a week."), start=days[2]))  # fmt: skip
    for session in ("t1", "t2"):
        await mem.episodic.put_many([
            Episode(id=f"{session}-{i}", content=f"called {tool}", source_node="tool", metadata={"tool": tool},
                    timestamp=days[0] + timedelta(minutes=i), user="jo", session=session, agent="chat")
            for i, tool in enumerate(["search_flights", "hold_seat", "pay"])
        ])  # fmt: skip
    [report] = await mem.consolidator.run("deep")
    facts = await mem.semantic.facts(JO, limit=50)
    pattern = next(f for f in facts if "pattern" in f.tags)
    assert (pattern.text, pattern.memory_type) == ("I go running on Sundays", "observation")
    assert pattern.payload == {"frequency": 2, "sessions": ["s1", "s2"]}
    assert sorted(pattern.source_episode_ids) == ["s1-0", "s2-0"]
    procedures = {p.name: p for p in await mem.procedural.list(JO)}
    steps = ("Mix equal weights of flour and water", "Cover the jar loosely", "Feed it every morning for a week")
    assert procedures["make a sourdough starter"].steps == steps
    assert procedures["make a sourdough starter"].trigger == "how to make a sourdough starter"
    assert procedures["search_flights then hold_seat then pay"].steps == ("search_flights", "hold_seat", "pay")
    assert (report.patterns, report.procedures) == (1, 2)
    [matched] = await mem.procedural.activate(JO, "how do I make a sourdough starter", k=1)
    assert matched.procedure.name == "make a sourdough starter"
    [again] = await mem.consolidator.run("deep")
    assert again.jobs == 0 and len(await mem.semantic.facts(JO, limit=50)) == len(facts)
    await mem.episodic.put_many(chat("s4", ("jo", "I go running on Sundays."), start=days[2] + timedelta(days=1)))
    [more] = await mem.consolidator.run("deep")  # the whole history again: nothing new, one procedure per name
    assert more.jobs == 1 and len(await mem.procedural.list(JO)) == 2
    assert len(await mem.semantic.facts(JO, limit=50)) == len(facts)


async def test_deep_offers_what_several_members_of_a_group_hold_to_the_group(mem: Memory) -> None:
    jo, sam = JO, Scope(user="sam", agent="chat")
    group = await mem.shared.create(jo, "household", kind="household")
    await mem.shared.add_member(jo, group.name, sam)
    await mem.semantic.remember(jo, "The wifi password is on the fridge")
    await mem.semantic.remember(jo, "I play the cello")
    await mem.semantic.remember(sam, "The wifi password is on the fridge")
    await mem.episodic.put(Episode(content="hello", source_node="jo"), user="jo", session="s", agent="chat")
    await mem.episodic.put(Episode(content="hello", source_node="sam"), user="sam", session="s", agent="chat")
    reports = await mem.consolidator.run("deep")
    assert sum(r.shared for r in reports) == 1  # sam's job finds it shared already
    items = await mem.shared.list_for(sam, group="household")
    assert [item.fact.text for item in items if item.fact] == ["The wifi password is on the fridge"]


# -- the blocking facade ----------------------------------------------------------------------


def test_sync_memory_runs_the_consolidator(tmp_path: Path) -> None:
    with SyncMemory.open(f"{tmp_path / 'm.db'}", config=MemoryConfig(embedder="none")) as mem:
        mem.episodic.put_many(chat("s1", ("jo", "I play the cello.")))
        [report] = mem.consolidator.run("standard")
        assert report.admitted == 1 and mem.consolidator.status().jobs[0].done == 1
        assert [f.text for f in mem.semantic.facts(JO)] == ["I play the cello"]


# -- the session tier's message log -----------------------------------------------------------


async def test_session_messages_are_consolidated_like_chat_episodes(mem: Memory) -> None:
    talk = Scope(user="jo", session="live", agent="chat")
    pushed = await mem.session.push_many(talk, [
        Message("user", "Hi! I live in Oslo and I work at Equinor.", timestamp=T0),
        Message("assistant", "Nice! Oslo has great hiking.", timestamp=T0 + timedelta(minutes=1)),
        Message("user", "My brother Leif is a pilot.", timestamp=T0 + timedelta(minutes=2)),
    ])  # fmt: skip
    [standard] = await mem.consolidator.run("standard")
    facts = {f.text: f for f in await mem.semantic.facts(JO, limit=50)}
    assert {"I live in Oslo", "I work at Equinor", "My brother Leif is a pilot"} <= set(facts)
    assert not any("hiking" in text for text in facts)
    assert facts["I live in Oslo"].source_episode_ids == [pushed[0].id]  # the message is the provenance
    assert facts["My brother Leif is a pilot"].valid_from == T0 + timedelta(minutes=2)
    assert (standard.jobs, standard.turns) == (1, 3)
    [light] = await mem.consolidator.run("light")
    summaries = await mem.consolidator.summaries("jo")
    assert light.summaries == 1 and "Oslo" in summaries["msg:/user/jo/session/live/agent/chat/"]
    await mem.session.push(talk, Message("user", "I drink a lot of coffee.", timestamp=T0 + timedelta(hours=1)))
    [more] = await mem.consolidator.run("standard")
    assert (more.jobs, more.turns, more.admitted) == (1, 1, 1)


async def test_cadences_say_which_phases_are_due(tmp_path: Path) -> None:
    cadence = {"light": {"every": 2}, "standard": {"cron": "0 3 * * *"}, "deep": {"every": 100}}
    config = MemoryConfig(embedder="none", consolidator=ConsolidatorConfig(tier="full", cadence=cadence))
    async with await Memory.open(str(tmp_path / "m.db"), config=config) as mem:
        await mem.episodic.put_many(chat("s1", ("jo", "I play the cello.")))
        night = datetime(2025, 3, 2, 2, 0, tzinfo=UTC)
        last = {"light": (night, 0), "standard": (night, 0), "deep": (night, 0)}
        assert await mem.consolidator.due(last, night) == []  # one new record; 03:00 not yet
        await mem.session.push(Scope(user="jo", session="s1", agent="chat"), Message("user", "hello again"))
        assert await mem.consolidator.due(last, night + timedelta(hours=2)) == ["light", "standard"]
        assert await mem.consolidator.due({**last, "light": (night, 2)}, night) == []


async def test_watch_runs_due_phases_until_stopped_and_survives_a_failing_model(tmp_path: Path) -> None:
    cadence = {"light": {"every": 1}, "standard": {"every": 1}, "deep": {"cron": "0 4 * * 0"}}  # deep: not now
    failing = ConsolidatorConfig(tier="cheap", cadence=cadence, llm_url="http://127.0.0.1:9/v1", cheap_model="m",
                                 llm_retries=0, llm_timeout=0.5)  # fmt: skip
    async with await Memory.open(str(tmp_path / "m.db"), config=MemoryConfig(embedder="none")) as mem:
        await mem.episodic.put_many(chat("s1", ("jo", "I play the cello.")))
        reports: list[str] = []
        stop = asyncio.Event()
        broken = Consolidator(mem._store, mem.semantic, failing)  # every model call fails: logged, tried again
        task = asyncio.create_task(
            broken.watch(stop=stop, poll_seconds=0.05, on_report=lambda r: reports.append(r.phase))
        )
        await asyncio.sleep(0.5)
        stop.set()
        await asyncio.wait_for(task, 10)
        assert reports == [] and await mem.semantic.facts(JO) == []

        def collect(report: PhaseReport) -> None:
            reports.append(report.phase)
            if len(reports) == 2:
                stop.set()

        stop.clear()
        working = Consolidator(mem._store, mem.semantic, ConsolidatorConfig(tier="cheap", cadence=cadence))
        await asyncio.wait_for(working.watch(stop=stop, poll_seconds=0.05, on_report=collect), 10)
        assert reports == ["light", "standard"]
        assert [f.text for f in await mem.semantic.facts(JO)] == ["I play the cello"]


async def test_purging_episodes_removes_the_summaries_and_topic_episodes_made_from_them(mem: Memory) -> None:
    await mem.episodic.put_many(chat("s1", ("jo", "My secret diary says I love Lisbon."), ("jo", "I play the cello.")))
    await mem.consolidator.run("light")
    await mem.consolidator.run("standard")
    assert await mem.consolidator.summaries("jo") and await mem.consolidator.topic_episodes(JO)
    await mem.episodic.purge_scope(Scope(user="jo", session="s1"), reason="user asked", derived=True)
    assert await mem.consolidator.summaries("jo") == {} and await mem.consolidator.topic_episodes(JO) == []
    assert await mem.semantic.facts(JO) == []
