"""The agent tiers, the tools, the consolidator, the concept graph and the lifecycle, fuzzed with hypothesis on
both backends: only `MnemoniteError`s come out of a method, a tool call always answers (never raises, never an
``internal_error``), and a refused call leaves the database content as it was (a tool call: all but its audit row).

The catalogues are `bench/reliability_tiers.py`'s. ``MNEMONITE_FUZZ_EXAMPLES`` sets the examples per call
(default 3 here: the fast profile of ``make test``).
"""

from __future__ import annotations

import asyncio
import math
import os
import sys
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mnemonite import InvalidInputError, Memory, MemoryConfig, MemoryScopeError, Message, Scope
from mnemonite.tools import TOOLS

sys.path.insert(0, str(Path(__file__).parents[2] / "bench"))
from reliability_inputs import probe
from reliability_tiers import CALLS, GOOD, SS, US, seed, tool_probe

sys.path.insert(0, str(Path(__file__).parent))
from test_input_fuzz import KINDS, TEXT, WRONG, seeded

EXAMPLES = int(os.environ.get("MNEMONITE_FUZZ_EXAMPLES", "3"))
SETTINGS = settings(max_examples=EXAMPLES, deadline=None, database=None, derandomize=True,
                    suppress_health_check=list(HealthCheck))  # fmt: skip

# What a model may send as a tool argument: JSON of every shape, wrong types, huge, NUL, unicode.
JSON_VALUE = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), TEXT),
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=5), inner, max_size=3)),
    max_leaves=6,
)
ARGUMENT_NAMES = st.sampled_from(sorted({*GOOD, "user", "agent_id", "Session", "extra", "", "\ud800", "\x00"}))


@st.composite
def tool_calls(draw: st.DrawFn) -> tuple[Any, Any]:
    """A tool's name (rarely a wrong one) and arguments: its good ones, some dropped, some odd, some extra."""
    name = draw(st.one_of(st.sampled_from(list(TOOLS)), st.sampled_from(list(TOOLS)), TEXT, WRONG))
    fields = list(TOOLS[name].input.model_fields) if isinstance(name, str) and name in TOOLS else list(GOOD)
    arguments = {key: GOOD[key] for key in fields if draw(st.booleans()) or draw(st.booleans())}
    for key in draw(st.lists(st.sampled_from(fields), max_size=2)):
        arguments[key] = draw(st.one_of(JSON_VALUE, WRONG))
    for key in draw(st.lists(ARGUMENT_NAMES, max_size=1)):
        arguments[key] = draw(JSON_VALUE)
    return name, draw(st.one_of(st.just(arguments), st.just(arguments), st.just(None), WRONG))


@pytest.fixture
def fuzz_memory(memory_url: str) -> Iterator[tuple[asyncio.AbstractEventLoop, Memory, str]]:
    yield from seeded(memory_url, seed)


def _fuzz(kind: str, check: Any) -> None:
    @SETTINGS
    @given(value=KINDS[kind])
    def one(value: Any) -> None:
        check(value)

    one()


def test_every_tier_method_refuses_odd_input_with_a_typed_error_and_changes_nothing(fuzz_memory: Any) -> None:
    loop, mem, url = fuzz_memory
    problems: list[str] = []

    def record(name: str, call: Any, value: Any) -> None:
        problem = loop.run_until_complete(probe(mem, url, call, value))
        if problem is not None:
            problems.append(f"{name}({value!r:.60}): {problem[:300]}")

    for name, (kind, call) in CALLS.items():
        _fuzz(kind, lambda value, name=name, call=call: record(name, call, value))
    assert problems == [], "\n".join(problems)


def test_every_tool_answers_what_a_model_sends_and_a_refusal_changes_no_data(fuzz_memory: Any) -> None:
    loop, mem, url = fuzz_memory
    problems: list[str] = []

    @settings(SETTINGS, max_examples=EXAMPLES * 15)
    @given(call=tool_calls())
    def one(call: tuple[Any, Any]) -> None:
        problem = loop.run_until_complete(tool_probe(mem, url, *call))
        if problem is not None:
            problems.append(f"{call!r:.120}: {problem[:300]}")

    one()
    assert problems == [], "\n".join(problems)


# -- what the fuzzing found, pinned ------------------------------------------------------------


@pytest.mark.parametrize(
    "arguments",
    [{"label": "persona", "text": "a\ud800b"}, {"label": "persona", "text": "a\x00b"},
     {"label": "persona", "text": "x", "\udcff": 1}, {"label": "persona", "text": 2**64},
     {"label": "persona", "text": 10**5000}, {"label": ["\ud800"], "text": "x"}],
)  # fmt: skip
def test_a_tool_call_with_unstorable_arguments_is_audited_and_the_next_calls_too(
    fuzz_memory: Any, arguments: dict[str, Any]
) -> None:
    """Such a call once made every later audit write fail: its row stayed queued and was retried forever."""
    loop, mem, _ = fuzz_memory
    tools = mem.tools.for_scope(SS)

    async def run() -> list[Any]:
        refused = await tools.call("block_append", arguments)
        assert refused.error is not None and refused.error.code == "invalid_arguments"
        assert (await tools.call("block_append", {"label": "persona", "text": "later"})).ok
        await mem.tools.flush()
        return await mem.tools.calls(US, limit=2)

    later, odd = loop.run_until_complete(run())
    assert (later.outcome, odd.outcome, odd.error_code) == ("ok", "error", "invalid_arguments")


def test_a_tool_name_no_database_can_hold_is_audited_escaped(fuzz_memory: Any) -> None:
    loop, mem, _ = fuzz_memory
    result = loop.run_until_complete(mem.tools.for_scope(SS).call("fact\x00search\ud800", {"query": "tea"}))
    assert result.error is not None and result.error.code == "unknown_tool"
    [audited] = loop.run_until_complete(mem.tools.calls(US, limit=1))
    assert audited.tool == "fact\\x00search\\ud800"


@pytest.mark.parametrize(
    ("call", "error"),
    [
        (lambda m: m.working.read(US, "\ud800"), "label=.* lone surrogate"),
        (lambda m: m.working.append(US, "persona", "x", separator="\udfff"), "separator="),
        (lambda m: m.session.list(SS, limit=2**63), "limit=.* does not fit in 64 bits"),
        (lambda m: m.session.flush_important(SS, min_importance=None), "min_importance=None must be a number"),
        (lambda m: m.session.push_many(SS, 7), "messages=7 must be a list"),
        (lambda m: m.procedural.define(US, "p", None), "steps=None must be a list"),
        (lambda m: m.procedural.remove(US, 2**63), "name=.* must be a string"),
        (lambda m: m.procedural.activate(US, "deploy", min_similarity=math.nan), "not a finite number"),
        (lambda m: m.shared.attach(US, "team", fact_id=2**63), "fact_id=.* must be a string"),
        (lambda m: m.consolidator.run("light", max_jobs={"a": 1}), "max_jobs=.* must be an integer"),
        (lambda m: m.concepts.query(US, "tea", 1.5), "top_k=1.5 must be an integer"),
        (lambda m: m.concepts.query(US, "\ud800"), "question=.* lone surrogate"),
        (lambda m: m.concepts.consolidate(US, "tea"), "events=.* must be a list"),
        (lambda m: m.concepts.versions(US, limit=2**64), "does not fit in 64 bits"),
        (lambda m: m.lifecycle.sweep("u", now="today"), "now=.* must be a datetime"),
        (lambda m: m.lifecycle.sweep("u", now=datetime(2025, 1, 1)), "timezone-aware"),
        (lambda m: m.lifecycle.access(3), "records=3 must be a list"),
        (lambda m: m.lifecycle.tiers("node", ["e1"]), "kind='node' must be one of"),
        (lambda m: m.lifecycle.search("u", "tea", None), "k=None must be an integer"),
        (lambda m: m.tools.calls(US, limit="10"), "limit='10' must be an integer"),
        (lambda m: m.session.replay(True), "path must be a file path .* got True"),
        (lambda m: m.session.replay("x" * 5000), "cannot read a session export"),
        (lambda m: m.session.replay("a\x00b"), "must be a file path"),
    ],
)
def test_the_tiers_refuse_odd_input_naming_the_argument(tmp_path: Path, call: Any, error: str) -> None:
    async def run() -> None:
        async with await Memory.open(f"sqlite:///{tmp_path / 'm.db'}", config=MemoryConfig(embedder="none")) as mem:
            with pytest.raises(InvalidInputError, match=error):
                await call(mem)

    asyncio.run(run())


def test_a_scope_argument_of_the_tiers_is_a_scope_error(tmp_path: Path) -> None:
    async def run() -> None:
        async with await Memory.open(f"sqlite:///{tmp_path / 'm.db'}", config=MemoryConfig(embedder="none")) as mem:
            with pytest.raises(MemoryScopeError, match="user="):
                await mem.consolidator.run("light", user="a\udfffb")
            with pytest.raises(MemoryScopeError, match="agent="):
                await mem.working.attach(US, "persona", "\ud800")
            with pytest.raises(MemoryScopeError):
                await mem.session.push(Scope(user="u", agent="a"), Message("user", "no session"))

    asyncio.run(run())


def test_an_export_that_cannot_be_written_is_refused_and_leaves_no_file(tmp_path: Path) -> None:
    async def run() -> None:
        async with await Memory.open(f"sqlite:///{tmp_path / 'm.db'}", config=MemoryConfig(embedder="none")) as mem:
            await mem.session.push(SS, Message("user", "hello"))
            with pytest.raises(InvalidInputError, match="cannot write the session export"):
                await mem.session.export(SS, tmp_path / "missing" / "out.jsonl")
            with pytest.raises(InvalidInputError, match="must be a file path"):
                await mem.session.export(SS, "a\x00b")
            assert await mem.session.export(SS, tmp_path / "out.jsonl") == 1

    asyncio.run(run())
    assert sorted(p.name for p in tmp_path.iterdir() if "jsonl" in p.name) == ["out.jsonl"]
