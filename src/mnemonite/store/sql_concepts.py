"""The concept graph and the lifecycle tiers on the SQL stores, written once for SQLite and PostgreSQL.

Every graph belongs to one (user, agent): nothing a user's events taught is read under another user.
A consolidation is one transaction that starts by incrementing that graph's version
(an upsert on ``concept_graphs``): on PostgreSQL that row lock queues concurrent consolidations
of one graph, on SQLite the single writer does, so each one merges against the nodes the
previous one committed and versions never repeat or skip. Vectors are float32 bytes in both.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import AbstractAsyncContextManager
from datetime import datetime
from itertools import combinations
from typing import Any

import numpy as np
import numpy.typing as npt
import orjson

from mnemonite._time import from_text, to_text, utcnow
from mnemonite.errors import EmbedderMismatchError
from mnemonite.models.base import new_id
from mnemonite.models.concepts import ConceptNode, GraphVersion, MemoryGraph, RelationshipEdge, TopicMerge
from mnemonite.models.lifecycle import LifecycleTier, LifecycleWindows, SweepReport, TierRow, TierStats
from mnemonite.models.search import RecordKind
from mnemonite.store.rows import dumps
from mnemonite.store.sql import Connection, is_postgres

__all__ = ["ConceptMethods", "Promotion", "forget_records"]

Promotion = Callable[[TierRow], TierRow]
_NODE_COLUMNS = (
    "id, agent_id, label, description, frequency, category, model, created_at, updated_at, first_version, last_version"
)
_EDGE_COLUMNS = "id, agent_id, source_id, target_id, relation, weight, created_at, updated_at"
_VERSION_COLUMNS = (
    "user_id, agent_id, version, at, session_id, events, shift_distance, nodes_added, nodes_merged, edges_added,"
    " edges_reinforced"
)
_PRECEDES_FROM = 4  # a topic's first concepts (by weight) that 'precedes' edges start from: bounds the fan-out


def _node(row: Sequence[Any], sources: Sequence[str] = ()) -> ConceptNode:
    return ConceptNode.trusted({
        "id": row[0], "agent": row[1], "label": row[2], "description": row[3], "frequency": int(row[4]),
        "metadata": {"category": row[5]}, "model": row[6], "created_at": from_text(row[7]),
        "updated_at": from_text(row[8]), "first_version": int(row[9]), "last_version": int(row[10]),
        "sources": tuple(sources),
    })  # fmt: skip


def _edge(row: Sequence[Any]) -> RelationshipEdge:
    return RelationshipEdge.trusted({
        "id": row[0], "agent": row[1], "source": row[2], "target": row[3], "relation": row[4],
        "weight": int(row[5]), "created_at": from_text(row[6]), "updated_at": from_text(row[7]),
    })  # fmt: skip


def _version(row: Sequence[Any]) -> GraphVersion:
    return GraphVersion.trusted({
        "user": row[0], "agent": row[1], "version": int(row[2]), "at": from_text(row[3]), "session": row[4],
        "events": int(row[5]), "shift_distance": None if row[6] is None else float(row[6]),
        "nodes_added": tuple(orjson.loads(row[7])), "nodes_merged": tuple(orjson.loads(row[8])),
        "edges_added": int(row[9]), "edges_reinforced": int(row[10]),
    })  # fmt: skip


def _matrix(blobs: Sequence[bytes], dimensions: int) -> npt.NDArray[np.float32]:
    if not blobs:
        return np.empty((0, dimensions), dtype=np.float32)
    return np.vstack([np.frombuffer(bytes(b), dtype=np.float32) for b in blobs])


async def _bump(db: Connection, merge: TopicMerge, now: str) -> int:
    """The graph's next version, taken under the graph row's lock; another model's vectors are refused."""
    cursor = await db.execute(
        "INSERT INTO concept_graphs (user_id, agent_id, version, model, updated_at) VALUES (?, ?, 1, ?, ?)"
        " ON CONFLICT (user_id, agent_id) DO UPDATE SET version = concept_graphs.version + 1,"
        " updated_at = excluded.updated_at"
        " RETURNING version, model",
        (merge.user, merge.agent, merge.model, now),
    )
    version, model = await cursor.fetchone()
    if model != merge.model:
        raise EmbedderMismatchError(
            f"user {merge.user!r}'s concept graph of agent {merge.agent!r} holds {model!r} vectors,"
            f" not {merge.model!r}:"
            " consolidate with the embedder the graph was built with"
        )
    return int(version)


async def _match(db: Connection, merge: TopicMerge) -> tuple[list[str], list[int]]:
    """Each concept's node: an existing one at cosine >= ``merge_at``, else a new one (index into concepts)."""
    rows = list(
        await db.execute_fetchall(
            "SELECT id, unit_vector FROM concept_nodes WHERE user_id = ? AND agent_id = ?", (merge.user, merge.agent)
        )
    )
    ids = [str(row[0]) for row in rows]
    matrix = _matrix([row[1] for row in rows], merge.vectors.shape[1])
    chosen: list[str] = []
    fresh: list[int] = []
    for i, vector in enumerate(merge.vectors):
        scores = matrix @ vector
        best = int(np.argmax(scores)) if len(scores) else -1
        if best >= 0 and scores[best] >= merge.merge_at:
            chosen.append(ids[best])
            continue
        ids.append(new_id())
        matrix = np.vstack([matrix, vector[None, :]])
        chosen.append(ids[-1])
        fresh.append(i)
    return chosen, fresh


async def _write_nodes(
    db: Connection, merge: TopicMerge, chosen: list[str], fresh: list[int], version: int, now: str
) -> tuple[list[str], list[str]]:
    added = [chosen[i] for i in fresh]
    first = merge.schematic_at <= 1
    await db.executemany(
        f"INSERT INTO concept_nodes ({_NODE_COLUMNS}, user_id, unit_vector)"
        " VALUES (?, ?, ?, ?, 1, ?, ?, ?, ?, ?, ?, ?, ?)",
        [
            (chosen[i], merge.agent, merge.concepts[i].label, merge.concepts[i].description,
             "schematic" if first else "regular", merge.model, now, now, version, version, merge.user,
             merge.vectors[i].astype(np.float32).tobytes())
            for i in fresh
        ],
    )  # fmt: skip
    merged = [node for node in dict.fromkeys(chosen) if node not in added]
    if merged:
        marks = ", ".join("?" for _ in merged)
        await db.execute(
            "UPDATE concept_nodes SET frequency = frequency + 1, updated_at = ?, last_version = ?,"
            " category = CASE WHEN frequency + 1 >= ? THEN 'schematic' ELSE category END"
            f" WHERE id IN ({marks})",
            (now, version, merge.schematic_at, *merged),
        )
    return added, merged


async def _write_sources(db: Connection, nodes: Sequence[str], sources: Sequence[str]) -> None:
    rows = [(node, record) for node in nodes for record in dict.fromkeys(sources)]
    if not rows:
        return
    conflict = " ON CONFLICT DO NOTHING" if is_postgres(db) else ""
    verb = "INSERT" if is_postgres(db) else "INSERT OR IGNORE"
    await db.executemany(f"{verb} INTO concept_sources (node_id, record_id) VALUES (?, ?){conflict}", rows)


async def _previous_topic(db: Connection, merge: TopicMerge, version: int) -> list[str]:
    """The node ids the session's previous consolidation touched ('precedes' edges start there)."""
    if merge.session is None:
        return []
    cursor = await db.execute(
        "SELECT nodes_added, nodes_merged FROM concept_versions WHERE user_id = ? AND agent_id = ? AND session_id = ?"
        " AND version < ? ORDER BY version DESC LIMIT 1",
        (merge.user, merge.agent, merge.session, version),
    )
    row = await cursor.fetchone()
    return [] if row is None else [*orjson.loads(row[0]), *orjson.loads(row[1])][:_PRECEDES_FROM]


def _wanted_edges(topic: list[str], before: list[str]) -> list[tuple[str, str, str]]:
    pairs = [(a, b, "co_occurs") for a, b in combinations(sorted(set(topic)), 2)]
    pairs += [(a, b, "precedes") for a in before for b in dict.fromkeys(topic[:_PRECEDES_FROM]) if a != b]
    return list(dict.fromkeys(pairs))


async def _write_edges(
    db: Connection, user: str, agent: str, wanted: list[tuple[str, str, str]], now: str
) -> tuple[int, int]:
    if not wanted:
        return 0, 0
    nodes = sorted({n for a, b, _ in wanted for n in (a, b)})
    marks = ", ".join("?" for _ in nodes)
    rows = await db.execute_fetchall(
        f"SELECT source_id, target_id, relation FROM concept_edges WHERE user_id = ? AND agent_id = ?"
        f" AND source_id IN ({marks})",
        (user, agent, *nodes),
    )
    held = {(str(r[0]), str(r[1]), str(r[2])) for r in rows}
    new = [edge for edge in wanted if edge not in held]
    await db.executemany(
        f"INSERT INTO concept_edges ({_EDGE_COLUMNS}, user_id) VALUES (?, ?, ?, ?, ?, 1, ?, ?, ?)",
        [(new_id(), agent, a, b, relation, now, now, user) for a, b, relation in new],
    )
    await db.executemany(
        "UPDATE concept_edges SET weight = weight + 1, updated_at = ?"
        " WHERE user_id = ? AND agent_id = ? AND source_id = ? AND target_id = ? AND relation = ?",
        [(now, user, agent, a, b, relation) for a, b, relation in wanted if (a, b, relation) in held],
    )
    return len(new), len(wanted) - len(new)


async def consolidate(db: Connection, merge: TopicMerge, moment: datetime) -> GraphVersion:
    """Merge a topic's concepts into the (user, agent) graph as its next version (inside the caller's transaction)."""
    now = to_text(moment)
    version = await _bump(db, merge, now)
    chosen, fresh = await _match(db, merge)
    added, merged = await _write_nodes(db, merge, chosen, fresh, version, now)
    topic = list(dict.fromkeys(chosen))
    await _write_sources(db, topic, merge.sources)
    wanted = _wanted_edges(topic, await _previous_topic(db, merge, version))
    edges_added, reinforced = await _write_edges(db, merge.user, merge.agent, wanted, now)
    values = (merge.user, merge.agent, version, now, merge.session, merge.events, merge.shift_distance, dumps(added),
              dumps(merged), edges_added, reinforced)  # fmt: skip
    await db.execute(f"INSERT INTO concept_versions ({_VERSION_COLUMNS}) VALUES ({', '.join('?' * 11)})", values)
    return _version(values)


async def load_graph(db: Connection, user: str, agent: str) -> MemoryGraph:
    owner = (user, agent)
    cursor = await db.execute("SELECT version, model FROM concept_graphs WHERE user_id = ? AND agent_id = ?", owner)
    head = await cursor.fetchone()
    sources: dict[str, list[str]] = {}
    for node, record in await db.execute_fetchall(
        "SELECT s.node_id, s.record_id FROM concept_sources s JOIN concept_nodes n ON n.id = s.node_id"
        " WHERE n.user_id = ? AND n.agent_id = ? ORDER BY s.node_id, s.record_id",
        owner,
    ):
        sources.setdefault(str(node), []).append(str(record))
    rows = await db.execute_fetchall(
        f"SELECT {_NODE_COLUMNS} FROM concept_nodes WHERE user_id = ? AND agent_id = ? ORDER BY seq", owner
    )
    nodes = {str(row[0]): _node(row, sources.get(str(row[0]), ())) for row in rows}
    edges = await db.execute_fetchall(
        f"SELECT {_EDGE_COLUMNS} FROM concept_edges WHERE user_id = ? AND agent_id = ? ORDER BY seq", owner
    )
    return MemoryGraph(
        user=user,
        agent=agent,
        version=0 if head is None else int(head[0]),
        model=None if head is None else str(head[1]),
        nodes=nodes,
        edges=[_edge(row) for row in edges],
    )


async def concept_vectors(
    db: Connection, user: str, agent: str, dimensions: int
) -> tuple[list[str], npt.NDArray[np.float32]]:
    rows = list(
        await db.execute_fetchall(
            "SELECT id, unit_vector FROM concept_nodes WHERE user_id = ? AND agent_id = ? ORDER BY seq", (user, agent)
        )
    )
    return [str(row[0]) for row in rows], _matrix([row[1] for row in rows], dimensions)


async def head(db: Connection, user: str, agent: str) -> tuple[int, str] | None:
    """The (user, agent) graph's version and when it last changed (a consolidation or a purge), if there is one."""
    cursor = await db.execute(
        "SELECT version, updated_at FROM concept_graphs WHERE user_id = ? AND agent_id = ?", (user, agent)
    )
    row = await cursor.fetchone()
    return None if row is None else (int(row[0]), str(row[1]))


async def versions(db: Connection, user: str, agent: str, limit: int) -> list[GraphVersion]:
    rows = await db.execute_fetchall(
        f"SELECT {_VERSION_COLUMNS} FROM concept_versions WHERE user_id = ? AND agent_id = ?"
        " ORDER BY version DESC LIMIT ?",
        (user, agent, limit),
    )
    return [_version(row) for row in rows]


# -- lifecycle tiers -----------------------------------------------------------------------------------


def _tier_row(row: Sequence[Any]) -> TierRow:
    return TierRow.trusted({
        "kind": row[0], "record_id": row[1], "tier": row[2],
        "accesses": tuple(from_text(t) for t in orjson.loads(row[3])), "changed_at": from_text(row[4]),
    })  # fmt: skip


async def access(
    db: Connection, kind: RecordKind, records: Sequence[tuple[str, str]], promote: Promotion, moment: datetime
) -> list[TierRow]:
    """Count one access to each (record id, user) and promote it (inside the caller's transaction).

    Rows are created cold first, then read locked (PostgreSQL: ``FOR UPDATE``), so two accesses
    at once are both counted and a sweep in between never undoes a promotion.
    """
    now = to_text(moment)
    verb, conflict = ("INSERT", " ON CONFLICT DO NOTHING") if is_postgres(db) else ("INSERT OR IGNORE", "")
    await db.executemany(
        f"{verb} INTO record_tiers (kind, record_id, user_id, tier, last_accessed_at, accesses, changed_at)"
        f" VALUES (?, ?, ?, 'cold', ?, '[]', ?){conflict}",
        [(kind, record, user, now, now) for record, user in records],
    )
    ids = sorted({record for record, _ in records})
    lock = " ORDER BY record_id FOR UPDATE" if is_postgres(db) else ""  # the order `sweep` locks in
    rows = await db.execute_fetchall(
        f"SELECT kind, record_id, tier, accesses, changed_at FROM record_tiers WHERE kind = ?"
        f" AND record_id IN ({', '.join('?' for _ in ids)}){lock}",
        (kind, *ids),
    )
    updated = [promote(_tier_row(row)) for row in rows]
    await db.executemany(
        "UPDATE record_tiers SET tier = ?, last_accessed_at = ?, accesses = ?, changed_at = ?"
        " WHERE kind = ? AND record_id = ?",
        [(r.tier, now, dumps([to_text(t) for t in r.accesses]), to_text(r.changed_at), kind, r.record_id)
         for r in updated],
    )  # fmt: skip
    return updated


async def sweep(db: Connection, user: str | None, windows: LifecycleWindows, moment: datetime) -> SweepReport:
    """HOT -> WARM after ``hot_ttl`` without access, WARM -> COLD after ``window`` without any.

    On PostgreSQL the rows are locked in key order first, as `access` locks them, so a sweep and an
    access never wait on each other in a cycle; a row an access touched meanwhile no longer qualifies.
    """
    now = to_text(moment)
    hot = await _demote(db, "hot", "warm", "", user, to_text(moment - windows.hot_ttl), now)
    cold = await _demote(db, "warm", "cold", ", accesses = '[]'", user, to_text(moment - windows.window), now)
    return SweepReport(hot_to_warm=hot, warm_to_cold=cold, at=moment)


async def _demote(db: Connection, tier: str, to: str, reset: str, user: str | None, before: str, now: str) -> int:
    who, params = ("", []) if user is None else (" AND user_id = ?", [user])
    lock = " ORDER BY kind, record_id FOR UPDATE" if is_postgres(db) else ""
    cursor = await db.execute(
        f"UPDATE record_tiers SET tier = ?, changed_at = ?{reset} WHERE (kind, record_id) IN (SELECT kind, record_id"
        f" FROM record_tiers WHERE tier = ? AND last_accessed_at < ?{who}{lock})",
        (to, now, tier, before, *params),
    )
    return int(cursor.rowcount)


async def stats(db: Connection, user: str) -> TierStats:
    counts = {str(t): int(n) for t, n in await db.execute_fetchall(
        "SELECT tier, COUNT(*) FROM record_tiers WHERE user_id = ? GROUP BY tier", (user,)
    )}  # fmt: skip
    cursor = await db.execute(
        "SELECT (SELECT COUNT(*) FROM episodes WHERE user_id = ?),"
        " (SELECT COUNT(*) FROM facts WHERE user_id = ? AND superseded_at IS NULL)",
        (user, user),
    )
    episodes, facts = await cursor.fetchone()
    hot, warm = counts.get("hot", 0), counts.get("warm", 0)
    return TierStats(hot=hot, warm=warm, cold=max(0, int(episodes) + int(facts) - hot - warm))


async def tiers_of(db: Connection, kind: RecordKind, ids: Sequence[str]) -> dict[str, LifecycleTier]:
    found: dict[str, LifecycleTier] = {}
    for start in range(0, len(ids), 500):
        chunk = list(ids[start : start + 500])
        marks = ", ".join("?" for _ in chunk)
        rows = await db.execute_fetchall(
            f"SELECT record_id, tier FROM record_tiers WHERE kind = ? AND record_id IN ({marks})", (kind, *chunk)
        )
        found.update((str(r[0]), r[1]) for r in rows)
    return {record: found.get(record, "cold") for record in ids}


async def forget_records(db: Connection, kind: RecordKind, record_ids: Sequence[str]) -> None:
    """A purge of these records reaches what was derived from them (inside the purge's transaction):
    their tier rows and concept sources go; a concept only they taught goes with its edges; a concept
    others taught too keeps its label but no longer the sentence it was described by."""
    for start in range(0, len(record_ids), 500):
        chunk = list(record_ids[start : start + 500])
        marks = ", ".join("?" for _ in chunk)
        await db.execute(f"DELETE FROM record_tiers WHERE kind = ? AND record_id IN ({marks})", (kind, *chunk))
        if kind != "episode":
            continue
        touched = [str(r[0]) for r in await db.execute_fetchall(
            f"SELECT DISTINCT node_id FROM concept_sources WHERE record_id IN ({marks})", chunk
        )]  # fmt: skip
        await db.execute(f"DELETE FROM concept_sources WHERE record_id IN ({marks})", chunk)
        if touched:
            nodes = ", ".join("?" for _ in touched)
            await db.execute(  # readers that cache a graph see it changed
                "UPDATE concept_graphs SET updated_at = ? WHERE (user_id, agent_id) IN"
                f" (SELECT DISTINCT user_id, agent_id FROM concept_nodes WHERE id IN ({nodes}))",
                (to_text(utcnow()), *touched),
            )
            await db.execute(
                f"DELETE FROM concept_nodes WHERE id IN ({nodes})"
                " AND NOT EXISTS (SELECT 1 FROM concept_sources s WHERE s.node_id = concept_nodes.id)",
                touched,
            )
            await db.execute(f"UPDATE concept_nodes SET description = label WHERE id IN ({nodes})", touched)


class ConceptMethods:
    """The concept-graph and lifecycle methods of a store (mixed in; every write is one transaction)."""

    def _sql_read(self) -> AbstractAsyncContextManager[Connection]:
        raise NotImplementedError

    def _sql_write(self) -> AbstractAsyncContextManager[Connection]:
        raise NotImplementedError

    async def consolidate_concepts(self, merge: TopicMerge) -> GraphVersion:
        async with self._sql_write() as db:
            return await consolidate(db, merge, utcnow())

    async def concept_graph(self, user: str, agent: str) -> MemoryGraph:
        async with self._sql_read() as db:
            return await load_graph(db, user, agent)

    async def concept_vectors(
        self, user: str, agent: str, dimensions: int
    ) -> tuple[list[str], npt.NDArray[np.float32]]:
        async with self._sql_read() as db:
            return await concept_vectors(db, user, agent, dimensions)

    async def concept_head(self, user: str, agent: str) -> tuple[int, str] | None:
        async with self._sql_read() as db:
            return await head(db, user, agent)

    async def concept_versions(self, user: str, agent: str, limit: int = 100) -> list[GraphVersion]:
        async with self._sql_read() as db:
            return await versions(db, user, agent, limit)

    async def tier_access(
        self, kind: RecordKind, records: Sequence[tuple[str, str]], promote: Promotion, moment: datetime
    ) -> list[TierRow]:
        if not records:
            return []
        async with self._sql_write() as db:
            return await access(db, kind, records, promote, moment)

    async def tier_sweep(self, user: str | None, windows: LifecycleWindows, moment: datetime) -> SweepReport:
        async with self._sql_write() as db:
            return await sweep(db, user, windows, moment)

    async def tier_stats(self, user: str) -> TierStats:
        async with self._sql_read() as db:
            return await stats(db, user)

    async def tiers_of(self, kind: RecordKind, ids: Sequence[str]) -> dict[str, LifecycleTier]:
        async with self._sql_read() as db:
            return await tiers_of(db, kind, ids)
