"""The search side of the stores: full text, vectors, and the indexer's bookkeeping.

Written once for SQLite and PostgreSQL where the SQL agrees (see `mnemonite.store.sql`);
full text (FTS5 / tsvector) and vectors (float32 BLOBs / pgvector) branch per dialect.
Every function runs on a connection the caller holds; `SearchMethods` are the store methods.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Sequence
from contextlib import AbstractAsyncContextManager
from datetime import datetime

import numpy as np
import numpy.typing as npt

from mnemonite._time import to_text, utcnow
from mnemonite.errors import ConfigurationError
from mnemonite.models import Episode, Fact
from mnemonite.models.search import Positions, RecordKind, SearchFilter
from mnemonite.scope import episode_pattern, fact_pattern, key_range
from mnemonite.store.rows import EPISODE_COLUMNS, FACT_COLUMNS, episode_from_row, fact_from_row
from mnemonite.store.sql import Connection, PgConnection, is_postgres, json_array_has

log = logging.getLogger("mnemonite.search")

TABLE = {"episode": "episodes", "fact": "facts"}
TEXT = {"episode": "content", "fact": "text"}
Seqs = npt.NDArray[np.int64]
Matrix = npt.NDArray[np.float32]


def where(db: Connection, kind: RecordKind, flt: SearchFilter, alias: str = "r") -> tuple[str, list[object]]:
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
        _fact_where(db, flt, alias, parts, params)
    if flt.lifecycle is not None:
        _lifecycle_where(kind, flt.lifecycle, alias, parts, params)
    return " AND ".join(parts), params


def _lifecycle_where(
    kind: RecordKind, tiers: Sequence[str], alias: str, parts: list[str], params: list[object]
) -> None:
    """Records of ``tiers`` only, driven by the (small) set of records that have a tier row: no row is cold."""
    kept = set(tiers)
    named = sorted(kept - {"cold"}) if "cold" not in kept else sorted({"hot", "warm", "cold"} - kept)
    marks = ", ".join("?" for _ in named) or "NULL"
    negate = "NOT " if "cold" in kept else ""
    parts.append(
        f"{alias}.id {negate}IN (SELECT t.record_id FROM record_tiers t WHERE t.kind = ? AND t.tier IN ({marks}))"
    )
    params += [kind, *named]


def _fact_where(db: Connection, flt: SearchFilter, alias: str, parts: list[str], params: list[object]) -> None:
    if flt.as_of is None:
        parts.append(f"{alias}.superseded_at IS NULL")
    else:
        parts.append(f"{alias}.recorded_at <= ? AND ({alias}.superseded_at IS NULL OR {alias}.superseded_at > ?)")
        params += [to_text(flt.as_of)] * 2
    if flt.memory_types:
        parts.append(f"{alias}.memory_type IN ({', '.join('?' for _ in flt.memory_types)})")
        params += list(flt.memory_types)
    if flt.tags:
        parts.append(json_array_has(db, f"{alias}.tags", len(flt.tags)))
        params += list(flt.tags)


async def fulltext(
    db: Connection, kind: RecordKind, flt: SearchFilter, terms: Sequence[str], limit: int
) -> list[tuple[int, float]]:
    """(seq, relevance) best first: FTS5's BM25 negated, or PostgreSQL's ``ts_rank`` (higher is better)."""
    if not terms:
        return []
    table = TABLE[kind]
    clause, params = where(db, kind, flt)
    if is_postgres(db):
        column = "content_tsv" if kind == "episode" else "text_tsv"
        rows = await db.execute_fetchall(
            f"SELECT r.seq, ts_rank(r.{column}, q.query) AS score FROM {table} r, (SELECT {tsquery(terms)} AS query) q"
            f" WHERE r.{column} @@ q.query AND {clause} ORDER BY score DESC, r.seq LIMIT ?",
            (*terms, *params, limit),
        )
        return [(int(row[0]), float(row[1])) for row in rows]
    rows = await db.execute_fetchall(
        f"SELECT f.rowid, -bm25({table}_fts) AS score FROM {table}_fts f JOIN {table} r ON r.seq = f.rowid"
        f" WHERE {table}_fts MATCH ? AND {clause} ORDER BY bm25({table}_fts) LIMIT ?",
        (fts_match(terms), *params, limit),
    )
    return [(int(row[0]), float(row[1])) for row in rows]


def fts_match(terms: Sequence[str]) -> str:
    """An FTS5 query matching any of ``terms``, each quoted as a literal string."""
    return " OR ".join('"' + term.replace('"', '""') + '"' for term in terms)


def tsquery(terms: Sequence[str]) -> str:
    """PostgreSQL: a tsquery matching any of the next ``len(terms)`` ``?`` (English stemming)."""
    return " || ".join("plainto_tsquery('english', ?)" for _ in terms)


def user_where(kind: RecordKind, user: str, alias: str = "r") -> tuple[str, list[object]]:
    """The WHERE clause selecting every row of one user (any session, agent or status)."""
    pattern = episode_pattern(user, None, None) if kind == "episode" else fact_pattern(user, None)
    low, high = key_range(pattern)
    return f"{alias}.scope_key >= ? AND {alias}.scope_key < ?", [low, high]


async def vectors(
    db: Connection, kind: RecordKind, model: str, dimensions: int, user: str, after: int, upto: int
) -> tuple[Seqs, Matrix]:
    """The stored vectors of ``model`` for the user's rows with ``after < seq <= upto``; bad rows are skipped."""
    clause, params = user_where(kind, user)
    if by_user(db, after, upto):  # the user's rows first (scope index), then each one's vector by key
        rows = await db.execute_fetchall(
            f"SELECT v.seq, {vector_column(db)} FROM {TABLE[kind]} r CROSS JOIN vectors v"
            f" WHERE {clause} AND r.seq > ? AND r.seq <= ? AND v.kind = ? AND v.model = ? AND v.seq = r.seq"
            " ORDER BY v.seq",
            (*params, after, upto, kind, model),
        )
    else:
        rows = await db.execute_fetchall(
            f"SELECT v.seq, {vector_column(db)} FROM vectors v JOIN {TABLE[kind]} r ON r.seq = v.seq"
            f" WHERE v.kind = ? AND v.model = ? AND v.seq > ? AND v.seq <= ? AND {clause} ORDER BY v.seq",
            (kind, model, after, upto, *params),
        )
    return _matrix(list(rows), kind, model, dimensions)


# A read of the rows after ``after`` walks the seq range when it is this short, else the user's scope index.
SEQ_WALK = 4096


def by_user(db: Connection, after: int, upto: int) -> bool:
    """SQLite: whether a read of one user's rows in ``(after, upto]`` should walk that user's scope index
    rather than the seq range. SQLite plans without statistics and would walk the seq range, every
    user's rows, which is the whole table on a user's first read. PostgreSQL plans by its statistics."""
    return not is_postgres(db) and upto - after > SEQ_WALK


async def vectors_of(
    db: Connection, kind: RecordKind, model: str, dimensions: int, seqs: Sequence[int]
) -> tuple[Seqs, Matrix]:
    """The stored vectors of ``model`` for the rows ``seqs`` (those that have one), by seq."""
    if not seqs:
        return _matrix([], kind, model, dimensions)
    marks = ", ".join("?" for _ in seqs)
    rows = await db.execute_fetchall(
        f"SELECT v.seq, {vector_column(db)} FROM vectors v WHERE v.kind = ? AND v.model = ? AND v.seq IN ({marks})"
        " ORDER BY v.seq",
        (kind, model, *seqs),
    )
    return _matrix(list(rows), kind, model, dimensions)


def vector_column(db: Connection, alias: str = "v") -> str:
    """The vector column: float32 bytes in SQLite, pgvector's own type in PostgreSQL."""
    return f"{alias}.embedding" if is_postgres(db) else f"{alias}.vector"


def _matrix(rows: list[tuple[int, object]], kind: str, model: str, dimensions: int) -> tuple[Seqs, Matrix]:
    """(seqs, vectors) from rows of (seq, stored vector); rows of another width are skipped."""
    rows = [(seq, vector_bytes(vector)) for seq, vector in rows]
    size = dimensions * 4
    good = [row for row in rows if len(row[1]) == size]  # type: ignore[arg-type]
    if len(good) < len(rows):
        log.warning("search: skipped %d corrupt %s vector row(s) of model %s", len(rows) - len(good), kind, model)
    seqs = np.fromiter((row[0] for row in good), dtype=np.int64, count=len(good))
    matrix = np.frombuffer(b"".join(row[1] for row in good), dtype=np.float32).reshape(len(good), dimensions)  # type: ignore[misc]
    return seqs, matrix


def vector_bytes(vector: object) -> bytes:
    """float32 bytes of a stored vector (SQLite: as stored; PostgreSQL: a pgvector ``Vector``)."""
    if isinstance(vector, bytes):  # SQLite: the BLOB as stored
        return vector
    return np.asarray(vector.to_numpy(), dtype=np.float32).tobytes()  # type: ignore[attr-defined]


async def texts(db: Connection, kind: RecordKind, user: str, after: int, upto: int) -> list[tuple[int, str]]:
    """(seq, text) of the user's rows with ``after < seq <= upto``, by ``seq``."""
    clause, params = user_where(kind, user)
    seq = "+r.seq" if by_user(db, after, upto) else "r.seq"  # unary plus: SQLite does not walk the seq range
    rows = await db.execute_fetchall(
        f"SELECT r.seq, r.{TEXT[kind]} FROM {TABLE[kind]} r WHERE {seq} > ? AND {seq} <= ? AND {clause} ORDER BY r.seq",
        (after, upto, *params),
    )
    return [(int(row[0]), str(row[1])) for row in rows]


async def positions(db: Connection, kind: RecordKind, models: Sequence[str] = ()) -> Positions:
    """In one query: the kind's highest ``seq``, the purge log's, and each model's index position."""
    indexed = "".join(
        ", (SELECT COALESCE(MAX(last_seq), 0) FROM index_state WHERE kind = ? AND model = ?)" for _ in models
    )
    (row,) = await db.execute_fetchall(  # an aggregate query always returns its one row
        f"SELECT (SELECT COALESCE(MAX(seq), 0) FROM {TABLE[kind]}), (SELECT COALESCE(MAX(seq), 0) FROM purges)"
        + indexed,
        tuple(value for model in models for value in (kind, model)),
    )
    return Positions(int(row[0]), int(row[1]), {model: int(at) for model, at in zip(models, row[2:], strict=True)})


async def selected(db: Connection, kind: RecordKind, flt: SearchFilter) -> Seqs:
    """The seqs of every row the filter selects, ascending."""
    clause, params = where(db, kind, flt)
    rows = list(await db.execute_fetchall(f"SELECT r.seq FROM {TABLE[kind]} r WHERE {clause} ORDER BY r.seq", params))
    return np.fromiter((row[0] for row in rows), dtype=np.int64, count=len(rows))


async def records(
    db: Connection, kind: RecordKind, seqs: Sequence[int], flt: SearchFilter | None = None
) -> dict[int, Episode | Fact]:
    """The records of ``seqs`` by seq; with ``flt``, only those that satisfy it now."""
    if not seqs:
        return {}
    marks = ", ".join("?" for _ in seqs)
    columns = EPISODE_COLUMNS if kind == "episode" else FACT_COLUMNS
    clause, params = where(db, kind, flt) if flt is not None else ("1 = 1", [])
    rows = await db.execute_fetchall(
        f"SELECT r.seq, {', '.join('r.' + c.strip() for c in columns.split(','))} FROM {TABLE[kind]} r"
        f" WHERE r.seq IN ({marks}) AND {clause}",
        (*seqs, *params),
    )
    decode = episode_from_row if kind == "episode" else fact_from_row
    return {int(row[0]): decode(row[1:]) for row in rows}


async def neighbours(db: Connection, seqs: Sequence[int]) -> dict[int, tuple[int | None, int | None]]:
    """The episodes just before and after each one in its own (user, session, agent) timeline."""
    if not seqs:
        return {}
    marks = ", ".join("?" for _ in seqs)
    rows = await db.execute_fetchall(
        "SELECT c.seq,"
        " (SELECT e.seq FROM episodes e WHERE e.scope_key = c.scope_key AND (e.timestamp, e.seq) < (c.timestamp, c.seq)"
        "  ORDER BY e.timestamp DESC, e.seq DESC LIMIT 1),"
        " (SELECT e.seq FROM episodes e WHERE e.scope_key = c.scope_key AND (e.timestamp, e.seq) > (c.timestamp, c.seq)"
        "  ORDER BY e.timestamp, e.seq LIMIT 1)"
        f" FROM episodes c WHERE c.seq IN ({marks})",
        tuple(seqs),
    )
    return {int(row[0]): (row[1], row[2]) for row in rows}


async def sources(db: Connection, flt: SearchFilter, limit: int = 1000) -> list[str]:
    """Distinct non-empty ``source_node`` values of the filter's scope (speakers, tools, ...)."""
    clause, params = where(db, "episode", flt.model_copy(update={"since": None, "until": None, "lifecycle": None}))
    rows = await db.execute_fetchall(
        f"SELECT DISTINCT r.source_node FROM episode_sources r WHERE {clause} LIMIT ?", (*params, limit)
    )
    return [str(row[0]) for row in rows]


async def from_sources(db: Connection, seqs: Sequence[int], names: Sequence[str]) -> set[int]:
    """Which of the episodes ``seqs`` come from one of ``names`` (case-insensitive)."""
    if not seqs or not names:
        return set()
    marks, name_marks = ", ".join("?" for _ in seqs), ", ".join("?" for _ in names)
    rows = await db.execute_fetchall(
        f"SELECT seq FROM episodes WHERE seq IN ({marks}) AND lower(source_node) IN ({name_marks})",
        (*seqs, *[n.lower() for n in names]),
    )
    return {int(row[0]) for row in rows}


async def facts_from_sources(db: Connection, seqs: Sequence[int], names: Sequence[str]) -> set[int]:
    """Which of the facts ``seqs`` were promoted from an episode of one of ``names`` (provenance)."""
    if not seqs or not names:
        return set()
    marks, name_marks = ", ".join("?" for _ in seqs), ", ".join("?" for _ in names)
    rows = await db.execute_fetchall(
        f"SELECT f.seq FROM facts f WHERE f.seq IN ({marks}) AND EXISTS (SELECT 1 FROM fact_sources s"
        f" JOIN episodes e ON e.id = s.episode_id WHERE s.fact_id = f.id AND lower(e.source_node) IN ({name_marks}))",
        (*seqs, *[n.lower() for n in names]),
    )
    return {int(row[0]) for row in rows}


async def superseded_episodes(
    db: Connection, seqs: Sequence[int], as_of: datetime | None = None
) -> dict[int, tuple[set[str], set[str]]]:
    """The episodes of ``seqs`` memory no longer holds to: facts were read from them (provenance) and every one
    has been superseded or forgotten since. Each with what replaced its facts: the facts down their SUPERSEDES
    chains and the episodes those were read from (both empty when the facts were only forgotten).

    With ``as_of``: the facts recorded by then, as they stood then.
    """
    if not seqs:
        return {}
    marks = ", ".join("?" for _ in seqs)
    stale, moment = _stale(as_of)
    lineage, then = (" AND l.at <= ?", [to_text(as_of)]) if as_of is not None else ("", [])
    rows = await db.execute_fetchall(
        "WITH RECURSIVE stale (seq, episode_id) AS ("
        f" SELECT e.seq, e.id FROM episodes e WHERE e.seq IN ({marks}) AND {stale}),"
        " chain (seq, fact_id) AS ("
        " SELECT t.seq, l.new_id FROM stale t JOIN fact_sources s ON s.episode_id = t.episode_id"
        f" JOIN lineage l ON l.old_id = s.fact_id AND l.relation = 'SUPERSEDES'{lineage}"
        " UNION SELECT c.seq, l.new_id FROM chain c"
        f" JOIN lineage l ON l.old_id = c.fact_id AND l.relation = 'SUPERSEDES'{lineage})"
        " SELECT t.seq, c.fact_id, s.episode_id FROM stale t LEFT JOIN chain c ON c.seq = t.seq"
        " LEFT JOIN fact_sources s ON s.fact_id = c.fact_id",
        (*seqs, *moment, *then, *then),
    )
    found: dict[int, tuple[set[str], set[str]]] = {}
    for seq, fact_id, episode_id in rows:
        facts_by, episodes_by = found.setdefault(int(seq), (set(), set()))
        if fact_id is not None:
            facts_by.add(str(fact_id))
        if episode_id is not None:
            episodes_by.add(str(episode_id))
    return found


async def superseded_among(db: Connection, ids: Sequence[str], as_of: datetime | None = None) -> set[str]:
    """The ids of the episodes among ``ids`` that memory no longer holds to (see `superseded_episodes`)."""
    if not ids:
        return set()
    stale, moment = _stale(as_of)
    marks = ", ".join("?" for _ in ids)
    rows = await db.execute_fetchall(
        f"SELECT e.id FROM episodes e WHERE e.id IN ({marks}) AND {stale}", (*ids, *moment)
    )
    return {str(row[0]) for row in rows}


def _stale(as_of: datetime | None) -> tuple[str, list[str]]:
    """The condition on episode ``e``: facts were read from it and none of them holds (as of ``as_of``).

    A fact holds while it is current, or when it was forgotten as a duplicate of a fact that is current
    (a judge's dedup: the kept fact CONSOLIDATES it).
    """
    recorded, current, kept, moment = "1 = 1", "f.superseded_at IS NULL", "g.superseded_at IS NULL", list[str]()
    if as_of is not None:
        recorded, current = "f.recorded_at <= ?", "(f.superseded_at IS NULL OR f.superseded_at > ?)"
        kept = "k.at <= ? AND (g.superseded_at IS NULL OR g.superseded_at > ?)"
        moment = [to_text(as_of)] * 5
    facts = "SELECT 1 FROM fact_sources s JOIN facts f ON f.id = s.fact_id WHERE s.episode_id = e.id AND "
    merged = (
        "f.status = 'forgotten' AND EXISTS (SELECT 1 FROM lineage k JOIN facts g ON g.id = k.new_id"
        f" WHERE k.old_id = f.id AND k.relation = 'CONSOLIDATES' AND {kept})"
    )
    return f"EXISTS ({facts}{recorded}) AND NOT EXISTS ({facts}{recorded} AND ({current} OR {merged}))", moment


async def pending_texts(db: Connection, kind: RecordKind, model: str, limit: int) -> list[tuple[int, str]]:
    """Records after the model's index position that have no vector yet, oldest first.

    Leading rows that have their vector already (``remember`` stores a new fact's with it, a
    search embeds a few pending rows of its scope) are passed: the position moves over them
    here (the caller's transaction, or autocommit).
    """
    position = await index_position(db, kind, model)
    while True:
        found = await db.execute_fetchall(
            f"SELECT r.seq, r.{TEXT[kind]}, EXISTS (SELECT 1 FROM vectors v WHERE v.kind = ? AND v.model = ?"
            f" AND v.seq = r.seq) FROM {TABLE[kind]} r WHERE r.seq > ? ORDER BY r.seq LIMIT ?",
            (kind, model, position, limit),
        )
        rows = [(int(row[0]), str(row[1]), bool(row[2])) for row in found]
        done = next((i for i, row in enumerate(rows) if not row[2]), len(rows))
        if done:
            position = rows[done - 1][0]
            await _advance(db, kind, model, position)
        if done < len(rows) or len(rows) < limit:
            # Rows a search already embedded (see `unembedded`) are not embedded twice.
            return [(seq, text) for seq, text, has_vector in rows[done:] if not has_vector]


async def unembedded(
    db: Connection,
    kind: RecordKind,
    models: Sequence[str],
    flt: SearchFilter,
    limit: int,
    *,
    after: int = 0,
    among: Sequence[int] | None = None,
    upto: int | None = None,
    newest_first: bool = False,
) -> list[tuple[int, str]]:
    """(seq, text) of the filter's rows after ``after`` (and up to ``upto``) that have no vector of any of
    ``models``, by seq (``newest_first``: from the last).

    ``among`` restricts the rows to those seqs (a search's full-text candidates).
    """
    if among is not None and not among:
        return []
    clause, params = _unembedded_where(db, kind, models, flt, after, among, upto)
    rows = await db.execute_fetchall(
        f"SELECT r.seq, r.{TEXT[kind]} FROM {TABLE[kind]} r WHERE {clause}"
        f" ORDER BY r.seq{' DESC' if newest_first else ''} LIMIT ?",
        (*params, limit),
    )
    return [(int(row[0]), str(row[1])) for row in rows]


async def count_unembedded(
    db: Connection, kind: RecordKind, models: Sequence[str], flt: SearchFilter, after: int, upto: int
) -> int:
    """How many of the filter's rows with ``after < seq <= upto`` have no vector of any of ``models``."""
    clause, params = _unembedded_where(db, kind, models, flt, after, None, upto)
    cursor = await db.execute(f"SELECT COUNT(*) FROM {TABLE[kind]} r WHERE {clause}", tuple(params))
    row = await cursor.fetchone()
    return int(row[0]) if row else 0


def _unembedded_where(
    db: Connection, kind: RecordKind, models: Sequence[str], flt: SearchFilter, after: int,
    among: Sequence[int] | None, upto: int | None,
) -> tuple[str, list[object]]:  # fmt: skip
    clause, params = where(db, kind, flt)
    clause += " AND r.seq > ?"
    params = [*params, after]
    if upto is not None:
        clause += " AND r.seq <= ?"
        params.append(upto)
    if among is not None:
        clause += f" AND r.seq IN ({', '.join('?' for _ in among)})"
        params.extend(among)
    model_marks = ", ".join("?" for _ in models)
    clause += (
        f" AND NOT EXISTS (SELECT 1 FROM vectors v WHERE v.kind = ? AND v.seq = r.seq AND v.model IN ({model_marks}))"
    )
    return clause, [*params, kind, *models]


async def pending_count(db: Connection, kind: RecordKind, model: str) -> int:
    """How many records after the model's index position have no vector of it yet."""
    position = await index_position(db, kind, model)
    cursor = await db.execute(
        f"SELECT COUNT(*) FROM {TABLE[kind]} r WHERE r.seq > ?"
        " AND NOT EXISTS (SELECT 1 FROM vectors v WHERE v.kind = ? AND v.model = ? AND v.seq = r.seq)",
        (position, kind, model),
    )
    row = await cursor.fetchone()
    return int(row[0]) if row else 0


async def index_position(db: Connection, kind: RecordKind, model: str) -> int:
    cursor = await db.execute("SELECT last_seq FROM index_state WHERE kind = ? AND model = ?", (kind, model))
    row = await cursor.fetchone()
    return int(row[0]) if row else 0


async def save_vectors(
    db: Connection, kind: RecordKind, model: str, seqs: Sequence[int], matrix: Matrix, upto: int
) -> None:
    """Store a batch and move the model's index position to ``upto``, in the caller's transaction."""
    if isinstance(db, PgConnection):  # numpy rows in pgvector's binary format (see bootstrap)
        await db.execute(
            "INSERT INTO vectors (kind, model, seq, embedding) SELECT ?, ?, s, e FROM unnest(?::bigint[], ?::vector[])"
            " AS u(s, e) ON CONFLICT (kind, model, seq) DO UPDATE SET embedding = excluded.embedding",
            (kind, model, [int(seq) for seq in seqs], list(np.asarray(matrix, dtype=np.float32))),
            binary_parameters=True,
        )
    else:
        rows = [
            (kind, model, int(seq), np.ascontiguousarray(vec, dtype=np.float32).tobytes())
            for seq, vec in zip(seqs, matrix, strict=True)
        ]
        await db.executemany(
            "INSERT INTO vectors (kind, model, seq, vector) VALUES (?, ?, ?, ?)"
            " ON CONFLICT (kind, model, seq) DO UPDATE SET vector = excluded.vector",
            rows,
        )
    await _advance(db, kind, model, upto)


async def _advance(db: Connection, kind: RecordKind, model: str, upto: int) -> None:
    """Move the model's index position forward to ``upto`` (never back)."""
    await db.execute(
        "INSERT INTO index_state (kind, model, last_seq) VALUES (?, ?, ?) ON CONFLICT (kind, model) DO UPDATE"
        " SET last_seq = CASE WHEN excluded.last_seq > index_state.last_seq THEN excluded.last_seq"
        " ELSE index_state.last_seq END",
        (kind, model, upto),
    )


async def embedders(db: Connection) -> list[tuple[str, int, str]]:
    cursor = await db.execute("SELECT model, dimensions, role FROM embedders ORDER BY registered_at")
    return [(str(r[0]), int(r[1]), str(r[2])) for r in await cursor.fetchall()]


async def set_embedder(db: Connection, model: str, dimensions: int, role: str) -> None:
    await db.execute(
        "INSERT INTO embedders (model, dimensions, role, registered_at) VALUES (?, ?, ?, ?)"
        " ON CONFLICT(model) DO UPDATE SET role = excluded.role",
        (model, dimensions, role, to_text(utcnow())),
    )
    if is_postgres(db):
        for kind in TABLE:
            await db.execute(create_hnsw_index(kind, model, dimensions))


def hnsw_index(kind: str, model: str) -> str:
    """The name of the HNSW index of one model's vectors of one kind (PostgreSQL)."""
    return f"vectors_hnsw_{kind}_{hashlib.md5(model.encode()).hexdigest()[:16]}"


def create_hnsw_index(kind: str, model: str, dimensions: int) -> str:
    """PostgreSQL: one HNSW index (cosine) per model and kind, over the vectors as half precision.

    Half precision halves what a search reads (measured: p50 13.4 -> 8.7 ms for 200 neighbours
    of 100,000); the cosines returned are computed from the full vectors.
    """
    return (
        f'CREATE INDEX IF NOT EXISTS "{hnsw_index(kind, model)}" ON vectors USING hnsw'
        f" ((embedding::halfvec({int(dimensions)})) halfvec_cosine_ops)"
        f" WHERE kind = {literal(kind)} AND model = {literal(model)}"
    )


def literal(value: str) -> str:
    """A SQL string literal (standard quoting): partial-index predicates must be literals to be matched."""
    if "?" in value or "\x00" in value:  # '?' is the shared SQL's placeholder
        raise ConfigurationError(f"an embedder model name cannot contain '?' or NUL: {value!r}")
    return "'" + value.replace("'", "''") + "'"


async def drop_embedder(db: Connection, model: str) -> None:
    if is_postgres(db):
        for kind in TABLE:
            await db.execute(f'DROP INDEX IF EXISTS "{hnsw_index(kind, model)}"')
    await db.execute("DELETE FROM vectors WHERE model = ?", (model,))
    await db.execute("DELETE FROM index_state WHERE model = ?", (model,))
    await db.execute("DELETE FROM embedders WHERE model = ?", (model,))


async def nearest_rows(
    db: PgConnection,
    kind: RecordKind,
    model: str,
    dimensions: int,
    flt: SearchFilter,
    vector: Matrix,
    limit: int,
) -> dict[int, float]:
    """PostgreSQL: seq -> cosine of the filter's ``limit`` rows closest to ``vector``.

    The model's HNSW index answers (iterative scans go on past rows the filter refuses); when
    it finds fewer than ``limit`` rows, the filter's rows are ranked exactly instead. The scan's
    settings steer only HNSW scans, which only this query makes, so they stay on the pooled
    connection and are sent only to a connection that does not hold them yet.
    """
    clause, params = where(db, kind, flt)
    by_index, exact = nearest_sql(kind, model, dimensions, clause)
    arguments = (vector, *params, vector, limit)
    await db.set_session({"hnsw.ef_search": str(min(1000, max(40, limit))), "hnsw.iterative_scan": "relaxed_order"})
    # Never a prepared statement: its generic plan (limit and vector unknown) ranks every row exactly.
    cursor = await db.execute(by_index, arguments, prepare=False, binary=True)
    rows = list(await cursor.fetchall())
    if len(rows) < limit:  # a narrow filter: rank its rows exactly
        cursor = await db.execute(exact, arguments, prepare=False, binary=True)
        rows = list(await cursor.fetchall())
    return {int(seq): 1.0 - float(distance) for seq, distance in rows}


async def rescored(
    db: PgConnection,
    kind: RecordKind,
    model: str,
    dimensions: int,
    seqs: Sequence[int],
    vector: Matrix,
    towards: Sequence[int],
    weight: float,
) -> dict[int, float]:
    """PostgreSQL: seq -> cosine of each of ``seqs`` (those with a vector) with ``vector`` moved towards
    the mean vector of the ``towards`` rows: ``vector + weight x mean`` (unmoved if none of them has one).

    Pseudo-relevance feedback computed where the vectors are: one round trip, no vectors sent back.
    """
    typed = f"vector({int(dimensions)})"
    among = f"v.kind = {literal(kind)} AND v.model = {literal(model)} AND v.seq = ANY(?)"
    sql = (
        f"WITH moved AS (SELECT COALESCE(?::{typed} + avg(v.embedding::{typed}), ?::{typed}) AS query"
        f" FROM vectors v WHERE {among})"
        f" SELECT v.seq, v.embedding::{typed} <=> moved.query FROM moved, vectors v WHERE {among}"
    )
    # Cosines ignore length: vector / weight + mean points where vector + weight x mean does.
    scaled = (np.asarray(vector, dtype=np.float32) / weight if weight > 0 else vector).astype(np.float32)
    moved_by = [int(seq) for seq in towards] if weight > 0 else []
    parameters = (scaled, vector, moved_by, [int(seq) for seq in seqs])
    cursor = await db.execute(sql, parameters, binary_parameters=True)
    return {int(seq): 1.0 - float(distance) for seq, distance in await cursor.fetchall()}


def nearest_sql(kind: RecordKind, model: str, dimensions: int, clause: str) -> tuple[str, str]:
    """PostgreSQL: the nearest-rows query the HNSW index answers, and its exact twin (+ 0 keeps the index out).

    Rows: seq, cosine distance. Parameters of both: the query vector, the clause's, the query
    vector again, the limit. The partial index is matched only with the kind and model as
    literals and the index's own cast.
    """
    full = f"(v.embedding::vector({int(dimensions)})) <=> ?::vector({int(dimensions)})"
    half = f"(v.embedding::halfvec({int(dimensions)})) <=> ?::halfvec({int(dimensions)})"
    joined = (
        f"FROM vectors v JOIN {TABLE[kind]} r ON r.seq = v.seq"
        f" WHERE v.kind = {literal(kind)} AND v.model = {literal(model)} AND {clause}"
    )
    return (
        f"SELECT v.seq, {full} {joined} ORDER BY {half} LIMIT ?",
        f"SELECT v.seq, {full} {joined} ORDER BY ({full}) + 0 LIMIT ?",
    )


class SearchMethods:
    """The search methods of a store (mixed in). Stores may override those their database needs to."""

    def _sql_read(self) -> AbstractAsyncContextManager[Connection]:
        raise NotImplementedError

    def _sql_write(self) -> AbstractAsyncContextManager[Connection]:
        raise NotImplementedError

    async def fulltext(
        self, kind: RecordKind, flt: SearchFilter, terms: Sequence[str], limit: int
    ) -> list[tuple[int, float]]:
        async with self._sql_read() as db:
            return await fulltext(db, kind, flt, terms, limit)

    async def vectors(
        self, kind: RecordKind, model: str, dimensions: int, user: str, after: int, upto: int
    ) -> tuple[Seqs, Matrix]:
        async with self._sql_read() as db:
            return await vectors(db, kind, model, dimensions, user, after, upto)

    async def vectors_of(
        self, kind: RecordKind, model: str, dimensions: int, seqs: Sequence[int]
    ) -> tuple[Seqs, Matrix]:
        async with self._sql_read() as db:
            return await vectors_of(db, kind, model, dimensions, seqs)

    async def texts(self, kind: RecordKind, user: str, after: int, upto: int) -> list[tuple[int, str]]:
        async with self._sql_read() as db:
            return await texts(db, kind, user, after, upto)

    async def positions(self, kind: RecordKind, models: Sequence[str] = ()) -> Positions:
        async with self._sql_read() as db:
            return await positions(db, kind, models)

    async def selected(self, kind: RecordKind, flt: SearchFilter) -> Seqs:
        async with self._sql_read() as db:
            return await selected(db, kind, flt)

    async def records(
        self, kind: RecordKind, seqs: Sequence[int], flt: SearchFilter | None = None
    ) -> dict[int, Episode | Fact]:
        async with self._sql_read() as db:
            return await records(db, kind, seqs, flt)

    async def neighbours(self, seqs: Sequence[int]) -> dict[int, tuple[int | None, int | None]]:
        async with self._sql_read() as db:
            return await neighbours(db, seqs)

    async def sources(self, flt: SearchFilter) -> list[str]:
        async with self._sql_read() as db:
            return await sources(db, flt)

    async def from_sources(self, seqs: Sequence[int], names: Sequence[str]) -> set[int]:
        async with self._sql_read() as db:
            return await from_sources(db, seqs, names)

    async def facts_from_sources(self, seqs: Sequence[int], names: Sequence[str]) -> set[int]:
        async with self._sql_read() as db:
            return await facts_from_sources(db, seqs, names)

    async def superseded_episodes(
        self, seqs: Sequence[int], as_of: datetime | None = None
    ) -> dict[int, tuple[set[str], set[str]]]:
        async with self._sql_read() as db:
            return await superseded_episodes(db, seqs, as_of)

    async def superseded_among(self, ids: Sequence[str], as_of: datetime | None = None) -> set[str]:
        async with self._sql_read() as db:
            return await superseded_among(db, ids, as_of)

    async def pending_texts(self, kind: RecordKind, model: str, limit: int) -> list[tuple[int, str]]:
        async with self._sql_write() as db:  # moves the index position over rows that have their vector already
            return await pending_texts(db, kind, model, limit)

    async def unembedded(
        self,
        kind: RecordKind,
        models: Sequence[str],
        flt: SearchFilter,
        limit: int,
        *,
        after: int = 0,
        among: Sequence[int] | None = None,
        upto: int | None = None,
        newest_first: bool = False,
    ) -> list[tuple[int, str]]:
        async with self._sql_read() as db:
            return await unembedded(db, kind, models, flt, limit, after=after, among=among, upto=upto,
                                    newest_first=newest_first)  # fmt: skip

    async def count_unembedded(
        self, kind: RecordKind, models: Sequence[str], flt: SearchFilter, after: int, upto: int
    ) -> int:
        async with self._sql_read() as db:
            return await count_unembedded(db, kind, models, flt, after, upto)

    async def pending_count(self, kind: RecordKind, model: str) -> int:
        async with self._sql_read() as db:
            return await pending_count(db, kind, model)

    async def index_position(self, kind: RecordKind, model: str) -> int:
        async with self._sql_read() as db:
            return await index_position(db, kind, model)

    async def save_vectors(self, kind: RecordKind, model: str, seqs: Sequence[int], matrix: Matrix, upto: int) -> None:
        async with self._sql_write() as db:
            await save_vectors(db, kind, model, seqs, matrix, upto)

    async def embedders(self) -> list[tuple[str, int, str]]:
        async with self._sql_read() as db:
            return await embedders(db)

    async def set_embedder(self, model: str, dimensions: int, role: str) -> None:
        async with self._sql_write() as db:
            await set_embedder(db, model, dimensions, role)

    async def drop_embedder(self, model: str) -> None:
        async with self._sql_write() as db:
            await drop_embedder(db, model)
