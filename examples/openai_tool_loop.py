"""A tool loop over an OpenAI-style chat API: the model reads and writes mnemonite through the nine memory tools.

Two conversations with one user: in the first the model stores what it is told (fact_remember), in the second,
which starts with no history, it looks it up again (fact_search) before answering.

Run: OPENAI_API_KEY=sk-... python examples/openai_tool_loop.py
     OPENAI_BASE_URL=http://localhost:11434/v1 python examples/openai_tool_loop.py   (any OpenAI-compatible server)
OPENAI_MODEL picks the model (default gpt-4o-mini). Without OPENAI_API_KEY or OPENAI_BASE_URL it says so and exits.
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
    key, base = os.environ.get("OPENAI_API_KEY"), os.environ.get("OPENAI_BASE_URL")
    if not key and not base:
        sys.exit("set OPENAI_API_KEY (or OPENAI_BASE_URL for another OpenAI-compatible server) to run this example")
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    model = os.environ.get("OPENAI_MODEL", "gpt-4o-mini")
    return (base or "https://api.openai.com/v1").rstrip("/"), headers, model


async def answer(client: httpx.AsyncClient, model: str, tools: ToolSet, user_message: str) -> str:
    """Send the message, run every tool call the model makes, send the results back, until it answers."""
    messages: list[dict[str, Any]] = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": user_message}]
    for _ in range(MAX_ROUNDS):
        sent = await client.post(
            "/chat/completions", json={"model": model, "messages": messages, "tools": tools.openai()}
        )
        sent.raise_for_status()
        message = sent.json()["choices"][0]["message"]
        if not message.get("tool_calls"):
            return str(message.get("content") or "")
        messages.append({"role": "assistant", "content": message.get("content"), "tool_calls": message["tool_calls"]})
        for call in message["tool_calls"]:
            name, arguments = call["function"]["name"], json.loads(call["function"]["arguments"] or "{}")
            result = await tools.call(name, arguments)
            print(f"  [{name} {json.dumps(arguments)} -> {'ok' if result.ok else result.error.code}]")
            messages.append({"role": "tool", "tool_call_id": call["id"], "content": result.content()})
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
