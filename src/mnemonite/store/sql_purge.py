"""Removing what a user said for good (privacy requests): episodes, and on request the facts derived from them.

A purge is one transaction: the episodes, their vectors and full-text rows, the speaker names
only they carried, and (``derived=True``) every fact promoted from them with its supersede chain
(through the fact purge, which redacts the decision and delta logs). One `PurgeRecord` names
what went and what was derived, never the text. Search caches see the purge log move and
forget what they held.
"""

from __future__ import annotations

from contextlib import AbstractAsyncContextManager
from datetime import datetime

from mnemonite._time import utcnow
from mnemonite.errors import NotFoundError
from mnemonite.models.conflict import PurgeRecord
from mnemonite.models.search import SearchFilter
from mnemonite.scope import Scope
from mnemonite.store import sql_concepts, sql_conflicts, sql_consolidator, sql_facts, sql_search
from mnemonite.store.sql import Connection

__all__ = ["EpisodePurgeMethods", "purge_episodes"]


async def purge_episodes(db: Connection, target: str | Scope, reason: str, derived: bool, now: datetime) -> PurgeRecord:
    """Remove one episode (by id) or every episode of a scope; see the module docstring."""
    clause, params = _selection(db, target)
    cursor = await db.execute(f"SELECT r.id, r.user_id, r.agent_id, r.scope_key FROM episodes r WHERE {clause}", params)
    rows = [(str(r[0]), str(r[1]), str(r[2]), str(r[3])) for r in await cursor.fetchall()]
    if not rows:
        raise NotFoundError(f"no episode with id {target!r}" if isinstance(target, str) else f"no episodes in {target}")
    facts = await _derived(db, clause, params)
    purged: list[str] = []
    if derived:
        for fact_id in facts:
            if fact_id not in purged:  # a chain already purged through another of its versions
                purged += (await sql_conflicts.purge(db, fact_id, reason, now)).fact_ids
    selected = f"SELECT r.seq FROM episodes r WHERE {clause}"
    await db.execute(f"DELETE FROM vectors WHERE kind = 'episode' AND seq IN ({selected})", params)
    await db.execute(f"DELETE FROM episodes WHERE seq IN ({selected})", params)  # full text: trigger / generated
    await _forget_sources(db, sorted({row[3] for row in rows}))
    await sql_consolidator.forget_sessions(db, sorted({row[3] for row in rows}))
    await sql_concepts.forget_records(db, "episode", [row[0] for row in rows])  # tiers, concept sources
    agents = {row[2] for row in rows}
    record = PurgeRecord(
        fact_ids=purged, episode_ids=[row[0] for row in rows], derived_fact_ids=facts, user=rows[0][1],
        agent=agents.pop() if len(agents) == 1 else None, reason=reason, purged_at=now,
    )  # fmt: skip
    await sql_conflicts.insert_purge(db, record)
    return record


def _selection(db: Connection, target: str | Scope) -> tuple[str, list[object]]:
    if isinstance(target, str):
        return "r.id = ?", [target]
    return sql_search.where(db, "episode", SearchFilter(scope=target))


async def _derived(db: Connection, clause: str, params: list[object]) -> list[str]:
    """Every version of every fact promoted from the selected episodes, oldest chain first."""
    cursor = await db.execute(
        "SELECT DISTINCT s.fact_id FROM fact_sources s"
        f" WHERE s.episode_id IN (SELECT r.id FROM episodes r WHERE {clause}) ORDER BY s.fact_id",
        params,
    )
    found: list[str] = []
    for (fact_id,) in await cursor.fetchall():
        found += [fact.id for fact in await sql_facts.history(db, str(fact_id)) if fact.id not in found]
    return found


async def _forget_sources(db: Connection, scope_keys: list[str]) -> None:
    """Drop the speaker names no remaining episode of their scope carries."""
    for key in scope_keys:
        await db.execute(
            "DELETE FROM episode_sources WHERE scope_key = ? AND NOT EXISTS (SELECT 1 FROM episodes e"
            " WHERE e.scope_key = episode_sources.scope_key AND e.source_node = episode_sources.source_node)",
            (key,),
        )


class EpisodePurgeMethods:
    """The episode purge of a store (mixed in; one transaction)."""

    def _sql_write(self) -> AbstractAsyncContextManager[Connection]:
        raise NotImplementedError

    async def purge_episodes(self, target: str | Scope, reason: str, derived: bool) -> PurgeRecord:
        async with self._sql_write() as db:
            return await purge_episodes(db, target, reason, derived, utcnow())
