"""Each program in examples/ runs as a user would run it (a subprocess, in an empty folder) and tells its story;
the programs that talk to a chat model talk to a scripted stand-in (`llm_server`), and the MCP host configurations
are launched as their host would launch them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from llm_server import Answer, Script, llm_server
from mcp_host import remember_and_search, with_database

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
MODEL_VARIABLES = ("OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_MODEL", "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL",
                   "ANTHROPIC_MODEL")  # fmt: skip
NEEDS_A_MODEL = {"langgraph_agent.py": "OPENAI_API_KEY", "openai_tool_loop.py": "OPENAI_API_KEY",
                 "anthropic_tool_loop.py": "ANTHROPIC_API_KEY"}  # fmt: skip
HOST_CONFIGS = {"claude_desktop_config.json", "cursor_mcp.json"}


def example_env(**model: str) -> dict[str, str]:
    """The user's environment, with the chat model named here only (never a real one the developer has set)."""
    env = {name: value for name, value in os.environ.items() if name not in MODEL_VARIABLES}
    return env | model | {"PYTHONPATH": os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")])}


def run_example(name: str, cwd: Path, **model: str) -> str:
    done = subprocess.run(
        [sys.executable, str(EXAMPLES / name)], cwd=cwd, env=example_env(**model), capture_output=True, text=True,
        timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert list(cwd.iterdir()) == [], "an example cleans up after itself"
    return done.stdout


def test_every_example_is_tested_and_documented() -> None:
    tested = {"chat_loop.py", "facts_over_time.py", "postgres.py", *NEEDS_A_MODEL}
    assert {path.name for path in EXAMPLES.glob("*.py")} == tested
    assert {path.name for path in EXAMPLES.glob("*.json")} == HOST_CONFIGS
    readme = (ROOT / "README.md").read_text()
    assert all(f"python examples/{name}" in readme for name in tested)
    assert all(f"examples/{name}" in readme for name in HOST_CONFIGS)
    assert "pip install 'mnemonite[postgres]'" in readme


def test_chat_loop_recalls_earlier_turns_before_answering(tmp_path: Path) -> None:
    out = run_example("chat_loop.py", tmp_path)
    prompts = out.split("Relevant memories:")[1:]
    assert len(prompts) == 4
    assert "(nothing yet)" in prompts[0]
    assert "- My sister Ana is vegan and visits me next week." in prompts[2]
    assert "- I am training for the Porto half marathon in May." in prompts[3]
    assert out.rstrip().endswith("8 turns recorded")


def test_facts_over_time_replays_system_and_world_time(tmp_path: Path) -> None:
    out = run_example("facts_over_time.py", tmp_path)
    now, rest = out.split("now:\n")[1].split("as_of the checkpoint")
    believed, rest = rest.split("valid_at 2024-12-01")
    held, history = rest.split("history of where Sam lives:")
    assert "'I moved to Porto' → supersede" in out
    assert "supersede → user · lives_in · vila nova de gaia" in out
    assert "Vila Nova de Gaia" in now and "Lisbon" not in now and "Porto'" not in now
    assert "'I live in Lisbon'" in believed and "Gaia" not in believed
    assert "'I live in Lisbon'                       held 2024-01-10 → 2025-06-01" in held and "Gaia" not in held
    assert [line.split("'")[1] for line in history.strip().splitlines()] == [
        "I live in Lisbon",
        "I moved to Porto",
        "I live in Vila Nova de Gaia",
    ]


def test_postgres_example_starts_its_own_server_and_finds_what_it_stored(tmp_path: Path) -> None:
    out = run_example("postgres.py", tmp_path)
    assert "stored 3 episodes on PostgreSQL" in out
    assert "My favourite food is grilled sardines" in out
    assert out.rstrip().endswith("server stopped")


def test_an_example_that_needs_a_chat_model_says_which_and_stops(tmp_path: Path) -> None:
    pipes = {"stdout": subprocess.PIPE, "stderr": subprocess.PIPE, "text": True}
    started = {  # at once: each spends its time importing
        name: subprocess.Popen([sys.executable, str(EXAMPLES / name)], cwd=tmp_path, env=example_env(), **pipes)
        for name in NEEDS_A_MODEL
    }
    for name, process in started.items():
        out, err = process.communicate(timeout=300)
        assert process.returncode == 1 and out == ""
        assert err.count("\n") == 1 and err.startswith(f"set {NEEDS_A_MODEL[name]} ") and "to run this" in err


# The scripted model of the two tool loops: what it says and which tools it calls, given the user's message (or,
# after its calls, their results). The answer to the question is made of what fact_search returned, nothing else.
def decide(said: str | None, results: list[str]) -> tuple[str | None, list[tuple[str, dict[str, Any]]]]:
    if said is not None and "Porto" in said:
        return None, [("fact_remember", {"text": "I live in Porto"}), ("fact_remember", {"text": "I am vegan"})]
    if said is not None:
        return None, [("fact_search", {"query": "where does the user live and what do they eat", "k": 5})]
    found = [fact["text"] for result in results for fact in json.loads(result).get("facts", [])]
    return ("From memory: " + "; ".join(found) if found else "Noted."), []


def openai_reply(text: str | None, calls: list[tuple[str, dict[str, Any]]]) -> Answer:
    message: dict[str, Any] = {"role": "assistant", "content": text}
    if calls:
        message["tool_calls"] = [
            {"id": f"call_{i}", "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}
            for i, (name, arguments) in enumerate(calls)
        ]
    return Answer(raw=json.dumps({"choices": [{"index": 0, "message": message}]}))


def openai_model(body: dict[str, Any]) -> Answer:
    last = body["messages"][-1]
    said = last["content"] if last["role"] == "user" else None
    return openai_reply(*decide(said, [m["content"] for m in body["messages"] if m["role"] == "tool"]))


def anthropic_model(body: dict[str, Any]) -> Answer:
    last = body["messages"][-1]
    said = last["content"] if isinstance(last["content"], str) else None
    results = [] if said else [block["content"] for block in last["content"] if block["type"] == "tool_result"]
    text, calls = decide(said, results)
    content = [{"type": "text", "text": text}] if text else []
    content += [{"type": "tool_use", "id": f"toolu_{i}", "name": name, "input": arguments}
                for i, (name, arguments) in enumerate(calls)]  # fmt: skip
    reply = {"id": "msg_1", "type": "message", "role": "assistant", "model": body["model"], "content": content,
             "stop_reason": "tool_use" if calls else "end_turn"}  # fmt: skip
    return Answer(raw=json.dumps(reply))


def assert_stored_then_searched(out: str, script: Script, first_of_second: list[dict[str, Any]]) -> None:
    """The first conversation stored two facts through the tools; the second, which began with nothing but the
    question (``first_of_second``), answered from what fact_search found."""
    assert '[fact_remember {"text": "I live in Porto"} -> ok]' in out and "[fact_search {" in out
    answer = next(line for line in out.splitlines() if line.startswith("Assistant: From memory:"))
    assert "I live in Porto" in answer and "I am vegan" in answer
    assert set(out.split("What memory holds now:\n")[1].splitlines()) == {"- I live in Porto", "- I am vegan"}
    assert len(script.requests) == 4
    assert [m["content"] for m in first_of_second if m["role"] == "user"] == [
        "Where do I live now, and what could I cook tonight?"
    ]


def test_openai_tool_loop_stores_and_reads_memory_through_the_tools(tmp_path: Path) -> None:
    with llm_server(openai_model) as (base, script):
        out = run_example("openai_tool_loop.py", tmp_path, OPENAI_BASE_URL=base, OPENAI_API_KEY="sk-test")
    assert_stored_then_searched(out, script, script.requests[2]["messages"])
    assert len(script.requests[2]["messages"]) == 2  # the system prompt and the question
    assert set(script.paths) == {"/v1/chat/completions"}
    assert {headers["authorization"] for headers in script.headers} == {"Bearer sk-test"}
    assert all(len(body["tools"]) == 9 and body["model"] == "gpt-4o-mini" for body in script.requests)


def test_anthropic_tool_loop_stores_and_reads_memory_through_the_tools(tmp_path: Path) -> None:
    with llm_server(anthropic_model) as (base, script):
        out = run_example(
            "anthropic_tool_loop.py", tmp_path, ANTHROPIC_BASE_URL=base.removesuffix("/v1"), ANTHROPIC_API_KEY="k"
        )
    assert_stored_then_searched(out, script, script.requests[2]["messages"])
    assert len(script.requests[2]["messages"]) == 1
    answered = script.requests[1]["messages"][-1]["content"]  # the tool_result blocks, one per tool_use
    assert [block["tool_use_id"] for block in answered] == ["toolu_0", "toolu_1"]
    assert set(script.paths) == {"/v1/messages"}
    assert {(h["x-api-key"], h["anthropic-version"]) for h in script.headers} == {("k", "2023-06-01")}
    assert all(len(body["tools"]) == 9 and "input_schema" in body["tools"][0] for body in script.requests)


# The scripted model of the LangGraph agent: it keeps what it is told with `remember`, and answers a question with
# what the graph recalled from the store into its system prompt.
def langgraph_model(body: dict[str, Any]) -> Answer:
    last = body["messages"][-1]
    if last["role"] == "tool":
        return openai_reply("Noted.", [])
    if "Porto" in last["content"]:
        return openai_reply(None, [("remember", {"key": "city", "text": "Lives in Porto"}),
                                   ("remember", {"key": "diet", "text": "Is vegan"})])  # fmt: skip
    if "Lisbon" in last["content"]:
        return openai_reply(None, [("remember", {"key": "city", "text": "Lives in Lisbon"})])
    known = body["messages"][0]["content"].split("know about the user:\n")[1]
    return openai_reply("From memory: " + known.replace("\n", " "), [])


def test_langgraph_agent_recalls_from_the_store_and_a_key_put_again_replaces(tmp_path: Path) -> None:
    with llm_server(langgraph_model) as (base, script):
        out = run_example("langgraph_agent.py", tmp_path, OPENAI_BASE_URL=base, OPENAI_API_KEY="sk-test")
    systems = [body["messages"][0]["content"] for body in script.requests]
    assert "- nothing yet" in systems[0]
    assert "Lives in Porto" in systems[2] and "Is vegan" in systems[2]  # recalled in the second conversation
    answer = next(line for line in out.splitlines() if line.startswith("Assistant: From memory:"))
    assert "Lives in Lisbon" in answer and "Is vegan" in answer and "Porto" not in answer
    assert out.rstrip().endswith("What the store holds now:\n- city: Lives in Lisbon\n- diet: Is vegan")
    assert len(script.requests) == 5 and all(body["tools"][0]["function"]["name"] == "remember"
                                             for body in script.requests)  # fmt: skip


@pytest.mark.parametrize("name", sorted(HOST_CONFIGS))
async def test_an_mcp_host_config_launches_the_server_it_names(name: str, tmp_path: Path) -> None:
    config = json.loads((EXAMPLES / name).read_text())
    [server] = config["mcpServers"].values()
    assert server["command"] == "mnemonite" and server["args"][:1] == ["mcp"]
    assert server["args"][server["args"].index("--agent") + 1] == "assistant"  # not left to the default
    assert (await remember_and_search(with_database(server, tmp_path / "m.db")))[0] == "I live in Porto"
    assert (tmp_path / "m.db").is_file()  # the memory it was given, not one of its own
