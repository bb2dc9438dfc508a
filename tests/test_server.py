"""The HTTP API on a real uvicorn server, over SQLite and PostgreSQL: every tier's verbs, scoping by API key."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime

import httpx
import pytest

from conftest import plant_replaced_turn, plant_turn_and_its_fact
from live_server import running
from mnemonite import SyncMemory
from mnemonite.server import VERBS, create_app


@dataclass
class Service:
    url: str
    keys: dict[str, str]
    memory: str

    def client(self, key: str | None) -> httpx.Client:
        headers = {"Authorization": f"Bearer {self.keys[key]}"} if key else {}
        return httpx.Client(base_url=self.url, headers=headers, timeout=60)


def make_keys(memory_url: str) -> dict[str, str]:
    with SyncMemory.open(memory_url, embedder=None) as mem:
        made = {
            "alice": mem.keys.create("alice", can="read,write,admin"),
            "alice_rag": mem.keys.create("alice", agent="rag", can="read,write"),
            "alice_ro": mem.keys.create("alice", agent="rag", can="read"),
            "bob": mem.keys.create("bob", can="read,write,admin"),
            "revoked": mem.keys.create("alice", can="read,write"),
        }
        mem.keys.revoke(made["revoked"].key.id)
    return {name: issued.secret for name, issued in made.items()}


@pytest.fixture
def service(memory_url: str) -> Iterator[Service]:
    keys = make_keys(memory_url)
    with running(create_app(memory_url)) as url:
        yield Service(url, keys, memory_url)


def ok(response: httpx.Response, status: int = 200) -> object:
    assert response.status_code == status, response.text
    return response.json()


def test_every_verb_has_exactly_one_route() -> None:
    app = create_app("sqlite:///:memory:", mcp=False)
    served = {(method, route.path) for route in app.routes for method in getattr(route, "methods", ()) or ()}
    assert {(verb.method, verb.path) for verb in VERBS} <= served
    assert len({verb.name for verb in VERBS}) == len(VERBS)
    assert {verb.tier for verb in VERBS} == {
        "episodic",
        "semantic",
        "search",
        "graph",
        "admin",
        "working",
        "session",
        "procedural",
        "shared",
        "tools",
    }
    paths = {getattr(route, "path", None) for route in app.routes}
    assert "/openapi.json" in paths and not paths & {"/docs", "/redoc"}  # their pages need a CDN: not served


def test_semantic_verbs_remember_supersede_forget_and_replay(service: Service) -> None:
    with service.client("alice_rag") as http:
        made = ok(http.post("/v1/facts", json={"text": "I live in Paris", "tags": ["home"]}), 201)
        assert made["decision"]["kind"] == "admit" and made["fact"]["agent"] == "rag"
        first = made["fact"]["id"]
        moved = ok(http.post("/v1/facts", json={"text": "I moved to Berlin"}), 201)
        assert moved["decision"]["kind"] == "supersede" and moved["decision"]["matched_ids"] == [first]
        before = moved["fact"]["recorded_at"]
        assert ok(http.get(f"/v1/facts/{first}"))["status"] == "superseded"
        history = ok(http.get(f"/v1/facts/{moved['fact']['id']}/history"))
        assert [f["id"] for f in history] == [first, moved["fact"]["id"]]
        assert ok(http.get(f"/v1/facts/{first}/lineage"))[0]["relation"] == "SUPERSEDES"
        then = ok(http.get("/v1/facts", params={"as_of": made["fact"]["recorded_at"]}))
        assert [f["text"] for f in then["items"]] == ["I live in Paris"]
        newer = ok(http.post(f"/v1/facts/{moved['fact']['id']}/supersede", json={"text": "I live in Munich"}))
        assert newer["text"] == "I live in Munich"
        forgotten = ok(http.delete(f"/v1/facts/{newer['id']}"))
        assert forgotten["status"] == "forgotten"
        assert ok(http.get("/v1/facts"))["items"] == []
        assert ok(http.get("/v1/facts", params={"as_of": before}))["items"][0]["text"] == "I moved to Berlin"
        decisions = ok(http.get("/v1/conflicts", params={"limit": 2}))
        assert len(decisions["items"]) == 2 and decisions["next_offset"] == 2
        assert ok(http.post("/v1/names", json={"names": ["Ali"]})) == ["ali", "alice"]


def test_search_explains_every_hit(service: Service) -> None:
    with service.client("alice_rag") as http:
        ok(http.post("/v1/facts", json={"text": "I am allergic to peanuts"}), 201)
        ok(http.post("/v1/episodes", json={"content": "We talked about the Lisbon trip", "session": "s1"}), 201)
        hits = ok(http.post("/v1/search", json={"query": "peanut allergy", "k": 5}))
        assert hits[0]["record"]["text"] == "I am allergic to peanuts" and hits[0]["tier"] == "semantic"
        assert hits[0]["cosine"] is not None and hits[0]["fused"] > 0
        episodes = ok(http.post("/v1/episodes/search", json={"query": "Lisbon"}))
        assert episodes[0]["record"]["content"] == "We talked about the Lisbon trip"
        facts = ok(http.post("/v1/facts/search", json={"query": "Lisbon", "k": 3}))
        assert all(hit["tier"] == "semantic" for hit in facts)


def test_episodic_verbs_record_page_and_purge(service: Service) -> None:
    with service.client("alice") as http:
        stamp = datetime(2025, 1, 1, tzinfo=UTC)
        one = {"content": "first", "session": "s1", "agent": "rag", "timestamp": stamp.isoformat()}
        ok(http.post("/v1/episodes", json={**one, "id": "e1"}), 201)
        batch = [{"id": f"e{i}", "content": f"episode {i}", "session": "s2", "agent": "rag"} for i in range(2, 6)]
        assert ok(http.post("/v1/episodes/batch", json={"episodes": batch}), 201) == {"inserted": 4}
        first = ok(http.get("/v1/episodes", params={"limit": 3}))
        second = ok(http.get("/v1/episodes", params={"limit": 3, "offset": first["next_offset"]}))
        assert len(first["items"]) == 3 and len(second["items"]) == 2 and second["next_offset"] is None
        assert [e["session"] for e in ok(http.get("/v1/episodes", params={"session": "s1"}))["items"]] == ["s1"]
        ranked = ok(http.get("/v1/episodes/salient", params={"limit": 2}))
        assert len(ranked) == 2 and all(0 <= item["salience"] <= 1 for item in ranked)
        assert ok(http.get("/v1/episodes/e1"))["content"] == "first"
        purged = ok(http.post("/v1/episodes/e1/purge", json={"reason": "user asked"}))
        assert purged["episode_ids"] == ["e1"]
        assert http.get("/v1/episodes/e1").status_code == 404


def test_graph_verbs(service: Service) -> None:
    with service.client("alice_rag") as http:
        ada = ok(http.post("/v1/entities", json={"name": "Ada", "entity_type": "person"}), 201)
        acme = ok(http.post("/v1/entities", json={"name": "Acme", "entity_type": "company"}), 201)
        edge = ok(http.post("/v1/edges", json={"source": ada["id"], "target": acme["id"], "relation": "WORKS_AT"}), 201)
        assert edge["relation"] == "WORKS_AT"
        assert ok(http.get(f"/v1/entities/{ada['id']}/neighbors"))[0]["target"] == acme["id"]
        assert ok(http.get(f"/v1/entities/{ada['id']}/edges"))[0]["target"] == acme["id"]
        assert ok(http.get(f"/v1/entities/{acme['id']}/edges", params={"end": "in"}))[0]["source"] == ada["id"]
        assert ok(http.get("/v1/entities/by-name", params={"name": "ADA"}))["id"] == ada["id"]
        assert [e["name"] for e in ok(http.get("/v1/entities", params={"limit": 1}))["items"]] == ["Acme"]
        assert ok(http.get("/v1/entities/search", params={"q": "ada"}))[0]["id"] == ada["id"]
        changed = ok(http.patch(f"/v1/entities/{ada['id']}", json={"properties": {"role": "engineer"}}))
        assert changed["properties"] == {"role": "engineer"}
        link = [{"entity_id": ada["id"], "role": "about"}]
        fact = ok(http.post("/v1/facts", json={"text": "Ada prefers async Python", "entities": link}), 201)["fact"]
        context = ok(http.post("/v1/context", json={"entity": "Ada", "topic": "python"}))
        assert "Ada prefers async Python" in context["text"] and "WORKS_AT" in context["text"]
        assert ok(http.post("/v1/recall", json={"query": "python"}))[0]["fact"]["id"] == fact["id"]
        assert ok(http.post("/v1/facts/touch", json={"fact_ids": [fact["id"]]})) == {"count": 1}
        assert ok(http.post("/v1/graph/decay", json={"factor": 0.5})) == {"count": 1}
        merged = ok(http.post("/v1/facts/consolidate", json={"fact_ids": [fact["id"]], "text": "Ada: async"}), 201)
        assert merged["memory_type"] == "consolidation"
        assert ok(http.get("/v1/graph/stats"))["entities"] == 2
        params = {"source": ada["id"], "target": acme["id"], "relation": "WORKS_AT"}
        ok(http.delete("/v1/edges", params=params))
        assert ok(http.get(f"/v1/entities/{ada['id']}/neighbors")) == []
        ok(http.delete(f"/v1/entities/{acme['id']}"))
        assert http.get(f"/v1/entities/{acme['id']}").status_code == 404


def test_admin_verbs_rules_runs_and_health(service: Service) -> None:
    with service.client("alice") as http:
        ok(http.post("/v1/episodes", json={"content": "I like tea", "session": "s", "agent": "rag"}), 201)
        ok(http.post("/v1/rules", json={"id": "nightly", "cadence": {"every": 1}}), 201)
        assert [r["rule"]["id"] for r in ok(http.get("/v1/rules"))] == ["nightly"]
        run = ok(http.post("/v1/rules/nightly/run"))
        assert run["episodes_scanned"] == 1 and run["deltas_applied"] == 1
        assert ok(http.get("/v1/health"))["ok"] is True
        assert ok(http.post("/v1/index"))["embedded"] >= 0
        assert http.get("/v1/deltas").status_code == 404  # every user's facts are in it: not served
        ok(http.delete("/v1/rules/nightly"))
        assert ok(http.get("/v1/rules")) == []
    with service.client("alice_rag") as http:
        denied = http.get("/v1/health")
        assert denied.status_code == 403 and denied.json()["error"] == "PermissionDeniedError"
    assert httpx.get(f"{service.url}/health").json()["status"] == "ok"


def test_search_returns_facts_beside_their_turns_when_asked(service: Service) -> None:
    plant_turn_and_its_fact(service.memory, "alice", "rag")
    with service.client("alice_rag") as http:
        body = {"query": "Where did Alice move? Munich", "k": 5}
        stood = ok(http.post("/v1/search", json=body))
        both = ok(http.post("/v1/search", json={**body, "facts_stand_in": False}))
    tiers = sorted(hit["tier"] for hit in both)
    assert tiers == ["episodic", "semantic"] and len(stood) == 1  # the turn and its fact are one piece of evidence


def test_search_puts_a_replaced_turn_below_what_replaced_it_unless_asked(service: Service) -> None:
    plant_replaced_turn(service.memory, "alice", "rag")
    with service.client("alice_rag") as http:
        body = {"query": "vegetarian dinner", "k": 5, "tiers": ["episodic"]}
        current = ok(http.post("/v1/search", json=body))
        scored = ok(http.post("/v1/search", json={**body, "current_first": False}))
    assert [(h["record"]["id"], h["superseded"]) for h in scored] == [("old", True), ("new", False)]
    assert [(h["record"]["id"], h["superseded"]) for h in current] == [("new", False), ("old", True)]


@pytest.mark.parametrize("stamp", ["9999-12-31T23:59:59-05:00", "0001-01-01T00:00:00+05:00"])
def test_a_time_outside_the_storable_years_is_a_422(service: Service, stamp: str) -> None:
    """A time that is valid where it was written but falls outside years 1-9999 in UTC is refused, not a 500."""
    with service.client("alice") as http:
        one = {"content": "hi", "session": "s", "agent": "rag", "timestamp": stamp}
        for path, body in (("/v1/episodes", one), ("/v1/episodes/batch", {"episodes": [one]})):
            answer = http.post(path, json=body)
            assert answer.status_code == 422 and "outside the years 1-9999" in answer.text, answer.text
        assert ok(http.get("/v1/episodes"))["items"] == []
