"""The search engine's per-user caches are bounded by bytes, not by a count of users."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest
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


async def test_a_users_first_read_walks_its_scope_not_every_users_rows(tmp_path: Path) -> None:
    """SQLite plans without statistics: the read of one user's texts and vectors must be driven by the
    scope index, else each user's first search reads the whole table (slow with many users)."""
    from mnemonite.store.sql_search import SEQ_WALK, by_user, user_where

    config = MemoryConfig(url=f"sqlite:///{tmp_path / 'm.db'}", embedder="none")
    async with await Memory.open(config=config) as mem:
        await mem.episodic.put(ep("e1", "ann plays chess"), user="ann", session="s", agent="a")
        db = mem._store._db
        clause, params = user_where("episode", "ann")
        assert by_user(db, 0, SEQ_WALK + 1) and not by_user(db, 10, 10 + SEQ_WALK)
        texts = f"SELECT r.seq FROM episodes r WHERE +r.seq > ? AND +r.seq <= ? AND {clause}"
        vectors = (
            f"SELECT v.seq FROM episodes r CROSS JOIN vectors v WHERE {clause} AND r.seq > ? AND r.seq <= ?"
            " AND v.kind = 'episode' AND v.model = 'm' AND v.seq = r.seq"
        )
        for sql, args in ((texts, (0, 10**9, *params)), (vectors, (*params, 0, 10**9))):
            plan = " ".join(str(row[3]) for row in await db.execute_fetchall("EXPLAIN QUERY PLAN " + sql, args))
            assert "idx_episodes_scope_ts" in plan, plan


async def test_both_read_paths_return_the_same_rows(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Whichever way a read is driven (seq range or scope index), it returns the same rows in seq order."""
    from mnemonite.store import sql_search

    async with await Memory.open(config=MemoryConfig(url=f"sqlite:///{tmp_path / 'm.db'}")) as mem:
        for i in range(40):
            user = ("ann", "bob", "cy")[i % 3]
            await mem.episodic.put(ep(f"e{i}", f"{user} note {i}"), user=user, session="s", agent="a")
        await mem.index()
        model = mem._engine.active.model  # type: ignore[union-attr]
        for after, span in ((0, 10**6), (0, 3), (7, 5000), (20, 0), (39, 2), (25, 14)):
            results = []
            for walk in (10**9, -1):  # never / always by the scope index
                monkeypatch.setattr(sql_search, "SEQ_WALK", walk)
                texts = await mem._store.texts("episode", "bob", after, after + span)
                seqs, matrix = await mem._store.vectors("episode", model, 384, "bob", after, after + span)
                results.append((texts, seqs.tolist(), matrix.tobytes()))
            assert results[0] == results[1]
            got = [seq for seq, _ in results[0][0]]
            assert got == sorted(got) == results[0][1]
            assert all(after < seq <= after + span for seq in got)
