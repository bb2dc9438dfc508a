"""Property: as_of(t) returns exactly what memory held at t, for any sequence of changes, on both backends."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mnemonite import AddDelta, DeleteDelta, Memory, MemoryConfig, Scope, UpdateDelta
from mnemonite.store import SQLiteMemoryStore
from mnemonite.store.postgres import PostgresMemoryStore

OPS = st.lists(st.tuples(st.sampled_from(["add", "update", "delete"]), st.integers(0, 4)), min_size=1, max_size=12)


def prov() -> dict[str, Any]:
    return {"source_episode_ids": [], "promotion_ts": datetime.now(UTC), "rule_id": "p", "confidence": 1.0}


async def replay(url: str | None, ops: list[tuple[str, int]]) -> None:
    """``url``: a PostgreSQL database (emptied first), or None for a fresh in-memory SQLite."""
    store: SQLiteMemoryStore | PostgresMemoryStore = SQLiteMemoryStore(":memory:") if url is None else (
        PostgresMemoryStore(url))  # fmt: skip
    await store.bootstrap()
    if url is not None:
        import psycopg

        with psycopg.connect(url, autocommit=True) as db:
            db.execute("TRUNCATE facts, fact_sources, lineage, delta_log CASCADE")
    mem = Memory(store, config=MemoryConfig(url="sqlite:///:memory:", embedder="none"))  # type: ignore[arg-type]
    snapshots: list[tuple[datetime, set[str], dict[str, str]]] = []
    written = 0
    try:
        for i, (kind, pick) in enumerate(ops):
            current = await mem.semantic.facts(Scope(user="u", agent="a"))
            target = current[pick % len(current)].id if current else None
            written += kind != "delete" or target is None
            if kind == "add" or target is None:
                await mem.semantic.apply_delta(
                    AddDelta(fact_payload={"text": f"t{i}", "user": "u", "agent": "a"}, **prov())
                )
            elif kind == "update":
                payload = {"text": f"t{i}", "user": "u", "agent": "a"}
                await mem.semantic.apply_delta(UpdateDelta(replaces=[target], fact_payload=payload, **prov()))
            else:
                await mem.semantic.apply_delta(DeleteDelta(replaces=[target], **prov()))
            await asyncio.sleep(0.001)
            now = datetime.now(UTC)
            held = await mem.semantic.facts(Scope(user="u", agent="a"))
            snapshots.append((now, {f.id for f in held}, {f.id: f.text for f in held}))
            await asyncio.sleep(0.001)
        for moment, ids, texts in snapshots:
            replayed = await mem.semantic.facts(Scope(user="u", agent="a"), as_of=moment)
            assert {f.id for f in replayed} == ids
            assert {f.id: f.text for f in replayed} == texts
            assert all(f.status == "active" and f.superseded_at is None for f in replayed)
        assert (await mem.health()).fact_count == written  # nothing ever written is lost
    finally:
        await mem.close()


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_as_of_replays_every_past_state(backend: str, request: pytest.FixtureRequest) -> None:
    url = None if backend == "sqlite" else str(request.getfixturevalue("postgres_url"))

    @settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(OPS)
    def check(ops: list[tuple[str, int]]) -> None:
        asyncio.run(replay(url, ops))

    check()
