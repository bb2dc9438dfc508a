"""The MCP server, driven by the SDK's own client: over stdio (``mnemonite mcp``) and over streamable HTTP
(mounted in the HTTP server on a real uvicorn, authenticated by API key)."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import httpx2
import pytest
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from live_server import running
from mnemonite import DEFAULT_AGENT, Scope, SyncMemory
from mnemonite.models.messages import Message
from mnemonite.privacy import MARKER
from mnemonite.server import create_app
from mnemonite.tools import catalog

TOOLS = set(catalog.TOOLS)


def result(called: Any) -> Any:
    assert not called.is_error, called.content
    return called.structured_content


def error(called: Any) -> dict[str, str]:
    assert called.is_error, called.structured_content
    body: dict[str, str] = json.loads(called.content[0].text)["error"]
    return body


def leaves(group: BaseException) -> list[BaseException]:
    """The exceptions inside (nested) exception groups."""
    if isinstance(group, BaseExceptionGroup):
        return [leaf for inner in group.exceptions for leaf in leaves(inner)]
    return [group]


def resource(read: Any) -> Any:
    return json.loads(read.contents[0].text)


def plant_other_users(db: str) -> str:
    """Bob's fact and block, which a server for alice must never show; returns the fact's id."""
    with SyncMemory.open(db) as mem:
        mem.working.define(Scope(user="bob", agent="rag"), "human", "Name: Bob, from Oslo")
        return mem.semantic.remember(Scope(user="bob", agent="rag"), "I live in Oslo").id


async def test_stdio_server_for_one_user(tmp_path: Path) -> None:
    db = str(tmp_path / "m.db")
    other = plant_other_users(db)
    with SyncMemory.open(db) as mem:
        scope = Scope(user="alice", agent="rag", session="s1")
        mem.working.define(scope, "human", "Name: Alice", limit=60)
        mem.working.define(scope, "vault", "Blood type AB negative", sensitivity="secret")
        mem.session.push(scope, Message("user", "the gate code is 55"))
        crm = mem.semantic.remember(Scope(user="alice", agent="crm"), "I prefer email").id  # another agent's
    command = ["-c", "from mnemonite.cli import main; main()", "mcp", "--db", db, "--user", "alice", "--agent", "rag",
               "--session", "s1"]  # fmt: skip
    params = StdioServerParameters(command=sys.executable, args=command, env={"PYTHONPATH": os.pathsep.join(sys.path)})
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        started = await session.initialize()
        assert started.server_info.name == "mnemonite" and "fact_remember" in (started.instructions or "")
        tools = {tool.name: tool for tool in (await session.list_tools()).tools}
        assert set(tools) == TOOLS
        assert all(len(tool.description or "") > 80 for tool in tools.values())  # written for a model to read
        assert tools["fact_remember"].input_schema["required"] == ["text"]
        assert tools["fact_forget"].annotations is not None and tools["fact_forget"].annotations.destructive_hint
        made = result(await session.call_tool("fact_remember", {"text": "I live in Paris"}))
        assert made["decision"] == "admit"
        moved = result(await session.call_tool("fact_remember", {"text": "I moved to Lisbon"}))
        assert moved["decision"] == "supersede" and moved["replaced_ids"] == [made["fact_id"]]
        hits = result(await session.call_tool("fact_search", {"query": "where does the user live", "k": 3}))["facts"]
        assert hits[0]["text"] == "I moved to Lisbon" and all("Oslo" not in hit["text"] for hit in hits)
        appended = result(await session.call_tool("block_append", {"label": "human", "text": "Lives in Lisbon"}))
        assert appended["value"] == "Name: Alice\nLives in Lisbon"
        assert error(await session.call_tool("block_append", {"label": "human", "text": "x" * 80}))["code"] == (
            "over_limit")  # fmt: skip
        said = result(await session.call_tool("conversation_search", {"query": "gate"}))["messages"]
        assert [m["content"] for m in said] == ["the gate code is 55"]
        refused = await session.call_tool("fact_forget", {"fact_id": other})
        assert error(refused)["code"] == "not_found" and "Oslo" not in str(refused)
        assert error(await session.call_tool("fact_remember", {"text": "x", "user": "bob"}))["code"] == (
            "scope_not_allowed")  # fmt: skip
        assert error(await session.call_tool("drop_tables", {}))["code"] == "unknown_tool"
        assert result(await session.call_tool("fact_forget", {"fact_id": moved["fact_id"]}))["status"] == "forgotten"
        uris = {str(r.uri) for r in (await session.list_resources()).resources}
        assert {"mnemonite://blocks", "mnemonite://facts", "mnemonite://entities"} <= uris
        templates = {t.uri_template for t in (await session.list_resource_templates()).resource_templates}
        assert {"mnemonite://blocks/{label}", "mnemonite://facts/{fact_id}"} <= templates
        blocks = resource(await session.read_resource("mnemonite://blocks"))
        assert [(b["label"], b["value"]) for b in blocks] == [("human", "Name: Alice\nLives in Lisbon"),
                                                              ("vault", MARKER)]  # fmt: skip
        assert resource(await session.read_resource("mnemonite://blocks/human"))["value"].startswith("Name: Alice")
        current = resource(await session.read_resource("mnemonite://facts"))
        assert current == []  # as the tools see it: another agent's fact is neither listed nor reachable
        assert error(await session.call_tool("fact_forget", {"fact_id": crm}))["code"] == "not_found"
        history = resource(await session.read_resource(f"mnemonite://facts/{made['fact_id']}"))
        assert [f["text"] for f in history] == ["I live in Paris", "I moved to Lisbon"]
    with SyncMemory.open(db) as mem:  # every call is in the audit log and the session's
        calls = mem.tools.calls(Scope(user="alice", agent="rag"))
        assert len(calls) == 11 and {c.tool for c in calls} >= {"fact_remember", "block_append"}
        assert mem.session.attributed_for(Scope(user="alice", session="s1"), "rag").tool_calls


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[str, dict[str, str]]]:
    url = f"sqlite:///{tmp_path / 'm.db'}"
    with SyncMemory.open(url, embedder=None) as mem:
        keys = {name: mem.keys.create(user, can=can).secret
                for name, user, can in (("alice", "alice", "read,write"), ("bob", "bob", "read,write"),
                                        ("reader", "alice", "read"), ("revoked", "alice", "read,write"))}  # fmt: skip
        mem.keys.revoke(mem.keys.all("alice")[-1].id)
        mem.working.define(
            Scope(user="alice", agent=DEFAULT_AGENT), "human", "Name: A"
        )  # a key bound to a user: the default agent
        crm = mem.semantic.remember(Scope(user="alice", agent="crm"), "I prefer email")  # alice's, another agent's
        keys["crm_fact"] = crm.id  # not a key: the id the tests below look for
    with running(create_app(url)) as base:
        yield base, keys


@asynccontextmanager
async def over_http(base: str, secret: str | None) -> AsyncIterator[ClientSession]:
    headers = {"Authorization": f"Bearer {secret}"} if secret else {}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=60) as client,
        streamable_http_client(f"{base}/mcp/", http_client=client) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        yield session


async def test_streamable_http_runs_as_the_key(served: tuple[str, dict[str, str]]) -> None:
    base, keys = served
    async with over_http(base, keys["alice"]) as alice:
        assert {tool.name for tool in (await alice.list_tools()).tools} == TOOLS
        made = result(await alice.call_tool("fact_remember", {"text": "My locker number is X1234567"}))
        assert result(await alice.call_tool("fact_search", {"query": "locker"}))["facts"][0]["id"] == made["fact_id"]
        secret = result(
            await alice.call_tool("fact_remember", {"text": "My blood type is AB negative", "sensitivity": "secret"})
        )
        shown = result(await alice.call_tool("fact_search", {"query": "blood type", "k": 5}))["facts"]
        assert [f["text"] for f in shown if f["id"] == secret["fact_id"]] == [MARKER]
        assert (
            result(await alice.call_tool("block_append", {"label": "human", "text": "Tea"}))["value"] == "Name: A\nTea"
        )
        assert error(await alice.call_tool("block_append", {"label": "nothing", "text": "x"}))["code"] == "not_found"
        assert [b["label"] for b in resource(await alice.read_resource("mnemonite://blocks"))] == ["human"]
        # the facts resource lists what the tools reach (the key's user, under the default agent): not the crm agent's
        listed = [f["text"] for f in resource(await alice.read_resource("mnemonite://facts"))]
        assert "I prefer email" not in listed and "My locker number is X1234567" in listed
        with pytest.raises(MCPError, match="NotFoundError"):  # nor read by id: the tools do not reach it either
            await alice.read_resource(f"mnemonite://facts/{keys['crm_fact']}")
    async with over_http(base, keys["bob"]) as bob:
        assert result(await bob.call_tool("fact_search", {"query": "locker number"}))["facts"] == []
        refused = await bob.call_tool("fact_forget", {"fact_id": made["fact_id"]})
        assert error(refused)["code"] == "not_found" and "X1234567" not in str(refused)
        assert resource(await bob.read_resource("mnemonite://facts")) == []
        assert resource(await bob.read_resource("mnemonite://blocks")) == []
        with pytest.raises(MCPError) as refused_block:
            await bob.read_resource("mnemonite://blocks/human")
        assert "NotFoundError" in str(refused_block.value) and "Name: A" not in str(refused_block.value)
        with pytest.raises(MCPError, match="NotFoundError"):  # another tenant's fact, as a missing one
            await bob.read_resource(f"mnemonite://facts/{made['fact_id']}")
    async with over_http(base, keys["reader"]) as reader:
        assert error(await reader.call_tool("fact_remember", {"text": "I like jazz"}))["code"] == "not_allowed"
        assert error(await reader.call_tool("fact_forget", {"fact_id": made["fact_id"]}))["code"] == "not_allowed"
        facts = result(await reader.call_tool("fact_search", {"query": "locker"}))["facts"]
        assert facts[0]["id"] == made["fact_id"]  # alice's fact, untouched


@pytest.mark.parametrize("key", [None, "revoked", "forged"])
def test_streamable_http_refuses_without_an_active_key(served: tuple[str, dict[str, str]], key: str | None) -> None:
    base, keys = served
    secret = {"forged": "mnm_forged", None: None}.get(key, keys.get(key or ""))
    headers = {"Authorization": f"Bearer {secret}"} if secret else {}
    initialize = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
                  "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                             "clientInfo": {"name": "t", "version": "1"}}}  # fmt: skip
    answer = httpx.post(f"{base}/mcp/", json=initialize, headers=headers)  # a plain HTTP client: problem details
    assert answer.status_code == 401 and answer.headers["content-type"] == "application/problem+json"
    assert answer.json()["error"] == "AuthenticationError" and answer.json()["instance"] == "/mcp/"
    assert answer.headers["www-authenticate"] == "Bearer"
    # an MCP client (it accepts an event stream): a JSON-RPC error carrying the same problem, at the same status
    rpc = httpx.post(
        f"{base}/mcp/", json=initialize, headers=headers | {"Accept": "application/json, text/event-stream"}
    )
    assert rpc.status_code == 401 and rpc.headers["content-type"] == "application/json"
    error = rpc.json()["error"]
    assert error["message"].startswith("AuthenticationError: ") and error["data"]["status"] == 401


async def test_the_sdk_client_is_told_why_its_key_is_refused(
    served: tuple[str, dict[str, str]], tmp_path: Path
) -> None:
    base, keys = served
    with pytest.raises(BaseExceptionGroup) as refused:  # the SDK's client raises from its task group
        async with over_http(base, "mnm_forged"):
            pass
    assert "AuthenticationError: the API key is unknown or revoked" in [str(e) for e in leaves(refused.value)]
    async with over_http(base, keys["alice"]) as alice:  # revoked in the middle of a session
        assert result(await alice.call_tool("fact_search", {"query": "email"}))["facts"] == []
        with SyncMemory.open(f"sqlite:///{tmp_path / 'm.db'}", embedder=None) as mem:
            mem.keys.revoke(
                next(k.id for k in mem.keys.all("alice") if k.revoked_at is None and "write" in k.capabilities)
            )
        with pytest.raises(MCPError, match=r"AuthenticationError: .*revoked"):
            await alice.call_tool("fact_search", {"query": "email"})


@pytest.mark.parametrize(("host", "status"), [("127.0.0.1", 421), ("0.0.0.0", 200)])
def test_dns_rebinding_protection_on_loopback_only(tmp_path: Path, host: str, status: int) -> None:
    url = f"sqlite:///{tmp_path / 'm.db'}"
    with SyncMemory.open(url, embedder=None) as mem:
        secret = mem.keys.create("alice").secret
    initialize = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
                  "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                             "clientInfo": {"name": "t", "version": "1"}}}  # fmt: skip
    headers = {"Authorization": f"Bearer {secret}", "Accept": "application/json, text/event-stream",
               "Host": "memory.example.com"}  # fmt: skip
    with running(create_app(url, host=host)) as base:
        answer = httpx.post(f"{base}/mcp/", json=initialize, headers=headers)
    assert answer.status_code == status, answer.text
