"""The nine memory tools: validate → guard → run → typed result, one audit row per call, on both stores."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mcp.types import Tool as McpTool
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from mnemonite import (
    Episode,
    GuardPolicy,
    InvalidInputError,
    Memory,
    MemoryConfig,
    MemoryScopeError,
    NotFoundError,
    Reveal,
    Scope,
    SyncMemory,
    ToolResult,
)
from mnemonite.models.messages import Message
from mnemonite.privacy import MARKER
from mnemonite.tools import TOOLS, ToolRequest

NINE = [
    "block_append", "block_replace", "block_rethink", "fact_remember", "fact_search", "fact_supersede",
    "fact_forget", "recall_episodes", "conversation_search",
]  # fmt: skip
ALICE = Scope(user="alice", agent="rag", session="s1")
BOB = Scope(user="bob", agent="rag", session="s1")


def approving(request: ToolRequest) -> bool:
    return True


async def seed(mem: Memory, scope: Scope) -> None:
    await mem.working.define(scope, "human", "Name: Alice. Likes tea.", limit=80)
    await mem.working.define(scope, "persona", "I am a helpful assistant.", read_only=True)
    await mem.session.push(scope, Message("user", "I adopted a cat named Miso", agent=scope.agent))
    await mem.episodic.put(Episode(content="Adopted a cat named Miso", metadata={"importance": 9}),
                           user=scope.user, session=scope.session, agent=scope.agent)  # fmt: skip


async def state(mem: Memory, *scopes: Scope) -> list[Any]:
    """Everything the tools could change, for 'nothing changed' checks."""
    found: list[Any] = []
    for scope in scopes:
        agent = Scope(user=scope.user, agent=scope.agent)
        found += [b.model_dump() for b in await mem.working.list(agent)]
        found += [f.model_dump() for f in await mem.semantic.facts(agent, status=None, limit=1000)]
        found += [(f.id, f.status) for f in await mem.semantic.facts(agent, as_of=None, limit=1000)]
    return found


def ok(result: ToolResult) -> dict[str, Any]:
    assert result.ok and result.error is None, result.error
    assert result.output is not None
    return result.output


def failed(result: ToolResult, code: str) -> str:
    assert not result.ok and result.error is not None and result.output is None
    assert result.error.code == code, result.error
    assert "Traceback" not in result.content() and result.error.hint
    return result.error.message


async def test_the_nine_tools_run_their_tier_methods(mem_on_both: Memory) -> None:
    mem = mem_on_both
    await seed(mem, ALICE)
    tools = mem.tools.for_scope(ALICE, policy=GuardPolicy(approve=approving))
    assert tools.names == NINE == list(TOOLS)
    block = ok(await tools.call("block_append", {"label": "human", "text": "Has a cat."}))
    assert block["value"] == "Name: Alice. Likes tea.\nHas a cat." and block["limit"] == 80
    assert ok(await tools.call("block_replace", {"label": "human", "old": "tea", "new": "green tea"}))["value"] == (
        "Name: Alice. Likes green tea.\nHas a cat."
    )
    assert ok(await tools.call("block_rethink", {"label": "human", "value": "Name: Alice."}))["chars"] == 12
    assert (await mem.working.read(ALICE, "human")).value == "Name: Alice."
    remembered = ok(await tools.call("fact_remember", {"text": "I live in Oslo"}))
    assert remembered["decision"] == "admit"
    again = ok(await tools.call("fact_remember", {"text": "I live in Oslo"}))
    assert (again["decision"], again["fact_id"]) == ("dedup", remembered["fact_id"])
    [hit] = ok(await tools.call("fact_search", {"query": "Oslo"}))["facts"]
    assert (hit["id"], hit["text"]) == (remembered["fact_id"], "I live in Oslo")
    new = ok(await tools.call("fact_supersede", {"fact_id": hit["id"], "text": "I live in Bergen"}))
    assert (await mem.semantic.get(hit["id"])).status == "superseded"
    assert ok(await tools.call("fact_forget", {"fact_id": new["fact_id"]}))["status"] == "forgotten"
    [episode] = ok(await tools.call("recall_episodes", {"query": "cat", "k": 3}))["episodes"]
    assert episode["content"] == "Adopted a cat named Miso" and episode["salience"] == 0.9
    assert 0 < episode["recency"] <= 1 and episode["relevance"] == 1.0
    assert episode["score"] == pytest.approx((episode["relevance"] + episode["recency"] + 0.9) / 3, abs=1e-5)
    [message] = ok(await tools.call("conversation_search", {"query": "Miso"}))["messages"]
    assert (message["content"], message["agent"], message["role"]) == ("I adopted a cat named Miso", "rag", "user")


async def test_recall_ranks_by_relevance_recency_and_salience(mem: Memory) -> None:
    scope = Scope(user="alice", agent="rag")
    old = Episode(content="We talked about the cat's vet visit", timestamp=datetime(2020, 1, 1, tzinfo=UTC),
                  metadata={"importance": 2})  # fmt: skip
    marked = Episode(content="The cat needs a vet visit every spring", metadata={"importance": 10})
    await mem.episodic.put_many([old, marked], user="alice", session="s", agent="rag")
    recalled = await mem.episodic.recall(scope, "cat vet visit", k=2)
    assert [r.episode.id for r in recalled] == [marked.id, old.id]
    assert recalled[1].recency < 1e-6 and recalled[0].salience == 1.0 and recalled[1].salience == 0.2
    assert all(0 <= r.score <= 1 for r in recalled)


BAD_ARGUMENTS = [
    ("fact_remember", {}, "invalid_arguments", "text: Field required"),
    ("fact_remember", {"text": "I live in Oslo", "confidence": 1}, "invalid_arguments", "confidence: Extra inputs"),
    ("fact_remember", {"text": 42}, "invalid_arguments", "text: Input should be a valid string"),
    ("fact_remember", {"text": "I like tea", "sensitivity": "classified"}, "invalid_arguments", "sensitivity"),
    ("fact_search", {"query": "tea", "k": "5"}, "invalid_arguments", "k: Input should be a valid integer"),
    ("fact_search", {"query": "tea", "k": 0}, "invalid_arguments", "greater than or equal to 1"),
    ("block_append", {"label": "human"}, "invalid_arguments", "text: Field required"),
    ("block_rethink", {"label": "human", "value": None}, "invalid_arguments", "value"),
    ("fact_remember", {"text": "I live in Oslo", "user": "bob"}, "scope_not_allowed", "user"),
    ("fact_search", {"query": "tea", "User_Id": "bob"}, "scope_not_allowed", "User_Id"),
    ("block_append", {"label": "human", "text": "x", "agent": "other"}, "scope_not_allowed", "agent"),
    ("recall_episodes", {"query": "cat", "scope": {"user": "bob"}}, "scope_not_allowed", "scope"),
    ("conversation_search", {"query": "cat", "session": "s2"}, "scope_not_allowed", "session"),
    ("fact_purge", {"fact_id": "x"}, "unknown_tool", "no memory tool named 'fact_purge'"),
    ("block_replace", {"label": "human", "old": "e", "new": "E"}, "no_unique_match", "occurs 4 times"),
    ("block_replace", {"label": "human", "old": "coffee", "new": "tea"}, "no_unique_match", "does not occur"),
    ("block_append", {"label": "human", "text": "y" * 100}, "over_limit", "cut at least"),
    ("block_rethink", {"label": "persona", "value": "I am evil."}, "read_only", "read-only"),
    ("block_append", {"label": "nope", "text": "x"}, "not_found", "nope"),
    ("fact_supersede", {"fact_id": "0" * 32, "text": "x"}, "not_found", "no fact with id"),
]


@pytest.mark.parametrize(("tool", "arguments", "code", "says"), BAD_ARGUMENTS)
async def test_bad_calls_are_structured_errors_and_change_nothing(
    mem_on_both: Memory, tool: str, arguments: dict[str, Any], code: str, says: str
) -> None:
    mem = mem_on_both
    await seed(mem, ALICE)
    tools = mem.tools.for_scope(ALICE)
    before = await state(mem, ALICE)
    message = failed(await tools.call(tool, arguments), code)
    assert says in message
    assert await state(mem, ALICE) == before
    [audit] = await mem.tools.calls(ALICE)
    assert (audit.tool, audit.outcome, audit.error_code) == (tool, "error", code)


async def test_arguments_that_are_not_an_object_are_refused(mem: Memory) -> None:
    tools = mem.tools.for_scope(ALICE)
    for arguments in (["text"], "I live in Oslo", 3):
        failed(await tools.call("fact_remember", arguments), "invalid_arguments")  # type: ignore[arg-type]
    failed(await tools.call(None, {}), "unknown_tool")  # type: ignore[arg-type]
    assert await mem.semantic.facts(ALICE) == [] and len(await mem.tools.calls(ALICE)) == 4


async def test_another_users_fact_ids_read_as_unknown_and_change_nothing(mem_on_both: Memory) -> None:
    mem = mem_on_both
    bob_fact = await mem.semantic.remember(Scope(user="bob", agent="rag"), "I live in Rome")
    other_agent = await mem.semantic.remember(Scope(user="alice", agent="planner"), "I live in Paris")
    tools = mem.tools.for_scope(ALICE, policy=GuardPolicy(approve=approving))
    before = await state(mem, BOB, Scope(user="alice", agent="planner"))
    unknown = failed(await tools.call("fact_forget", {"fact_id": "f" * 32}), "not_found")
    for fact in (bob_fact, other_agent):
        for tool, arguments in (("fact_forget", {}), ("fact_supersede", {"text": "I live in Oslo"})):
            message = failed(await tools.call(tool, {"fact_id": fact.id, **arguments}), "not_found")
            assert message == unknown.replace("f" * 32, fact.id)  # no hint that the id exists elsewhere
    assert await state(mem, BOB, Scope(user="alice", agent="planner")) == before
    mine = Scope(user="alice", agent="rag")
    with pytest.raises(NotFoundError, match=f"^no fact with id '{bob_fact.id}'$"):
        await mem.semantic.forget(bob_fact.id, scope=mine)
    with pytest.raises(NotFoundError):
        await mem.semantic.supersede(other_agent.id, "I live in Oslo", scope=mine)
    assert (await mem.semantic.forget(other_agent.id, scope=Scope(user="alice"))).status == "forgotten"


async def test_destructive_tools_need_the_hosts_approval(mem: Memory) -> None:
    fact = await mem.semantic.remember(Scope(user="alice", agent="rag"), "I live in Oslo")
    seen: list[ToolRequest] = []

    async def refuse(request: ToolRequest) -> bool:
        seen.append(request)
        return False

    denied = await mem.tools.for_scope(ALICE).call("fact_forget", {"fact_id": fact.id})
    failed(denied, "needs_approval")
    failed(await mem.tools.for_scope(ALICE, policy=GuardPolicy(approve=refuse)).call("fact_forget",
                                                                                     {"fact_id": fact.id}),
           "needs_approval")  # fmt: skip
    assert (seen[0].tool, seen[0].guard, seen[0].side_effect, seen[0].arguments) == (
        "fact_forget", "destroy", "destructive", {"fact_id": fact.id})  # fmt: skip
    assert (await mem.semantic.get(fact.id)).status == "active"
    reader = mem.tools.for_scope(ALICE, policy=GuardPolicy.read_only())
    failed(await reader.call("fact_remember", {"text": "I like tea"}), "not_allowed")
    ok(await reader.call("fact_search", {"query": "Oslo"}))
    assert [c.outcome for c in await mem.tools.calls(ALICE)] == ["ok", "denied", "denied", "denied"]
    approved = mem.tools.for_scope(ALICE, policy=GuardPolicy(approve=approving))
    assert ok(await approved.call("fact_forget", {"fact_id": fact.id}))["status"] == "forgotten"


async def test_every_call_is_audited_once_and_logged_in_its_session(mem_on_both: Memory) -> None:
    mem = mem_on_both
    await seed(mem, ALICE)
    tools = mem.tools.for_scope(ALICE)
    await tools.call("fact_remember", {"text": "I live in Oslo"})
    await tools.call("fact_search", {"query": "Oslo", "k": 2})
    await tools.call("block_append", {"label": "nope", "text": "x"})
    calls = await mem.tools.calls(ALICE)
    assert [(c.tool, c.outcome, c.guard, c.side_effect) for c in calls] == [
        ("block_append", "error", "add", "write"), ("fact_search", "ok", "read", "read_only"),
        ("fact_remember", "ok", "add", "idempotent_write"),
    ]  # fmt: skip
    assert calls[1].arguments == {"query": "Oslo", "k": 2} and calls[1].result["facts"][0]["text"] == "I live in Oslo"
    assert calls[2].session == "s1" and calls[2].duration_ms > 0 and await mem.tools.calls("bob") == []
    attribution = await mem.session.attributed_for(ALICE, "rag")
    assert [e.name for e in attribution.tool_calls] == ["fact_remember", "fact_search", "block_append"]


async def test_secret_text_is_redacted_in_results_and_audit_unless_revealed(mem: Memory) -> None:
    tools = mem.tools.for_scope(ALICE)
    remembered = ok(await tools.call("fact_remember", {"text": "My PIN is zebraquartz", "sensitivity": "secret"}))
    await mem.working.define(ALICE, "keys", "door code walrus", sensitivity="secret")
    [hit] = ok(await tools.call("fact_search", {"query": "PIN"}))["facts"]
    assert hit["text"] == MARKER and hit["id"] == remembered["fact_id"]
    assert ok(await tools.call("block_append", {"label": "keys", "text": "safe marmot"}))["value"] == MARKER
    revealed = ok(await tools.call("fact_search", {"query": "PIN"}, reveal=Reveal("user asked to see it")))
    assert revealed["facts"][0]["text"] == "My PIN is zebraquartz"
    with pytest.raises(InvalidInputError, match="Reveal"):
        await tools.call("fact_search", {"query": "PIN"}, reveal=True)  # type: ignore[arg-type]
    audit = " ".join(c.model_dump_json() for c in await mem.tools.calls(ALICE))
    assert "zebraquartz" not in audit and "marmot" not in audit and "walrus" not in audit
    events = " ".join(e.model_dump_json() for e in await mem.session.events(ALICE) if e.kind == "tool_call")
    assert "zebraquartz" not in events and "marmot" not in events


async def test_an_unexpected_failure_is_a_structured_error(mem: Memory, monkeypatch: pytest.MonkeyPatch) -> None:
    async def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("disk on fire at /secret/path")

    monkeypatch.setattr(mem.semantic, "search", broken)
    message = failed(await mem.tools.for_scope(ALICE).call("fact_search", {"query": "x"}), "internal_error")
    assert "/secret/path" not in message


async def test_conversation_search_needs_a_session(mem: Memory) -> None:
    tools = mem.tools.for_scope(Scope(user="alice", agent="rag"))
    refused = await tools.call("conversation_search", {"query": "x"})
    assert "no conversation is active" in failed(refused, "no_session")  # the model cannot fix it by its arguments
    assert refused.error is not None and refused.error.hint.startswith("do not retry")
    with pytest.raises(MemoryScopeError):
        mem.tools.for_scope(Scope(user="alice"))


def test_schemas_in_each_ecosystems_format(tmp_path: Path) -> None:
    with SyncMemory.open(f"sqlite:///{tmp_path / 'm.db'}", config=MemoryConfig(embedder="none")) as mem:
        tools = mem.tools.for_scope(ALICE)
        openai, anthropic, mcp = tools.openai(), tools.anthropic(), tools.mcp()
    assert [t["function"]["name"] for t in openai] == [t["name"] for t in anthropic] == [t["name"] for t in mcp]
    for entry in openai:  # the Chat Completions function-tool format
        assert set(entry) == {"type", "function"} and entry["type"] == "function"
        assert set(entry["function"]) == {"name", "description", "parameters"}
        assert entry["function"]["parameters"]["type"] == "object"
        assert entry["function"]["parameters"]["additionalProperties"] is False
    for entry in anthropic:  # the Messages API tool format
        assert set(entry) == {"name", "description", "input_schema"} and entry["input_schema"]["type"] == "object"
        assert 1 <= len(entry["name"]) <= 64 and entry["name"].replace("_", "").isalnum()
    for entry in mcp:
        McpTool.model_validate(entry)
        jsonschema.Draft202012Validator.check_schema(entry["inputSchema"])
        jsonschema.Draft202012Validator.check_schema(entry["outputSchema"])
    annotations = {t["name"]: t["annotations"] for t in mcp}
    assert annotations["fact_forget"]["destructiveHint"] and annotations["fact_search"]["readOnlyHint"]
    assert annotations["fact_remember"]["idempotentHint"] and not annotations["block_append"]["idempotentHint"]
    schema = {t["name"]: t["input_schema"] for t in anthropic}["fact_search"]
    jsonschema.validate({"query": "tea", "k": 3}, schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"query": "tea", "user": "bob"}, schema)


def test_sync_memory_calls_the_same_tools(tmp_path: Path) -> None:
    with SyncMemory.open(f"sqlite:///{tmp_path / 'm.db'}", config=MemoryConfig(embedder="none")) as mem:
        tools = mem.tools.for_scope(ALICE)
        assert isinstance(tools.scope, Scope) and tools.names == NINE
        assert ok(tools.call("fact_remember", {"text": "I like tea"}))["decision"] == "admit"
        assert [c.tool for c in mem.tools.calls(ALICE)] == ["fact_remember"]


ADVERSARIAL = st.sampled_from(["alice", "alice2", "alic", "a%", "a_b", "%", "_", "x/y", "alice/", "ALICE", "al\\ice"])


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(user=ADVERSARIAL, agent=st.sampled_from(["rag", "r%", "_ag", "rag2"]), session=st.sampled_from(["s1", "s%"]))
def test_no_read_surface_crosses_scopes(tools_memory: SyncMemory, user: str, agent: str, session: str) -> None:
    scope = Scope(user=user, agent=agent, session=session)
    tools = tools_memory.tools.for_scope(scope)
    owned = (user, agent) == ("alice", "rag")
    for tool, arguments in (("fact_search", {"query": "Oslo"}), ("recall_episodes", {"query": "cat Miso"}),
                            ("conversation_search", {"query": "Miso"})):  # fmt: skip
        found = ok(tools.call(tool, arguments))
        rows = next(iter(found.values()))
        # the conversation is the user's session, shared by every agent taking part in it
        visible = (user, session) == ("alice", "s1") if tool == "conversation_search" else owned
        assert bool(rows) == visible, (tool, scope)
    assert tools.call("block_rethink", {"label": "human", "value": "Name: Alice. Likes tea."}).ok == owned
    audit = tools_memory.tools.calls(Scope(user=user, agent=agent))
    assert {(c.user, c.agent) for c in audit} <= {(user, agent)} and bool(audit)
    if not owned:
        alices = tools_memory.semantic.facts(Scope(user="alice", agent="rag"))[0].id
        policy = GuardPolicy(approve=approving)
        writer = tools_memory.tools.for_scope(scope, policy=policy)
        for tool, arguments in (("fact_supersede", {"text": "I live in Rome"}), ("fact_forget", {})):
            failed(writer.call(tool, {"fact_id": alices, **arguments}), "not_found")


@pytest.fixture(scope="module")
def tools_memory(tmp_path_factory: pytest.TempPathFactory) -> Any:
    path = tmp_path_factory.mktemp("tools") / "m.db"
    with SyncMemory.open(f"sqlite:///{path}", config=MemoryConfig(embedder="none")) as mem:
        mem.working.define(ALICE, "human", "Name: Alice. Likes tea.", limit=80)
        mem.session.push(ALICE, Message("user", "I adopted a cat named Miso", agent="rag"))
        mem.episodic.put(Episode(content="Adopted a cat named Miso"), user="alice", session="s1", agent="rag")
        mem.semantic.remember(Scope(user="alice", agent="rag"), "I live in Oslo")
        yield mem


async def test_audit_rows_written_in_the_background_are_all_kept_by_close(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'm.db'}"
    mem = await Memory.open(url, config=MemoryConfig(embedder="none"))
    tools = mem.tools.for_scope(ALICE)
    for n in range(30):
        await tools.call("fact_search", {"query": f"tea {n}"})
    await mem.close()  # no calls() before: close waits for the queued rows
    async with await Memory.open(url, config=MemoryConfig(embedder="none")) as again:
        assert len(await again.tools.calls(ALICE, limit=100)) == 30


async def test_tool_calls_emit_spans_without_arguments(mem: Memory, monkeypatch: pytest.MonkeyPatch) -> None:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    monkeypatch.setattr(trace, "get_tracer_provider", lambda: provider)
    monkeypatch.setattr(trace, "get_tracer", lambda *args, **kwargs: provider.get_tracer("test"))
    tools = mem.tools.for_scope(ALICE)
    await tools.call("fact_remember", {"text": "My PIN is zebraquartz", "sensitivity": "secret"})
    await tools.call("fact_forget", {"fact_id": "x"})
    spans = [s for s in exporter.get_finished_spans() if s.name == "memory.tool"]
    attributes = [dict(s.attributes or {}) for s in spans]
    assert [(a["mnemonite.tool"], a["mnemonite.outcome"], a["mnemonite.error_code"]) for a in attributes] == [
        ("fact_remember", "ok", ""), ("fact_forget", "denied", "needs_approval")]  # fmt: skip
    assert "zebraquartz" not in str(attributes)


def test_store_errors_reach_the_model_with_a_documented_code() -> None:
    """A busy memory asks to call again; any other store failure is internal_error, never an undocumented code."""
    from mnemonite.errors import StoreBusyError, StoreError
    from mnemonite.tools.dispatch import _tool_error

    busy = _tool_error(StoreBusyError("SQLite: database is locked"))
    assert (busy.code, "again" in busy.hint) == ("busy", True)
    other = _tool_error(StoreError("the memory is closed"))
    assert (other.code, other.hint) == ("internal_error", "do not retry this call now")
