"""Episodes and schema plans on the SQL stores: the reads and writes both backends share.

``?`` placeholders (see `mnemonite.store.sql`); each function runs on the caller's connection,
writes inside the caller's transaction.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from mnemonite._time import to_text
from mnemonite.errors import MemoryScopeError
from mnemonite.models import Episode, MigrationPlan
from mnemonite.scope import episode_pattern, key_range
from mnemonite.store.base import RecentOrder
from mnemonite.store.migrations import check_plan
from mnemonite.store.rows import EPISODE_COLUMNS, check_same_episode, episode_from_row
from mnemonite.store.sql import Connection

__all__ = ["check_duplicates", "get_episode", "migrate", "recent", "touch"]


async def get_episode(db: Connection, episode_id: str) -> Episode | None:
    cursor = await db.execute(f"SELECT {EPISODE_COLUMNS} FROM episodes WHERE id = ?", (episode_id,))
    row = await cursor.fetchone()
    return None if row is None else episode_from_row(row)


async def recent(
    db: Connection,
    user: str,
    session: str | None,
    agent: str | None,
    limit: int,
    order: RecentOrder,
    until: datetime | None = None,
) -> list[Episode]:
    """Newest first (at or before ``until`` when given); omitted session/agent widen the read (an
    index range plus an escaped LIKE)."""
    if limit < 1:
        raise MemoryScopeError(f"limit must be >= 1, got {limit}")
    sort = "timestamp DESC, seq DESC" if order == "timestamp" else "COALESCE(last_accessed_at, timestamp) DESC"
    if session is None:  # the user's index, in time order: no sort of every session's rows
        where, params = "user_id = ?" + (" AND agent_id = ?" if agent is not None else ""), [user]
        params += [agent] if agent is not None else []
    else:
        pattern = episode_pattern(user, session, agent)
        low, high = key_range(pattern)
        where, params = "scope_key >= ? AND scope_key < ? AND scope_key LIKE ? ESCAPE '\\'", [low, high, pattern]
    if until is not None:
        where, params = f"{where} AND timestamp <= ?", [*params, to_text(until)]
    cursor = await db.execute(
        f"SELECT {EPISODE_COLUMNS} FROM episodes WHERE {where} ORDER BY {sort} LIMIT ?", (*params, limit)
    )
    return [episode_from_row(row) for row in await cursor.fetchall()]


async def touch(db: Connection, episode_ids: Sequence[str], now: datetime) -> None:
    """Count one access to each episode."""
    if episode_ids:
        marks = ", ".join("?" for _ in episode_ids)
        await db.execute(
            f"UPDATE episodes SET access_count = access_count + 1, last_accessed_at = ? WHERE id IN ({marks})",
            (to_text(now), *episode_ids),
        )


async def check_duplicates(db: Connection, episodes: Sequence[Episode]) -> None:
    """An id already stored must hold the very same episode; otherwise the whole batch is refused."""
    ids = list(dict.fromkeys(e.id for e in episodes))
    stored: dict[str, Episode] = {}
    for start in range(0, len(ids), 500):
        chunk = ids[start : start + 500]
        cursor = await db.execute(
            f"SELECT {EPISODE_COLUMNS} FROM episodes WHERE id IN ({', '.join('?' for _ in chunk)})", chunk
        )
        stored.update((row[0], episode_from_row(row)) for row in await cursor.fetchall())
    for episode in episodes:
        if episode.id in stored:
            check_same_episode(stored[episode.id], episode)


async def migrate(db: Connection, plan: MigrationPlan, now: datetime) -> None:
    """Apply an add-nullable-column plan; the same plan again is a no-op (see `check_plan`)."""
    cursor = await db.execute("SELECT body FROM schema_version WHERE kind = 'plan' AND version = ?", (plan.version,))
    row = await cursor.fetchone()
    cursor = await db.execute("SELECT COALESCE(MAX(version), 1) FROM schema_version WHERE kind = 'plan'")
    latest = (await cursor.fetchone())[0]
    statements = check_plan(plan, applied_body=None if row is None else row[0], latest=int(latest))
    for statement in statements:
        await db.execute(statement)
    if statements:
        await db.execute(
            "INSERT INTO schema_version (kind, version, description, body, applied_at) VALUES ('plan', ?, ?, ?, ?)",
            (plan.version, plan.description, plan.model_dump_json(), to_text(now)),
        )
