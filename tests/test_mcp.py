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

from live_server import running
from mnemonite import SyncMemory
from mnemonite.server import create_app

TOOLS = {"remember", "search", "recall", "forget"}


def result(called: Any) -> Any:
    assert not called.is_error, called.content
    content = called.structured_content
    return content["result"] if set(content) == {"result"} else content


async def test_stdio_server_for_one_user(tmp_path: Path) -> None:
    db = str(tmp_path / "m.db")
    with SyncMemory.open(db) as mem:  # another user's fact, which the stdio server must never show
        from mnemonite import Scope

        other = mem.semantic.remember(Scope(user="bob", agent="rag"), "I live in Oslo").id
    command = ["-c", "from mnemonite.cli import main; main()", "mcp", "--db", db, "--user", "alice", "--agent", "rag"]
    params = StdioServerParameters(command=sys.executable, args=command, env={"PYTHONPATH": os.pathsep.join(sys.path)})
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        started = await session.initialize()
        assert started.server_info.name == "mnemonite" and "remember" in (started.instructions or "")
        tools = {tool.name: tool for tool in (await session.list_tools()).tools}
        assert set(tools) == TOOLS
        assert all(len(tool.description or "") > 80 for tool in tools.values())  # written for a model to read
        assert "text" in tools["remember"].input_schema["required"]
        made = result(await session.call_tool("remember", {"text": "I live in Paris"}))
        assert made["decision"] == "admit"
        moved = result(await session.call_tool("remember", {"text": "I moved to Lisbon"}))
        assert moved["decision"] == "supersede" and moved["replaced"] == [made["fact_id"]]
        hits = result(await session.call_tool("search", {"query": "where does the user live", "k": 3}))
        assert hits[0]["text"] == "I moved to Lisbon" and all("Oslo" not in hit["text"] for hit in hits)
        recalled = result(await session.call_tool("recall", {"limit": 5}))
        assert [item["text"] for item in recalled] == ["I moved to Lisbon"]
        refused = await session.call_tool("forget", {"fact_id": other})
        assert refused.is_error and "NotFoundError" in refused.content[0].text and "Oslo" not in str(refused)
        bad = await session.call_tool("remember", {"text": "   "})
        assert bad.is_error and "InvalidInputError" in bad.content[0].text
        assert result(await session.call_tool("forget", {"fact_id": moved["fact_id"]}))["status"] == "forgotten"
        uris = {str(resource.uri) for resource in (await session.list_resources()).resources}
        assert {"mnemonite://facts", "mnemonite://entities"} <= uris
        facts = json.loads((await session.read_resource("mnemonite://facts")).contents[0].text)  # type: ignore[union-attr]
        assert facts == []
        history = await session.read_resource(f"mnemonite://facts/{made['fact_id']}")
        assert [f["text"] for f in json.loads(history.contents[0].text)] == ["I live in Paris", "I moved to Lisbon"]  # type: ignore[union-attr]


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[str, dict[str, str]]]:
    url = f"sqlite:///{tmp_path / 'm.db'}"
    with SyncMemory.open(url, embedder=None) as mem:
        keys = {name: mem.keys.create(user, can=can).secret
                for name, user, can in (("alice", "alice", "read,write"), ("bob", "bob", "read,write"),
                                        ("reader", "alice", "read"), ("revoked", "alice", "read,write"))}  # fmt: skip
        mem.keys.revoke(mem.keys.all("alice")[-1].id)
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
        made = result(await alice.call_tool("remember", {"text": "My passport number is X1234567"}))
        assert result(await alice.call_tool("search", {"query": "passport"}))[0]["id"] == made["fact_id"]
    async with over_http(base, keys["bob"]) as bob:
        assert result(await bob.call_tool("search", {"query": "passport number"})) == []
        assert result(await bob.call_tool("recall", {})) == []
        refused = await bob.call_tool("forget", {"fact_id": made["fact_id"]})
        assert refused.is_error and "X1234567" not in str(refused)
        assert json.loads((await bob.read_resource("mnemonite://facts")).contents[0].text) == []  # type: ignore[union-attr]
    async with over_http(base, keys["reader"]) as reader:
        denied = await reader.call_tool("remember", {"text": "I like jazz"})
        assert denied.is_error and "PermissionDeniedError" in denied.content[0].text
        assert result(await reader.call_tool("recall", {}))[0]["status"] == "active"  # alice's fact, untouched


@pytest.mark.parametrize("key", [None, "revoked", "forged"])
def test_streamable_http_refuses_without_an_active_key(served: tuple[str, dict[str, str]], key: str | None) -> None:
    base, keys = served
    secret = {"forged": "mnm_forged", None: None}.get(key, keys.get(key or ""))
    headers = {"Authorization": f"Bearer {secret}"} if secret else {}
    initialize = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
                  "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                             "clientInfo": {"name": "t", "version": "1"}}}  # fmt: skip
    headers |= {"Accept": "application/json, text/event-stream"}
    answer = httpx.post(f"{base}/mcp/", json=initialize, headers=headers)
    assert answer.status_code == 401 and answer.headers["content-type"] == "application/problem+json"
    assert answer.json()["error"] == "AuthenticationError"


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
