"""One memory behind every door: the agent a door acts as, the hint of a read that finds nothing under it, and
what a server started ``--read-only`` or ``--no-destroy`` lets through (stdio MCP, MCP over HTTP, the HTTP API)."""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path
from typing import Any

import httpx
import httpx2
import pytest
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from typer.testing import CliRunner

from live_server import running
from mnemonite import DEFAULT_AGENT, Episode, Memory, Scope, SyncMemory
from mnemonite.cli import app
from mnemonite.server import Door, create_app
from mnemonite.tools import TOOLS

ROOT = Path(__file__).resolve().parent.parent
READING = {name for name, spec in TOOLS.items() if spec.guard == "read"}


def quickstart_mcp_args(db: str) -> list[str]:
    """The arguments of docs/quickstart.md's MCP host config, with this test's database."""
    block = re.search(r"## In an MCP host\n\n```json\n(.*?)\n```", (ROOT / "docs/quickstart.md").read_text(), re.DOTALL)
    assert block is not None
    server = json.loads(block.group(1))["mcpServers"]["memory"]
    assert server["command"] == "mnemonite"
    return [db if arg == "/home/sam/m.db" else arg for arg in server["args"]]


def stdio(args: list[str]) -> StdioServerParameters:
    command = ["-c", "from mnemonite.cli import main; main()", *args]
    return StdioServerParameters(command=sys.executable, args=command, env={"PYTHONPATH": os.pathsep.join(sys.path)})


def output(called: Any) -> Any:
    assert not called.is_error, called.content
    return called.structured_content


async def test_the_quickstarts_mcp_config_finds_what_the_cli_wrote(tmp_path: Path) -> None:
    db = str(tmp_path / "m.db")
    wrote = CliRunner().invoke(app, ["--db", db, "remember", "I live in Porto", "-u", "sam"])  # no agent named
    assert wrote.exit_code == 0, wrote.output
    with SyncMemory.open(db) as mem:
        assert [f.agent for f in mem.semantic.facts(Scope(user="sam"))] == [DEFAULT_AGENT]
    async with stdio_client(stdio(quickstart_mcp_args(db))) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        hits = output(await session.call_tool("fact_search", {"query": "where do I live"}))
        assert [h["text"] for h in hits["facts"]] == ["I live in Porto"] and "hint" not in hits
    # another agent, read-only: only the reading tools; a search that finds nothing says where the user's records are
    args = ["mcp", "--db", db, "--user", "sam", "--agent", "helper", "--read-only"]
    async with stdio_client(stdio(args)) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        assert {tool.name for tool in (await session.list_tools()).tools} == READING
        empty = output(await session.call_tool("fact_search", {"query": "where do I live"}))
        assert empty["facts"] == [] and f"'{DEFAULT_AGENT}' (1)" in empty["hint"] and "Porto" not in empty["hint"]
        refused = await session.call_tool("fact_remember", {"text": "I live in Lisbon"})  # not listed, called anyway
        assert refused.is_error and json.loads(refused.content[0].text)["error"]["code"] == "not_allowed"
    with SyncMemory.open(db) as mem:
        assert [f.text for f in mem.semantic.facts(Scope(user="sam"))] == ["I live in Porto"]


async def test_the_hint_names_other_agents_only_when_this_read_finds_nothing(memory_url: str) -> None:
    async with await Memory.open(memory_url) as mem:
        await mem.semantic.remember(Scope(user="sam", agent="crm"), "I prefer email over phone calls")
        await mem.semantic.remember(Scope(user="ana", agent="planner"), "I prefer tea")  # another user
        await mem.episodic.put(Episode(content="Called sam about the invoice"), user="sam", session="s1", agent="crm")
        mine = mem.tools.for_scope(Scope(user="sam", agent=DEFAULT_AGENT))
        empty = (await mine.call("fact_search", {"query": "how to contact me"})).output or {}
        assert empty["facts"] == [] and "'crm' (1)" in empty["hint"] and "planner" not in empty["hint"]
        recalled = (await mine.call("recall_episodes", {"query": "invoice"})).output or {}
        assert recalled["episodes"] == [] and "'crm' (1)" in recalled["hint"] and "invoice" not in recalled["hint"]
        await mine.call("fact_remember", {"text": "I prefer texts"})
        found = (await mine.call("fact_search", {"query": "how to contact me"})).output or {}
        assert found["facts"] and "hint" not in found  # something here: no word of elsewhere
        fenced = mem.tools.for_scope(Scope(user="sam", agent="calendar"), elsewhere=False)
        assert "hint" not in ((await fenced.call("fact_search", {"query": "how to contact me"})).output or {})
        alone = mem.tools.for_scope(Scope(user="ana", agent="planner"))
        assert "hint" not in ((await alone.call("recall_episodes", {"query": "tea"})).output or {})  # nothing anywhere


@pytest.fixture
def keys(tmp_path: Path) -> tuple[str, dict[str, str], str]:
    url = f"sqlite:///{tmp_path / 'm.db'}"
    with SyncMemory.open(url, embedder=None) as mem:
        made = {"user": mem.keys.create("sam", can="read,write,admin").secret,
                "crm": mem.keys.create("sam", agent="crm", can="read,write").secret}  # fmt: skip
        fact = mem.semantic.remember(Scope(user="sam", agent=DEFAULT_AGENT), "I live in Porto").id
    return url, made, fact


async def mcp_over_http(base: str, secret: str, calls: list[tuple[str, dict[str, Any]]]) -> tuple[set[str], list[Any]]:
    async with (
        httpx2.AsyncClient(headers={"Authorization": f"Bearer {secret}"}, timeout=60) as client,
        streamable_http_client(f"{base}/mcp/", http_client=client) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        listed = {tool.name for tool in (await session.list_tools()).tools}
        return listed, [await session.call_tool(name, arguments) for name, arguments in calls]


def refused(response: httpx.Response, words: str) -> None:
    assert response.status_code == 403, response.text
    body = response.json()
    assert body["error"] == "PermissionDeniedError" and words in body["detail"]


async def test_a_server_that_does_not_destroy(keys: tuple[str, dict[str, str], str]) -> None:
    url, secrets, fact = keys
    with running(create_app(url, door=Door(no_destroy=True))) as base:
        listed, (forgot,) = await mcp_over_http(base, secrets["user"], [("fact_forget", {"fact_id": fact})])
        assert listed == set(TOOLS) - {"fact_forget"}
        assert forgot.is_error and json.loads(forgot.content[0].text)["error"]["code"] == "not_allowed"
        async with httpx.AsyncClient(base_url=base, headers={"Authorization": f"Bearer {secrets['user']}"}) as http:
            refused(await http.delete(f"/v1/facts/{fact}"), "--no-destroy")
            refused(await http.post(f"/v1/facts/{fact}/purge", json={}), "--no-destroy")
            refused(await http.post("/v1/tools/fact_forget", json={"arguments": {"fact_id": fact}}), "--no-destroy")
            assert (await http.post("/v1/facts", json={"text": "I like jazz", "agent": "crm"})).status_code == 201
            made = (await http.post("/v1/tools/fact_remember", json={"arguments": {"text": "I play the cello"}})).json()
            assert made["ok"] is True
    with SyncMemory.open(url, embedder=None) as mem:
        assert mem.semantic.get(fact).status == "active"


async def test_a_read_only_server(keys: tuple[str, dict[str, str], str]) -> None:
    url, secrets, _ = keys
    with running(create_app(url, door=Door(read_only=True))) as base:
        calls = [("fact_search", {"query": "where do I live"}), ("fact_remember", {"text": "I moved to Lisbon"})]
        listed, (search, remember) = await mcp_over_http(base, secrets["user"], calls)
        assert listed == READING
        assert [f["text"] for f in output(search)["facts"]] == ["I live in Porto"]
        assert remember.is_error and json.loads(remember.content[0].text)["error"]["code"] == "not_allowed"
        # a key bound to another agent finds nothing under it, and is told nothing of the user's other agents
        _, (fenced,) = await mcp_over_http(base, secrets["crm"], [("fact_search", {"query": "where do I live"})])
        assert output(fenced) == {"facts": []}
        async with httpx.AsyncClient(base_url=base, headers={"Authorization": f"Bearer {secrets['user']}"}) as http:
            refused(await http.post("/v1/facts", json={"text": "I moved to Lisbon", "agent": "crm"}), "--read-only")
            refused(await http.post("/v1/tools/fact_remember", json={"arguments": {"text": "x"}}), "--read-only")
            refused(await http.post("/v1/rules", json={"id": "nightly"}), "--read-only")
            assert (await http.post("/v1/facts/search", json={"query": "where do I live"})).status_code == 200
            assert (await http.get("/v1/health")).status_code == 200  # an admin read
    with SyncMemory.open(url, embedder=None) as mem:
        assert [f.text for f in mem.semantic.facts(Scope(user="sam"))] == ["I live in Porto"]


def test_ids_by_prefix_over_http_as_in_the_cli(memory_url: str) -> None:
    from fastapi.testclient import TestClient

    with SyncMemory.open(memory_url, embedder=None) as mem:
        secret = mem.keys.create("sam", can="read,write").secret
        facts = [mem.semantic.remember(Scope(user="sam", agent="crm"), f"I like fruit number {n}") for n in range(40)]
        other = mem.semantic.remember(Scope(user="ana", agent="crm"), "I like tea")  # another tenant's
    mine = {f.id for f in facts}
    unique = next(f.id[:p] for p in range(4, 33) for f in facts if sum(g.startswith(f.id[:p]) for g in mine) == 1)
    shared = next(f.id[:1] for f in facts if sum(g.startswith(f.id[:1]) for g in mine) > 1)
    with TestClient(create_app(memory_url, mcp=False, ui=False)) as http:
        http.headers["Authorization"] = f"Bearer {secret}"
        got = http.get(f"/v1/facts/{unique}")
        assert got.status_code == 200 and got.json()["id"].startswith(unique) and got.json()["id"] in mine
        assert http.get(f"/v1/facts/{unique}/history").json()[-1]["id"] == got.json()["id"]
        decided = http.get("/v1/conflicts", params={"fact_id": unique}).json()["items"]  # a prefix in a query, too
        assert decided and decided == http.get("/v1/conflicts", params={"fact_id": got.json()["id"]}).json()["items"]
        ambiguous = http.get(f"/v1/facts/{shared}")
        assert ambiguous.status_code == 422 and ambiguous.json()["error"] == "AmbiguousIdError"
        named = re.findall(r"[0-9a-f]{32}", ambiguous.json()["detail"])
        assert named and set(named) <= mine  # candidates of this key's scope only
        assert http.get(f"/v1/facts/{other.id[:12]}").status_code == 404  # ana's, by prefix: as if missing
        assert http.get(f"/v1/facts/{other.id}").status_code == 404


def test_the_root_points_to_every_door_and_errors_name_fields(tmp_path: Path) -> None:
    from fastapi.testclient import TestClient

    url = f"sqlite:///{tmp_path / 'm.db'}"
    with SyncMemory.open(url, embedder=None) as mem:
        secret = mem.keys.create("sam", can="read,write").secret
    with TestClient(create_app(url, door=Door(no_destroy=True))) as http:
        root = http.get("/").json()  # no key needed
        assert (root["api"], root["openapi"], root["mcp"], root["ui"], root["health"]) == (
            "/v1/", "/openapi.json", "/mcp/", "/ui/", "/health")  # fmt: skip
        assert "no destroying" in root["policy"]
        assert http.get(root["openapi"]).status_code == 200 and http.get(root["health"]).json()["status"] == "ok"
        http.headers["Authorization"] = f"Bearer {secret}"
        unsessioned = http.post("/v1/episodes", json={"content": "I moved to Porto", "agent": "crm"})
        assert unsessioned.status_code == 422 and unsessioned.json()["detail"] == (
            "session: required (the conversation it belongs to)")  # fmt: skip
        empty = http.post("/v1/episodes", json={"content": "", "session": "s", "agent": "crm"}).json()["detail"]
        assert empty.startswith("content: ") and "Episode" not in empty
        batch = {"episodes": [{"content": "ok", "session": "s", "agent": "crm"}, {"content": "x", "salience": 3}]}
        assert http.post("/v1/episodes/batch", json=batch).json()["detail"].startswith("episodes.1.salience: ")
        no_session = {"episodes": [{"content": "ok", "agent": "crm"}]}
        assert http.post("/v1/episodes/batch", json=no_session).json()["detail"].startswith("episodes.0.session:")
        assert http.get("/v1/episodes").json()["items"] == []  # nothing was written


def test_the_serve_banner_names_every_door(tmp_path: Path) -> None:
    import socket
    import subprocess

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = str(probe.getsockname()[1])
    db = str(tmp_path / "m.db")
    assert CliRunner().invoke(app, ["--db", db, "keys", "create", "--user", "sam"]).exit_code == 0
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path), "COLUMNS": "200"}
    command = [sys.executable, "-c", "from mnemonite.cli import main; main()", "--db", db, "serve", "--port", port]
    served = subprocess.Popen([*command, "--read-only"], env=env, stderr=subprocess.PIPE, text=True)
    try:
        assert served.stderr is not None
        banner = "".join(served.stderr.readline() for _ in range(5))
    finally:
        served.terminate()
        served.wait(timeout=30)
        if served.stderr is not None:
            served.stderr.close()
    for door in ("/v1/", "/openapi.json", "/mcp/", "/ui/", "read-only"):
        assert door in banner, banner


def test_the_specifications_names_are_importable() -> None:
    import mnemonite

    for name in ("GraphBuilder", "SemanticShiftEvent", "SemanticConsolidator", "GraphRetriever",
                 "LifecycleTierManager", "AdaptiveRetriever", "EventGraph", "MemoryGraph"):  # fmt: skip
        assert name in mnemonite.__all__ and isinstance(getattr(mnemonite, name), type)
