"""Every public input, fuzzed with hypothesis on both backends: only `MnemoniteError`s come out, and a
refused call leaves the database content exactly as it was (a hash of every row of every table).

The catalogue of calls is `bench/reliability_inputs.py`'s (the same calls the benchmark counts).
``MNEMONITE_FUZZ_EXAMPLES`` sets the examples per call (default 6: the fast profile of ``make test``;
the long profile is e.g. ``MNEMONITE_FUZZ_EXAMPLES=500``).
"""

from __future__ import annotations

import asyncio
import math
import os
import sys
from collections.abc import Awaitable, Callable, Iterator
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mnemonite import (
    Episode,
    InvalidInputError,
    Memory,
    MemoryConfig,
    MemoryScopeError,
    MnemoniteError,
    Scope,
    SyncMemory,
)

sys.path.insert(0, str(Path(__file__).parents[2] / "bench"))
from reliability_inputs import CALLS, ODD, close_connections, content_hash, probe, seed

EXAMPLES = int(os.environ.get("MNEMONITE_FUZZ_EXAMPLES", "6"))
SURROGATES = st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF)
TEXT = st.one_of(
    st.sampled_from(ODD["text"]),
    st.text(max_size=40),
    st.text(st.one_of(SURROGATES, st.characters(), st.sampled_from("\x00'\"%_\\*:()^-")), max_size=20),
    st.builds(lambda n: "y" * n, st.integers(10_000, 300_000)),
)
INT = st.one_of(st.sampled_from(ODD["int"]), st.integers(), st.integers(-(2**70), 2**70))
FLOAT = st.one_of(st.sampled_from(ODD["float"]), st.floats())
WRONG = st.one_of(
    st.sampled_from(ODD["wrong"]),
    st.none(),
    st.binary(max_size=4),
    st.lists(st.integers(), max_size=2),
    st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
    st.datetimes(),  # naive
    INT,
    FLOAT,
    TEXT,
)
KINDS = {"text": st.one_of(TEXT, WRONG), "int": st.one_of(INT, WRONG), "float": st.one_of(FLOAT, WRONG),
         "wrong": WRONG}  # fmt: skip


def _nested(depth: int) -> Any:
    value: Any = 1
    for _ in range(depth):
        value = {"k": value}
    return value


def seeded(memory_url: str, seed_with: Callable[[Memory], Awaitable[Any]]) -> Iterator[Any]:
    """A memory seeded by ``seed_with``, with the real model, indexing inline (a background write would
    move the hash): (loop, memory, url)."""
    loop = asyncio.new_event_loop()
    mem = loop.run_until_complete(Memory.open(memory_url, config=MemoryConfig(index_in_background=False)))
    loop.run_until_complete(seed_with(mem))
    yield loop, mem, memory_url
    loop.run_until_complete(mem.close(finish_indexing=False))
    loop.close()
    close_connections()


@pytest.fixture
def fuzz_memory(memory_url: str) -> Iterator[Any]:
    yield from seeded(memory_url, seed)


def _fuzz(name: str, kind: str, call: Any, check: Any) -> None:
    @settings(max_examples=EXAMPLES, deadline=None, database=None, derandomize=True,
              suppress_health_check=list(HealthCheck))  # fmt: skip
    @given(value=KINDS[kind])
    def one(value: Any) -> None:
        check(value)

    one()


def _record(problems: list[str], loop: Any, mem: Memory, url: str, name: str, call: Any, value: Any) -> None:
    problem = loop.run_until_complete(probe(mem, url, call, value))
    if problem is not None:
        problems.append(f"{name}({value!r:.60}): {problem[:300]}")


def test_every_public_method_refuses_odd_input_with_a_typed_error_and_changes_nothing(fuzz_memory: Any) -> None:
    loop, mem, url = fuzz_memory
    problems: list[str] = []
    for name, (kind, call) in CALLS.items():
        _fuzz(
            name, kind, call, lambda value, name=name, call=call: _record(problems, loop, mem, url, name, call, value)
        )
    assert problems == [], "\n".join(problems)


@pytest.mark.parametrize(
    ("call", "error"),
    [
        (lambda m: m.episodic.recent("u", limit=2**63), "limit=.* does not fit in 64 bits"),
        (lambda m: m.search("u", "\ud800"), "query=.* lone surrogate U\\+D800"),
        (lambda m: m.episodic.get("a\x00b"), "NUL"),
        (lambda m: m.search("u", "x", k=1.5), "k=1.5 must be an integer"),
        (lambda m: m.graph.decay_all(Scope(user="u", agent="a"), math.nan), "factor=nan is not a finite number"),
        (lambda m: m.search("u", "x", since=datetime(2025, 1, 1)), "timezone-aware"),
        (lambda m: m.search("u", "x", tiers="episodic"), "must be a list"),
        (lambda m: m.episodic.put_many(["text"], user="u", session="s", agent="a"), r"\[0\] must be a Episode"),
    ],
)
def test_the_refusals_name_the_argument_and_the_problem(tmp_path: Path, call: Any, error: str) -> None:
    with SyncMemory.open(str(tmp_path / "m.db"), config=MemoryConfig(embedder="none")) as mem:
        loop = mem._loop  # the facade's own loop runs the async call as its methods do
        with pytest.raises(InvalidInputError, match=error):
            loop.run(call(mem._memory))


@pytest.mark.parametrize("user", ["\ud800", "a\x00b", 7, None, ["u"]])
def test_a_bad_scope_is_a_scope_error_from_every_door(user: Any) -> None:
    with pytest.raises(MemoryScopeError):
        Scope(user=user)
    with pytest.raises(MemoryScopeError):
        Episode(content="c").in_scope(user, "s", "a")


@pytest.mark.parametrize(
    "fields",
    [{"content": "\udc80"}, {"content": "a\x00"}, {"content": "c", "metadata": {"k": ["\ud83d"]}},
     {"content": "c", "metadata": {"\ud83d": 1}}, {"content": "c", "metadata": {"k": 2**64}},
     {"content": "c", "metadata": {"k": math.inf}}, {"content": "c", "metadata": {"k": _nested(100)}}],
)  # fmt: skip
def test_models_refuse_unstorable_values(fields: dict[str, Any]) -> None:
    with pytest.raises(InvalidInputError):
        Episode(**fields)


def test_timestamps_from_the_year_one_to_the_year_9999_are_kept(tmp_path: Path) -> None:
    """The edges of `datetime` are input too: stored and read back as they were."""
    with SyncMemory.open(str(tmp_path / "m.db"), config=MemoryConfig(embedder="none")) as mem:
        for when in (datetime(1, 1, 1, tzinfo=UTC), datetime(9999, 12, 31, 23, 59, 59, 999999, tzinfo=UTC)):
            stored = mem.episodic.put(Episode(content="edge", timestamp=when), user="u", session="s", agent="a")
            assert mem.episodic.get(stored.id).timestamp == when


def test_a_failed_call_is_caught_by_the_catalogue(fuzz_memory: Any) -> None:
    """The probe itself: an untyped error and a refused call that wrote are both reported."""
    loop, mem, url = fuzz_memory

    async def untyped(m: Memory, value: Any) -> object:
        raise TypeError(value)

    async def wrote_then_refused(m: Memory, value: Any) -> object:
        await m.episodic.put(Episode(content=value), user="u", session="s", agent="a")
        raise MnemoniteError("refused")

    assert "TypeError" in str(loop.run_until_complete(probe(mem, url, untyped, "x")))
    assert "changed the database" in str(loop.run_until_complete(probe(mem, url, wrote_then_refused, "new")))
    assert isinstance(content_hash(url), str)


def test_a_time_outside_the_years_1_to_9999_in_utc_is_refused() -> None:
    east = timezone(timedelta(hours=5))
    with pytest.raises(InvalidInputError, match="outside the years 1-9999"):
        Episode(content="c", timestamp=datetime(1, 1, 1, tzinfo=east))
