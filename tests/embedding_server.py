"""Local OpenAI-compatible servers for the tests (no remote model is reachable here).

`embedding_server`: /v1/embeddings, whose vectors are hashed bags of words (deterministic, and
texts sharing words are close). `chat_server`: /v1/chat/completions answering with a fixed reply.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

DIMENSIONS = 64


def bag_of_words(text: str) -> list[float]:
    vector = [0.0] * DIMENSIONS
    for word in re.findall(r"[a-z0-9]+", text.lower()):
        vector[int(hashlib.md5(word.encode()).hexdigest(), 16) % DIMENSIONS] += 1.0
    vector[0] += 0.01  # never all zeros
    return vector


class _JsonHandler(BaseHTTPRequestHandler):
    def send_json(self, status: int, reply: object) -> None:
        payload = json.dumps(reply).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def read_json(self) -> Any:
        return json.loads(self.rfile.read(int(self.headers["Content-Length"])))

    def log_message(self, *args: object) -> None:
        pass


class _EmbeddingHandler(_JsonHandler):
    def do_POST(self) -> None:
        body = self.read_json()
        if self.path != "/v1/embeddings" or self.server.fail:  # type: ignore[attr-defined]
            self.send_json(500, {"error": "failing on purpose"})
            return
        self.server.requests += 1  # type: ignore[attr-defined]
        data = [{"index": i, "embedding": bag_of_words(t), "object": "embedding"} for i, t in enumerate(body["input"])]
        self.send_json(200, {"data": data[::-1], "model": body["model"], "object": "list"})


class _ChatHandler(_JsonHandler):
    def do_POST(self) -> None:
        body = self.read_json()
        self.server.requests.append(body)  # type: ignore[attr-defined]
        content = self.server.reply(body)  # type: ignore[attr-defined]
        status = 200 if self.path == "/v1/chat/completions" else 404
        self.send_json(status, {"choices": [{"message": {"role": "assistant", "content": content}}]})


@contextmanager
def embedding_server() -> Iterator[ThreadingHTTPServer]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _EmbeddingHandler)
    server.requests = 0  # type: ignore[attr-defined]
    server.fail = False  # type: ignore[attr-defined]
    with _serving(server):
        yield server


@contextmanager
def chat_server(reply: Callable[[dict[str, Any]], str]) -> Iterator[tuple[str, list[dict[str, Any]]]]:
    """Yields the base URL and the list of request bodies received; ``reply`` makes each answer's content."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _ChatHandler)
    server.requests = []  # type: ignore[attr-defined]
    server.reply = reply  # type: ignore[attr-defined]
    with _serving(server):
        yield f"http://127.0.0.1:{server.server_address[1]}/v1", server.requests  # type: ignore[attr-defined]


@contextmanager
def _serving(server: ThreadingHTTPServer) -> Iterator[None]:
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
