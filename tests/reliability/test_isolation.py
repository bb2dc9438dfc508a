"""Security on both backends: adversarial scope ids over every read surface (0 leaks), and text that
looks like SQL, full-text syntax or a JSON path is only ever data (0 executed).

The read surfaces and the adversarial ids are `bench/reliability_inputs.py`'s (the benchmark counts
the same); hypothesis adds ids of its own.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mnemonite import ConsolidationRule, ConsolidationRuleError, Episode, Memory, MemoryConfig, Scope

sys.path.insert(0, str(Path(__file__).parents[2] / "bench"))
from reliability_inputs import (
    INJECTIONS,
    USERS,
    _table_rows,
    close_connections,
    injection_problems,
    leaks_for,
    write_everyone,
)

T0 = datetime(2025, 1, 1, tzinfo=UTC)
SETTINGS = settings(max_examples=15, deadline=None, database=None, derandomize=True,
                    suppress_health_check=list(HealthCheck))  # fmt: skip
IDS = st.text(st.one_of(st.sampled_from("%_\\/*'\"aA1 -:."), st.characters(exclude_categories=["Cs", "Cc"])),
              min_size=1, max_size=12).filter(str.strip)  # fmt: skip


@pytest.fixture
def loop_memory(memory_url: str) -> Iterator[tuple[asyncio.AbstractEventLoop, Memory, str]]:
    loop = asyncio.new_event_loop()
    mem = loop.run_until_complete(Memory.open(memory_url, config=MemoryConfig(index_in_background=False)))
    yield loop, mem, memory_url
    loop.run_until_complete(mem.close(finish_indexing=False))
    loop.close()
    close_connections()


def test_no_read_surface_shows_one_user_another_users_rows(loop_memory: Any) -> None:
    loop, mem, _ = loop_memory
    ids = loop.run_until_complete(write_everyone(mem, USERS))
    leaks = [leak for user in USERS for leak in loop.run_until_complete(leaks_for(mem, USERS, ids, user))]
    assert leaks == []
    for user in USERS:  # and each user sees their own rows: the check above is not vacuous
        assert len(loop.run_until_complete(mem.episodic.recent(user))) == 1
        assert len(loop.run_until_complete(mem.semantic.facts(Scope(user=user, agent="a")))) == 1


def test_hypothesis_ids_read_only_their_own_rows(loop_memory: Any) -> None:
    loop, mem, _ = loop_memory

    @SETTINGS
    @given(users=st.lists(IDS, min_size=2, max_size=4, unique=True))
    def check(users: list[str]) -> None:
        async def run() -> None:
            for user in users:
                await mem.episodic.put(Episode(content=f"by {user}", timestamp=T0), user=user, session=user, agent=user)
            for user in users:
                mine = {e.content for e in await mem.episodic.recent(user, limit=10_000)}
                assert mine == {f"by {user}"}
                narrowed = await mem.episodic.recent(user, user, user, limit=10_000)
                assert {e.content for e in narrowed} == {f"by {user}"}
                hits = await mem.episodic.search(Scope(user=user), "by", k=10_000)
                assert {h.text for h in hits} <= {f"by {user}"}
            await mem.episodic.purge_scope(users[0], reason="test")  # the next example starts clean
            for user in users[1:]:
                await mem.episodic.purge_scope(user, reason="test")

        loop.run_until_complete(run())

    check()


def test_injection_through_filters_entity_names_and_search_is_data(loop_memory: Any) -> None:
    loop, mem, url = loop_memory
    assert loop.run_until_complete(injection_problems(mem, url)) == []
    assert {"episodes", "facts", "entities"} <= set(_table_rows(url))


@pytest.mark.parametrize("text", INJECTIONS)
def test_every_injected_filter_is_refused(loop_memory: Any, text: str) -> None:
    loop, mem, _ = loop_memory
    with pytest.raises(ConsolidationRuleError):
        loop.run_until_complete(mem.add_rule(ConsolidationRule(id="inject", when_filter=text)))


def test_a_filter_literal_matches_exactly_the_episodes_with_that_text(loop_memory: Any) -> None:
    """Quotes, wildcards and backslashes inside a literal are characters, never syntax."""
    loop, mem, _ = loop_memory
    texts = ["plain", "it's", "50% off", "a_b", "back\\slash", "' OR 1=1 --", '"quoted"', "%", "_"]

    async def seed() -> None:
        await mem.episodic.put_many([Episode(content=t, timestamp=T0) for t in texts], user="u", session="s", agent="a")

    loop.run_until_complete(seed())
    for target in texts:
        rule = ConsolidationRule(
            id=f"r{texts.index(target)}", when_filter=f"content = '{target.replace(chr(39), chr(39) * 2)}'"
        )
        deltas = loop.run_until_complete(mem.episodic.consolidate(rule))
        assert [d.source_episode_ids for d in deltas] == [[_id(loop, mem, target)]], target


DATA = st.text(st.characters(exclude_categories=["Cs"], exclude_characters="\x00"), max_size=20)


@given(key=DATA.filter(bool), value=DATA)
@SETTINGS
def test_metadata_keys_and_values_are_data(tmp_path_factory: pytest.TempPathFactory, key: str, value: str) -> None:
    """Odd metadata keys (quotes, dots, $, brackets) are stored as given; a filter path is refused or exact."""
    path = tmp_path_factory.mktemp("meta") / "m.db"

    async def run() -> None:
        async with await Memory.open(str(path), config=MemoryConfig(embedder="none")) as mem:
            episode = await mem.episodic.put(Episode(content="c", metadata={key: value}), user="u", session="s",
                                             agent="a")  # fmt: skip
            assert (await mem.episodic.get(episode.id)).metadata == {key: value}
            try:
                rule = ConsolidationRule(id="m", when_filter=f"metadata.{key} = 'x'")
            except ConsolidationRuleError:
                return
            deltas = await mem.episodic.consolidate(rule)
            assert len(deltas) == (1 if value == "x" else 0)

    asyncio.run(run())


def _id(loop: asyncio.AbstractEventLoop, mem: Memory, content: str) -> str:
    episodes = loop.run_until_complete(mem.episodic.recent("u", limit=1000))
    return next(e.id for e in episodes if e.content == content)
