"""The agent tiers (working, session, procedural, shared) and the nine memory tools over HTTP, on a real
uvicorn server over SQLite and PostgreSQL: every verb, the tiers' typed errors as problem details,
redaction and ``reveal``, and keys that reach only their own scope."""

from __future__ import annotations

from typing import Any

import httpx
import orjson

from mnemonite import SyncMemory
from mnemonite.privacy import MARKER
from mnemonite.tools import TOOLS
from test_server import Service, ok
from test_server import service as service  # the fixture: a live server over both backends


def problem(response: httpx.Response, status: int, error: str) -> dict[str, Any]:
    assert response.status_code == status, response.text
    assert response.headers["content-type"] == "application/problem+json"
    body: dict[str, Any] = response.json()
    assert body["error"] == error and body["status"] == status, body
    return body


def add_key(service: Service, name: str, user: str, agent: str | None, can: str) -> None:
    with SyncMemory.open(service.memory, embedder=None) as mem:
        service.keys[name] = mem.keys.create(user, agent=agent, can=can).secret


def test_working_blocks(service: Service) -> None:
    with service.client("alice_rag") as http:
        made = ok(http.post("/v1/blocks", json={"label": "human", "value": "Name: Alice", "limit": 40}), 201)
        assert made["agent"] == "rag" and made["agents"] == ["rag"]
        ok(http.post("/v1/blocks", json={"label": "persona", "value": "I am helpful", "read_only": True}), 201)
        ok(
            http.post(
                "/v1/blocks", json={"label": "vault", "value": "Blood type AB negative", "sensitivity": "secret"}
            ),
            201,
        )
        first = ok(http.get("/v1/blocks", params={"limit": 2}))
        assert [b["label"] for b in first["items"]] == ["human", "persona"] and first["next_offset"] == 2
        assert [b["label"] for b in ok(http.get("/v1/blocks", params={"offset": 2}))["items"]] == ["vault"]
        assert ok(http.post("/v1/blocks/human/append", json={"text": "Likes tea"}))["value"] == "Name: Alice\nLikes tea"
        patched = ok(http.post("/v1/blocks/human/patch", json={"old": "tea", "new": "jazz"}))
        assert patched["value"] == "Name: Alice\nLikes jazz"
        assert ok(http.post("/v1/blocks/human/write", json={"value": "Name: Ali"}))["value"] == "Name: Ali"
        assert ok(http.get("/v1/blocks/human"))["value"] == "Name: Ali"
        over = problem(http.post("/v1/blocks/human/append", json={"text": "x" * 60}), 422, "BlockLimitError")
        assert "cut at least" in over["detail"]
        problem(http.post("/v1/blocks/human/patch", json={"old": "nowhere", "new": "x"}), 422, "BlockPatchError")
        problem(http.post("/v1/blocks/persona/write", json={"value": "evil"}), 409, "ReadOnlyBlockError")
        problem(http.post("/v1/blocks", json={"label": "human"}), 409, "BlockConflictError")
        problem(http.get("/v1/blocks/nothing"), 404, "NotFoundError")
        problem(http.post("/v1/blocks/human/attach", json={"target": "planner"}), 403, "PermissionDeniedError")
        problem(http.post("/v1/blocks", json={"label": "bad label!"}), 422, "InvalidInputError")
        compiled = ok(http.post("/v1/blocks/compile", json={"max_tokens": 500}))["text"]
        assert "Name: Ali" in compiled and "Blood type AB negative" not in compiled and MARKER in compiled
        problem(http.post("/v1/blocks/compile", json={"reveal": "debugging"}), 403, "PermissionDeniedError")
        assert ok(http.get("/v1/blocks/human"))["value"] == "Name: Ali"  # every refused edit changed nothing
    with service.client("alice") as http:  # bound to the user only: names the agent, may attach to another
        problem(http.get("/v1/blocks/human"), 422, "MemoryScopeError")
        assert ok(http.post("/v1/blocks/human/attach", json={"agent": "rag", "target": "planner"}))["agents"] == [
            "rag", "planner"]  # fmt: skip
        assert ok(http.get("/v1/blocks/human", params={"agent": "planner"}))["value"] == "Name: Ali"
        detached = ok(http.post("/v1/blocks/human/detach", json={"agent": "rag", "target": "planner"}))
        assert detached["agents"] == ["rag"]
        revealed = ok(http.post("/v1/blocks/compile", json={"agent": "rag", "reveal": "debugging"}))["text"]
        assert "Blood type AB negative" in revealed
        assert len(ok(http.get("/v1/blocks"))["items"]) == 3  # every block of the user
    with service.client("bob") as http:
        problem(http.get("/v1/blocks/human", params={"agent": "rag"}), 404, "NotFoundError")
        problem(http.post("/v1/blocks/human/write", json={"agent": "rag", "value": "x"}), 404, "NotFoundError")
        assert ok(http.get("/v1/blocks"))["items"] == []


def test_session_log(service: Service) -> None:
    add_key(service, "alice_planner", "alice", "planner", "read,write")
    with service.client("alice_rag") as http:
        said = ok(http.post("/v1/messages", json={"role": "user", "content": "I fly to Lisbon on Friday",
                                                  "session": "s1", "important": True}), 201)  # fmt: skip
        assert said["agent"] == "rag" and said["user"] == "alice"
        for i in range(3):
            ok(http.post("/v1/messages", json={"role": "assistant", "content": f"Noted, step {i}.",
                                               "session": "s1"}), 201)  # fmt: skip
        ok(http.post("/v1/messages", json={"role": "user", "content": "my card is 4111 1111", "session": "s1",
                                           "sensitivity": "secret"}), 201)  # fmt: skip
        problem(http.post("/v1/messages", json={"role": "user", "content": "x"}), 422, "InvalidInputError")
        problem(http.post("/v1/messages", json={"role": "user", "content": "x", "session": "s1", "agent": "planner"}),
                403, "PermissionDeniedError")  # fmt: skip
        page = ok(http.get("/v1/sessions/s1/messages", params={"limit": 2}))
        assert [m["content"] for m in page["items"]] == ["my card is 4111 1111", "Noted, step 2."]
        assert page["next_offset"] == 2
        assert ok(http.post("/v1/sessions/s1/search", json={"query": "Lisbon"}))[0]["message"]["id"] == said["id"]
        who = ok(http.get("/v1/sessions/s1/attribution", params={"agent": "rag"}))
        assert len(who["said"]) == 5
        problem(http.get("/v1/sessions/s1/attribution", params={"agent": "planner"}), 403, "PermissionDeniedError")
        flushed = ok(http.post("/v1/sessions/s1/flush", json={}))
        assert [e["content"] for e in flushed] == ["I fly to Lisbon on Friday"]
        assert ok(http.post("/v1/sessions/s1/flush", json={})) == []  # once each
        problem(http.post("/v1/sessions/s1/compact", json={"keep_last": 2}), 403, "PermissionDeniedError")
        problem(http.get("/v1/sessions/s1/export"), 403, "PermissionDeniedError")
        problem(http.get("/v1/sessions/nowhere/messages"), 404, "NotFoundError")
    with service.client("alice_planner") as http:  # another agent of the same user took no part in s1
        problem(http.get("/v1/sessions/s1/messages"), 404, "NotFoundError")
        problem(http.post("/v1/sessions/s1/search", json={"query": "Lisbon"}), 404, "NotFoundError")
    with service.client("alice") as http:
        summary = ok(http.post("/v1/sessions/s1/compact", json={"keep_last": 2}))["summary"]
        assert summary["role"] == "system" and len(summary["metadata"]["summary_of"]) == 3
        assert len(ok(http.get("/v1/sessions/s1/messages"))["items"]) == 3  # the summary and the two kept
        assert len(ok(http.get("/v1/sessions/s1/messages", params={"compacted": True}))["items"]) == 6
        exported = http.get("/v1/sessions/s1/export")
        assert exported.status_code == 200 and exported.headers["content-type"] == "application/x-ndjson"
        lines = [orjson.loads(line) for line in exported.content.splitlines()]
        assert lines[0]["redacted"] is True and lines[0]["events"] == len(lines) - 1
        assert "4111 1111" not in exported.text and MARKER in exported.text  # (a random hex id may hold "4111")
        revealed = http.get("/v1/sessions/s1/export", params={"reveal": "backup"})
        assert "4111" in revealed.text and orjson.loads(revealed.content.splitlines()[0])["redacted"] is False
        problem(http.get("/v1/sessions/s9/export"), 404, "NotFoundError")
    with service.client("bob") as http:
        for method, path, kwargs in [("GET", "/v1/sessions/s1/messages", {}),
                                     ("POST", "/v1/sessions/s1/search", {"json": {"query": "Lisbon"}}),
                                     ("GET", "/v1/sessions/s1/attribution", {"params": {"agent": "rag"}}),
                                     ("POST", "/v1/sessions/s1/flush", {"json": {"agent": "rag"}}),
                                     ("POST", "/v1/sessions/s1/compact", {"json": {}}),
                                     ("GET", "/v1/sessions/s1/export", {})]:  # fmt: skip
            assert "Lisbon" not in problem(http.request(method, path, **kwargs), 404, "NotFoundError")["detail"]


def test_procedures(service: Service) -> None:
    with service.client("alice_rag") as http:
        body = {"name": "deploy", "steps": ["run the tests", "tag the release", "push"],
                "trigger": "when shipping a new version"}  # fmt: skip
        made = ok(http.post("/v1/procedures", json=body), 201)
        ok(http.post("/v1/procedures", json={"name": "standup", "steps": ["yesterday", "today", "blockers"]}), 201)
        assert [p["name"] for p in ok(http.get("/v1/procedures"))["items"]] == ["deploy", "standup"]
        matches = ok(http.post("/v1/procedures/activate", json={"task": "ship the new release", "k": 1}))
        assert [m["procedure"]["id"] for m in matches] == [made["id"]]
        problem(http.post("/v1/procedures", json={"name": "x", "steps": ["  "]}), 422, "InvalidInputError")
        assert ok(http.delete("/v1/procedures/deploy"))["id"] == made["id"]
        problem(http.delete("/v1/procedures/deploy"), 404, "NotFoundError")
    with service.client("bob") as http:
        problem(http.delete("/v1/procedures/standup", params={"agent": "rag"}), 404, "NotFoundError")
        assert ok(http.post("/v1/procedures/activate", json={"task": "standup", "agent": "rag"})) == []
    with service.client("alice_ro") as http:
        problem(http.post("/v1/procedures", json=body), 403, "PermissionDeniedError")
        assert len(ok(http.get("/v1/procedures"))["items"]) == 1


def test_shared_groups(service: Service) -> None:
    with service.client("alice_rag") as http:
        fact = ok(http.post("/v1/facts", json={"text": "The wifi password is on the fridge"}), 201)["fact"]
        group = ok(http.post("/v1/groups", json={"name": "home", "kind": "household"}), 201)
        problem(http.post("/v1/groups", json={"name": "home"}), 422, "InvalidInputError")
        added = ok(http.post("/v1/groups/home/members", json={"member": {"user": "bob", "agent": "rag"}}))
        assert [(m["user"], m["role"]) for m in added["members"]] == [("alice", "owner"), ("bob", "member")]
        share = ok(http.post("/v1/groups/home/shares", json={"fact_id": fact["id"]}), 201)
        problem(http.post("/v1/groups/home/shares", json={}), 422, "InvalidInputError")
        assert [g["id"] for g in ok(http.get("/v1/groups"))["items"]] == [group["id"]]
        assert ok(http.get("/v1/groups", params={"limit": 1, "offset": 1}))["items"] == []
    with service.client("bob") as http:
        items = ok(http.get("/v1/shared", params={"agent": "rag"}))["items"]
        assert [i["fact"]["text"] for i in items] == ["The wifi password is on the fridge"]
        problem(http.get(f"/v1/facts/{fact['id']}"), 404, "NotFoundError")  # a share opens the share only
        problem(http.delete(f"/v1/groups/{group['id']}/shares/{share['id']}", params={"agent": "rag"}), 403,
                "GroupAccessError")  # fmt: skip
        problem(http.post("/v1/groups/home/members", json={"agent": "rag", "member": {"user": "bob", "agent": "x"}}),
                403, "GroupAccessError")  # fmt: skip
        problem(http.get("/v1/shared", params={"agent": "other", "group": group["id"]}), 403, "GroupAccessError")
    with service.client("alice_rag") as http:
        assert ok(http.delete(f"/v1/groups/home/shares/{share['id']}"))["item_id"] == fact["id"]
        assert ok(http.get("/v1/shared"))["items"] == []
        removed = ok(http.delete("/v1/groups/home/members", params={"member_user": "bob", "member_agent": "rag"}))
        assert [m["user"] for m in removed["members"]] == ["alice"]
        problem(http.delete("/v1/groups/home/members", params={"member_user": "alice", "member_agent": "rag"}), 422,
                "InvalidInputError")  # fmt: skip
    with service.client("bob") as http:
        problem(http.get("/v1/shared", params={"agent": "rag", "group": "home"}), 403, "GroupAccessError")


def test_the_nine_tools_over_http(service: Service) -> None:
    with service.client("alice_rag") as http:
        listed = ok(http.get("/v1/tools"))
        assert [t["name"] for t in listed] == list(TOOLS) and all(t["inputSchema"] for t in listed)
        ok(http.post("/v1/blocks", json={"label": "human", "value": "Name: Alice"}), 201)
        appended = ok(http.post("/v1/tools/block_append", json={"arguments": {"label": "human", "text": "Tea"}}))
        assert appended["ok"] is True and appended["output"]["value"] == "Name: Alice\nTea"
        made = ok(http.post("/v1/tools/fact_remember", json={"arguments": {"text": "I live in Porto"}}))
        secret = {"text": "My blood type is AB negative", "sensitivity": "secret"}
        ok(http.post("/v1/tools/fact_remember", json={"arguments": secret}))
        hits = ok(http.post("/v1/tools/fact_search", json={"arguments": {"query": "blood type", "k": 5}}))["output"][
            "facts"
        ]
        assert MARKER in [h["text"] for h in hits] and all("AB negative" not in h["text"] for h in hits)
        problem(http.post("/v1/tools/fact_search", json={"arguments": {"query": "blood type"}, "reveal": "audit"}), 403,
                "PermissionDeniedError")  # fmt: skip
        smuggled = ok(http.post("/v1/tools/fact_search", json={"arguments": {"query": "x", "user": "bob"}}))
        assert smuggled["ok"] is False and smuggled["error"]["code"] == "scope_not_allowed"
        invalid = ok(http.post("/v1/tools/block_replace", json={"arguments": {"label": "human"}}))
        assert invalid["error"]["code"] == "invalid_arguments"
        nowhere = ok(http.post("/v1/tools/conversation_search", json={"arguments": {"query": "x"}}))
        assert nowhere["ok"] is False
        problem(http.post("/v1/tools/drop_tables", json={}), 404, "NotFoundError")
        fact_id = made["output"]["fact_id"]
        assert ok(http.post("/v1/tools/fact_forget", json={"arguments": {"fact_id": fact_id}}))["ok"] is True
        ok(http.post("/v1/messages", json={"role": "user", "content": "the gate code is 55", "session": "s1"}), 201)
        in_session = {"arguments": {"query": "gate"}, "session": "s1"}
        problem(http.post("/v1/tools/conversation_search", json=in_session), 403, "PermissionDeniedError")
    with service.client("alice_ro") as http:
        problem(http.post("/v1/tools/fact_remember", json={"arguments": {"text": "x"}}), 403, "PermissionDeniedError")
        assert ok(http.post("/v1/tools/fact_search", json={"arguments": {"query": "Porto"}}))["ok"] is True
    with service.client("alice_ro") as http:  # bound to agent rag: nothing under rag, and no word of other agents
        quiet = ok(http.post("/v1/tools/fact_search", json={"arguments": {"query": "tea ceremony"}}))
        assert "hint" not in quiet["output"] or "rag" not in quiet["output"]["hint"]
    with service.client("alice") as http:  # bound to the user only, naming no agent: the default agent of every door
        found = ok(http.post("/v1/tools/fact_search", json={"arguments": {"query": "blood type"}}))
        assert found["output"]["facts"] == []
        assert "under agent 'assistant'" in found["output"]["hint"] and "'rag' (" in found["output"]["hint"]
        assert "AB negative" not in str(found)
        shown = ok(http.post("/v1/tools/fact_search", json={"arguments": {"query": "blood type"}, "agent": "rag",
                                                               "reveal": "audit"}))  # fmt: skip
        assert "My blood type is AB negative" in [h["text"] for h in shown["output"]["facts"]]
        said = ok(http.post("/v1/tools/conversation_search", json={**in_session, "agent": "rag"}))
        assert said["output"]["messages"][0]["content"] == "the gate code is 55"
    with service.client("bob") as http:
        refused = ok(http.post("/v1/tools/fact_forget", json={"arguments": {"fact_id": fact_id}, "agent": "rag"}))
        assert refused["ok"] is False and refused["error"]["code"] == "not_found" and "Porto" not in str(refused)
        found = ok(
            http.post("/v1/tools/fact_search", json={"arguments": {"query": "Porto blood type"}, "agent": "rag"})
        )
        assert found["output"]["facts"] == []
        block = {"arguments": {"label": "human", "text": "x"}, "agent": "rag"}
        assert ok(http.post("/v1/tools/block_append", json=block))["error"]["code"] == "not_found"


def test_a_tool_call_by_a_key_of_the_whole_user_acts_as_the_default_agent_or_the_one_named(service: Service) -> None:
    with service.client("alice") as http:
        unnamed = ok(http.post("/v1/tools/block_append", json={"arguments": {"label": "human", "text": "x"}}))
        assert unnamed["ok"] is False and unnamed["error"]["code"] == "not_found"  # the default agent has no block
        calls = ok(http.post("/v1/tools/fact_remember", json={"arguments": {"text": "I like figs"}}))
        assert calls["ok"] is True
        assert ok(http.get(f"/v1/facts/{calls['output']['fact_id']}"))["agent"] == "assistant"
        ok(http.post("/v1/blocks", json={"label": "human", "value": "Name: Alice", "agent": "rag"}), 201)
        named = ok(
            http.post("/v1/tools/block_append", json={"arguments": {"label": "human", "text": "x"}, "agent": "rag"})
        )
        assert named["ok"] is True
