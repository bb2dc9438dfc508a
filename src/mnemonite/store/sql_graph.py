"""The graph side of the stores: entities, edges, walks, fact recall by entity, salience upkeep.

Written once for SQLite and PostgreSQL (see `mnemonite.store.sql`); full text branches per
dialect (FTS5 / tsvector). Every function runs on a connection the caller holds inside a
transaction; `GraphMethods` are the store methods. Entities and
edges belong to one (user, agent) scope key; an edge whose ends lie in another scope is
reported as pointing at a missing entity, never linked.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractAsyncContextManager
from datetime import datetime
from typing import Any

import orjson

from mnemonite._time import from_text, to_text, utcnow
from mnemonite.errors import EntityConflictError, InvalidInputError, NotFoundError
from mnemonite.models import AddDelta, DeltaRecord, Fact, FactPayload
from mnemonite.models.graph import Direction, Edge, Entity, GraphStats, RecallOptions
from mnemonite.scope import fact_key
from mnemonite.search import query as q
from mnemonite.store.rows import FACT_COLUMNS, dumps, fact_from_row
from mnemonite.store.sql import Connection, integrity_errors, is_postgres, json_array_has
from mnemonite.store.sql_facts import apply_delta, missing_entities
from mnemonite.store.sql_learned import name_key
from mnemonite.store.sql_search import fts_match, tsquery

ENTITY_COLUMNS = "id, user_id, agent_id, name, entity_type, properties, owner, created_at, updated_at, learned_from"
EDGE_COLUMNS = (
    "id, user_id, agent_id, source_id, target_id, relation, properties, created_at, updated_at, fact_id, valid_from,"
    " valid_to"
)
_QUALIFIED_FACT_COLUMNS = ", ".join("f." + column.strip() for column in FACT_COLUMNS.split(","))


# Rows were validated as models on their way in: they are read back unchecked (a walk returns thousands).


def _entity(row: Sequence[Any]) -> Entity:
    return Entity.trusted({
        "id": row[0], "user": row[1], "agent": row[2], "name": row[3], "entity_type": row[4],
        "properties": orjson.loads(row[5]), "owner": row[6], "created_at": from_text(row[7]),
        "updated_at": from_text(row[8]), "learned_from": row[9],
    })  # fmt: skip


def _edge(row: Sequence[Any], depth: int | None = None) -> Edge:
    return Edge.trusted({
        "id": row[0], "user": row[1], "agent": row[2], "source": row[3], "target": row[4], "relation": row[5],
        "properties": orjson.loads(row[6]), "created_at": from_text(row[7]), "updated_at": from_text(row[8]),
        "fact_id": row[9], "valid_from": from_text(row[10]) if row[10] else None,
        "valid_to": from_text(row[11]) if row[11] else None, "depth": depth,
    })  # fmt: skip


def _entity_values(entity: Entity, scope_key: str) -> tuple[Any, ...]:
    return (
        entity.id, scope_key, entity.user, entity.agent, entity.name, name_key(entity.name), entity.entity_type,
        dumps(entity.properties), entity.owner, to_text(entity.created_at), to_text(entity.updated_at),
    )  # fmt: skip


async def create_entities(db: Connection, entities: Sequence[Entity], scope_key: str) -> list[Entity]:
    """Insert entities of one scope; a name already taken (case-insensitive) raises, inserting none. A name the
    graph learned from a statement is taken over instead: that entity keeps its id, links and edges, and takes the
    type, owner and properties given (over those it had)."""
    made: list[Entity] = []
    fresh: list[Entity] = []
    for entity in entities:
        held = await entity_by_name(db, scope_key, entity.name)
        if held is not None and held.learned_from is not None and entity.name not in {e.name for e in fresh}:
            learned = {k: v for k, v in held.properties.items() if k != "guessed"}  # typed by hand now
            adopted = held.model_copy(update={"entity_type": entity.entity_type, "owner": entity.owner,
                                              "properties": {**learned, **entity.properties},
                                              "updated_at": entity.updated_at, "learned_from": None})  # fmt: skip
            await update_entity(db, adopted)
            made.append(adopted)
        else:
            fresh.append(entity)
            made.append(entity)
    try:
        await db.executemany(
            "INSERT INTO entities (id, scope_key, user_id, agent_id, name, name_key, entity_type, properties, owner,"
            " created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [_entity_values(entity, scope_key) for entity in fresh],
        )
    except integrity_errors() as error:
        raise EntityConflictError(_taken(entities, error)) from None
    return made


def _taken(entities: Sequence[Entity], error: Exception) -> str:
    if len(entities) == 1:
        return f"an entity named {entities[0].name!r} already exists in this (user, agent) scope"
    return f"an entity name or id is already taken in this (user, agent) scope ({error})"


async def entity(db: Connection, entity_id: str) -> Entity | None:
    cursor = await db.execute(f"SELECT {ENTITY_COLUMNS} FROM entities WHERE id = ?", (entity_id,))
    row = await cursor.fetchone()
    return None if row is None else _entity(row)


async def entities_by_id(db: Connection, ids: Sequence[str]) -> list[Entity]:
    found: list[Entity] = []
    for start in range(0, len(ids), 500):
        chunk = list(ids[start : start + 500])
        marks = ", ".join("?" for _ in chunk)
        cursor = await db.execute(f"SELECT {ENTITY_COLUMNS} FROM entities WHERE id IN ({marks})", chunk)
        found += [_entity(row) for row in await cursor.fetchall()]
    return found


async def entity_by_name(db: Connection, scope_key: str, name: str) -> Entity | None:
    cursor = await db.execute(
        f"SELECT {ENTITY_COLUMNS} FROM entities WHERE scope_key = ? AND name_key = ?", (scope_key, name_key(name))
    )
    row = await cursor.fetchone()
    return None if row is None else _entity(row)


async def update_entity(db: Connection, updated: Entity) -> None:
    try:
        await db.execute(
            "UPDATE entities SET name = ?, name_key = ?, entity_type = ?, properties = ?, owner = ?, updated_at = ?,"
            " learned_from = ? WHERE id = ?",
            (updated.name, name_key(updated.name), updated.entity_type, dumps(updated.properties), updated.owner,
             to_text(updated.updated_at), updated.learned_from, updated.id),
        )  # fmt: skip
    except integrity_errors():
        raise EntityConflictError(
            f"an entity named {updated.name!r} already exists in this (user, agent) scope"
        ) from None


async def list_entities(
    db: Connection, scope_key: str, entity_type: str | None, limit: int, offset: int
) -> tuple[list[Entity], int]:
    """One page of a scope's entities by name, and how many there are in all."""
    where, params = "scope_key = ?", [scope_key]
    if entity_type is not None:
        where += " AND entity_type = ?"
        params.append(entity_type)
    cursor = await db.execute(f"SELECT COUNT(*) FROM entities WHERE {where}", params)
    row = await cursor.fetchone()
    total = int(row[0]) if row else 0
    cursor = await db.execute(
        f"SELECT {ENTITY_COLUMNS} FROM entities WHERE {where} ORDER BY name_key, seq LIMIT ? OFFSET ?",
        (*params, limit, offset),
    )
    return [_entity(row) for row in await cursor.fetchall()], total


async def search_entities(db: Connection, scope_key: str, query: str, limit: int) -> list[Entity]:
    """Entities whose name, type or properties match the query's words (BM25, name weighted highest)."""
    words = q.terms(query)
    if not words:
        return []
    columns = ", ".join("e." + c.strip() for c in ENTITY_COLUMNS.split(","))
    if is_postgres(db):
        cursor = await db.execute(
            f"SELECT {columns} FROM entities e, (SELECT {tsquery(words)} AS query) q WHERE e.search_tsv @@ q.query"
            " AND e.scope_key = ? ORDER BY ts_rank(e.search_tsv, q.query) DESC, e.seq LIMIT ?",
            (*words, scope_key, limit),
        )
        return [_entity(row) for row in await cursor.fetchall()]
    cursor = await db.execute(
        f"SELECT {columns} FROM entities_fts"
        " JOIN entities e ON e.seq = entities_fts.rowid"
        " WHERE entities_fts MATCH ? AND e.scope_key = ? ORDER BY bm25(entities_fts, 4.0, 1.0, 1.0), e.seq LIMIT ?",
        (fts_match(words), scope_key, limit),
    )
    return [_entity(row) for row in await cursor.fetchall()]


async def delete_entity(db: Connection, entity_id: str) -> None:
    """Remove an entity, its edges and its fact links (the facts themselves stay)."""
    await db.execute("DELETE FROM entities WHERE id = ?", (entity_id,))


async def check_ends(db: Connection, scope_key: str, ids: Sequence[str]) -> None:
    """Every id must name an entity of the scope."""
    if missing := await missing_entities(db, scope_key, ids):
        shown = ", ".join(repr(m) for m in missing[:5]) + (" ..." if len(missing) > 5 else "")
        raise NotFoundError(f"no entity {shown} in this (user, agent) scope")


async def relate(db: Connection, edges: Sequence[Edge], scope_key: str) -> list[Edge]:
    """Upsert edges: an existing (source, target, relation) keeps its id and creation time, takes the new properties."""
    for edge in edges:
        if edge.source == edge.target:
            raise InvalidInputError(f"an edge cannot join entity {edge.source!r} to itself")
    await check_ends(db, scope_key, [end for edge in edges for end in (edge.source, edge.target)])
    await db.executemany(
        "INSERT INTO edges (id, scope_key, user_id, agent_id, source_id, target_id, relation, properties, created_at,"
        " updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (source_id, target_id, relation)"
        " DO UPDATE SET properties = excluded.properties, updated_at = excluded.updated_at, fact_id = NULL,"
        " valid_from = NULL, valid_to = NULL",  # related by hand: held until unrelated, whatever a fact says
        [
            (e.id, scope_key, e.user, e.agent, e.source, e.target, e.relation, dumps(e.properties),
             to_text(e.created_at), to_text(e.updated_at))
            for e in edges
        ],
    )  # fmt: skip
    if len(edges) != 1:
        return []
    edge = edges[0]
    cursor = await db.execute(
        f"SELECT {EDGE_COLUMNS} FROM edges WHERE source_id = ? AND target_id = ? AND relation = ?",
        (edge.source, edge.target, edge.relation),
    )
    row = await cursor.fetchone()
    assert row is not None
    return [_edge(row)]


async def unrelate(db: Connection, source: str, target: str, relation: str) -> bool:
    cursor = await db.execute(
        "DELETE FROM edges WHERE source_id = ? AND target_id = ? AND relation = ?", (source, target, relation)
    )
    return int(cursor.rowcount) > 0


async def edges_of(db: Connection, entity_id: str, end: str, limit: int, ended: bool = False) -> list[Edge]:
    """The edges at one end of an entity, oldest first: those that hold, and with ``ended`` those that ended too."""
    column = "source_id" if end == "source" else "target_id"
    holding = "" if ended else " AND valid_to IS NULL"
    cursor = await db.execute(
        f"SELECT {EDGE_COLUMNS} FROM edges WHERE {column} = ?{holding} ORDER BY seq LIMIT ?", (entity_id, limit)
    )
    return [_edge(row) for row in await cursor.fetchall()]


async def neighbors(
    db: Connection, entity_id: str, relation: str | None, direction: Direction, depth: int, limit: int,
    ended: bool = False,
) -> list[Edge]:  # fmt: skip
    """The edges of a breadth-first walk of ``depth`` hops, nearest first.

    One recursive query: each entity is reached once at its shortest distance (a UNION on
    (entity, distance) and the depth bound make cycles terminate), then every edge whose
    nearer end lies closer than ``depth`` is returned once, with that distance.
    """
    # One recursive SELECT (several need SQLite 3.34); SQLite serves the OR with both indexes.
    step = {
        "out": "SELECT e.target_id, w.depth + 1 FROM walk w JOIN edges e ON e.source_id = w.node",
        "in": "SELECT e.source_id, w.depth + 1 FROM walk w JOIN edges e ON e.target_id = w.node",
        "both": "SELECT CASE WHEN e.source_id = w.node THEN e.target_id ELSE e.source_id END, w.depth + 1"
        " FROM walk w JOIN edges e ON (e.source_id = w.node OR e.target_id = w.node)",
    }[direction]
    related = (" AND e.relation = ?" if relation is not None else "") + ("" if ended else " AND e.valid_to IS NULL")
    recursive = f"{step} WHERE w.depth < ?{related}"
    ends = []
    if direction in ("out", "both"):
        ends.append(f"SELECT e.seq, r.depth FROM reached r JOIN edges e ON e.source_id = r.node{related}")
    if direction in ("in", "both"):
        ends.append(f"SELECT e.seq, r.depth FROM reached r JOIN edges e ON e.target_id = r.node{related}")
    sql = (
        f"WITH RECURSIVE walk(node, depth) AS (SELECT CAST(? AS TEXT), 0 UNION {recursive}),"
        " reached(node, depth) AS (SELECT node, MIN(depth) FROM walk GROUP BY node HAVING MIN(depth) < ?),"
        f" found(seq, depth) AS (SELECT seq, MIN(depth) FROM ({' UNION ALL '.join(ends)}) AS ends GROUP BY seq),"
        # Cut to the limit before reading whole rows: a walk past a hub finds thousands of edges.
        " kept(seq, depth) AS (SELECT seq, depth FROM found ORDER BY depth, seq LIMIT ?)"
        f" SELECT {', '.join('x.' + c.strip() for c in EDGE_COLUMNS.split(','))}, kept.depth FROM kept"
        " JOIN edges x ON x.seq = kept.seq ORDER BY kept.depth, kept.seq"
    )
    by_relation = [relation] if relation is not None else []
    params = [entity_id, depth - 1, *by_relation, depth, *by_relation * len(ends), limit]
    cursor = await db.execute(sql, params)
    return [_edge(row[:12], int(row[12])) for row in await cursor.fetchall()]


async def link_count(db: Connection, entity_id: str) -> int:
    cursor = await db.execute("SELECT COUNT(*) FROM fact_entities WHERE entity_id = ?", (entity_id,))
    row = await cursor.fetchone()
    return int(row[0]) if row else 0


async def recall(db: Connection, scope_key: str, opts: RecallOptions, candidates: int) -> list[tuple[Fact, float]]:
    """Current facts of the scope under ``opts``'s filters, with BM25 relevance (1.0 without a query).

    Ranking by salience happens in Python (it decays with time); this returns at most
    ``candidates`` rows: the best BM25 matches, or the most salient when there is no query.
    """
    # With entities, their links drive the query (unary + keeps the planner off the scope index).
    by_links = opts.entity_ids and not is_postgres(db)
    where = ["+f.scope_key = ?" if by_links else "f.scope_key = ?", "f.superseded_at IS NULL"]
    params: list[object] = [scope_key]
    if opts.memory_type is not None:
        where.append("f.memory_type = ?")
        params.append(opts.memory_type)
    if opts.entity_ids:
        marks = ", ".join("?" for _ in opts.entity_ids)
        where.append(f"f.id IN (SELECT fact_id FROM fact_entities WHERE entity_id IN ({marks}))")
        params += opts.entity_ids
    for tag in dict.fromkeys(opts.tags):
        where.append(json_array_has(db, "f.tags"))
        params.append(tag)
    words = q.terms(opts.query) if opts.query else []
    if opts.query and not words:
        return []  # a query of stop words only matches nothing
    if words and is_postgres(db):
        sql = (
            f"SELECT {_QUALIFIED_FACT_COLUMNS}, ts_rank(f.text_tsv, q.query) AS rank FROM facts f,"
            f" (SELECT {tsquery(words)} AS query) q WHERE f.text_tsv @@ q.query AND {' AND '.join(where)}"
            " ORDER BY rank DESC, f.seq LIMIT ?"
        )
        params = [*words, *params]
    elif words:
        sql = (
            f"SELECT {_QUALIFIED_FACT_COLUMNS}, -bm25(facts_fts) FROM facts_fts JOIN facts f ON f.seq = facts_fts.rowid"
            f" WHERE facts_fts MATCH ? AND {' AND '.join(where)} ORDER BY bm25(facts_fts), f.seq LIMIT ?"
        )
        params = [fts_match(words), *params]
    else:
        sql = (
            f"SELECT {_QUALIFIED_FACT_COLUMNS}, 1.0 FROM facts f WHERE {' AND '.join(where)}"
            " ORDER BY f.salience DESC, f.seq DESC LIMIT ?"
        )
    cursor = await db.execute(sql, (*params, candidates))
    width = len(FACT_COLUMNS.split(","))
    return [(fact_from_row(row[:width]), float(row[width])) for row in await cursor.fetchall()]


async def touch(db: Connection, ids: Sequence[str], boost: float, now: datetime) -> int:
    """Count an access of each fact: access count + 1, last access now, salience + boost (at most 1)."""
    cursor = await db.executemany(
        "UPDATE facts SET access_count = access_count + 1, last_accessed_at = ?,"
        " salience = CASE WHEN salience + ? > 1.0 THEN 1.0 ELSE salience + ? END WHERE id = ?",
        [(to_text(now), boost, boost, fact_id) for fact_id in dict.fromkeys(ids)],
    )
    return int(cursor.rowcount)


async def decay_all(db: Connection, scope_key: str, factor: float) -> int:
    """Multiply the salience of every current fact of the scope by ``factor``."""
    cursor = await db.execute(
        "UPDATE facts SET salience = CASE WHEN salience * ? > 1.0 THEN 1.0 WHEN salience * ? < 0.0 THEN 0.0"
        " ELSE salience * ? END WHERE scope_key = ? AND superseded_at IS NULL",
        (factor, factor, factor, scope_key),
    )
    return int(cursor.rowcount)


async def consolidated(db: Connection, new_id: str, old_ids: Sequence[str], factor: float, now: datetime) -> None:
    """Record that ``new_id`` CONSOLIDATES ``old_ids`` and fade the sources' salience by ``factor``."""
    await db.executemany(
        "INSERT INTO lineage (new_id, old_id, relation, at) VALUES (?, ?, 'CONSOLIDATES', ?)",
        [(new_id, old, to_text(now)) for old in old_ids],
    )
    await db.executemany("UPDATE facts SET salience = salience * ? WHERE id = ?", [(factor, old) for old in old_ids])


async def stats(db: Connection, scope_key: str) -> GraphStats:
    async def one(sql: str) -> int:
        cursor = await db.execute(sql, (scope_key,))
        row = await cursor.fetchone()
        return int(row[0] or 0) if row else 0

    cursor = await db.execute(
        "SELECT memory_type, COUNT(*) FROM facts WHERE scope_key = ? AND superseded_at IS NULL GROUP BY memory_type",
        (scope_key,),
    )
    by_type = {str(row[0]): int(row[1]) for row in await cursor.fetchall()}
    return GraphStats(
        entities=await one("SELECT COUNT(*) FROM entities WHERE scope_key = ?"),
        edges=await one("SELECT COUNT(*) FROM edges WHERE scope_key = ? AND valid_to IS NULL"),
        memories=await one("SELECT COUNT(*) FROM facts WHERE scope_key = ?"),
        active_memories=sum(by_type.values()),
        total_memory_tokens=await one(
            "SELECT SUM(COALESCE(token_count, 0)) FROM facts WHERE scope_key = ? AND superseded_at IS NULL"
        ),
        memories_by_type=by_type,
    )


class GraphMethods:
    """The graph methods of a store (mixed in; every write is one transaction)."""

    def _sql_read(self) -> AbstractAsyncContextManager[Connection]:
        raise NotImplementedError

    def _sql_write(self) -> AbstractAsyncContextManager[Connection]:
        raise NotImplementedError

    async def create_entities(self, entities: Sequence[Entity]) -> list[Entity]:
        scopes = {(e.user, e.agent) for e in entities}
        if len(scopes) > 1:
            raise InvalidInputError("create_entities takes entities of one (user, agent) scope at a time")
        if not entities:
            return []
        async with self._sql_write() as db:
            return await create_entities(db, entities, fact_key(*scopes.pop()))

    async def entity(self, entity_id: str) -> Entity | None:
        async with self._sql_read() as db:
            return await entity(db, entity_id)

    async def entities_by_id(self, ids: Sequence[str]) -> list[Entity]:
        async with self._sql_read() as db:
            return await entities_by_id(db, ids)

    async def entity_by_name(self, user: str, agent: str, name: str) -> Entity | None:
        async with self._sql_read() as db:
            return await entity_by_name(db, fact_key(user, agent), name)

    async def update_entity(self, updated: Entity) -> None:
        async with self._sql_write() as db:
            await update_entity(db, updated)

    async def list_entities(
        self, user: str, agent: str, entity_type: str | None, limit: int, offset: int
    ) -> tuple[list[Entity], int]:
        async with self._sql_read() as db:
            return await list_entities(db, fact_key(user, agent), entity_type, limit, offset)

    async def search_entities(self, user: str, agent: str, query: str, limit: int) -> list[Entity]:
        async with self._sql_read() as db:
            return await search_entities(db, fact_key(user, agent), query, limit)

    async def delete_entity(self, entity_id: str) -> None:
        async with self._sql_write() as db:
            await delete_entity(db, entity_id)

    async def relate(self, edges: Sequence[Edge]) -> list[Edge]:
        scopes = {(e.user, e.agent) for e in edges}
        if len(scopes) > 1:
            raise InvalidInputError("relate takes edges of one (user, agent) scope at a time")
        if not edges:
            return []
        async with self._sql_write() as db:
            return await relate(db, edges, fact_key(*scopes.pop()))

    async def unrelate(self, source: str, target: str, relation: str) -> bool:
        async with self._sql_write() as db:
            return await unrelate(db, source, target, relation)

    async def edges_of(self, entity_id: str, end: str, limit: int, ended: bool = False) -> list[Edge]:
        async with self._sql_read() as db:
            return await edges_of(db, entity_id, end, limit, ended)

    async def neighbors(
        self, entity_id: str, relation: str | None, direction: Direction, depth: int, limit: int, ended: bool = False
    ) -> list[Edge]:
        async with self._sql_read() as db:
            return await neighbors(db, entity_id, relation, direction, depth, limit, ended)

    async def recall(self, user: str, agent: str, opts: RecallOptions, candidates: int) -> list[tuple[Fact, float]]:
        async with self._sql_read() as db:
            return await recall(db, fact_key(user, agent), opts, candidates)

    async def touch_facts(self, fact_ids: Sequence[str], boost: float, now: datetime) -> int:
        async with self._sql_write() as db:
            return await touch(db, fact_ids, boost, now)

    async def decay_all(self, user: str, agent: str, factor: float) -> int:
        async with self._sql_write() as db:
            return await decay_all(db, fact_key(user, agent), factor)

    async def consolidate_facts(self, delta: AddDelta, old_ids: Sequence[str], factor: float) -> DeltaRecord:
        """Apply the consolidated fact's delta, its CONSOLIDATES lineage and the sources' fading, atomically."""
        async with self._sql_write() as db:
            now = utcnow()
            found = await _current(db, old_ids)
            if missing := [old for old in old_ids if old not in found]:
                raise NotFoundError(f"no current fact {missing[0]!r} to consolidate")
            scopes = {found[old] for old in old_ids}
            payload = FactPayload.model_validate(delta.fact_payload)
            if len(scopes) != 1 or scopes != {fact_key(payload.user or "", payload.agent or "")}:
                raise InvalidInputError("consolidate takes facts of one (user, agent) scope, the new fact's own")
            record = await apply_delta(db, delta, now)
            assert record.fact_id is not None
            await consolidated(db, record.fact_id, old_ids, factor, now)
            return record

    async def graph_stats(self, user: str, agent: str) -> GraphStats:
        async with self._sql_read() as db:
            return await stats(db, fact_key(user, agent))


async def _current(db: Connection, ids: Sequence[str]) -> dict[str, str]:
    """fact id -> scope key of the current (not superseded, not forgotten) facts among ``ids``."""
    marks = ", ".join("?" for _ in ids)
    cursor = await db.execute(
        f"SELECT id, scope_key FROM facts WHERE id IN ({marks}) AND superseded_at IS NULL", tuple(ids)
    )
    return {row[0]: row[1] for row in await cursor.fetchall()}
