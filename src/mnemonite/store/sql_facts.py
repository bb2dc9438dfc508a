"""The fact side of the SQL stores (SQLite and PostgreSQL): applying deltas and bi-temporal reads.

Every function here runs on a connection the caller holds inside a transaction, so a
failure anywhere rolls the whole delta (or batch) back. The SQL is shared: ``?``
placeholders and statements both databases accept (see `mnemonite.store.sql`).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

import orjson

from mnemonite._time import from_text, to_text
from mnemonite.errors import DeltaValidationError, FactConflictError, InvalidInputError, NotFoundError
from mnemonite.models import (
    AddDelta,
    DeleteDelta,
    DeltaRecord,
    Fact,
    FactFilter,
    FactPayload,
    Lineage,
    MemoryDelta,
    NoopDelta,
    UpdateDelta,
)
from mnemonite.models.base import new_id
from mnemonite.models.deltas import LinkDelta
from mnemonite.scope import fact_key, fact_pattern, key_range
from mnemonite.store import sql_learned
from mnemonite.store.rows import (
    DELTA_COLUMNS,
    FACT_COLUMNS,
    FACT_INSERT,
    FACT_SELECT,
    delta_record_from_row,
    dumps,
    fact_from_row,
    fact_values,
    lineage_from_row,
)
from mnemonite.store.sql import Connection, is_postgres, json_array_has

_Scope = tuple[str, str]


async def record_emitted(db: Connection, deltas: list[MemoryDelta], now: datetime) -> None:
    """Write consolidation output to the delta log before anyone applies it (the outbox)."""
    rows = [(d.delta_id, d.kind, d.rule_id, d.model_dump_json(), to_text(now)) for d in deltas]
    await db.executemany(
        "INSERT INTO delta_log (delta_id, kind, rule_id, body, emitted_at) VALUES (?, ?, ?, ?, ?)", rows
    )


async def apply_delta(db: Connection, delta: MemoryDelta, now: datetime) -> DeltaRecord:
    """Apply one delta; applying a delta id that was applied before changes nothing."""
    existing = await _log_row(db, delta.delta_id)
    if existing is not None and existing.applied_at is not None:
        return existing
    fact_id: str | None = None
    closed: list[str] = []
    if isinstance(delta, AddDelta):
        fact_id = await _insert_fact(db, delta, await _payload_scope(db, delta), now)
    elif isinstance(delta, UpdateDelta):
        scope = await _payload_scope(db, delta)
        closed = await _resolve(db, delta.replaces, scope)
        fact_id = await _insert_fact(db, delta, scope, now, closes=closed)
    elif isinstance(delta, DeleteDelta):
        closed = await _resolve(db, delta.replaces, await _episode_scope(db, delta.source_episode_ids))
        await close_facts(db, closed, status="forgotten", world_end=await _latest_source_time(db, delta), now=now)
    elif isinstance(delta, LinkDelta):
        fact_id = await _link_fact(db, delta, now)
    else:
        assert isinstance(delta, NoopDelta)
    return await _log_applied(db, delta, existing, fact_id, closed, now)


async def apply_or_reject(db: Connection, delta: MemoryDelta, now: datetime) -> DeltaRecord:
    """Apply a delta; if it conflicts or is invalid, undo just it and record why (the run goes on)."""
    await db.execute("SAVEPOINT delta")
    try:
        record = await apply_delta(db, delta, now)
    except (FactConflictError, DeltaValidationError) as error:
        await db.execute("ROLLBACK TO delta")
        await db.execute("RELEASE delta")
        if await _log_row(db, delta.delta_id) is None:
            await record_emitted(db, [delta], now)
        await db.execute(
            "UPDATE delta_log SET rejected_at = ?, rejected_reason = ? WHERE delta_id = ?",
            (to_text(now), f"{type(error).__name__}: {error}", delta.delta_id),
        )
        rejected = await _log_row(db, delta.delta_id)
        assert rejected is not None
        return rejected
    await db.execute("RELEASE delta")
    return record


async def _log_row(db: Connection, delta_id: str) -> DeltaRecord | None:
    cursor = await db.execute(f"SELECT {DELTA_COLUMNS} FROM delta_log WHERE delta_id = ?", (delta_id,))
    row = await cursor.fetchone()
    return None if row is None else delta_record_from_row(row)


async def _log_applied(
    db: Connection,
    delta: MemoryDelta,
    existing: DeltaRecord | None,
    fact_id: str | None,
    closed: list[str],
    now: datetime,
) -> DeltaRecord:
    if existing is None:
        await record_emitted(db, [delta], now)
    await db.execute(
        "UPDATE delta_log SET applied_at = ?, fact_id = ?, closed_fact_ids = ? WHERE delta_id = ?",
        (to_text(now), fact_id, dumps(closed), delta.delta_id),
    )
    record = await _log_row(db, delta.delta_id)
    assert record is not None
    return record


def _payload(delta: AddDelta | UpdateDelta) -> FactPayload:
    try:
        return FactPayload.model_validate(delta.fact_payload)
    except InvalidInputError as error:
        raise DeltaValidationError(f"delta {delta.delta_id}: fact_payload is invalid: {error}") from None


async def _episode_scope(db: Connection, episode_ids: list[str]) -> _Scope | None:
    if not episode_ids:
        return None
    marks = ", ".join("?" for _ in episode_ids)
    cursor = await db.execute(
        f"SELECT DISTINCT user_id, agent_id FROM episodes WHERE id IN ({marks})", tuple(episode_ids)
    )
    scopes = [(row[0], row[1]) for row in await cursor.fetchall()]
    if len(scopes) > 1:
        raise DeltaValidationError(f"source episodes span several (user, agent) scopes: {scopes}")
    return scopes[0] if scopes else None


async def _payload_scope(db: Connection, delta: AddDelta | UpdateDelta) -> _Scope:
    payload = _payload(delta)
    from_episodes = await _episode_scope(db, delta.source_episode_ids)
    if payload.user is not None and payload.agent is not None:
        if from_episodes is not None and from_episodes != (payload.user, payload.agent):
            raise DeltaValidationError(
                f"fact_payload scope {(payload.user, payload.agent)} differs from its source episodes' {from_episodes}"
            )
        return payload.user, payload.agent
    if from_episodes is None:
        raise DeltaValidationError(
            "fact_payload must name user and agent, or the delta must cite stored source episodes"
        )
    return from_episodes


async def _latest_source_time(db: Connection, delta: MemoryDelta) -> datetime:
    ids = delta.source_episode_ids
    if ids:
        marks = ", ".join("?" for _ in ids)
        cursor = await db.execute(f"SELECT MAX(timestamp) FROM episodes WHERE id IN ({marks})", tuple(ids))
        row = await cursor.fetchone()
        if row is not None and row[0] is not None:
            return from_text(row[0])
    return delta.promotion_ts


async def _resolve(db: Connection, refs: list[str], scope: _Scope | None) -> list[str]:
    """Each entry of `replaces` (fact id, or episode id via provenance) to exactly one active fact."""
    resolved: list[str] = []
    for ref in refs:
        cursor = await db.execute("SELECT id, user_id, agent_id, status FROM facts WHERE id = ?", (ref,))
        rows = list(await cursor.fetchall())
        if rows and rows[0][3] not in ("active", "pending"):
            raise FactConflictError(f"replaces {ref!r}: that fact is {rows[0][3]}, not active")
        if not rows:
            cursor = await db.execute(
                "SELECT f.id, f.user_id, f.agent_id, f.status FROM fact_sources s JOIN facts f ON f.id = s.fact_id"
                " WHERE s.episode_id = ? AND f.superseded_at IS NULL",
                (ref,),
            )
            rows = list(await cursor.fetchall())
        if len(rows) != 1:
            found = "no active fact" if not rows else f"{len(rows)} active facts"
            raise FactConflictError(f"replaces {ref!r} resolves to {found}; it must name exactly one")
        if scope is not None and (rows[0][1], rows[0][2]) != scope:
            raise FactConflictError(f"replaces {ref!r}: that fact belongs to another (user, agent) scope")
        if rows[0][0] not in resolved:
            resolved.append(rows[0][0])
    return resolved


async def close_facts(db: Connection, ids: list[str], *, status: str, world_end: datetime, now: datetime) -> None:
    end = to_text(world_end)
    for fact_id in ids:
        await db.execute(
            "UPDATE facts SET status = ?, superseded_at = ?, valid_to = CASE"
            " WHEN valid_to IS NOT NULL AND valid_to <= ? THEN valid_to"
            " WHEN valid_from > ? THEN valid_from ELSE ? END WHERE id = ?",
            (status, to_text(now), end, end, end, fact_id),
        )
    await sql_learned.end_edges(db, ids, world_end, now)


# SQLite gives a new row the highest rowid + 1, so once the newest fact is purged its seq comes back, and the
# indexer, whose position has passed it, would never embed the new fact (found by bench/reliability_crash.py).
# PostgreSQL's identity column never gives a number twice.
_SQLITE_FACT_INSERT = FACT_INSERT.replace("INSERT INTO facts (", "INSERT INTO facts (seq, ", 1).replace(
    "VALUES (",
    "VALUES (1 + MAX(COALESCE((SELECT MAX(seq) FROM facts), 0),"
    " COALESCE((SELECT MAX(last_seq) FROM index_state WHERE kind = 'fact'), 0)), ",
    1,
)

_LEVELS = ("public", "internal", "secret")


async def _source_sensitivity(db: Connection, episode_ids: list[str], default: str) -> str:
    if not episode_ids:
        return default
    marks = ", ".join("?" for _ in episode_ids)
    cursor = await db.execute(f"SELECT DISTINCT sensitivity FROM episodes WHERE id IN ({marks})", tuple(episode_ids))
    found = [row[0] for row in await cursor.fetchall()]
    return max(found, key=_LEVELS.index) if found else default


async def _insert_fact(
    db: Connection,
    delta: AddDelta | UpdateDelta,
    scope: _Scope,
    now: datetime,
    closes: list[str] | None = None,
) -> str:
    payload = _payload(delta)
    valid_from = payload.valid_from or await _latest_source_time(db, delta)
    fields: dict[str, Any] = payload.model_dump(exclude={"user", "agent", "valid_from"})
    if fields["salience"] is None:
        del fields["salience"]
    fields["entities"] = list(dict.fromkeys(payload.entities))  # the same link twice is one link
    if "sensitivity" not in payload.model_fields_set:  # promoted from episodes: as sensitive as the most sensitive
        fields["sensitivity"] = await _source_sensitivity(db, delta.source_episode_ids, payload.sensitivity)
    fact = Fact(
        id=new_id(),
        user=scope[0],
        agent=scope[1],
        valid_from=valid_from,
        recorded_at=now,
        source_episode_ids=delta.source_episode_ids,
        rule_id=delta.rule_id,
        confidence=delta.confidence,
        promotion_ts=delta.promotion_ts,
        **fields,
    )
    key = fact_key(*scope)
    learned: dict[str, str] = {}
    if delta.graph is not None:  # the entities it names first, so that the fact can link to them
        learned = await sql_learned.make_entities(db, delta.graph, scope, key, fact.id, now)
        links = [link.model_copy(update={"entity_id": learned.get(link.entity_id, link.entity_id)})
                 for link in fact.entities]  # fmt: skip
        fact = fact.model_copy(update={"entities": list(dict.fromkeys(links))})
        ends = [learned.get(i, i) for e in (*delta.graph.edges, *delta.graph.ends) for i in (e.source, e.target)]
        await _check_entities(db, key, ends)  # an edge joins entities of the fact's own scope
    if closes:
        if fact.status == "active":
            await sql_learned.carry_edges(db, closes, delta.graph, learned, fact.id)
        await close_facts(db, closes, status="superseded", world_end=valid_from, now=now)
    await _check_entities(db, key, [link.entity_id for link in fact.entities])
    await db.execute(FACT_INSERT if is_postgres(db) else _SQLITE_FACT_INSERT, fact_values(fact, key))
    await db.executemany(
        "INSERT INTO fact_entities (entity_id, fact_id, role) VALUES (?, ?, ?)",
        [(link.entity_id, fact.id, link.role) for link in fact.entities],
    )
    if delta.graph is not None and (delta.graph.edges or delta.graph.ends) and fact.status == "active":
        await sql_learned.open_edges(db, delta.graph, learned, scope, key, fact.id, valid_from, now)
    await db.executemany(
        "INSERT INTO fact_sources (episode_id, fact_id) VALUES (?, ?) ON CONFLICT DO NOTHING",
        [(episode_id, fact.id) for episode_id in delta.source_episode_ids],
    )
    await db.executemany(
        "INSERT INTO lineage (new_id, old_id, relation, at) VALUES (?, ?, 'SUPERSEDES', ?)",
        [(fact.id, old, to_text(now)) for old in closes or []],
    )
    return fact.id


async def _link_fact(db: Connection, delta: LinkDelta, now: datetime) -> str:
    """Join a held fact to the graph: make the entities, add the links (to the fact's own, which it keeps), open
    the edges if the fact is believed. Applying it again changes nothing more."""
    cursor = await db.execute(
        "SELECT scope_key, user_id, agent_id, valid_from, status, superseded_at, entity_links FROM facts WHERE id = ?",
        (delta.fact_id,),
    )
    row = await cursor.fetchone()
    if row is None:
        raise DeltaValidationError(f"delta {delta.delta_id}: no fact with id {delta.fact_id!r} to link")
    key, scope, valid_from, status, closed, held = row[0], (row[1], row[2]), from_text(row[3]), row[4], row[5], row[6]
    ids = await sql_learned.make_entities(db, delta.graph, scope, key, delta.fact_id, now) if delta.graph else {}
    ends = (
        [ids.get(i, i) for e in (*delta.graph.edges, *delta.graph.ends) for i in (e.source, e.target)]
        if delta.graph
        else []
    )
    await _check_entities(db, key, ends)  # an edge joins entities of the fact's own scope
    links = [{"entity_id": ids.get(entity, entity), "role": role} for entity, role in delta.links]
    await _check_entities(db, key, [link["entity_id"] for link in links])
    merged = list({(link["entity_id"], link["role"]): link for link in [*orjson.loads(held), *links]}.values())
    await db.executemany(
        "INSERT INTO fact_entities (entity_id, fact_id, role) VALUES (?, ?, ?) ON CONFLICT DO NOTHING",
        [(link["entity_id"], delta.fact_id, link["role"]) for link in links],
    )
    await db.execute("UPDATE facts SET entity_links = ? WHERE id = ?", (dumps(merged), delta.fact_id))
    if delta.graph is not None and status == "active" and closed is None:
        await sql_learned.open_edges(db, delta.graph, ids, scope, key, delta.fact_id, valid_from, now)
    return delta.fact_id


async def missing_entities(db: Connection, scope_key: str, ids: Sequence[str]) -> list[str]:
    """The ids among ``ids`` that name no entity of the scope, sorted."""
    wanted = sorted(set(ids))
    found: set[str] = set()
    for start in range(0, len(wanted), 500):
        chunk = wanted[start : start + 500]
        marks = ", ".join("?" for _ in chunk)
        cursor = await db.execute(
            f"SELECT id FROM entities WHERE scope_key = ? AND id IN ({marks})", (scope_key, *chunk)
        )
        found.update(row[0] for row in await cursor.fetchall())
    return [entity_id for entity_id in wanted if entity_id not in found]


async def _check_entities(db: Connection, scope_key: str, ids: list[str]) -> None:
    """Every linked entity must exist in the fact's own (user, agent) scope."""
    if missing := await missing_entities(db, scope_key, ids):
        raise DeltaValidationError(
            f"the fact links to entities that do not exist in its (user, agent) scope: {missing}"
        )


async def get_fact(db: Connection, fact_id: str) -> Fact | None:
    cursor = await db.execute(f"SELECT {FACT_COLUMNS} FROM facts WHERE id = ?", (fact_id,))
    row = await cursor.fetchone()
    return None if row is None else fact_from_row(row)


async def query_facts(db: Connection, query: FactFilter, now: datetime) -> list[Fact]:
    """Facts of a scope under the filter's time travel (see `FactFilter`)."""
    pattern = fact_pattern(query.user, query.agent)
    low, high = key_range(pattern)
    where = ["scope_key >= ? AND scope_key < ? AND scope_key LIKE ? ESCAPE '\\'"]
    params: list[object] = [low, high, pattern]
    as_of = to_text(query.as_of or now)
    if query.valid_at is not None:
        valid_at = to_text(query.valid_at)
        where.append("recorded_at <= ? AND valid_from <= ? AND (valid_to IS NULL OR valid_to > ? OR superseded_at > ?)")
        where.append("NOT (status = 'forgotten' AND superseded_at <= ?)")
        params += [as_of, valid_at, valid_at, as_of, as_of]
    elif query.as_of is not None or query.status is None:
        where.append("recorded_at <= ? AND (superseded_at IS NULL OR superseded_at > ?)")
        params += [as_of, as_of]
    for column, value in (("status", query.status), ("subject", query.subject), ("predicate", query.predicate)):
        if value is not None:
            where.append(f"{column} = ?")
            params.append(value)
    if query.channel is not None:
        where.append(json_array_has(db, "channels"))
        params.append(query.channel)
    sql = f"SELECT {FACT_SELECT} FROM facts WHERE {' AND '.join(where)} ORDER BY recorded_at DESC, seq DESC LIMIT ?"
    cursor = await db.execute(sql, (*params, query.limit))
    replay = as_of if query.as_of is not None else None
    return [fact_from_row(row, replay) for row in await cursor.fetchall()]


async def history(db: Connection, fact_id: str) -> list[Fact]:
    """The whole SUPERSEDES chain through a fact, oldest first."""
    if await get_fact(db, fact_id) is None:
        raise NotFoundError(f"no fact with id {fact_id!r}")
    cursor = await db.execute(
        "WITH RECURSIVE chain(id) AS (SELECT ? UNION"
        " SELECT CASE WHEN l.new_id = c.id THEN l.old_id ELSE l.new_id END"
        " FROM lineage l JOIN chain c ON (l.new_id = c.id OR l.old_id = c.id) WHERE l.relation = 'SUPERSEDES')"
        f" SELECT {FACT_COLUMNS} FROM facts WHERE id IN (SELECT id FROM chain) ORDER BY recorded_at, seq",
        (fact_id,),
    )
    return [fact_from_row(row) for row in await cursor.fetchall()]


async def lineage(db: Connection, fact_id: str) -> list[Lineage]:
    cursor = await db.execute(
        "SELECT new_id, old_id, relation, at FROM lineage WHERE new_id = ? OR old_id = ? ORDER BY at",
        (fact_id, fact_id),
    )
    return [lineage_from_row(row) for row in await cursor.fetchall()]


async def delta_log(db: Connection, *, rule_id: str | None, pending: bool, limit: int) -> list[DeltaRecord]:
    where = ["1 = 1"]
    params: list[object] = []
    if rule_id is not None:
        where.append("rule_id = ?")
        params.append(rule_id)
    if pending:
        where.append("applied_at IS NULL AND rejected_at IS NULL")
    sql = f"SELECT {DELTA_COLUMNS} FROM delta_log WHERE {' AND '.join(where)} ORDER BY seq LIMIT ?"
    cursor = await db.execute(sql, (*params, limit))
    return [delta_record_from_row(row) for row in await cursor.fetchall()]
