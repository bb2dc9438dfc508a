"""A tool loop over the Anthropic Messages API: the model reads and writes mnemonite through the nine memory tools.

Two conversations with one user: in the first the model stores what it is told (fact_remember), in the second,
which starts with no history, it looks it up again (fact_search) before answering. Tool calls arrive as
``tool_use`` content blocks and go back as ``tool_result`` blocks.

Run: ANTHROPIC_API_KEY=sk-ant-... python examples/anthropic_tool_loop.py
ANTHROPIC_MODEL picks the model (default claude-haiku-4-5), ANTHROPIC_BASE_URL another Messages API server.
Without ANTHROPIC_API_KEY or ANTHROPIC_BASE_URL it says so and exits.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

import httpx

from mnemonite import Memory, Scope
from mnemonite.tools import ToolSet

SYSTEM = (
    "You are a helpful assistant with a long-term memory, reached through tools. Remember lasting facts the user "
    "tells you about themselves; search memory before answering a question about them."
)
CONVERSATIONS = [
    ("chat-1", "I moved to Porto last month, and I've been vegan since January."),
    ("chat-2", "Where do I live now, and what could I cook tonight?"),
]
MAX_ROUNDS = 8  # model calls per user message: a model that keeps calling tools is stopped here


def endpoint() -> tuple[str, dict[str, str], str]:
    """The API's base URL, its headers and the model, from the environment."""
    key, base = os.environ.get("ANTHROPIC_API_KEY"), os.environ.get("ANTHROPIC_BASE_URL")
    if not key and not base:
        sys.exit("set ANTHROPIC_API_KEY (or ANTHROPIC_BASE_URL for another Messages API server) to run this example")
    headers = {"anthropic-version": "2023-06-01"} | ({"x-api-key": key} if key else {})
    model = os.environ.get("ANTHROPIC_MODEL", "claude-haiku-4-5")
    return (base or "https://api.anthropic.com").rstrip("/"), headers, model


async def answer(client: httpx.AsyncClient, model: str, tools: ToolSet, user_message: str) -> str:
    """Send the message, run every tool_use block the model sends, return the results, until it answers."""
    messages: list[dict[str, Any]] = [{"role": "user", "content": user_message}]
    request = {"model": model, "max_tokens": 1024, "system": SYSTEM, "tools": tools.anthropic()}
    for _ in range(MAX_ROUNDS):
        sent = await client.post("/v1/messages", json={**request, "messages": messages})
        sent.raise_for_status()
        reply = sent.json()
        messages.append({"role": "assistant", "content": reply["content"]})
        if reply["stop_reason"] != "tool_use":
            return "".join(block["text"] for block in reply["content"] if block["type"] == "text")
        results = []
        for block in (block for block in reply["content"] if block["type"] == "tool_use"):
            result = await tools.call(block["name"], block["input"])
            print(f"  [{block['name']} {json.dumps(block['input'])} -> {'ok' if result.ok else result.error.code}]")
            results.append(
                {
                    "type": "tool_result",
                    "tool_use_id": block["id"],
                    "content": result.content(),
                    "is_error": not result.ok,
                }
            )
        messages.append({"role": "user", "content": results})
    sys.exit(f"the model was still calling tools after {MAX_ROUNDS} rounds")


async def main() -> None:
    base, headers, model = endpoint()
    with tempfile.TemporaryDirectory() as folder:
        async with (
            await Memory.open(f"sqlite:///{Path(folder) / 'agent.db'}") as mem,
            httpx.AsyncClient(base_url=base, headers=headers, timeout=120) as client,
        ):
            for session, said in CONVERSATIONS:
                tools = mem.tools.for_scope(Scope(user="sam", agent="assistant", session=session))
                print(f"User: {said}")
                print(f"Assistant: {await answer(client, model, tools, said)}\n")
            print("What memory holds now:")
            for fact in await mem.semantic.facts(Scope(user="sam", agent="assistant")):
                print(f"- {fact.text}")


if __name__ == "__main__":
    asyncio.run(main())
