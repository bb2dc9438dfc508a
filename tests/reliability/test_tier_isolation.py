"""Security of the agent tiers on both backends: adversarial scope ids over the read surfaces of blocks,
sessions, procedures, groups, tools, concepts, the consolidator and the lifecycle, and by-id calls with
another user's ids: 0 leaks, and nothing of the victim changed.

The surfaces and the ids are `bench/reliability_tiers.py`'s (the benchmark counts the same).
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mnemonite import Memory, MemoryConfig, Message, Scope

sys.path.insert(0, str(Path(__file__).parents[2] / "bench"))
import reliability_tiers
from reliability_inputs import close_connections
from reliability_tiers import _reads, leaks_for, marker, stolen, write_everyone

IDS = st.text(st.one_of(st.sampled_from("%_\\/*'\"aA1 -:."), st.characters(exclude_categories=["Cs", "Cc"])),
              min_size=1, max_size=12).filter(str.strip)  # fmt: skip
# The surfaces that list a user's own records: each must show the user's marker (the leak check is not vacuous).
OWN = ("working.list", "working.compile", "session.list", "session.search", "session.events", "procedural.list",
       "procedural.activate", "shared.groups", "shared.list_for", "tools.calls", "tool fact_search",
       "tool recall_episodes", "tool conversation_search", "concepts.load_graph", "concepts.query",
       "lifecycle.search")  # fmt: skip


@pytest.fixture
def loop_memory(memory_url: str) -> Iterator[tuple[asyncio.AbstractEventLoop, Memory]]:
    loop = asyncio.new_event_loop()
    mem = loop.run_until_complete(Memory.open(memory_url, config=MemoryConfig(index_in_background=False)))
    yield loop, mem
    loop.run_until_complete(mem.close(finish_indexing=False))
    loop.close()
    close_connections()


def test_no_tier_read_surface_shows_one_user_another_users_rows(loop_memory: Any) -> None:
    loop, mem = loop_memory
    users = ["alice", "alice2", "a%", "a_b", "x/y", "alice\\"]  # the benchmark tries all of USERS
    ids = loop.run_until_complete(write_everyone(mem, users))
    leaks = [leak for user in users for leak in loop.run_until_complete(leaks_for(mem, users, ids, user))]
    assert leaks == []
    assert loop.run_until_complete(stolen(mem, users, ids)) == []
    for i, user in enumerate(users):  # and each user sees their own rows on every listing surface
        reads = _reads(mem, user, ids[users[(i + 1) % len(users)]])
        blind = [name for name in OWN if marker(i) not in repr(loop.run_until_complete(reads[name]()))]
        assert blind == [], user


def test_the_leak_check_sees_a_leak() -> None:
    """The check itself: another user's marker or id in an answer is counted."""

    class Leaky:
        def __getattr__(self, name: str) -> Any:
            raise AttributeError(name)

    ids = {"alice": {"fact": "f-a", "item": "i-a", "episode": "e-a", "group name": "ga"},
           "bob": {"fact": "f-b", "item": "i-b", "episode": "e-b", "group name": "gb"}}  # fmt: skip

    async def answer() -> object:
        return f"{marker(1)} f-b"

    original = reliability_tiers._reads
    reliability_tiers._reads = lambda mem, user, foreign: {"a read": answer}  # type: ignore[assignment]
    try:
        found = asyncio.run(leaks_for(Leaky(), ["alice", "bob"], ids, "alice"))  # type: ignore[arg-type]
    finally:
        reliability_tiers._reads = original
    assert found == [f"a read: {marker(1)}", "a read: bob's fact"]


def test_hypothesis_ids_read_only_their_own_blocks_messages_and_procedures(loop_memory: Any) -> None:
    loop, mem = loop_memory

    @settings(max_examples=6, deadline=None, database=None, derandomize=True, suppress_health_check=list(HealthCheck))
    @given(users=st.lists(IDS, min_size=2, max_size=3, unique=True))
    def check(users: list[str]) -> None:
        async def run() -> None:
            for user in users:
                scope = Scope(user=user, session=user, agent=user)
                await mem.working.define(scope, "notes", f"by {user}", replace=True)
                await mem.session.push(scope, Message("user", f"by {user}"))
                await mem.procedural.define(scope, "p", [f"by {user}"])
            for user in users:
                assert {b.value for b in await mem.working.list(user)} == {f"by {user}"}
                assert {m.content for m in await mem.session.list(user, limit=1000)} == {f"by {user}"}
                # a procedure's steps are stored stripped ("by x " is "by x"), so an id ending in a space shows so
                assert {p.steps[0] for p in await mem.procedural.list(user)} == {f"by {user}".strip()}
                hits = await mem.session.search(user, "by", 1000)
                assert {h.message.content for h in hits} <= {f"by {user}"}

        loop.run_until_complete(run())

    check()
