"""A local OpenAI-compatible /v1/embeddings server for the tests (no remote model is reachable here).

Its vectors are hashed bags of words: deterministic, and texts sharing words are close.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

DIMENSIONS = 64


def bag_of_words(text: str) -> list[float]:
    vector = [0.0] * DIMENSIONS
    for word in re.findall(r"[a-z0-9]+", text.lower()):
        vector[int(hashlib.md5(word.encode()).hexdigest(), 16) % DIMENSIONS] += 1.0
    vector[0] += 0.01  # never all zeros
    return vector


class _Handler(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        if self.path != "/v1/embeddings" or self.server.fail:  # type: ignore[attr-defined]
            self.send_response(500)
            self.end_headers()
            return
        self.server.requests += 1  # type: ignore[attr-defined]
        data = [{"index": i, "embedding": bag_of_words(t), "object": "embedding"} for i, t in enumerate(body["input"])]
        payload = json.dumps({"data": data[::-1], "model": body["model"], "object": "list"}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args: object) -> None:
        pass


@contextmanager
def embedding_server() -> Iterator[ThreadingHTTPServer]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    server.requests = 0  # type: ignore[attr-defined]
    server.fail = False  # type: ignore[attr-defined]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
