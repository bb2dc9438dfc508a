"""The conflict side of the stores: remember's write, the decision log, judging, purges.

Written once for SQLite and PostgreSQL (see `mnemonite.store.sql`). Every function runs on
a connection the caller holds inside a transaction; `ConflictMethods` are the store methods.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractAsyncContextManager
from datetime import datetime
from typing import Any

import orjson

from mnemonite._time import from_text, to_text, utcnow
from mnemonite.conflicts import text_hash
from mnemonite.errors import FactConflictError, NotFoundError
from mnemonite.models import DeltaRecord, Fact, MemoryDelta, NoopDelta
from mnemonite.models.conflict import ConflictDecision, JudgeVerdict, PurgeRecord
from mnemonite.scope import fact_key, fact_pattern, key_range
from mnemonite.store import sql_facts, sql_learned, sql_search
from mnemonite.store.rows import FACT_COLUMNS, dumps, fact_from_row
from mnemonite.store.sql import Connection, is_postgres, json_array_has
from mnemonite.store.sql_search import Matrix

CONFLICT_COLUMNS = (
    "id, user_id, agent_id, kind, stage, zone, cosine, reason, fact_id, matched_ids, candidate_text, decided_at"
)


async def current_by_hash(db: Connection, user: str, agent: str, digest: str) -> Fact | None:
    """A current (active or pending) fact of exactly this scope with this canonical-text hash."""
    cursor = await db.execute(
        f"SELECT {FACT_COLUMNS} FROM facts WHERE scope_key = ? AND text_hash = ? AND superseded_at IS NULL"
        " ORDER BY seq LIMIT 1",
        (fact_key(user, agent), digest),
    )
    row = await cursor.fetchone()
    return None if row is None else fact_from_row(row)


async def remember(
    db: Connection,
    delta: MemoryDelta,
    decision: ConflictDecision,
    now: datetime,
    vector: tuple[str, Matrix] | None = None,
) -> tuple[ConflictDecision, DeltaRecord | None, int | None]:
    """Apply the delta a decision calls for and log the decision, in the caller's transaction.

    A write that would create a second current fact with the same canonical text (two
    concurrent ``remember`` calls of one text) becomes a dedup of the first instead.
    ``vector`` (model, the candidate's embedding) is stored with a new fact, so the next
    ``remember`` compares with it at once. Returns the decision as logged, the applied
    delta's record and the new fact's ``seq``.
    """
    record: DeltaRecord | None = None
    seq: int | None = None
    if is_postgres(db):  # concurrent remembers of one text in one scope take turns from here to the commit
        key = fact_key(decision.user, decision.agent) + text_hash(decision.candidate_text)
        await db.execute("SELECT pg_advisory_xact_lock(hashtextextended(?, 0))", (key,))
    if decision.kind != "dedup":
        twin = await current_by_hash(db, decision.user, decision.agent, text_hash(decision.candidate_text))
        if twin is not None:
            reason = "same canonical text (MD5), written meanwhile"
            decision = decision.model_copy(
                update={
                    "kind": "dedup",
                    "stage": "exact",
                    "matched_ids": [twin.id],
                    "fact_id": twin.id,
                    "reason": reason,
                }
            )
            provenance = {"delta_id", "source_episode_ids", "promotion_ts", "rule_id", "confidence"}
            delta = NoopDelta(**delta.model_dump(include=provenance))
    record = await sql_facts.apply_delta(db, delta, now)
    if record.fact_id is not None:
        decision = decision.model_copy(update={"fact_id": record.fact_id})
        cursor = await db.execute("SELECT seq FROM facts WHERE id = ?", (record.fact_id,))
        row = await cursor.fetchone()
        seq = int(row[0]) if row else None
        if seq is not None and vector is not None:
            await _save_vector(db, seq, *vector)
    await log_decision(db, decision)
    return decision, record, seq


async def _save_vector(db: Connection, seq: int, model: str, vector: Matrix) -> None:
    """Store the new fact's vector; move the model's index position past it only if no older fact waits.

    On PostgreSQL an older fact may still be uncommitted (invisible here), so the position
    stays for the indexer to move; the vector is searchable there as soon as it commits.
    """
    position = await sql_search.index_position(db, "fact", model)
    waiting = is_postgres(db)
    if not waiting:
        cursor = await db.execute("SELECT EXISTS (SELECT 1 FROM facts WHERE seq > ? AND seq < ?)", (position, seq))
        row = await cursor.fetchone()
        waiting = bool(row and row[0])
    await sql_search.save_vectors(db, "fact", model, [seq], vector.reshape(1, -1), upto=position if waiting else seq)


async def log_decision(db: Connection, decision: ConflictDecision) -> None:
    await db.execute(
        f"INSERT INTO fact_conflicts (scope_key, {CONFLICT_COLUMNS}) VALUES ({', '.join(['?'] * 13)})",
        (
            fact_key(decision.user, decision.agent),
            decision.id,
            decision.user,
            decision.agent,
            decision.kind,
            decision.stage,
            decision.zone,
            decision.cosine,
            decision.reason,
            decision.fact_id,
            dumps(decision.matched_ids),
            decision.candidate_text,
            to_text(decision.decided_at),
        ),
    )


async def conflicts(
    db: Connection, user: str, agent: str | None, limit: int, fact_id: str | None = None
) -> list[ConflictDecision]:
    """The decision log of a scope (``agent=None``: every agent), oldest first."""
    low, high = key_range(fact_pattern(user, agent))
    clause, params = "scope_key >= ? AND scope_key < ?", [low, high]
    if fact_id is not None:
        clause += f" AND (fact_id = ? OR {json_array_has(db, 'matched_ids')})"
        params += [fact_id, fact_id]
    cursor = await db.execute(
        f"SELECT {CONFLICT_COLUMNS} FROM fact_conflicts WHERE {clause} ORDER BY seq LIMIT ?", (*params, limit)
    )
    return [_decision(row) for row in await cursor.fetchall()]


def _decision(row: Sequence[Any]) -> ConflictDecision:
    return ConflictDecision(
        id=row[0], user=row[1], agent=row[2], kind=row[3], stage=row[4], zone=row[5], cosine=row[6], reason=row[7],
        fact_id=row[8], matched_ids=orjson.loads(row[9]), candidate_text=row[10], decided_at=from_text(row[11]),
    )  # fmt: skip


async def resolve_pending(db: Connection, pending: Fact, verdict: JudgeVerdict, now: datetime) -> ConflictDecision:
    """Apply a judge's verdict to a pending fact and log it."""
    cursor = await db.execute("SELECT status FROM facts WHERE id = ?", (pending.id,))
    row = await cursor.fetchone()
    if row is None or row[0] != "pending":
        raise FactConflictError(f"fact {pending.id!r} is not pending any more")
    matched: list[str] = []
    if verdict.kind in ("supersede", "dedup"):
        if verdict.target_id is None:
            raise FactConflictError(f"a {verdict.kind} verdict must name the fact it concerns")
        target = await sql_facts.get_fact(db, verdict.target_id)
        if target is None or target.superseded_at is not None or target.id == pending.id:
            raise FactConflictError(f"verdict target {verdict.target_id!r} is not another current fact")
        if (target.user, target.agent) != (pending.user, pending.agent):
            raise FactConflictError(f"verdict target {verdict.target_id!r} belongs to another scope")
        matched = [target.id]
    fact_id = pending.id
    if verdict.kind == "supersede":
        await sql_facts.close_facts(db, matched, status="superseded", world_end=pending.valid_from, now=now)
        await db.execute("INSERT INTO lineage (new_id, old_id, relation, at) VALUES (?, ?, 'SUPERSEDES', ?)",
                         (pending.id, matched[0], to_text(now)))  # fmt: skip
    if verdict.kind == "dedup":  # the kept fact holds what the pending one said (its turns are not retracted)
        await sql_facts.close_facts(db, [pending.id], status="forgotten", world_end=pending.valid_from, now=now)
        await db.execute("INSERT INTO lineage (new_id, old_id, relation, at) VALUES (?, ?, 'CONSOLIDATES', ?)",
                         (matched[0], pending.id, to_text(now)))  # fmt: skip
        fact_id = matched[0]
    else:
        await db.execute("UPDATE facts SET status = 'active' WHERE id = ?", (pending.id,))
        await sql_learned.open_approved(db, pending, now)
    decision = ConflictDecision(
        kind=verdict.kind, stage="judge", reason=verdict.reason or f"judge: {verdict.kind}", fact_id=fact_id,
        matched_ids=matched, user=pending.user, agent=pending.agent, candidate_text=pending.text, decided_at=now,
    )  # fmt: skip
    await log_decision(db, decision)
    return decision


async def purge(db: Connection, fact_id: str, reason: str, now: datetime) -> PurgeRecord:
    """Remove a fact and every version of its supersede chain for good; redact their audit rows."""
    chain = await sql_facts.history(db, fact_id)
    if not chain:
        raise NotFoundError(f"no fact with id {fact_id!r}")
    ids = [fact.id for fact in chain]
    marks = ", ".join("?" for _ in ids)
    cursor = await db.execute(f"SELECT seq FROM facts WHERE id IN ({marks})", ids)
    seqs = [int(row[0]) for row in await cursor.fetchall()]
    await db.execute(f"DELETE FROM vectors WHERE kind = 'fact' AND seq IN ({', '.join('?' for _ in seqs)})", seqs)
    await db.execute(f"DELETE FROM lineage WHERE new_id IN ({marks}) OR old_id IN ({marks})", ids + ids)
    await sql_learned.purge_learned(db, ids)
    await db.execute(f"DELETE FROM facts WHERE id IN ({marks})", ids)  # fact_sources cascade, FTS by trigger
    await db.execute(
        f"UPDATE fact_conflicts SET candidate_text = '[purged]' WHERE fact_id IN ({marks})"
        f" OR {json_array_has(db, 'matched_ids', len(ids))}",
        ids + ids,
    )
    await _redact_deltas(db, ids)
    record = PurgeRecord(fact_ids=ids, user=chain[0].user, agent=chain[0].agent, reason=reason, purged_at=now)
    await insert_purge(db, record)
    return record


async def insert_purge(db: Connection, record: PurgeRecord) -> None:
    """The audit row of a purge (it moves the purge log, which search caches watch)."""
    await db.execute(
        "INSERT INTO purges (id, user_id, agent_id, fact_ids, episode_ids, derived_fact_ids, reason, purged_at)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        (
            record.id, record.user, record.agent or "", dumps(record.fact_ids), dumps(record.episode_ids),
            dumps(record.derived_fact_ids), record.reason, to_text(record.purged_at),
        ),
    )  # fmt: skip


async def _redact_deltas(db: Connection, ids: list[str]) -> None:
    """The deltas that wrote these facts keep their provenance but lose the payload."""
    marks = ", ".join("?" for _ in ids)
    cursor = await db.execute(f"SELECT delta_id, body FROM delta_log WHERE fact_id IN ({marks})", ids)
    for delta_id, body in await cursor.fetchall():
        data = orjson.loads(body)
        if "fact_payload" in data:
            data["fact_payload"] = {"purged": True}
        if data.get("graph"):  # the names of the entities the fact made
            data["graph"] = None
        await db.execute("UPDATE delta_log SET body = ? WHERE delta_id = ?", (orjson.dumps(data).decode(), delta_id))


async def purges(db: Connection, user: str) -> list[PurgeRecord]:
    cursor = await db.execute(
        "SELECT id, fact_ids, episode_ids, derived_fact_ids, user_id, agent_id, reason, purged_at FROM purges"
        " WHERE user_id = ? ORDER BY seq",
        (user,),
    )
    return [
        PurgeRecord(
            id=r[0],
            fact_ids=orjson.loads(r[1]),
            episode_ids=orjson.loads(r[2] or "[]"),
            derived_fact_ids=orjson.loads(r[3] or "[]"),
            user=r[4],
            agent=r[5] or None,
            reason=r[6],
            purged_at=from_text(r[7]),
        )
        for r in await cursor.fetchall()
    ]


class ConflictMethods:
    """The conflict methods of a store (mixed in; every write is one transaction)."""

    def _sql_read(self) -> AbstractAsyncContextManager[Connection]:
        raise NotImplementedError

    def _sql_write(self) -> AbstractAsyncContextManager[Connection]:
        raise NotImplementedError

    async def current_by_hash(self, user: str, agent: str, digest: str) -> Fact | None:
        async with self._sql_read() as db:
            return await current_by_hash(db, user, agent, digest)

    async def remember(
        self, delta: MemoryDelta, decision: ConflictDecision, vector: tuple[str, Matrix] | None = None
    ) -> tuple[ConflictDecision, DeltaRecord | None, int | None]:
        async with self._sql_write() as db:
            return await remember(db, delta, decision, decision.decided_at, vector)

    async def conflicts(
        self, user: str, agent: str | None, *, limit: int = 100, fact_id: str | None = None
    ) -> list[ConflictDecision]:
        async with self._sql_read() as db:
            return await conflicts(db, user, agent, limit, fact_id)

    async def resolve_pending(self, pending: Fact, verdict: JudgeVerdict) -> ConflictDecision:
        async with self._sql_write() as db:
            return await resolve_pending(db, pending, verdict, utcnow())

    async def log_decision(self, decision: ConflictDecision) -> None:
        async with self._sql_write() as db:
            await log_decision(db, decision)

    async def purge(self, fact_id: str, reason: str) -> PurgeRecord:
        async with self._sql_write() as db:
            return await purge(db, fact_id, reason, utcnow())

    async def purges(self, user: str) -> list[PurgeRecord]:
        async with self._sql_read() as db:
            return await purges(db, user)
