"""A local chat-model server for the tests: scripted OpenAI-compatible answers (or any raw body), usage, errors,
delays."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Answer:
    """One reply: the message content (a dict is sent as JSON text), status, usage, and a delay first."""

    content: Any = None
    status: int = 200
    prompt_tokens: int | None = 100
    completion_tokens: int | None = 20
    delay: float = 0.0
    raw: str | None = None  # sent as the whole body instead


@dataclass
class Script:
    """What the server saw, and how it answers: ``answer(body) -> Answer``."""

    answer: Callable[[dict[str, Any]], Answer]
    requests: list[dict[str, Any]] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)  # each request's path, and its headers, in order
    headers: list[dict[str, str]] = field(default_factory=list)

    def prompts(self) -> list[str]:
        return [m["content"] for body in self.requests for m in body["messages"]]


class _Handler(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        script: Script = self.server.script  # type: ignore[attr-defined]
        script.requests.append(body)
        script.paths.append(self.path)
        script.headers.append({name.lower(): value for name, value in self.headers.items()})
        answer = script.answer(body)
        time.sleep(answer.delay)
        if answer.raw is not None:
            payload = answer.raw.encode()
        else:
            content = answer.content if isinstance(answer.content, str) else json.dumps(answer.content)
            reply: dict[str, Any] = {"choices": [{"message": {"role": "assistant", "content": content}}]}
            if answer.prompt_tokens is not None:
                usage = {"prompt_tokens": answer.prompt_tokens, "completion_tokens": answer.completion_tokens}
                reply["usage"] = usage
            payload = json.dumps(reply).encode()
        try:
            self.send_response(answer.status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)
        except (BrokenPipeError, ConnectionResetError):  # the client gave up (a timeout test)
            pass

    def log_message(self, *args: object) -> None:
        pass


@contextmanager
def llm_server(answer: Callable[[dict[str, Any]], Answer]) -> Iterator[tuple[str, Script]]:
    """Answers every POST on loopback (``/v1/chat/completions``, ``/v1/messages``); yields the base URL and `Script`."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    server.daemon_threads = True
    script = Script(answer)
    server.script = script  # type: ignore[attr-defined]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1", script
    finally:
        server.shutdown()
        server.server_close()
