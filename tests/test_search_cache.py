"""The search engine's per-user caches are bounded by bytes, not by a count of users."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from conftest import ep
from mnemonite import Memory, MemoryConfig, Scope
from mnemonite.search.cache import ByteBoundedCache


async def test_many_users_searched_in_turn_are_not_read_again(tmp_path: Path) -> None:
    config = MemoryConfig(url=f"sqlite:///{tmp_path / 'm.db'}", embedder="none")
    async with await Memory.open(config=config) as mem:
        users = [f"user{i}" for i in range(40)]  # 80 (tier, user) entries: far more than any slot count
        for user in users:
            await mem.episodic.put(ep(f"{user}-e", f"{user} likes green tea"), user=user, session="s", agent="a")
        reads: list[str] = []
        texts = mem._store.texts

        async def counted(kind: str, user: str, after: int, upto: int) -> list[tuple[int, str]]:
            reads.append(user)
            return await texts(kind, user, after, upto)  # type: ignore[arg-type]

        mem._store.texts = counted  # type: ignore[method-assign]
        for user in users:
            assert (await mem.search(Scope(user=user), "green tea", k=1))[0].record.id == f"{user}-e"
        assert sorted(reads) == sorted(users)  # one read per user with texts; the empty fact tier reads nothing
        reads.clear()
        for user in users:
            await mem.search(Scope(user=user), "tea", k=1)
        assert reads == []
        await mem.episodic.put(ep("late", "user3 also likes coffee"), user="user3", session="s", agent="a")
        assert (await mem.search(Scope(user="user3"), "coffee", k=1))[0].record.id == "late"
        assert reads == ["user3"]  # extended with the new row only


async def test_a_tiny_budget_evicts_others_but_keeps_the_user_searched(tmp_path: Path) -> None:
    config = MemoryConfig(url=f"sqlite:///{tmp_path / 'm.db'}", embedder="none", search_cache_bytes=1)
    async with await Memory.open(config=config) as mem:
        for user in ("ann", "bob"):
            await mem.episodic.put(ep(f"{user}-e", f"{user} plays chess"), user=user, session="s", agent="a")
        assert (await mem.search(Scope(user="ann"), "chess", k=1))[0].record.id == "ann-e"
        assert (await mem.search(Scope(user="bob"), "chess", k=1))[0].record.id == "bob-e"
        assert ("episode", "bob") in mem._engine._users and ("episode", "ann") not in mem._engine._users


@given(
    budget=st.integers(0, 500),
    steps=st.lists(st.tuples(st.sampled_from("abcdefgh"), st.integers(0, 200)), min_size=1, max_size=40),
)
def test_the_cache_stays_within_budget_and_evicts_least_recent_first(
    budget: int, steps: Sequence[tuple[str, int]]
) -> None:
    sizes: dict[str, int] = {}
    cache: ByteBoundedCache[str, str] = ByteBoundedCache(budget, lambda key: sizes[key])
    order: list[str] = []
    for key, size in steps:
        sizes[key] = size
        cache.get(key, lambda key=key: key)  # type: ignore[misc]
        order = [k for k in order if k != key] + [key]
        cache.settle([key])
        kept = [k for k in order if k in cache]
        assert key in cache
        assert cache.nbytes == sum(sizes[k] for k in kept)
        assert cache.nbytes <= budget or kept == [key]
        evicted = [k for k in order if k not in cache]
        if evicted:  # whatever went out was used before whatever stayed
            assert max(order.index(k) for k in evicted) < min(order.index(k) for k in kept)
        order = kept
