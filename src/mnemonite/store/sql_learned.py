"""The graph a fact adds, written in the fact's own transaction (SQLite and PostgreSQL alike).

A `GraphChange` rides on the delta that writes the fact: its entities are made first (one whose
name the scope holds by then, made meanwhile by another writer, is that one instead), the fact
links to them, and its edges name the fact. Closing a fact (superseded, forgotten) ends the
edges it held at the same world time; a purge removes them, and the entities only it made.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractAsyncContextManager
from datetime import datetime
from typing import Any

import orjson

from mnemonite._time import to_text
from mnemonite.models.base import new_id
from mnemonite.models.deltas import GraphChange
from mnemonite.models.fact import Fact
from mnemonite.scope import fact_key
from mnemonite.store.rows import FACT_COLUMNS, dumps, fact_from_row
from mnemonite.store.sql import Connection


def name_key(name: str) -> str:
    """Entity names are unique per scope regardless of case and surrounding spaces."""
    return " ".join(name.split()).casefold()


async def make_entities(
    db: Connection, change: GraphChange, scope: tuple[str, str], scope_key: str, fact_id: str, now: datetime
) -> dict[str, str]:
    """Make the change's entities and add its aliases; returns planned id -> the id the scope holds."""
    ids: dict[str, str] = {}
    stamp = to_text(now)
    for entity in sorted(change.entities, key=lambda e: name_key(e.name)):  # one order: no two writers wait in a ring
        properties: dict[str, Any] = {"aliases": entity.aliases} if entity.aliases else {}
        if entity.self_entity:
            properties["self"] = True
        if entity.guessed:
            properties["guessed"] = True
        await db.execute(
            "INSERT INTO entities (id, scope_key, user_id, agent_id, name, name_key, entity_type, properties, owner,"
            " created_at, updated_at, learned_from) VALUES (?, ?, ?, ?, ?, ?, ?, ?, NULL, ?, ?, ?)"
            " ON CONFLICT (scope_key, name_key) DO NOTHING",
            (entity.id, scope_key, scope[0], scope[1], entity.name, name_key(entity.name), entity.entity_type,
             dumps(properties), stamp, stamp, fact_id),
        )  # fmt: skip
        cursor = await db.execute(
            "SELECT id FROM entities WHERE scope_key = ? AND name_key = ?", (scope_key, name_key(entity.name))
        )
        row = await cursor.fetchone()
        assert row is not None
        ids[entity.id] = str(row[0])
    for entity_id, names in change.aliases.items():
        await _add_aliases(db, ids.get(entity_id, entity_id), scope_key, names, stamp)
    for entity_id, entity_type in change.types.items():
        await _retype(db, ids.get(entity_id, entity_id), scope_key, entity_type, stamp)
    return ids


async def _retype(db: Connection, entity_id: str, scope_key: str, entity_type: str, stamp: str) -> None:
    """A guessed type corrected by what a relation says ("Alice" taken for an organisation, then "Alice drives")."""
    cursor = await db.execute("SELECT properties FROM entities WHERE id = ? AND scope_key = ?", (entity_id, scope_key))
    row = await cursor.fetchone()
    if row is None:
        return
    properties: dict[str, Any] = orjson.loads(row[0])
    if not properties.pop("guessed", False):
        return  # typed by a relation, or by hand: kept
    await db.execute(
        "UPDATE entities SET entity_type = ?, properties = ?, updated_at = ? WHERE id = ?",
        (entity_type, dumps(properties), stamp, entity_id),
    )


async def _add_aliases(db: Connection, entity_id: str, scope_key: str, names: Sequence[str], stamp: str) -> None:
    cursor = await db.execute(
        "SELECT name, properties FROM entities WHERE id = ? AND scope_key = ?", (entity_id, scope_key)
    )
    row = await cursor.fetchone()
    if row is None:
        return  # removed meanwhile: the fact's links to it are refused where they are checked
    properties: dict[str, Any] = orjson.loads(row[1])
    held = properties.get("aliases")
    aliases = list(held) if isinstance(held, list) else []
    known = {name_key(str(a)) for a in aliases} | {name_key(row[0])}
    added = [name for name in names if name_key(name) not in known]
    if added:
        properties["aliases"] = aliases + added
        await db.execute(
            "UPDATE entities SET properties = ?, updated_at = ? WHERE id = ?", (dumps(properties), stamp, entity_id)
        )


async def open_edges(
    db: Connection,
    change: GraphChange,
    ids: dict[str, str],
    scope: tuple[str, str],
    scope_key: str,
    fact_id: str,
    valid_from: datetime,
    now: datetime,
) -> None:
    """The fact's edges, held from its ``valid_from``: an edge of the same ends and relation (an older fact's,
    ended or not) now names this fact and holds again. First the edges it ends: those it says no longer hold,
    and for a relation held one at a time (``single``) the source's others."""
    stamp, start = to_text(now), to_text(valid_from)
    edges = [(ids.get(e.source, e.source), e.relation, ids.get(e.target, e.target), e) for e in change.edges]
    edges = [edge for edge in edges if edge[0] != edge[2]]
    for edge in change.ends:  # "I quit Acme": the edge ends when the fact says so
        await _end_said(db, (ids.get(edge.source, edge.source), edge.relation, ids.get(edge.target, edge.target)),
                        edge.label, scope, scope_key, fact_id, start, stamp)  # fmt: skip
    for source, relation, target, edge in edges:
        if edge.single:
            await db.execute(
                "UPDATE edges SET valid_to = ?, updated_at = ? WHERE valid_to IS NULL AND source_id = ?"
                " AND relation = ? AND target_id != ? AND (valid_from IS NULL OR valid_from <= ?)",
                (start, stamp, source, relation, target, start),
            )
    await db.executemany(
        "INSERT INTO edges (id, scope_key, user_id, agent_id, source_id, target_id, relation, properties, created_at,"
        " updated_at, fact_id, valid_from, valid_to) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL)"
        " ON CONFLICT (source_id, target_id, relation) DO UPDATE SET fact_id = excluded.fact_id,"
        " valid_from = CASE WHEN edges.valid_to IS NULL AND edges.valid_from IS NOT NULL THEN edges.valid_from"
        " ELSE excluded.valid_from END, valid_to = NULL, updated_at = excluded.updated_at"
        " WHERE edges.fact_id IS NOT NULL",  # an edge made by hand stays as it was made
        [(new_id(), scope_key, scope[0], scope[1], source, target, relation,
          dumps({"as": edge.label} if edge.label else {}), stamp, stamp, fact_id, start)
         for source, relation, target, edge in edges],
    )  # fmt: skip
    for source, relation, target, edge in edges:
        cursor = await db.execute(
            "SELECT id FROM edges WHERE source_id = ? AND target_id = ? AND relation = ?", (source, target, relation)
        )
        row = await cursor.fetchone()
        if row is not None:
            await _support(db, [str(row[0])], fact_id)
        if edge.single:
            await _after_newer(db, (source, relation, target), fact_id, start)


async def _end_said(
    db: Connection, edge: tuple[str, str, str], label: str, scope: tuple[str, str], scope_key: str, fact_id: str,
    start: str, stamp: str,
) -> None:  # fmt: skip
    """End an edge a statement says no longer holds; one never said to hold is recorded as ended then."""
    source, relation, target = edge
    await db.execute(
        "UPDATE edges SET valid_to = ?, updated_at = ? WHERE valid_to IS NULL AND relation = ? AND source_id = ?"
        " AND target_id = ? AND (valid_from IS NULL OR valid_from <= ?)",
        (start, stamp, relation, source, target, start),
    )
    if source != target:  # never said to hold before: it held until now, since a time nobody said
        await db.execute(
            "INSERT INTO edges (id, scope_key, user_id, agent_id, source_id, target_id, relation, properties,"
            " created_at, updated_at, fact_id, valid_from, valid_to)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, ?)"
            " ON CONFLICT (source_id, target_id, relation) DO NOTHING",
            (new_id(), scope_key, scope[0], scope[1], source, target, relation,
             dumps({"as": label} if label else {}), stamp, stamp, fact_id, start),
        )  # fmt: skip


async def _after_newer(db: Connection, edge: tuple[str, str, str], fact_id: str, start: str) -> None:
    """Said of a time before what is said since ("lived in Leeds" after "moved to York"): held until the newer."""
    source, relation, target = edge
    cursor = await db.execute(
        "SELECT MIN(valid_from) FROM edges WHERE source_id = ? AND relation = ? AND target_id != ?"
        " AND valid_to IS NULL AND valid_from > ?",
        (source, relation, target, start),
    )
    row = await cursor.fetchone()
    if row is not None and row[0] is not None:
        await db.execute(
            "UPDATE edges SET valid_to = ? WHERE source_id = ? AND target_id = ? AND relation = ? AND fact_id = ?",
            (row[0], source, target, relation, fact_id),
        )


async def open_approved(db: Connection, fact: Fact, now: datetime) -> None:
    """A pending fact a judge or a person approved holds now: the edges its delta planned open from its world time."""
    cursor = await db.execute(
        "SELECT body FROM delta_log WHERE fact_id = ? AND kind IN ('add', 'update') ORDER BY seq DESC LIMIT 1",
        (fact.id,),
    )
    row = await cursor.fetchone()
    graph = orjson.loads(row[0]).get("graph") if row is not None else None
    if not graph:
        return
    change = GraphChange.model_validate(graph)
    key = fact_key(fact.user, fact.agent)
    ids: dict[str, str] = {}
    for entity in change.entities:  # made with the pending fact; by name, as they are now (renamed: left out)
        cursor = await db.execute(
            "SELECT id FROM entities WHERE scope_key = ? AND name_key = ?", (key, name_key(entity.name))
        )
        row = await cursor.fetchone()
        ids[entity.id] = str(row[0]) if row is not None else ""
    cursor = await db.execute("SELECT id FROM entities WHERE scope_key = ?", (key,))
    held = {str(row[0]) for row in await cursor.fetchall()}
    edges = [e for e in change.edges if ids.get(e.source, e.source) in held and ids.get(e.target, e.target) in held]
    ends = [e for e in change.ends if ids.get(e.source, e.source) in held and ids.get(e.target, e.target) in held]
    kept = change.model_copy(update={"entities": [], "edges": edges, "ends": ends})
    await open_edges(db, kept, ids, (fact.user, fact.agent), key, fact.id, fact.valid_from, now)


async def carry_edges(
    db: Connection, closes: Sequence[str], change: GraphChange | None, ids: dict[str, str], fact_id: str
) -> None:
    """A supersede keeps the edges of the facts it replaces that the new statement does not contradict ("I live in
    Lisbon now" replaces "I live in Porto with my husband Leo": Leo is still the husband): they name the new fact.
    Contradicted: the same source and relation as one of its edges with another target, or one it ends."""
    if not closes:
        return
    said = {(ids.get(e.source, e.source), e.relation) for e in (change.edges if change else [])}
    ended = {
        (ids.get(e.source, e.source), e.relation, ids.get(e.target, e.target)) for e in (change.ends if change else [])
    }
    marks = ", ".join("?" for _ in closes)
    cursor = await db.execute(
        f"SELECT id, source_id, relation, target_id FROM edges WHERE valid_to IS NULL AND fact_id IN ({marks})",
        tuple(closes),
    )
    kept = [row[0] for row in await cursor.fetchall() if (row[1], row[2]) not in said and tuple(row[1:]) not in ended]
    await db.executemany("UPDATE edges SET fact_id = ? WHERE id = ?", [(fact_id, edge_id) for edge_id in kept])
    await _support(db, kept, fact_id)


async def _support(db: Connection, edge_ids: Sequence[str], fact_id: str) -> None:
    """Note that a fact states these edges (``properties["facts"]``: every fact that does, the latest last)."""
    for edge_id in edge_ids:
        cursor = await db.execute("SELECT properties FROM edges WHERE id = ? AND fact_id IS NOT NULL", (edge_id,))
        row = await cursor.fetchone()
        if row is None:
            continue  # related by hand
        properties: dict[str, Any] = orjson.loads(row[0])
        held = [f for f in properties.get("facts", []) if isinstance(f, str) and f != fact_id]
        properties["facts"] = [*held, fact_id]
        await db.execute("UPDATE edges SET properties = ? WHERE id = ?", (dumps(properties), edge_id))


async def _still_stated(
    db: Connection, fact_ids: Sequence[str], gone: Sequence[str]
) -> list[tuple[str, dict[str, Any], list[str]]]:
    """The edges the gone facts were the latest to state, each with the believed facts that state it still."""
    marks = ", ".join("?" for _ in fact_ids)
    cursor = await db.execute(f"SELECT id, properties FROM edges WHERE fact_id IN ({marks})", tuple(fact_ids))
    found = []
    for edge_id, body in await cursor.fetchall():
        properties: dict[str, Any] = orjson.loads(body)
        others = [f for f in properties.get("facts", []) if isinstance(f, str) and f not in gone]
        believed: list[str] = []
        if others:
            cursor = await db.execute(
                f"SELECT id FROM facts WHERE id IN ({', '.join('?' for _ in others)}) AND status = 'active'"
                " AND superseded_at IS NULL",
                tuple(others),
            )
            alive = {str(row[0]) for row in await cursor.fetchall()}
            believed = [f for f in others if f in alive]
        found.append((str(edge_id), properties, believed))
    return found


async def end_edges(db: Connection, fact_ids: Sequence[str], world_end: datetime, now: datetime) -> None:
    """The edges the closed facts held stop holding at the world time the facts did, unless another believed fact
    states them too ("Ana is my sister" forgotten, "my sister Ana lives in Porto" kept): that one holds them now."""
    if not fact_ids:
        return
    for edge_id, properties, believed in await _still_stated(db, fact_ids, fact_ids):
        if believed:
            await db.execute(
                "UPDATE edges SET fact_id = ?, properties = ? WHERE id = ?",
                (believed[-1], dumps({**properties, "facts": believed}), edge_id),
            )
        else:
            await db.execute(
                "UPDATE edges SET valid_to = ?, updated_at = ? WHERE id = ? AND valid_to IS NULL",
                (to_text(world_end), to_text(now), edge_id),
            )


async def purge_learned(db: Connection, fact_ids: Sequence[str]) -> None:
    """A purge removes the edges the facts held and the entities only they made (no other fact links to them)."""
    if not fact_ids:
        return
    marks = ", ".join("?" for _ in fact_ids)
    for edge_id, properties, believed in await _still_stated(db, fact_ids, fact_ids):
        if believed:  # stated by a fact that stays: kept, without the purged ones
            await db.execute(
                "UPDATE edges SET fact_id = ?, properties = ? WHERE id = ?",
                (believed[-1], dumps({**properties, "facts": believed}), edge_id),
            )
        else:
            await db.execute("DELETE FROM edges WHERE id = ?", (edge_id,))
    await db.execute(
        "DELETE FROM entities WHERE learned_from IS NOT NULL AND (learned_from IN"
        f" ({marks}) OR id IN (SELECT entity_id FROM fact_entities WHERE fact_id IN ({marks})))"
        " AND NOT EXISTS (SELECT 1 FROM fact_entities l WHERE l.entity_id = entities.id"
        f" AND l.fact_id NOT IN ({marks}))",
        (*fact_ids, *fact_ids, *fact_ids),
    )


# -- graph build: the facts a memory holds from before, read once, resumably -------------------------------


async def fact_scopes(db: Connection) -> list[tuple[str, str]]:
    """The (user, agent) scopes that hold a believed fact."""
    cursor = await db.execute(
        "SELECT DISTINCT user_id, agent_id FROM facts WHERE status = 'active' AND superseded_at IS NULL"
        " ORDER BY user_id, agent_id"
    )
    return [(str(row[0]), str(row[1])) for row in await cursor.fetchall()]


async def facts_to_learn(db: Connection, scope_key: str, limit: int) -> tuple[list[tuple[int, Fact]], int]:
    """The next believed facts of a scope past where `graph build` stopped, oldest first, and how many remain."""
    done = await _learned_upto(db, scope_key)
    where = "scope_key = ? AND seq > ? AND status = 'active' AND superseded_at IS NULL"
    cursor = await db.execute(f"SELECT COUNT(*) FROM facts WHERE {where}", (scope_key, done))
    row = await cursor.fetchone()
    cursor = await db.execute(
        f"SELECT seq, {FACT_COLUMNS} FROM facts WHERE {where} ORDER BY seq LIMIT ?", (scope_key, done, limit)
    )
    return [(int(r[0]), fact_from_row(r[1:])) for r in await cursor.fetchall()], int(row[0]) if row else 0


async def _learned_upto(db: Connection, scope_key: str) -> int:
    cursor = await db.execute("SELECT last_seq FROM graph_build WHERE scope_key = ?", (scope_key,))
    row = await cursor.fetchone()
    return int(row[0]) if row else 0


async def learned_upto(db: Connection, scope_key: str, seq: int) -> None:
    await db.execute(
        "INSERT INTO graph_build (scope_key, last_seq) VALUES (?, ?) ON CONFLICT (scope_key)"
        " DO UPDATE SET last_seq = excluded.last_seq",
        (scope_key, seq),
    )


class BuildMethods:
    """What `GraphMemory.build` reads and records (mixed into the stores)."""

    def _sql_read(self) -> AbstractAsyncContextManager[Connection]:
        raise NotImplementedError

    def _sql_write(self) -> AbstractAsyncContextManager[Connection]:
        raise NotImplementedError

    async def fact_scopes(self) -> list[tuple[str, str]]:
        async with self._sql_read() as db:
            return await fact_scopes(db)

    async def facts_to_learn(self, user: str, agent: str, limit: int) -> tuple[list[tuple[int, Fact]], int]:
        async with self._sql_read() as db:
            return await facts_to_learn(db, fact_key(user, agent), limit)

    async def learned_upto(self, user: str, agent: str, seq: int) -> None:
        async with self._sql_write() as db:
            await learned_upto(db, fact_key(user, agent), seq)
