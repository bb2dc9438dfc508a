"""`mnemonite serve --workers N`: several processes on one port over one SQLite file, one indexer, and a worker that
dies is started again."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import httpx

from mnemonite import SyncMemory


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _children(pid: int) -> set[int]:
    """The worker processes of the server ``pid`` (spawned by multiprocessing; not its resource tracker)."""
    found = set()
    for task in Path(f"/proc/{pid}/task").iterdir():
        for child in (task / "children").read_text().split():
            try:
                if b"spawn_main" in Path(f"/proc/{child}/cmdline").read_bytes():
                    found.add(int(child))
            except OSError:
                continue
    return found


def _until(check: Callable[[], bool], seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while not check():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.2)


def test_two_workers_serve_one_file_and_a_dead_one_comes_back(tmp_path: Path) -> None:
    db = tmp_path / "w.db"
    with SyncMemory.open(f"sqlite:///{db}", embedder=None) as mem:
        secret = mem.keys.create("sam", can="read,write,admin").secret
    port = _free_port()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    server = subprocess.Popen(
        [sys.executable, "-c", "from mnemonite.cli import main; main()", "serve", "--workers", "2", "--port", str(port),
         "--db", str(db)],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    auth = {"Authorization": f"Bearer {secret}"}

    def healthy() -> bool:
        try:
            return httpx.get(f"{base}/health", timeout=2).status_code == 200
        except httpx.TransportError:
            return False

    try:
        _until(healthy)
        _until(lambda: len(_children(server.pid)) == 2)
        workers = _children(server.pid)
        with httpx.Client(base_url=base, headers=auth, timeout=30) as client:
            ids = []
            for i in range(12):
                answer = client.post("/v1/episodes", json={"content": f"note {i} about Porto", "session": "s",
                                                           "agent": "a"})  # fmt: skip
                assert answer.status_code == 201, answer.text
                ids.append(answer.json()["id"])
            os.kill(next(iter(workers)), signal.SIGKILL)  # a worker dies: the other answers, a new one starts
            _until(lambda: len(_children(server.pid)) == 2 and _children(server.pid) != workers)
            for i in range(12, 20):
                answer = client.post("/v1/episodes", json={"content": f"note {i}", "session": "s", "agent": "a"})
                assert answer.status_code == 201, answer.text
                ids.append(answer.json()["id"])
            assert all(client.get(f"/v1/episodes/{i}").status_code == 200 for i in ids)
            # one indexer, in the supervising process, embeds what the workers wrote
            _until(lambda: client.get("/v1/health").json()["pending_embeddings"] == 0)
            hits = client.post("/v1/search", json={"query": "which city", "k": 3}).json()
            assert any("Porto" in hit["record"]["content"] for hit in hits)
    finally:
        server.send_signal(signal.SIGINT)
        _, err = server.communicate(timeout=60)
    assert server.returncode == 0, err.decode()
    assert b"by 2 worker processes" in err
