"""A LangGraph agent whose long-term memory is mnemonite's LangGraph store (`MnemoniteStore`).

Before each answer the graph recalls what the store holds about the user (a hybrid search); the model keeps what
it learns with a ``remember(key, text)`` tool, which puts the item in the store (a key put again supersedes the
old value). Three conversations, each starting with no history: the move to Lisbon replaces Porto, and the last
answer is given from memory alone.

Run: OPENAI_API_KEY=sk-... python examples/langgraph_agent.py
     OPENAI_BASE_URL=http://localhost:11434/v1 python examples/langgraph_agent.py   (any OpenAI-compatible server)
OPENAI_MODEL picks the model (default gpt-4o-mini). Without OPENAI_API_KEY or OPENAI_BASE_URL it says so and exits.
Needs ``pip install "mnemonite[langgraph]"``.
"""

from __future__ import annotations

import json
import operator
import os
import sys
import tempfile
from pathlib import Path
from typing import Annotated, Any, TypedDict

import httpx
from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime

from mnemonite import SyncMemory
from mnemonite.langgraph import MnemoniteStore

NAMESPACE = ("assistant", "profile")  # the first label is the agent the items are kept under
REMEMBER = {
    "type": "function",
    "function": {
        "name": "remember",
        "description": "Keep one lasting fact about the user under a short key ('city', 'diet'); "
        "using a key again replaces what it held.",
        "parameters": {
            "type": "object",
            "properties": {"key": {"type": "string"}, "text": {"type": "string"}},
            "required": ["key", "text"],
        },
    },
}
CONVERSATIONS = [
    "I live in Porto, and I'm vegan.",
    "Big news: I moved to Lisbon last week.",
    "Could you suggest a dinner plan for me tonight?",
]


class State(TypedDict, total=False):
    messages: Annotated[list[dict[str, Any]], operator.add]
    memories: list[str]


def chat_model() -> httpx.Client:
    """A client for the chat API named by the environment."""
    key, base = os.environ.get("OPENAI_API_KEY"), os.environ.get("OPENAI_BASE_URL")
    if not key and not base:
        sys.exit("set OPENAI_API_KEY (or OPENAI_BASE_URL for another OpenAI-compatible server) to run this example")
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    return httpx.Client(base_url=(base or "https://api.openai.com/v1").rstrip("/"), headers=headers, timeout=120)


def recall(state: State, runtime: Runtime) -> State:
    """What the store holds that bears on the user's message."""
    assert runtime.store is not None
    hits = runtime.store.search(NAMESPACE, query=state["messages"][-1]["content"], limit=5)
    return {"memories": [hit.value["text"] for hit in hits]}


def make_model(client: httpx.Client) -> Any:
    model = os.environ.get("OPENAI_MODEL", "gpt-4o-mini")

    def call_model(state: State) -> State:
        known = "\n".join(f"- {text}" for text in state.get("memories", [])) or "- nothing yet"
        system = f"You are a helpful assistant. What you know about the user:\n{known}"
        body = {"model": model, "messages": [{"role": "system", "content": system}, *state["messages"]]}
        sent = client.post("/chat/completions", json=body | {"tools": [REMEMBER]})
        sent.raise_for_status()
        message = sent.json()["choices"][0]["message"]  # kept as a request takes it back: no extra fields
        turn = {"role": "assistant", "content": message.get("content")}
        return {"messages": [turn | ({"tool_calls": message["tool_calls"]} if message.get("tool_calls") else {})]}

    return call_model


def remember(state: State, runtime: Runtime) -> State:
    """Put each ``remember`` call's text in the store under its key."""
    assert runtime.store is not None
    done = []
    for call in state["messages"][-1]["tool_calls"]:
        arguments = json.loads(call["function"]["arguments"])
        runtime.store.put(NAMESPACE, arguments["key"], {"text": arguments["text"]})
        print(f"  [remember {arguments['key']}: {arguments['text']}]")
        done.append({"role": "tool", "tool_call_id": call["id"], "content": "stored"})
    return {"messages": done}


def next_step(state: State) -> str:
    return "remember" if state["messages"][-1].get("tool_calls") else END


def build(client: httpx.Client, store: MnemoniteStore) -> Any:
    builder = StateGraph(State)
    builder.add_node("recall", recall)
    builder.add_node("model", make_model(client))
    builder.add_node("remember", remember)
    builder.add_edge(START, "recall")
    builder.add_edge("recall", "model")
    builder.add_conditional_edges("model", next_step, ["remember", END])
    builder.add_edge("remember", "model")
    return builder.compile(store=store)


def main() -> None:
    with (
        chat_model() as client,
        tempfile.TemporaryDirectory() as folder,
        SyncMemory.open(f"sqlite:///{Path(folder) / 'agent.db'}") as mem,
    ):
        graph = build(client, MnemoniteStore(mem, user="sam"))
        for said in CONVERSATIONS:
            print(f"User: {said}")
            final = graph.invoke({"messages": [{"role": "user", "content": said}]})
            print(f"Assistant: {final['messages'][-1]['content']}\n")
        print("What the store holds now:")
        for item in graph.store.search(NAMESPACE):
            print(f"- {item.key}: {item.value['text']}")


if __name__ == "__main__":
    main()
