"""Back-pressure on a real server: bounded running and waiting requests, 429 with Retry-After past them."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import httpx
import pytest

from live_server import running
from mnemonite import SyncMemory
from mnemonite.server import Capacity, create_app
from mnemonite.server.admission import Admission


class Gate:
    """An ASGI app whose requests wait until the test opens the gate; counts how many ran at once."""

    def __init__(self) -> None:
        self.open = threading.Event()
        self.now = self.most = 0

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            while (await receive())["type"] != "lifespan.shutdown":
                await send({"type": "lifespan.startup.complete"})
            await send({"type": "lifespan.shutdown.complete"})
            return
        if scope["path"] == "/health":
            await send({"type": "http.response.start", "status": 200, "headers": []})
            await send({"type": "http.response.body", "body": b"ok"})
            return
        self.now += 1
        self.most = max(self.most, self.now)
        try:
            while not self.open.is_set():  # noqa: ASYNC110 (a threading.Event: the test thread opens it)
                await asyncio.sleep(0.005)
            await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/plain")]})
            await send({"type": "http.response.body", "body": b"done"})
        finally:
            self.now -= 1


async def _flood(url: str, n: int, path: str = "/work") -> list[httpx.Response]:
    async with httpx.AsyncClient(base_url=url, timeout=30, limits=httpx.Limits(max_connections=n)) as client:
        return await asyncio.gather(*[client.get(path) for _ in range(n)])


def test_past_running_and_waiting_a_request_is_told_when_to_retry() -> None:
    gate = Gate()
    app = Admission(gate, Capacity(running=3, waiting=4, wait_seconds=30))
    with running(app) as url:
        flood = threading.Thread(target=lambda: out.extend(asyncio.run(_flood(url, 20))))
        out: list[httpx.Response] = []
        flood.start()
        while app.refused < 13:  # 3 run, 4 wait, the other 13 are answered at once
            flood.join(timeout=0.01)
        health = httpx.get(f"{url}/health", timeout=5)  # answered while the server is full
        gate.open.set()
        flood.join(timeout=30)
    assert health.status_code == 200
    statuses = sorted(r.status_code for r in out)
    assert statuses == [200] * 7 + [429] * 13 and gate.most == 3
    refused = next(r for r in out if r.status_code == 429)
    assert refused.headers["retry-after"] == "1"
    assert refused.headers["content-type"] == "application/problem+json"
    body = refused.json()
    assert body["error"] == "ServerBusyError" and body["status"] == 429 and "3 requests running" in body["detail"]


def test_a_request_that_waited_too_long_is_refused_and_the_server_recovers() -> None:
    gate = Gate()
    app = Admission(gate, Capacity(running=1, waiting=5, wait_seconds=0.2))
    with running(app) as url:
        out: list[httpx.Response] = []
        flood = threading.Thread(target=lambda: out.extend(asyncio.run(_flood(url, 4))))
        flood.start()
        flood.join(timeout=1.0)  # the three waiting give up after 0.2 s; the one running still waits
        gate.open.set()
        flood.join(timeout=30)
        again = httpx.get(f"{url}/work", timeout=5)
    assert sorted(r.status_code for r in out) == [200, 429, 429, 429]
    assert "within 0.2 s" in next(r for r in out if r.status_code == 429).json()["detail"]
    assert again.status_code == 200 and app.running == app.waiting == 0


def test_a_capacity_must_make_sense() -> None:
    with pytest.raises(ValueError, match="running >= 1"):
        Admission(Gate(), Capacity(running=0, waiting=1))
    assert Capacity.for_machine(cores=4) == Capacity(running=256, waiting=2048)


def test_the_service_under_a_flood_answers_every_request_or_429(tmp_path: Any) -> None:
    """The memory's own app: a flood past a small capacity gets 429s, everything else succeeds, nothing 5xx."""
    url = f"sqlite:///{tmp_path / 'flood.db'}"
    with SyncMemory.open(url, embedder=None) as mem:
        secret = mem.keys.create("sam", can="read,write").secret
    app = create_app(url, capacity=Capacity(running=2, waiting=2, wait_seconds=0.05))
    with running(app) as base:

        async def flood() -> list[httpx.Response]:
            headers = {"Authorization": f"Bearer {secret}"}
            async with httpx.AsyncClient(base_url=base, headers=headers, timeout=60) as client:
                writes = [
                    client.post("/v1/episodes", json={"session": "s", "agent": "a", "content": f"note {i}"})
                    for i in range(60)
                ]
                return await asyncio.gather(*writes)

        answers = asyncio.run(flood())
        statuses = {r.status_code for r in answers}
        assert 422 not in statuses, next(r.text for r in answers if r.status_code == 422)
        assert statuses <= {201, 200, 429} and 429 in statuses
        written = sum(r.status_code in (200, 201) for r in answers)
        with httpx.Client(base_url=base, headers={"Authorization": f"Bearer {secret}"}, timeout=60) as client:
            page = client.get("/v1/episodes", params={"session": "s", "agent": "a", "limit": 100})
            assert page.status_code == 200, page.text
    assert len(page.json()["items"]) == written  # what was acknowledged was written; what was refused was not
