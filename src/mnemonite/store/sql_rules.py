"""Consolidation rules on the SQL stores: claiming a rule's new episodes, its progress, its state.

Shared by SQLite and PostgreSQL (``?`` placeholders, see `mnemonite.store.sql`); each store
passes the `FilterCompiler` of its dialect. Every function runs inside the caller's transaction.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from mnemonite._time import from_text, to_text
from mnemonite.consolidation.classify import classify
from mnemonite.consolidation.filter import parse_filter
from mnemonite.errors import NotFoundError
from mnemonite.models import ConsolidationRule, ConsolidationRun, MemoryDelta, RuleState
from mnemonite.store import sql_facts
from mnemonite.store.filter_sql import FilterCompiler
from mnemonite.store.rows import EPISODE_COLUMNS, episode_from_row
from mnemonite.store.sql import Connection

__all__ = ["backlog", "claim", "remove", "rule_states", "run", "scalars", "upsert_rule"]


async def scalars(db: Connection, sql: str, params: tuple[Any, ...] = ()) -> tuple[Any, ...]:
    cursor = await db.execute(sql, params)
    row = await cursor.fetchone()
    assert row is not None
    return tuple(row)


async def upsert_rule(db: Connection, rule: ConsolidationRule, now: datetime) -> None:
    """Register or redefine a rule; its progress (checkpoint, runs) is kept. Locks the rule's row."""
    await db.execute(
        "INSERT INTO rules (id, body, registered_at) VALUES (?, ?, ?)"
        " ON CONFLICT (id) DO UPDATE SET body = excluded.body",
        (rule.id, rule.model_dump_json(), to_text(now)),
    )


async def _window_end(db: Connection, checkpoint: int, max_episodes: int) -> int:
    cursor = await db.execute(
        "SELECT seq FROM episodes WHERE seq > ? ORDER BY seq LIMIT 1 OFFSET ?", (checkpoint, max_episodes - 1)
    )
    row = await cursor.fetchone()
    if row is not None:
        return int(row[0])
    return int((await scalars(db, "SELECT COALESCE(MAX(seq), ?) FROM episodes", (checkpoint,)))[0])


async def claim(
    db: Connection, rule: ConsolidationRule, max_episodes: int, now: datetime, compiler: FilterCompiler
) -> tuple[list[MemoryDelta], int]:
    """Classify the rule's episodes after its checkpoint (at most ``max_episodes``), log the deltas
    as emitted and move the checkpoint; returns the deltas and how many episodes were scanned."""
    await upsert_rule(db, rule, now)
    checkpoint = (await scalars(db, "SELECT checkpoint FROM rules WHERE id = ?", (rule.id,)))[0]
    end = await _window_end(db, checkpoint, max_episodes)
    condition, params = compiler.compile(parse_filter(rule.when_filter))
    cursor = await db.execute(
        f"SELECT {EPISODE_COLUMNS} FROM episodes WHERE seq > ? AND seq <= ? AND ({condition}) ORDER BY timestamp, seq",
        (checkpoint, end, *params),
    )
    episodes = [episode_from_row(row) for row in await cursor.fetchall()]
    deltas = classify(rule, episodes, now)
    await sql_facts.record_emitted(db, deltas, now)
    scanned = (await scalars(db, "SELECT COUNT(*) FROM episodes WHERE seq > ? AND seq <= ?", (checkpoint, end)))[0]
    await db.execute(
        "UPDATE rules SET checkpoint = ?, last_run_at = ?, runs = runs + 1 WHERE id = ?", (end, to_text(now), rule.id)
    )
    return deltas, int(scanned)


async def run(
    db: Connection, rule: ConsolidationRule, max_episodes: int, now: datetime, compiler: FilterCompiler
) -> ConsolidationRun:
    """Claim, classify and apply in the caller's transaction; a delta that cannot apply is undone
    alone and recorded as rejected, and the others land."""
    deltas, scanned = await claim(db, rule, max_episodes, now, compiler)
    records = [await sql_facts.apply_or_reject(db, d, now) for d in deltas]
    remaining = await backlog(db, rule.id)
    return ConsolidationRun(rule_id=rule.id, ran_at=now, episodes_scanned=scanned, deltas=records, remaining=remaining)


async def remove(db: Connection, rule_id: str) -> None:
    cursor = await db.execute("DELETE FROM rules WHERE id = ?", (rule_id,))
    if cursor.rowcount == 0:
        raise NotFoundError(f"no consolidation rule with id {rule_id!r}")


async def backlog(db: Connection, rule_id: str) -> int:
    """Episodes stored after the rule's checkpoint."""
    checkpoint = (await scalars(db, "SELECT checkpoint FROM rules WHERE id = ?", (rule_id,)))[0]
    return int((await scalars(db, "SELECT COUNT(*) FROM episodes WHERE seq > ?", (checkpoint,)))[0])


async def rule_states(db: Connection) -> list[RuleState]:
    cursor = await db.execute(
        "SELECT body, registered_at, last_run_at, checkpoint, runs,"
        " (SELECT COUNT(*) FROM episodes e WHERE e.seq > r.checkpoint) FROM rules r ORDER BY id"
    )
    return [
        RuleState(
            rule=ConsolidationRule.model_validate_json(row[0]),
            registered_at=from_text(row[1]),
            last_run_at=None if row[2] is None else from_text(row[2]),
            checkpoint=row[3],
            runs=row[4],
            episodes_since=row[5],
        )
        for row in await cursor.fetchall()
    ]
