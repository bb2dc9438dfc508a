"""The consolidator's bookkeeping, shared by both stores: claimed jobs with checkpoints, usage, topic episodes.

A job is one phase's work on one scope (a session for light and standard, a (user, agent) for
deep). Workers claim a job by a conditional update in a write transaction: on SQLite the write
lock serialises claims; on PostgreSQL the candidate row is locked ``FOR UPDATE SKIP LOCKED`` and
the update re-checks the lease after any competing commit, so two workers never hold one job.
A claim is a lease (``claimed_until``): a worker killed mid-job stops renewing it, and the next
claim after it expires resumes from the job's checkpoint.

Light and standard jobs come from two sources: the episodes of a session, and the session tier's
rolling message log (``session_messages``; a job key starting ``msg:``, a checkpoint over its own
numbering). A message's role is its speaker (``user`` is the scope's user).
"""

from __future__ import annotations

from contextlib import AbstractAsyncContextManager
from datetime import datetime, timedelta
from typing import Any

import orjson

from mnemonite._time import from_text, to_text, utcnow
from mnemonite.errors import ConsolidatorBusyError
from mnemonite.models.consolidator import ClaimedJob, JobCounts, TopicEpisode, Turn, Usage
from mnemonite.scope import episode_key, fact_key
from mnemonite.store.sql import Connection, is_postgres

__all__ = ["ConsolidatorMethods", "forget_sessions"]

_TURNS = (
    "SELECT seq, id, content, source_node, timestamp, metadata, session_id FROM episodes"
    " WHERE scope_key = ? AND seq > ? AND seq <= ? ORDER BY seq"
)
_MESSAGE_TURNS = (
    "SELECT seq, id, content, role, timestamp, metadata, session_id, sensitivity FROM session_messages"
    " WHERE user_id = ? AND session_id = ? AND agent_id = ? AND seq > ? AND seq <= ? ORDER BY seq"
)
_MESSAGES = "msg:"
_USER_TURNS = (
    "SELECT seq, id, content, source_node, timestamp, metadata, session_id FROM episodes"
    " WHERE user_id = ? AND agent_id = ? AND seq <= ? ORDER BY seq"
)


def _turn(row: Any) -> Turn:
    metadata = orjson.loads(row[5]) if row[5] else {}
    if len(row) > 7:
        metadata = {**metadata, "sensitivity": row[7]}
    return Turn(seq=int(row[0]), id=str(row[1]), content=str(row[2]), speaker=str(row[3]),
                timestamp=from_text(str(row[4])), metadata=metadata, session=str(row[6]))  # fmt: skip


async def _scanned(db: Connection, name: str) -> int:
    cursor = await db.execute("SELECT scanned FROM consolidator_scan WHERE phase = ?", (name,))
    row = await cursor.fetchone()
    return int(row[0]) if row else 0


async def _discover(db: Connection, phase: str, per_user: bool, now: str) -> None:
    """Open or extend the jobs of every scope with episodes (or session messages) stored since the last scan."""
    scanned = await _scanned(db, phase)
    group = "user_id, agent_id" if per_user else "scope_key, user_id, agent_id, session_id"
    cursor = await db.execute(f"SELECT {group}, MAX(seq) FROM episodes WHERE seq > ? GROUP BY {group}", (scanned,))
    rows = list(await cursor.fetchall())
    found_jobs = [
        (_user_key(str(r[0]), str(r[1])), r[0], r[1], "", r[2]) if per_user else (r[0], r[1], r[2], r[3], r[4])
        for r in rows
    ]
    await _open_jobs(db, phase, found_jobs, now)
    if rows:
        await _mark_scanned(db, phase, max(int(found[-1]) for found in rows))
    if not per_user:
        await _discover_messages(db, phase, now)


async def _discover_messages(db: Connection, phase: str, now: str) -> None:
    name = f"{phase}:messages"
    cursor = await db.execute(
        "SELECT user_id, session_id, agent_id, MAX(seq) FROM session_messages WHERE seq > ?"
        " GROUP BY user_id, session_id, agent_id",
        (await _scanned(db, name),),
    )
    rows = list(await cursor.fetchall())
    jobs = [(_MESSAGES + episode_key(str(r[0]), str(r[1]), str(r[2])), r[0], r[2], r[1], r[3]) for r in rows]
    await _open_jobs(db, phase, jobs, now)
    if rows:
        await _mark_scanned(db, name, max(int(r[3]) for r in rows))


async def _open_jobs(db: Connection, phase: str, jobs: list[tuple[Any, ...]], now: str) -> None:
    # In key order: concurrent discoveries lock the same rows in the same order (no deadlock), and
    # a job's end only ever moves forward, whichever discovery commits last.
    for key, user, agent, session, top in sorted(jobs, key=lambda job: str(job[0])):
        await db.execute(
            "INSERT INTO consolidator_jobs (phase, scope_key, user_id, agent_id, session_id, upto, updated_at)"
            " VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (phase, scope_key) DO UPDATE SET upto = CASE"
            " WHEN excluded.upto > consolidator_jobs.upto THEN excluded.upto ELSE consolidator_jobs.upto END",
            (phase, key, user, agent, session, int(top), now),
        )


async def _mark_scanned(db: Connection, name: str, top: int) -> None:
    await db.execute(
        "INSERT INTO consolidator_scan (phase, scanned) VALUES (?, ?) ON CONFLICT (phase) DO UPDATE SET scanned = CASE"
        " WHEN excluded.scanned > consolidator_scan.scanned THEN excluded.scanned ELSE consolidator_scan.scanned END",
        (name, top),
    )


def _user_key(user: str, agent: str) -> str:
    """The deep phase's job key: a (user, agent) scope, session left out."""
    return fact_key(user, agent)


async def _claim(
    db: Connection, phase: str, worker: str, lease: float, user: str | None, now: datetime
) -> ClaimedJob | None:
    stamp, until = to_text(now), to_text(now + timedelta(seconds=lease))
    where = "phase = ? AND checkpoint < upto AND (claimed_until IS NULL OR claimed_until < ?)"
    params: list[Any] = [phase, stamp]
    if user is not None:
        where += " AND user_id = ?"
        params.append(user)
    lock = " FOR UPDATE SKIP LOCKED" if is_postgres(db) else ""
    cursor = await db.execute(
        "SELECT scope_key, user_id, agent_id, session_id, checkpoint, upto, summary FROM consolidator_jobs"
        f" WHERE {where} ORDER BY upto, scope_key LIMIT 1{lock}",
        params,
    )
    row = await cursor.fetchone()
    if row is None:
        return None
    claimed = await db.execute(
        "UPDATE consolidator_jobs SET claimed_by = ?, claimed_until = ?, updated_at = ? WHERE phase = ?"
        " AND scope_key = ? AND (claimed_until IS NULL OR claimed_until < ?)",
        (worker, until, stamp, phase, row[0], stamp),
    )
    if claimed.rowcount != 1:
        return None
    return ClaimedJob(phase=phase, scope_key=str(row[0]), user=str(row[1]), agent=str(row[2]), session=str(row[3]),
                      checkpoint=int(row[4]), upto=int(row[5]), worker=worker, summary=row[6])  # fmt: skip


async def forget_sessions(db: Connection, scope_keys: list[str]) -> None:
    """Drop what the consolidator derived from these sessions' episodes (topic episodes, summaries): a
    purge of episodes must not leave their words behind."""
    for key in scope_keys:
        await db.execute("DELETE FROM consolidator_episodes WHERE scope_key = ?", (key,))
        await db.execute("UPDATE consolidator_jobs SET summary = NULL WHERE scope_key = ?", (key,))


class ConsolidatorMethods:
    """The consolidator's store methods (mixed into both stores)."""

    def _sql_read(self) -> AbstractAsyncContextManager[Connection]:
        raise NotImplementedError

    def _sql_write(self) -> AbstractAsyncContextManager[Connection]:
        raise NotImplementedError

    def _sql_claim(self) -> AbstractAsyncContextManager[Connection]:
        """A write transaction in which every record numbered up to the highest visible one is committed
        (PostgreSQL numbers rows at insert and commits them out of order: a scan must not pass a late one)."""
        raise NotImplementedError

    async def claim_job(
        self, phase: str, worker: str, *, lease: float, per_user: bool = False, user: str | None = None
    ) -> ClaimedJob | None:
        """Open jobs for new episodes, then claim the oldest unclaimed one of ``phase`` (None: nothing to do)."""
        now = utcnow()
        async with self._sql_claim() as db:
            await _discover(db, phase, per_user, to_text(now))
            return await _claim(db, phase, worker, lease, user, now)

    async def job_turns(self, job: ClaimedJob, *, limit: int = 10_000) -> list[Turn]:
        """The job's episodes after its checkpoint, oldest first (a deep job: all of its (user, agent))."""
        async with self._sql_read() as db:
            if job.phase == "deep":
                cursor = await db.execute(_USER_TURNS, (job.user, job.agent, job.upto))
            elif job.scope_key.startswith(_MESSAGES):
                params = (job.user, job.session, job.agent, job.checkpoint, job.upto)
                cursor = await db.execute(_MESSAGE_TURNS, params)
            else:
                cursor = await db.execute(_TURNS, (job.scope_key, job.checkpoint, job.upto))
            return [_turn(row) for row in list(await cursor.fetchall())[: limit if job.phase != "deep" else None]]

    async def advance_job(
        self, job: ClaimedJob, checkpoint: int, *, lease: float, summary: str | None = None, release: bool = False
    ) -> None:
        """Move the job's checkpoint (and renew its lease); only the worker holding it may."""
        now = utcnow()
        until = None if release else to_text(now + timedelta(seconds=lease))
        worker = None if release else job.worker
        async with self._sql_write() as db:
            cursor = await db.execute(
                "UPDATE consolidator_jobs SET checkpoint = ?, claimed_by = ?, claimed_until = ?, updated_at = ?,"
                " summary = COALESCE(?, summary) WHERE phase = ? AND scope_key = ? AND claimed_by = ?",
                (checkpoint, worker, until, to_text(now), summary, job.phase, job.scope_key, job.worker),
            )
            if cursor.rowcount != 1:
                raise ConsolidatorBusyError(
                    f"the {job.phase} job of {job.scope_key} was claimed by another worker (this lease expired)"
                )

    async def release_job(self, job: ClaimedJob) -> None:
        """Give a claimed job back unchanged (its checkpoint stays)."""
        async with self._sql_write() as db:
            await db.execute(
                "UPDATE consolidator_jobs SET claimed_by = NULL, claimed_until = NULL WHERE phase = ?"
                " AND scope_key = ? AND claimed_by = ?",
                (job.phase, job.scope_key, job.worker),
            )

    async def job_counts(self) -> list[JobCounts]:
        """Per phase: jobs with work left, claimed now, and done."""
        now = to_text(utcnow())
        async with self._sql_read() as db:
            cursor = await db.execute(
                "SELECT phase, SUM(CASE WHEN checkpoint < upto THEN 1 ELSE 0 END),"
                " SUM(CASE WHEN claimed_until >= ? THEN 1 ELSE 0 END),"
                " SUM(CASE WHEN checkpoint >= upto THEN 1 ELSE 0 END)"
                " FROM consolidator_jobs GROUP BY phase ORDER BY phase",
                (now,),
            )
            return [JobCounts(phase=r[0], waiting=int(r[1] or 0), claimed=int(r[2] or 0), done=int(r[3] or 0))
                    for r in await cursor.fetchall()]  # fmt: skip

    async def charge_usage(self, day: str, phase: str, usage: Usage, *, run: bool = False) -> None:
        """Add tokens, cost and calls (and one run) to a day's row of a phase."""
        async with self._sql_write() as db:
            await db.execute(
                "INSERT INTO consolidator_usage (day, phase, prompt_tokens, completion_tokens, cost, calls, runs)"
                " VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (day, phase) DO UPDATE SET"
                " prompt_tokens = consolidator_usage.prompt_tokens + excluded.prompt_tokens,"
                " completion_tokens = consolidator_usage.completion_tokens + excluded.completion_tokens,"
                " cost = consolidator_usage.cost + excluded.cost, calls = consolidator_usage.calls + excluded.calls,"
                " runs = consolidator_usage.runs + excluded.runs",
                (day, phase, usage.prompt_tokens, usage.completion_tokens, usage.cost, usage.calls, int(run)),
            )

    async def usage(self, day: str) -> list[Usage]:
        """Each phase's usage on ``day`` (``YYYY-MM-DD``, UTC)."""
        async with self._sql_read() as db:
            cursor = await db.execute(
                "SELECT phase, prompt_tokens, completion_tokens, cost, calls, runs FROM consolidator_usage"
                " WHERE day = ? ORDER BY phase",
                (day,),
            )
            return [Usage(phase=r[0], prompt_tokens=int(r[1]), completion_tokens=int(r[2]), cost=float(r[3]),
                          calls=int(r[4]), runs=int(r[5])) for r in await cursor.fetchall()]  # fmt: skip

    async def save_topic_episodes(self, episodes: list[TopicEpisode]) -> None:
        """Store topic episodes (an id already stored is kept as it is)."""
        async with self._sql_write() as db:
            await db.executemany(
                "INSERT INTO consolidator_episodes (id, scope_key, user_id, agent_id, session_id, first_seq, last_seq,"
                " turn_ids, summary, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING",
                [(e.id, e.scope_key, e.user, e.agent, e.session, e.first_seq, e.last_seq,
                  orjson.dumps(e.turn_ids).decode(), e.summary, to_text(e.created_at)) for e in episodes],
            )  # fmt: skip

    async def topics_end(self, scope_key: str) -> int:
        """The last turn (seq) a topic episode of this job's scope holds; 0 when none does."""
        async with self._sql_read() as db:
            cursor = await db.execute(
                "SELECT MAX(last_seq) FROM consolidator_episodes WHERE scope_key = ?", (scope_key,)
            )
            row = await cursor.fetchone()
            return int(row[0]) if row and row[0] is not None else 0

    async def topic_episodes(self, user: str, agent: str | None = None) -> list[TopicEpisode]:
        """The topic episodes of a user (one agent, or all), oldest first."""
        clause, params = ("user_id = ?", [user]) if agent is None else ("user_id = ? AND agent_id = ?", [user, agent])
        async with self._sql_read() as db:
            cursor = await db.execute(
                "SELECT id, scope_key, user_id, agent_id, session_id, first_seq, last_seq, turn_ids, summary,"
                f" created_at FROM consolidator_episodes WHERE {clause} ORDER BY scope_key, first_seq",
                params,
            )
            return [TopicEpisode(id=r[0], scope_key=r[1], user=r[2], agent=r[3], session=r[4], first_seq=int(r[5]),
                                 last_seq=int(r[6]), turn_ids=orjson.loads(r[7]), summary=r[8],
                                 created_at=from_text(str(r[9]))) for r in await cursor.fetchall()]  # fmt: skip

    async def session_summaries(self, user: str) -> dict[str, str]:
        """The light phase's summary of each session of a user, by scope key."""
        async with self._sql_read() as db:
            cursor = await db.execute(
                "SELECT scope_key, summary FROM consolidator_jobs WHERE phase = 'light' AND user_id = ?"
                " AND summary IS NOT NULL ORDER BY scope_key",
                (user,),
            )
            return {str(r[0]): str(r[1]) for r in await cursor.fetchall()}

    async def pending_scopes(self) -> list[tuple[str, str]]:
        """Every (user, agent) holding a pending fact."""
        async with self._sql_read() as db:
            cursor = await db.execute(
                "SELECT DISTINCT user_id, agent_id FROM facts WHERE status = 'pending' AND superseded_at IS NULL"
                " ORDER BY user_id, agent_id"
            )
            return [(str(r[0]), str(r[1])) for r in await cursor.fetchall()]

    async def episode_count(self) -> int:
        """How many episodes and session messages the memory holds (``{"every": N}`` counts new ones)."""
        async with self._sql_read() as db:
            cursor = await db.execute(
                "SELECT (SELECT COUNT(*) FROM episodes) + (SELECT COUNT(*) FROM session_messages)"
            )
            row = await cursor.fetchone()
            return int(row[0]) if row else 0
