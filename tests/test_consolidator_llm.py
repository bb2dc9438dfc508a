"""The consolidator with a language model: a local OpenAI-compatible server, budgets, bad endpoints."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Callable, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from llm_server import Answer, llm_server
from mnemonite import (
    BudgetExceededError,
    ConsolidatorConfig,
    Episode,
    JudgeVerdict,
    LLMProviderError,
    Memory,
    MemoryConfig,
    Scope,
)
from mnemonite.consolidator.llm import as_sent, redact
from mnemonite.consolidator.runner import Consolidator
from mnemonite.errors import InvalidInputError
from mnemonite.models.fact import Fact

T0 = datetime(2025, 3, 1, 9, 0, tzinfo=UTC)
JO = Scope(user="jo", agent="chat")
IDS = re.compile(r'id "([^"]+)"')


def chat(session: str, *texts: str) -> list[Episode]:
    return [Episode(id=f"{session}-{i}", content=text, source_node="jo", timestamp=T0 + timedelta(minutes=i),
                    user="jo", session=session, agent="chat") for i, text in enumerate(texts)]  # fmt: skip


def extracting(prompt_tokens: int = 100, **overrides: Any) -> Callable[[dict[str, Any]], Answer]:
    """Answers an extraction prompt with one statement per message offered: "I said <id>"."""

    def answer(body: dict[str, Any]) -> Answer:
        ids = IDS.findall(body["messages"][1]["content"])
        statements = [{"text": f"I said {turn_id}", "source_id": turn_id} for turn_id in ids]
        return Answer(content={"statements": statements}, prompt_tokens=prompt_tokens, **overrides)

    return answer


def consolidator(mem: Memory, url: str, **fields: Any) -> Consolidator:
    config = ConsolidatorConfig(**{"tier": "cheap", "llm_url": url, "cheap_model": "gpt-4o-mini", **fields})
    return Consolidator(mem._store, mem.semantic, config)


@pytest.fixture
async def mem(memory_url: str) -> AsyncIterator[Memory]:
    async with await Memory.open(memory_url, config=MemoryConfig(embedder="none")) as memory:
        yield memory


async def texts(mem: Memory) -> list[str]:
    return sorted(f.text for f in await mem.semantic.facts(JO, limit=500))


async def test_standard_sends_the_models_statements_through_the_pipeline_and_counts_usage(mem: Memory) -> None:
    await mem.episodic.put_many(chat("s1", "Hi, I live in Berlin.", "I work at Siemens."))
    with llm_server(extracting(prompt_tokens=300)) as (url, script):
        worker = consolidator(mem, url)
        [report] = await worker.run("standard")
        await worker._close()
    assert await texts(mem) == ["I said s1-0", "I said s1-1"]
    fact = next(f for f in await mem.semantic.facts(JO) if f.text == "I said s1-1")
    assert fact.source_episode_ids == ["s1-1"] and fact.rule_id == "consolidator.standard"
    body = script.requests[0]
    assert (body["model"], body["temperature"], body["response_format"]) == ("gpt-4o-mini", 0, {"type": "json_object"})
    cost = (300 * 0.15 + 20 * 0.60) / 1_000_000
    assert (report.llm, report.calls, report.tokens, report.cost) == (True, 1, 320, pytest.approx(cost))
    status = await worker.status()
    assert (status.tokens_today, status.cost_today) == (320, pytest.approx(cost))
    assert [(u.phase, u.calls, u.prompt_tokens, u.completion_tokens) for u in status.usage] == [
        ("standard", 1, 300, 20)]  # fmt: skip


async def test_a_spent_budget_pauses_the_phase_and_leaves_the_next_job_whole(mem: Memory) -> None:
    await mem.episodic.put_many(chat("s1", "I play the cello."))
    await mem.episodic.put_many(chat("s2", "I grow tomatoes."))
    with llm_server(extracting(prompt_tokens=300)) as (url, script):
        worker = consolidator(mem, url, max_tokens_per_day=400, max_completion_tokens=50)
        [report] = await worker.run("standard")
        assert (report.paused, report.jobs, len(script.requests)) == (True, 1, 1)
        assert await texts(mem) == ["I said s1-0"]
        assert [(j.phase, j.waiting) for j in (await worker.status()).jobs] == [("standard", 1)]
        [still] = await worker.run("standard")  # the same day: still paused, nothing sent
        assert (still.paused, still.jobs, len(script.requests)) == (True, 0, 1)
        richer = consolidator(mem, url, max_tokens_per_day=10_000, max_completion_tokens=50)
        [resumed] = await richer.run("standard")
    assert (resumed.paused, resumed.jobs) == (False, 1)
    assert await texts(mem) == ["I said s1-0", "I said s2-0"]


async def test_a_job_needing_two_calls_is_applied_whole_or_not_at_all(mem: Memory) -> None:
    await mem.episodic.put_many(chat("s1", *[f"I visited town number {i}." for i in range(45)]))  # two chunks
    with llm_server(extracting(prompt_tokens=800)) as (url, script):
        worker = consolidator(mem, url, max_tokens_per_day=900, max_completion_tokens=50)
        [report] = await worker.run("standard")
    assert (report.paused, report.jobs, len(script.requests)) == (True, 0, 1)
    assert await texts(mem) == []  # the first chunk's statements were not written
    assert [(j.waiting, j.claimed) for j in (await worker.status()).jobs] == [(1, 0)]


async def test_on_exceed_log_finishes_the_run_rule_based(mem: Memory) -> None:
    await mem.episodic.put_many(chat("s1", "I play the cello."))
    await mem.episodic.put_many(chat("s2", "I grow tomatoes."))
    with llm_server(extracting(prompt_tokens=300)) as (url, script):
        worker = consolidator(mem, url, max_tokens_per_day=400, max_completion_tokens=50, on_exceed="log")
        [report] = await worker.run("standard")
    assert (report.paused, report.jobs, report.fallbacks, len(script.requests)) == (False, 2, 1, 1)
    assert await texts(mem) == ["I grow tomatoes", "I said s1-0"]


async def test_the_free_tier_never_calls_a_configured_model_and_works_rule_based(mem: Memory) -> None:
    await mem.episodic.put_many(chat("s1", "I play the cello."))
    with llm_server(extracting()) as (url, script):
        light, standard, deep = await consolidator(mem, url, tier="free").run()  # every phase, none with the model
    assert script.requests == []
    assert (light.paused, light.llm, light.summaries) == (False, False, 1)
    assert (standard.paused, standard.llm, standard.admitted) == (False, False, 1)
    assert (deep.phase, deep.paused, deep.llm, deep.calls) == ("deep", False, False, 0)
    assert await texts(mem) == ["I play the cello"]


@pytest.mark.parametrize(
    ("answer", "message"),
    [
        (Answer(content="this is not json"), "no JSON object"),
        (Answer(content=["a", "list"]), "not an object"),
        (Answer(content={"facts": []}), "no 'statements' list"),
        (Answer(content={"statements": [{"text": "I live in Oslo", "source_id": "made-up"}]}), "not offered"),
        (Answer(content={"statements": [{"text": "", "source_id": "s1-0"}]}), "malformed"),
        (Answer(raw="<html>bad gateway</html>"), "failed"),
        (Answer(status=400, content={"error": "bad request"}), "failed"),
    ],
)
async def test_a_misbehaving_endpoint_is_a_typed_error_and_nothing_is_applied(
    mem: Memory, answer: Answer, message: str
) -> None:
    await mem.episodic.put_many(chat("s1", "I play the cello.", "I grow tomatoes."))
    with llm_server(lambda body: answer) as (url, _):
        worker = consolidator(mem, url, llm_retries=0)
        with pytest.raises(LLMProviderError, match=message):
            await worker.run("standard")
    assert await texts(mem) == []
    assert [(j.waiting, j.claimed) for j in (await worker.status()).jobs] == [(1, 0)]  # released for a later run


async def test_timeouts_are_retried_then_a_typed_error(mem: Memory) -> None:
    await mem.episodic.put_many(chat("s1", "I play the cello."))
    with llm_server(extracting(delay=1.0)) as (url, script):
        worker = consolidator(mem, url, llm_timeout=0.2, llm_retries=1)
        with pytest.raises(LLMProviderError, match="failed"):
            await worker.run("standard")
        assert len(script.requests) == 2
    assert await texts(mem) == []


async def test_an_unreachable_endpoint_is_a_typed_error(mem: Memory) -> None:
    await mem.episodic.put_many(chat("s1", "I play the cello."))
    worker = consolidator(mem, "http://127.0.0.1:9/v1", llm_retries=0, llm_timeout=1)
    with pytest.raises(LLMProviderError):
        await worker.run("standard")
    assert await texts(mem) == []


async def test_a_server_error_is_retried(mem: Memory) -> None:
    await mem.episodic.put_many(chat("s1", "I play the cello."))
    answers = iter([Answer(status=503, content={"error": "busy"})])
    good = extracting()
    with llm_server(lambda body: next(answers, None) or good(body)) as (url, script):
        [report] = await consolidator(mem, url, llm_retries=2).run("standard")
    assert (report.calls, len(script.requests)) == (1, 2)
    assert await texts(mem) == ["I said s1-0"]


async def test_secrets_are_redacted_before_anything_is_sent(mem: Memory) -> None:
    await mem.episodic.put_many(chat("s1", "My password is hunter2, my card is 4111 1111 1111 1111.",
                                     "The key is sk-abcdefghijklmnop1234."))  # fmt: skip
    with llm_server(extracting()) as (url, script):
        await consolidator(mem, url).run("standard")
    sent = "\n".join(script.prompts())
    assert "hunter2" not in sent and "4111 1111" not in sent and "sk-abcdefghijklmnop1234" not in sent
    assert "password is [secret: password]" in sent and "[secret: card number]" in sent
    assert redact("call me at noon") == "call me at noon"


async def test_light_asks_the_model_for_summaries(mem: Memory) -> None:
    await mem.episodic.put_many(chat("s1", "We booked flights to Lisbon.", "We leave on June 3rd."))
    with llm_server(lambda body: Answer(content={"summary": "Jo booked a June trip to Lisbon."})) as (url, _):
        [report] = await consolidator(mem, url).run("light")
    assert (report.summaries, report.calls) == (1, 1)
    assert list((await Consolidator(mem._store, mem.semantic).summaries("jo")).values()) == [
        "Jo booked a June trip to Lisbon."]  # fmt: skip


class _Pending:
    async def judge(self, candidate: Fact, existing: Sequence[Fact]) -> JudgeVerdict:
        raise AssertionError("not asked")


@pytest.mark.parametrize("good", [True, False])
async def test_light_flushes_pending_facts_to_the_model_as_judge(tmp_path: Path, good: bool) -> None:
    alex = Scope(user="alex", agent="a")
    async with await Memory.open(f"{tmp_path / 'm.db'}", config=MemoryConfig(index_in_background=False)) as mem:
        mem.semantic.judge = _Pending()  # a judge is configured, so close statements are left pending
        old = await mem.semantic.remember(alex, "My team ships the mobile app every Friday")
        pending = await mem.semantic.remember_with_decision(alex, "Our app release process is quite slow")
        assert pending.kind == "pending"
        mem.semantic.judge = None
        target = old.id if good else "made-up"  # a verdict naming a fact not offered is refused
        verdict = {"kind": "supersede", "target_id": target, "reason": "the cadence changed"}
        with llm_server(lambda body: Answer(content=verdict)) as (url, _):
            [report] = await consolidator(mem, url).run("light")
        assert (report.judged, report.calls) == ((1, 1) if good else (0, 1))
        current = [(f.text, f.status) for f in await mem.semantic.facts(alex)]
        if good:
            assert current == [("Our app release process is quite slow", "active")]
        else:
            assert sorted(current) == [("My team ships the mobile app every Friday", "active"),
                                       ("Our app release process is quite slow", "pending")]  # fmt: skip


async def test_budget_errors_are_raised_by_the_model_wrapper_itself(mem: Memory) -> None:
    with llm_server(extracting()) as (url, _):
        worker = consolidator(mem, url, max_tokens_per_day=10)
        model = worker._models["standard"]
        assert model is not None
        with pytest.raises(BudgetExceededError, match="budget"):
            await model.ask("standard", "system", "user")


def procedures_answer(body: dict[str, Any]) -> Answer:
    first = IDS.findall(body["messages"][1]["content"])[0]
    procedure = {"name": "bake bread", "steps": ["mix", "knead", "bake"], "source_id": first}
    return Answer(content={"procedures": [procedure]})


async def test_deep_asks_the_model_for_procedures(mem: Memory) -> None:
    await mem.episodic.put_many(chat("s1", "I mixed, kneaded and baked the bread."))
    with llm_server(procedures_answer) as (url, _):
        worker = consolidator(mem, url, tier="full", deep_model="big-model")
        [report] = await worker.run("deep")
    assert (report.procedures, report.calls) == (1, 1)
    [fact] = [f for f in await mem.semantic.facts(JO) if "procedure" in f.tags]
    assert (fact.text, fact.source_episode_ids) == ("How to bake bread: mix; knead; bake", ["s1-0"])
    assert fact.payload == {"name": "bake bread", "steps": ["mix", "knead", "bake"]}


async def test_deep_refuses_procedures_citing_unknown_messages(mem: Memory) -> None:
    await mem.episodic.put_many(chat("s1", "I mixed, kneaded and baked the bread."))
    bad = {"procedures": [{"name": "bake", "steps": ["mix", "bake"], "source_id": "made-up"}]}
    with llm_server(lambda body: Answer(content=bad)) as (url, script):
        with pytest.raises(LLMProviderError, match="not offered"):
            await consolidator(mem, url, tier="full", deep_model="big-model").run("deep")
        assert script.requests[0]["model"] == "big-model"
    assert await texts(mem) == []


async def test_secret_session_messages_never_reach_the_model(mem: Memory) -> None:
    from mnemonite import Message

    talk = Scope(user="jo", session="live", agent="chat")
    await mem.session.push_many(talk, [
        Message("user", "My bank PIN code is the year my cat was born.", sensitivity="secret", timestamp=T0),
        Message("user", "I play the cello.", timestamp=T0 + timedelta(minutes=1)),
    ])  # fmt: skip
    with llm_server(extracting()) as (url, script):
        [report] = await consolidator(mem, url).run("standard")
    sent = "\n".join(script.prompts())
    assert "cat was born" not in sent and "I play the cello." in sent and "withheld" in sent
    assert report.admitted == 2  # statements of both, cited by message id, stay in this memory


def test_an_id_the_prompt_redaction_changed_is_read_back_as_itself() -> None:
    """A random hex id can hold a run of digits that reads as a card number; the prompt carries it redacted, the
    model quotes it so, and the statement still belongs to its message."""
    from mnemonite.consolidator.phases import _parsed_statements

    turn_id = "11dd527b555c4eb4111111111111111bb9f"
    quoted = redact(turn_id)
    assert quoted != turn_id
    answer = {"statements": [{"source_id": quoted, "text": "Sam lives in Porto"}]}
    assert _parsed_statements(answer, as_sent([turn_id, "plain"])) == [(turn_id, "Sam lives in Porto")]
    with pytest.raises(LLMProviderError, match="not offered"):
        _parsed_statements({"statements": [{"source_id": ["x"], "text": "t"}]}, as_sent([turn_id]))


def test_a_fact_id_the_prompt_redaction_changed_is_read_back_as_the_judges_target() -> None:
    from mnemonite.consolidator.phases import _verdict

    fact_id = "11dd527b555c4eb4111111111111111bb9f"
    offered = as_sent([fact_id, "f2"])
    verdict = _verdict({"kind": "supersede", "target_id": redact(fact_id), "reason": "moved"}, offered)
    assert (verdict.kind, verdict.target_id) == ("supersede", fact_id)
    assert _verdict({"kind": "dedup", "target_id": "f2", "reason": "same"}, offered).target_id == "f2"
    assert _verdict({"kind": "admit", "target_id": None, "reason": "new"}, offered).target_id is None
    with pytest.raises(InvalidInputError, match="not offered"):
        _verdict({"kind": "supersede", "target_id": "f3", "reason": "?"}, offered)
