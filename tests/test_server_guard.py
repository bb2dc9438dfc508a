"""The HTTP API against hostile and broken requests: another tenant's ids and keys, bad bodies, cut connections.

Every answer is the right status with a problem-details body, nothing is half-written, and the
server keeps serving.
"""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest

from live_server import running
from mnemonite import SyncMemory
from mnemonite.server import VERBS, create_app
from test_server import Service, make_keys, ok

SECRET = "Alice's locker number is X1234567"  # private to her, though not a secret a recogniser masks


@pytest.fixture
def service(memory_url: str) -> Iterator[Service]:
    keys = make_keys(memory_url)
    with running(create_app(memory_url, max_body_bytes=64 * 1024)) as url:
        yield Service(url, keys, memory_url)


def alice_records(service: Service) -> dict[str, str]:
    """One record of each kind of alice's, under agent rag, holding SECRET."""
    with service.client("alice_rag") as http:
        fact = ok(http.post("/v1/facts", json={"text": SECRET}), 201)["fact"]["id"]
        episode = ok(http.post("/v1/episodes", json={"content": SECRET, "session": "s1"}), 201)["id"]
        entity = ok(http.post("/v1/entities", json={"name": SECRET, "entity_type": "secret"}), 201)["id"]
        ok(http.post("/v1/blocks", json={"label": "passport", "value": SECRET}), 201)
        ok(http.post("/v1/messages", json={"role": "user", "content": SECRET, "session": "s1"}), 201)
        ok(http.post("/v1/procedures", json={"name": "travel", "steps": [SECRET]}), 201)
        group = ok(http.post("/v1/groups", json={"name": "family"}), 201)["id"]
        item = ok(http.post(f"/v1/groups/{group}/shares", json={"fact_id": fact}), 201)["id"]
    return {"fact_id": fact, "episode_id": episode, "entity_id": entity, "label": "passport", "session": "s1",
            "procedure": "travel", "group": group, "item_id": item}  # fmt: skip


# A valid body or query for each verb that takes one, filled with the target's ids where it names any.
SAMPLES: dict[str, dict[str, Any]] = {
    "semantic.supersede": {"text": "I live in Rome"},
    "semantic.purge": {"reason": "test"},
    "episodic.purge": {"reason": "test"},
    "graph.update_entity": {"name": "Mallory"},
    "graph.neighbors": {},
    "graph.edges": {"end": "in"},
    "working.write": {"value": "overwritten"},
    "working.append": {"text": "appended"},
    "working.patch": {"old": "Alice", "new": "Mallory"},
    "working.detach": {},
}


def sample(verb: str, intruder: str) -> dict[str, Any]:
    """The body or query an intruder sends to a verb: a key bound to a user only names alice's agent."""
    mine = "other" if intruder == "alice_other_agent" else "rag"
    named = {"agent": "rag"} if intruder == "bob" else {}
    tier = verb.split(".")[0]
    if tier not in ("working", "session", "procedural", "shared"):
        return SAMPLES.get(verb, {})
    extra = {"session.attributed_for": {"agent": mine}, "working.attach": {"target": mine},
             "session.search": {"query": "passport"}, "shared.add_member": {"member": {"user": "bob", "agent": "x"}},
             "shared.remove_member": {"member_user": "alice", "member_agent": "rag"}, "shared.attach": {"block": "x"},
             **SAMPLES}.get(verb, {})  # fmt: skip
    return {**named, **extra} if verb not in ("session.attributed_for", "session.export") else extra


def refusal(verb: str, intruder: str) -> tuple[int, str]:
    """The status and error another tenant's ids get on a verb: 404, as for a missing record; a group the
    key's agent is not in is 403 (the same answer as for no such group); compact and export refuse a key
    bound to one agent before they look."""
    if verb.startswith("shared."):
        return 403, "GroupAccessError"
    if verb in ("session.compact", "session.export") and intruder == "alice_other_agent":
        return 403, "PermissionDeniedError"
    return 404, "NotFoundError"


def problem_of(response: httpx.Response, status: int) -> dict[str, Any]:
    assert response.status_code == status, response.text
    assert response.headers["content-type"] == "application/problem+json"
    body: dict[str, Any] = response.json()
    assert {"type", "title", "status", "detail", "instance", "error"} <= set(body) and body["status"] == status
    return body


def assert_untouched(service: Service, ids: dict[str, str]) -> None:
    with service.client("alice_rag") as http:
        assert ok(http.get(f"/v1/facts/{ids['fact_id']}"))["status"] == "active"
        assert ok(http.get(f"/v1/entities/{ids['entity_id']}"))["name"] == SECRET
        assert ok(http.get(f"/v1/episodes/{ids['episode_id']}"))["content"] == SECRET
        block = ok(http.get("/v1/blocks/passport"))
        assert block["value"] == SECRET and block["agents"] == ["rag"]  # type: ignore[index]
        assert [m["content"] for m in ok(http.get("/v1/sessions/s1/messages"))["items"]] == [SECRET]  # type: ignore[index]
        assert [p["steps"] for p in ok(http.get("/v1/procedures"))["items"]] == [[SECRET]]  # type: ignore[index]
        group = ok(http.get("/v1/groups"))["items"][0]  # type: ignore[index]
        assert [(m["user"], m["agent"]) for m in group["members"]] == [("alice", "rag")]
        assert [i["id"] for i in ok(http.get("/v1/shared"))["items"]] == [ids["item_id"]]  # type: ignore[index]


@pytest.mark.parametrize("intruder", ["bob", "alice_other_agent"])
def test_another_tenants_ids_are_404_on_every_route_that_takes_one(service: Service, intruder: str) -> None:
    ids = alice_records(service)
    if intruder == "alice_other_agent":  # the same user, through a key bound to another agent
        with SyncMemory.open(service.memory, embedder=None) as mem:
            service.keys[intruder] = mem.keys.create("alice", agent="other", can="read,write,admin").secret
    routed = [verb for verb in VERBS if set(verb.path_ids) & set(ids)]
    assert len(routed) >= 30
    with service.client(intruder) as http:
        for verb in routed:
            path = verb.path.format(**ids)
            body = sample(verb.name, intruder)
            kwargs = {"json": body} if verb.body is not None else {"params": body}
            status, error = refusal(verb.name, intruder)
            answer = problem_of(http.request(verb.method, path, **kwargs), status)
            assert answer["error"] == error and SECRET not in str(answer), verb.name
        cross = [
            ("POST", "/v1/edges", {"json": {"source": ids["entity_id"], "target": ids["entity_id"], "relation": "X"}}),
            ("DELETE", "/v1/edges", {"params": {"source": ids["entity_id"], "target": "x", "relation": "X"}}),
            ("POST", "/v1/facts/consolidate", {"json": {"fact_ids": [ids["fact_id"]], "text": "mine now"}}),
            ("POST", "/v1/facts", {"json": {"text": "I own it", "agent": "x" if intruder == "bob" else None,
                                            "entities": [{"entity_id": ids["entity_id"]}]}}),
            ("GET", "/v1/conflicts", {"params": {"fact_id": ids["fact_id"]}}),
            ("POST", "/v1/facts/touch", {"json": {"fact_ids": [ids["fact_id"]]}}),
        ]  # fmt: skip
        for method, path, kwargs in cross:
            assert SECRET not in str(problem_of(http.request(method, path, **kwargs), 404)), path
        mine = {"agent": "rag"} if intruder == "bob" else {}
        own = ok(http.post("/v1/groups", json={"name": "crew", **mine}), 201)["id"]  # type: ignore[index]
        shared = http.post(f"/v1/groups/{own}/shares", json={"fact_id": ids["fact_id"], **mine})
        assert SECRET not in str(problem_of(shared, 404))
        forged = http.post("/v1/tools/fact_forget", json={"arguments": {"fact_id": ids["fact_id"]}, **mine})
        assert ok(forged)["error"]["code"] == "not_found" and SECRET not in forged.text  # type: ignore[index]
        reads = [("POST", "/v1/search", {"json": {"query": SECRET}}), ("GET", "/v1/facts", {}),
                 ("GET", "/v1/episodes", {}), ("GET", "/v1/entities", {}),
                 ("POST", "/v1/recall", {"json": {"query": "passport"}}), ("GET", "/v1/blocks", {"params": mine}),
                 ("POST", "/v1/blocks/compile", {"json": {**mine, "reveal": "x"}}),
                 ("GET", "/v1/procedures", {"params": mine}), ("GET", "/v1/shared", {"params": mine}),
                 ("GET", "/v1/groups", {"params": mine}),
                 ("POST", "/v1/procedures/activate", {"json": {"task": "travel", **mine}}),
                 ("POST", "/v1/tools/fact_search", {"json": {"arguments": {"query": "passport"}, **mine}}),
                 ("POST", "/v1/tools/recall_episodes", {"json": {"arguments": {"query": "passport"}, **mine}}),
                 ("POST", "/v1/tools/conversation_search",
                  {"json": {"arguments": {"query": "passport"}, "session": "s1", **mine}})]  # fmt: skip
        for method, path, kwargs in reads:
            assert SECRET not in http.request(method, path, **kwargs).text, path
    assert_untouched(service, ids)


def test_keys_reach_only_their_scope_and_capabilities(service: Service) -> None:
    with service.client("bob") as http:
        named = problem_of(http.get("/v1/facts", params={"user": "alice"}), 403)
        assert named["error"] == "PermissionDeniedError"
        problem_of(http.post("/v1/facts", json={"text": "x", "user": "alice", "agent": "rag"}), 403)
        problem_of(http.post("/v1/episodes", json={"content": "x", "session": "s", "agent": "a", "user": "alice"}), 403)
    with service.client("alice_rag") as http:
        problem_of(http.post("/v1/facts", json={"text": "x", "agent": "other"}), 403)
    with service.client("alice_ro") as http:
        assert problem_of(http.post("/v1/facts", json={"text": "I like jazz"}), 403)["detail"].startswith("this API")
        ok(http.get("/v1/facts"))
    for key in (None, "revoked"):
        with service.client(key) as http:
            body = problem_of(http.get("/v1/facts"), 401)
            assert body["error"] == "AuthenticationError"
    with httpx.Client(base_url=service.url, headers={"Authorization": "Bearer mnm_forged"}) as http:
        problem_of(http.get("/v1/facts"), 401)
        problem_of(http.post("/v1/facts", content=b"{not json"), 401)  # the key is checked before the body
        problem_of(http.post("/v1/facts", json={"bogus": 1}), 401)
    with service.client("alice_ro") as http:
        problem_of(http.post("/v1/facts", json={"bogus": 1}), 403)  # and the capability too
    with service.client("alice_rag") as http:
        assert ok(http.get("/v1/facts"))["items"] == []


def test_bad_bodies_are_refused_and_write_nothing(service: Service) -> None:
    with service.client("alice_rag") as http:
        json_type = {"content-type": "application/json"}
        assert problem_of(http.post("/v1/facts", content=b'{"text": "I like', headers=json_type), 400)["error"]
        problem_of(http.post("/v1/facts", content=b"[1, 2]", headers=json_type), 422)
        problem_of(http.post("/v1/facts", json={"text": 42}), 422)
        problem_of(http.post("/v1/facts", json={"text": "I like jazz", "confidence": "very"}), 422)
        unknown = problem_of(http.post("/v1/facts", json={"text": "I like jazz", "owner": "eve"}), 422)
        assert "owner" in unknown["detail"]
        problem_of(http.post("/v1/facts", json={}), 422)
        problem_of(http.post("/v1/facts", json={"text": "   "}), 422)
        problem_of(http.get("/v1/facts", params={"limit": 0}), 422)
        problem_of(http.get("/v1/facts", params={"limit": "many"}), 422)
        problem_of(http.get("/v1/facts", params={"colour": "red"}), 422)
        problem_of(http.post("/v1/episodes", json={"content": "no session"}), 422)
        batch = {"episodes": [{"content": "ok", "session": "s"}, {"content": "", "session": "s"}]}
        problem_of(http.post("/v1/episodes/batch", json=batch), 422)
        problem_of(http.post("/v1/search", json={"query": "x", "tiers": ["nope"]}), 422)
        problem_of(http.get("/v1/no-such-route"), 404)
        problem_of(http.put("/v1/facts"), 405)
        big = {"text": "x" * (80 * 1024)}
        assert "larger than" in problem_of(http.post("/v1/facts", json=big), 413)["detail"]
        chunks = (b'{"text": "' + b"y" * 8192 for _ in range(20))
        problem_of(http.post("/v1/facts", content=chunks, headers=json_type), 413)
        assert ok(http.get("/v1/facts"))["items"] == [] and ok(http.get("/v1/episodes"))["items"] == []
        form = problem_of(http.post("/v1/facts", data={"text": "I like jazz"}), 415)  # curl -d sends a form
        assert "content-type: application/json" in form["detail"]
        problem_of(http.post("/v1/search", content=b'{"query": "jazz"}'), 415)  # JSON, but not said to be
        assert ok(http.get("/v1/facts"))["items"] == []
        ok(http.post("/v1/facts", json={"text": "I like jazz"}), 201)  # still serving


def test_a_client_cut_off_mid_body_leaves_nothing_behind(service: Service) -> None:
    where = urlsplit(service.url)
    head = (
        f"POST /v1/facts HTTP/1.1\r\nHost: {where.netloc}\r\nAuthorization: Bearer {service.keys['alice_rag']}\r\n"
        "Content-Type: application/json\r\nContent-Length: 5000\r\n\r\n"
    )
    for _ in range(3):
        with socket.create_connection((where.hostname, where.port)) as raw:
            raw.sendall(head.encode() + b'{"text": "I half-said something')
    with service.client("alice_rag") as http:
        assert ok(http.get("/v1/facts"))["items"] == []
        assert ok(http.post("/v1/facts", json={"text": "I like jazz"}), 201)["fact"]["text"] == "I like jazz"
    assert httpx.get(f"{service.url}/health").json()["status"] == "ok"


def test_a_client_gone_before_the_answer_leaves_a_whole_write(service: Service) -> None:
    where = urlsplit(service.url)
    body = b'{"text": "I moved to Lisbon"}'
    head = (
        f"POST /v1/facts HTTP/1.1\r\nHost: {where.netloc}\r\nAuthorization: Bearer {service.keys['alice_rag']}\r\n"
        f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
    )
    with socket.create_connection((where.hostname, where.port)) as raw:
        raw.sendall(head.encode() + body)  # and hang up without reading the answer
    with service.client("alice_rag") as http:
        for _ in range(300):  # the write runs to its end (or not at all) after the client left
            facts = ok(http.get("/v1/facts"))["items"]  # type: ignore[index]
            if facts:
                break
            time.sleep(0.05)
        assert [f["text"] for f in facts] == ["I moved to Lisbon"]
        decisions = ok(http.get("/v1/conflicts"))["items"]  # type: ignore[index]
        assert [d["fact_id"] for d in decisions] == [facts[0]["id"]]


def test_the_database_going_away_is_503_and_the_server_recovers(postgres_url: str) -> None:
    import psycopg

    keys = make_keys(postgres_url)
    with running(create_app(postgres_url)) as url:
        http = httpx.Client(base_url=url, headers={"Authorization": f"Bearer {keys['alice_rag']}"}, timeout=60)
        ok(http.post("/v1/facts", json={"text": "I like jazz"}), 201)
        with psycopg.connect(postgres_url, autocommit=True) as admin:
            admin.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                " WHERE datname = current_database() AND pid <> pg_backend_pid()"
            )
        answers = [http.post("/v1/facts", json={"text": f"I like band {i}"}) for i in range(3)]
        for answer in answers:  # a dropped connection is retried or reported, never a bare 500
            assert answer.status_code in (201, 503), answer.text
            if answer.status_code == 503:
                assert problem_of(answer, 503)["error"] == "StoreUnavailableError"
        texts = {f["text"] for f in ok(http.get("/v1/facts"))["items"]}  # type: ignore[index]
        written = {f"I like band {i}" for i, a in enumerate(answers) if a.status_code == 201}
        assert texts == {"I like jazz", *written}
        http.close()
