"""The search side of the SQLite store: full text (FTS5), vectors, and the indexer's bookkeeping.

Every function runs on a connection the caller holds; the store wraps them in its lock.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

import aiosqlite
import numpy as np
import numpy.typing as npt

from memstrata._time import to_text, utcnow
from memstrata.models import Episode, Fact
from memstrata.models.search import Positions, RecordKind, SearchFilter
from memstrata.scope import episode_pattern, fact_pattern, key_range
from memstrata.store.rows import EPISODE_COLUMNS, FACT_COLUMNS, episode_from_row, fact_from_row

log = logging.getLogger("memstrata.search")

TABLE = {"episode": "episodes", "fact": "facts"}
TEXT = {"episode": "content", "fact": "text"}
Seqs = npt.NDArray[np.int64]
Matrix = npt.NDArray[np.float32]


def where(kind: RecordKind, flt: SearchFilter, alias: str = "r") -> tuple[str, list[object]]:
    """The WHERE clause (over ``alias``) selecting the filter's rows of one kind."""
    scope = flt.scope
    pattern = (
        episode_pattern(scope.user, scope.session, scope.agent)
        if kind == "episode"
        else fact_pattern(scope.user, scope.agent)
    )
    low, high = key_range(pattern)
    parts = [f"{alias}.scope_key >= ? AND {alias}.scope_key < ? AND {alias}.scope_key LIKE ? ESCAPE '\\'"]
    params: list[object] = [low, high, pattern]
    column = "timestamp" if kind == "episode" else "valid_from"
    if flt.since is not None:
        parts.append(f"{alias}.{column} >= ?")
        params.append(to_text(flt.since))
    if flt.until is not None:
        parts.append(f"{alias}.{column} < ?")
        params.append(to_text(flt.until))
    if kind == "fact":
        _fact_where(flt, alias, parts, params)
    return " AND ".join(parts), params


def _fact_where(flt: SearchFilter, alias: str, parts: list[str], params: list[object]) -> None:
    if flt.as_of is None:
        parts.append(f"{alias}.superseded_at IS NULL")
    else:
        parts.append(f"{alias}.recorded_at <= ? AND ({alias}.superseded_at IS NULL OR {alias}.superseded_at > ?)")
        params += [to_text(flt.as_of)] * 2
    if flt.memory_types:
        parts.append(f"{alias}.memory_type IN ({', '.join('?' for _ in flt.memory_types)})")
        params += list(flt.memory_types)
    if flt.tags:
        marks = ", ".join("?" for _ in flt.tags)
        parts.append(f"EXISTS (SELECT 1 FROM json_each({alias}.tags) WHERE value IN ({marks}))")
        params += list(flt.tags)


async def fulltext(
    db: aiosqlite.Connection, kind: RecordKind, flt: SearchFilter, terms: Sequence[str], limit: int
) -> list[tuple[int, float]]:
    """(seq, relevance) best first; relevance is FTS5's BM25 negated (higher is better)."""
    if not terms:
        return []
    table = TABLE[kind]
    clause, params = where(kind, flt)
    cursor = await db.execute(
        f"SELECT f.rowid, -bm25({table}_fts) AS score FROM {table}_fts f JOIN {table} r ON r.seq = f.rowid"
        f" WHERE {table}_fts MATCH ? AND {clause} ORDER BY bm25({table}_fts) LIMIT ?",
        (fts_match(terms), *params, limit),
    )
    return [(int(row[0]), float(row[1])) for row in await cursor.fetchall()]


def fts_match(terms: Sequence[str]) -> str:
    """An FTS5 query matching any of ``terms``, each quoted as a literal string."""
    return " OR ".join('"' + term.replace('"', '""') + '"' for term in terms)


def user_where(kind: RecordKind, user: str, alias: str = "r") -> tuple[str, list[object]]:
    """The WHERE clause selecting every row of one user (any session, agent or status)."""
    pattern = episode_pattern(user, None, None) if kind == "episode" else fact_pattern(user, None)
    low, high = key_range(pattern)
    return f"{alias}.scope_key >= ? AND {alias}.scope_key < ?", [low, high]


async def vectors(
    db: aiosqlite.Connection, kind: RecordKind, model: str, dimensions: int, user: str, after: int, upto: int
) -> tuple[Seqs, Matrix]:
    """The stored vectors of ``model`` for the user's rows with ``after < seq <= upto``; bad rows are skipped."""
    clause, params = user_where(kind, user)
    cursor = await db.execute(
        f"SELECT v.seq, v.vector FROM vectors v JOIN {TABLE[kind]} r ON r.seq = v.seq"
        f" WHERE v.kind = ? AND v.model = ? AND v.seq > ? AND v.seq <= ? AND {clause} ORDER BY v.seq",
        (kind, model, after, upto, *params),
    )
    rows = list(await cursor.fetchall())
    size = dimensions * 4
    good = [row for row in rows if len(row[1]) == size]
    if len(good) < len(rows):
        log.warning("search: skipped %d corrupt %s vector row(s) of model %s", len(rows) - len(good), kind, model)
    seqs = np.fromiter((row[0] for row in good), dtype=np.int64, count=len(good))
    matrix = np.frombuffer(b"".join(row[1] for row in good), dtype=np.float32).reshape(len(good), dimensions)
    return seqs, matrix


async def texts(db: aiosqlite.Connection, kind: RecordKind, user: str, after: int, upto: int) -> list[tuple[int, str]]:
    """(seq, text) of the user's rows with ``after < seq <= upto``, by ``seq``."""
    clause, params = user_where(kind, user)
    cursor = await db.execute(
        f"SELECT r.seq, r.{TEXT[kind]} FROM {TABLE[kind]} r WHERE r.seq > ? AND r.seq <= ? AND {clause} ORDER BY r.seq",
        (after, upto, *params),
    )
    return [(int(row[0]), str(row[1])) for row in await cursor.fetchall()]


async def positions(db: aiosqlite.Connection, kind: RecordKind, models: Sequence[str] = ()) -> Positions:
    """In one query: the kind's highest ``seq``, the purge log's, and each model's index position."""
    indexed = "".join(
        ", (SELECT COALESCE(MAX(last_seq), 0) FROM index_state WHERE kind = ? AND model = ?)" for _ in models
    )
    cursor = await db.execute(
        f"SELECT (SELECT COALESCE(MAX(seq), 0) FROM {TABLE[kind]}), (SELECT COALESCE(MAX(seq), 0) FROM purges)"
        + indexed,
        tuple(value for model in models for value in (kind, model)),
    )
    row = await cursor.fetchone()
    assert row is not None  # an aggregate query always returns its row
    return Positions(int(row[0]), int(row[1]), {model: int(at) for model, at in zip(models, row[2:], strict=True)})


async def selected(db: aiosqlite.Connection, kind: RecordKind, flt: SearchFilter) -> Seqs:
    """The seqs of every row the filter selects, ascending."""
    clause, params = where(kind, flt)
    cursor = await db.execute(f"SELECT r.seq FROM {TABLE[kind]} r WHERE {clause} ORDER BY r.seq", params)
    rows = list(await cursor.fetchall())
    return np.fromiter((row[0] for row in rows), dtype=np.int64, count=len(rows))


async def records(
    db: aiosqlite.Connection, kind: RecordKind, seqs: Sequence[int], flt: SearchFilter | None = None
) -> dict[int, Episode | Fact]:
    """The records of ``seqs`` by seq; with ``flt``, only those that satisfy it now."""
    if not seqs:
        return {}
    marks = ", ".join("?" for _ in seqs)
    columns = EPISODE_COLUMNS if kind == "episode" else FACT_COLUMNS
    clause, params = where(kind, flt) if flt is not None else ("1", [])
    cursor = await db.execute(
        f"SELECT r.seq, {', '.join('r.' + c.strip() for c in columns.split(','))} FROM {TABLE[kind]} r"
        f" WHERE r.seq IN ({marks}) AND {clause}",
        (*seqs, *params),
    )
    decode = episode_from_row if kind == "episode" else fact_from_row
    return {int(row[0]): decode(row[1:]) for row in await cursor.fetchall()}


async def neighbours(db: aiosqlite.Connection, seqs: Sequence[int]) -> dict[int, tuple[int | None, int | None]]:
    """The episodes just before and after each one in its own (user, session, agent) timeline."""
    if not seqs:
        return {}
    marks = ", ".join("?" for _ in seqs)
    cursor = await db.execute(
        "SELECT c.seq,"
        " (SELECT e.seq FROM episodes e WHERE e.scope_key = c.scope_key AND (e.timestamp, e.seq) < (c.timestamp, c.seq)"
        "  ORDER BY e.timestamp DESC, e.seq DESC LIMIT 1),"
        " (SELECT e.seq FROM episodes e WHERE e.scope_key = c.scope_key AND (e.timestamp, e.seq) > (c.timestamp, c.seq)"
        "  ORDER BY e.timestamp, e.seq LIMIT 1)"
        f" FROM episodes c WHERE c.seq IN ({marks})",
        tuple(seqs),
    )
    return {int(row[0]): (row[1], row[2]) for row in await cursor.fetchall()}


async def sources(db: aiosqlite.Connection, flt: SearchFilter, limit: int = 1000) -> list[str]:
    """Distinct non-empty ``source_node`` values of the filter's scope (speakers, tools, ...)."""
    clause, params = where("episode", flt.model_copy(update={"since": None, "until": None}))
    cursor = await db.execute(
        f"SELECT DISTINCT r.source_node FROM episode_sources r WHERE {clause} LIMIT ?", (*params, limit)
    )
    return [str(row[0]) for row in await cursor.fetchall()]


async def from_sources(db: aiosqlite.Connection, seqs: Sequence[int], names: Sequence[str]) -> set[int]:
    """Which of the episodes ``seqs`` come from one of ``names`` (case-insensitive)."""
    if not seqs or not names:
        return set()
    marks, name_marks = ", ".join("?" for _ in seqs), ", ".join("?" for _ in names)
    cursor = await db.execute(
        f"SELECT seq FROM episodes WHERE seq IN ({marks}) AND lower(source_node) IN ({name_marks})",
        (*seqs, *[n.lower() for n in names]),
    )
    return {int(row[0]) for row in await cursor.fetchall()}


async def pending_texts(db: aiosqlite.Connection, kind: RecordKind, model: str, limit: int) -> list[tuple[int, str]]:
    """Records after the model's index position, oldest first."""
    position = await index_position(db, kind, model)
    cursor = await db.execute(
        f"SELECT seq, {TEXT[kind]} FROM {TABLE[kind]} WHERE seq > ? ORDER BY seq LIMIT ?", (position, limit)
    )
    return [(int(row[0]), str(row[1])) for row in await cursor.fetchall()]


async def pending_count(db: aiosqlite.Connection, kind: RecordKind, model: str) -> int:
    position = await index_position(db, kind, model)
    cursor = await db.execute(f"SELECT COUNT(*) FROM {TABLE[kind]} WHERE seq > ?", (position,))
    row = await cursor.fetchone()
    return int(row[0]) if row else 0


async def index_position(db: aiosqlite.Connection, kind: RecordKind, model: str) -> int:
    cursor = await db.execute("SELECT last_seq FROM index_state WHERE kind = ? AND model = ?", (kind, model))
    row = await cursor.fetchone()
    return int(row[0]) if row else 0


async def save_vectors(
    db: aiosqlite.Connection, kind: RecordKind, model: str, seqs: Sequence[int], matrix: Matrix, upto: int
) -> None:
    """Store a batch and move the model's index position to ``upto``, in the caller's transaction."""
    rows = [
        (kind, model, int(seq), np.ascontiguousarray(vec, dtype=np.float32).tobytes())
        for seq, vec in zip(seqs, matrix, strict=True)
    ]
    await db.executemany("INSERT OR REPLACE INTO vectors (kind, model, seq, vector) VALUES (?, ?, ?, ?)", rows)
    await db.execute(
        "INSERT INTO index_state (kind, model, last_seq) VALUES (?, ?, ?)"
        " ON CONFLICT(kind, model) DO UPDATE SET last_seq = MAX(last_seq, excluded.last_seq)",
        (kind, model, upto),
    )


async def embedders(db: aiosqlite.Connection) -> list[tuple[str, int, str]]:
    cursor = await db.execute("SELECT model, dimensions, role FROM embedders ORDER BY registered_at")
    return [(str(r[0]), int(r[1]), str(r[2])) for r in await cursor.fetchall()]


async def set_embedder(db: aiosqlite.Connection, model: str, dimensions: int, role: str) -> None:
    await db.execute(
        "INSERT INTO embedders (model, dimensions, role, registered_at) VALUES (?, ?, ?, ?)"
        " ON CONFLICT(model) DO UPDATE SET role = excluded.role",
        (model, dimensions, role, to_text(utcnow())),
    )


async def drop_embedder(db: aiosqlite.Connection, model: str) -> None:
    await db.execute("DELETE FROM vectors WHERE model = ?", (model,))
    await db.execute("DELETE FROM index_state WHERE model = ?", (model,))
    await db.execute("DELETE FROM embedders WHERE model = ?", (model,))
