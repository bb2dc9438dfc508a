"""Property: as_of(t) returns exactly what memory held at t, for any sequence of changes."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memstrata import AddDelta, DeleteDelta, Memory, MemoryConfig, UpdateDelta
from memstrata.store import SQLiteMemoryStore

OPS = st.lists(st.tuples(st.sampled_from(["add", "update", "delete"]), st.integers(0, 4)), min_size=1, max_size=12)


def prov() -> dict[str, Any]:
    return {"source_episode_ids": [], "promotion_ts": datetime.now(UTC), "rule_id": "p", "confidence": 1.0}


async def replay(ops: list[tuple[str, int]]) -> None:
    store = SQLiteMemoryStore(":memory:")
    await store.bootstrap()
    mem = Memory(store, config=MemoryConfig(url="sqlite:///:memory:"))
    snapshots: list[tuple[datetime, set[str], dict[str, str]]] = []
    written = 0
    try:
        for i, (kind, pick) in enumerate(ops):
            current = await mem.semantic.facts("u", "a")
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
            held = await mem.semantic.facts("u", "a")
            snapshots.append((now, {f.id for f in held}, {f.id: f.text for f in held}))
            await asyncio.sleep(0.001)
        for moment, ids, texts in snapshots:
            replayed = await mem.semantic.facts("u", "a", as_of=moment)
            assert {f.id for f in replayed} == ids
            assert {f.id: f.text for f in replayed} == texts
            assert all(f.status == "active" and f.superseded_at is None for f in replayed)
        assert (await mem.health()).fact_count == written  # nothing ever written is lost
    finally:
        await mem.close()


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(OPS)
def test_as_of_replays_every_past_state(ops: list[tuple[str, int]]) -> None:
    asyncio.run(replay(ops))
