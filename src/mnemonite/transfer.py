"""A whole memory as one JSON-lines file: ``mnemonite export FILE`` and ``mnemonite import FILE``.

The file is a header line (format, version, the mnemonite that wrote it, the migration plans
applied to the source), one line per row of every table (``{"row": {...}, "table": ...}``,
keys sorted, vectors as base64 float32 under ``"vector"``), in the order `copy` writes them
(parents first, rows by primary key), and a trailer with every table's row count and the
sha256 of the row lines. Rows keep their ``seq`` numbers, so vectors, rule checkpoints and
the indexer's positions stay valid; facts keep their whole history (superseded and forgotten
versions, lineage), and the delta and decision logs come along. The same memory gives the same
row lines, hence the same hash, from SQLite and from PostgreSQL.

Secret text is redacted by default (see `mnemonite.privacy`): the content of secret episodes, the
text of secret facts and the audit rows (deltas, decisions) that quote them become a marker, and
the header says ``"redacted": true``. Such a file is for sharing, not for restoring: `import_memory`
refuses it. A backup that restores everything is written with an explicit capability,
``export_memory(url, path, reveal=Reveal("backup"))`` (``mnemonite export FILE --reveal REASON``).

`import_memory` reads the whole file first (hash and counts checked against the trailer), then
writes it into an empty memory in one transaction: a truncated or edited file, or a failure
half-way, leaves the destination as it was.
"""

from __future__ import annotations

import asyncio
import base64
import functools
import hashlib
import os
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import orjson

from mnemonite._time import to_text, utcnow
from mnemonite._version import __version__
from mnemonite.copy import (
    CHUNK,
    GENERATED,
    VECTOR_COLUMNS,
    _chunks,
    _columns,
    _counts,
    _embedders,
    _finish,
    _insert,
    _reading,
    _writing,
)
from mnemonite.errors import InvalidInputError, NotFoundError, StoreError
from mnemonite.models import MigrationPlan
from mnemonite.privacy import MARKER, Reveal, check_reveal
from mnemonite.store import Store, open_store
from mnemonite.store.base import SnapshotStore
from mnemonite.store.sql import TABLES
from mnemonite.store.sql_search import set_embedder

__all__ = ["FORMAT", "TransferReport", "export_memory", "import_memory"]

FORMAT, VERSION = "mnemonite-export", 1
Progress = Callable[[str, int, int], object]  # (table, rows done, rows in the table)
_KNOWN = {table for table, _ in TABLES}


@dataclass(frozen=True)
class TransferReport:
    """What an export wrote or an import read: rows per table and the sha256 of the row lines."""

    path: Path
    counts: dict[str, int]
    sha256: str


async def export_memory(
    url: str, path: str | Path, *, progress: Progress | None = None, reveal: Reveal | None = None
) -> TransferReport:
    """Write the whole memory at ``url`` to ``path`` (replaced whole at the end, never half-written).

    Secret text is redacted unless ``reveal`` is given; only an unredacted export can be imported.
    """
    target = Path(path)
    shown = check_reveal(reveal) is not None
    source = await open_store(url, create=False)
    partial = target.with_name(f".{target.name}.partial")
    try:
        async with snapshot(source) as pinned:
            with partial.open("wb") as out:
                report = await _export(pinned, out, progress, shown)
        os.replace(partial, target)
    finally:
        partial.unlink(missing_ok=True)
        await source.close()
    return TransferReport(target, report[0], report[1])


class _Pinned:
    """A stand-in store whose every read runs on one snapshot connection (for the readers below)."""

    def __init__(self, db: Any) -> None:
        self._db = db

    @asynccontextmanager
    async def _sql_read(self) -> AsyncIterator[Any]:
        yield self._db


@asynccontextmanager
async def snapshot(store: Store) -> AsyncIterator[Store]:
    """``store`` read in one consistent state: the rows, counts and hashes of an export agree while others write."""
    if not isinstance(store, SnapshotStore):
        raise StoreError(f"{type(store).__name__} cannot read a consistent snapshot, so it cannot be exported")
    async with store.snapshot() as db:
        yield cast(Store, _Pinned(db))  # the readers only call _sql_read()


async def _export(source: Store, out: Any, progress: Progress | None, shown: bool) -> tuple[dict[str, int], str]:
    counts, digest = await _counts(source), hashlib.sha256()
    async with _reading(source) as db:
        cursor = await db.execute("SELECT body FROM schema_version WHERE kind = 'plan' ORDER BY version")
        plans = [orjson.loads(row[0]) for row in await cursor.fetchall()]
        secret = set() if shown else await _secret_facts(db)
        redacting = not shown and (bool(secret) or await _has_secret_rows(db))
    header = {"format": FORMAT, "version": VERSION, "mnemonite": _version(), "created": to_text(utcnow()),
              "redacted": redacting}  # fmt: skip
    out.write(orjson.dumps({**header, "plans": plans, "tables": [t for t, _ in TABLES]}) + b"\n")
    for table, _ in TABLES:
        done = 0
        hide = functools.partial(_redacted, table, secret_facts=secret) if redacting else None
        async for line in _table_lines(source, table, hide):
            digest.update(line)
            out.write(line)
            done += 1
            if progress is not None and (done % CHUNK == 0 or done == counts[table]):
                progress(table, done, counts[table])
    out.write(orjson.dumps({"end": True, "counts": counts, "sha256": digest.hexdigest()}) + b"\n")
    return counts, digest.hexdigest()


async def _table_lines(
    source: Store, table: str, hide: Callable[[list[str], list[Any]], list[Any]] | None = None
) -> AsyncIterator[bytes]:
    """The table's row lines as the export writes them, in primary-key order (``hide`` redacts a row)."""
    async with _reading(source) as db:
        columns = [c for c in await _columns(db, table) if c not in GENERATED]
    names = ["vector" if c in VECTOR_COLUMNS else c for c in columns]
    async for rows in _chunks(source, table, columns, dict(TABLES)[table]):
        for row in rows:
            yield _row_line(table, names, hide(names, row) if hide is not None else row)


async def _secret_facts(db: Any) -> set[str]:
    cursor = await db.execute("SELECT id FROM facts WHERE sensitivity = 'secret'")
    return {row[0] for row in await cursor.fetchall()}


async def _has_secret_rows(db: Any) -> bool:
    for table in _SENSITIVE_TABLES:
        cursor = await db.execute(f"SELECT 1 FROM {table} WHERE sensitivity = 'secret' LIMIT 1")
        if await cursor.fetchone() is not None:
            return True
    return False


# The columns that hold a secret record's text, per table, and what they become.
_SECRET_TEXT: dict[str, dict[str, str]] = {
    "episodes": {"content": MARKER, "metadata": "{}"},
    "facts": {"text": MARKER, "summary": MARKER, "object": MARKER, "payload": "{}"},
    "fact_conflicts": {"candidate_text": MARKER, "reason": MARKER},
    "blocks": {"value": MARKER, "description": MARKER},
    "session_messages": {"content": MARKER, "metadata": "{}"},
    "session_events": {"payload": "{}"},
    "procedures": {"steps": orjson.dumps([MARKER]).decode(), "trigger_text": MARKER},
}
_SENSITIVE_TABLES = ("episodes", "facts", "blocks", "session_messages", "session_events", "procedures")


def _redacted(table: str, names: list[str], row: list[Any], secret_facts: set[str]) -> list[Any]:
    values = dict(zip(names, row, strict=True))
    if table == "delta_log":
        return [_redacted_delta(values) if n == "body" and values.get("fact_id") in secret_facts else v
                for n, v in zip(names, row, strict=True)]  # fmt: skip
    is_secret = values.get("sensitivity") == "secret" or (
        table == "fact_conflicts" and bool({values.get("fact_id"), *orjson.loads(values["matched_ids"])} & secret_facts)
    )
    replace = _SECRET_TEXT.get(table, {}) if is_secret else {}
    return [replace[n] if n in replace and v is not None else v for n, v in zip(names, row, strict=True)]


def _redacted_delta(values: dict[str, Any]) -> str:
    body = orjson.loads(values["body"])
    if isinstance(body.get("fact_payload"), dict):
        hidden = {key: MARKER for key in ("text", "object", "summary") if body["fact_payload"].get(key) is not None}
        body["fact_payload"] = {**body["fact_payload"], **hidden, "payload": {}}
    return orjson.dumps(body).decode()


def _row_line(table: str, names: list[str], row: list[Any]) -> bytes:
    values = {
        n: {"$b64": base64.b64encode(v).decode()} if isinstance(v, bytes) else v
        for n, v in zip(names, row, strict=True)
    }
    return orjson.dumps({"row": values, "table": table}, option=orjson.OPT_SORT_KEYS) + b"\n"


async def import_memory(path: str | Path, url: str, *, progress: Progress | None = None) -> TransferReport:
    """Load the export at ``path`` into the empty memory at ``url`` (created if missing), in one transaction.

    Raises `NotFoundError` for a missing file, `InvalidInputError` for a file that is not a
    mnemonite export, was cut short or edited (hash or counts differ), or a destination that
    holds memories already; nothing is written then.
    """
    source = Path(path)
    header, counts, sha = await asyncio.to_thread(_verify, source)
    destination = await open_store(url)
    try:
        await _load(source, header, counts, destination, progress)
    finally:
        await destination.close()
    return TransferReport(source, counts, sha)


def _lines(path: Path) -> Iterator[tuple[int, bytes]]:
    with path.open("rb") as handle:
        yield from enumerate(handle, start=1)


def _parse(number: int, line: bytes) -> dict[str, Any]:
    try:
        parsed = orjson.loads(line)
    except orjson.JSONDecodeError:
        raise InvalidInputError(f"line {number} is not JSON: not a mnemonite export, or a damaged one") from None
    if not isinstance(parsed, dict):
        raise InvalidInputError(f"line {number} is not a JSON object: not a mnemonite export")
    return parsed


def _verify(path: Path) -> tuple[dict[str, Any], dict[str, int], str]:
    """Read the whole file: header, rows (hash, counts, known tables), trailer; raise on any mismatch."""
    if not path.is_file():
        raise NotFoundError(f"no export file at {path}")
    header: dict[str, Any] | None = None
    trailer: dict[str, Any] | None = None
    counts, digest = dict.fromkeys(_KNOWN, 0), hashlib.sha256()
    for number, line in _lines(path):
        item = _parse(number, line)
        if header is None:
            header = _check_header(item)
        elif trailer is not None:
            raise InvalidInputError(f"line {number} follows the export's last line: the file was edited")
        elif item.get("end") is True:
            trailer = item
        elif item.get("table") in _KNOWN and isinstance(item.get("row"), dict):
            counts[item["table"]] += 1
            digest.update(line)
        else:
            raise InvalidInputError(f"line {number} is not a row of a known table")
    if header is None or trailer is None:
        raise InvalidInputError(
            f"{path} is {'empty' if header is None else 'cut short (no final line)'}: export it again"
        )
    if trailer.get("counts") != counts or trailer.get("sha256") != digest.hexdigest():
        raise InvalidInputError(f"{path} does not match its own counts and hash: it was edited or damaged")
    return header, counts, digest.hexdigest()


def _check_header(item: dict[str, Any]) -> dict[str, Any]:
    if item.get("format") != FORMAT:
        raise InvalidInputError("not a mnemonite export (its first line does not name the format)")
    if item.get("redacted"):
        raise InvalidInputError(
            "this export has its secret text redacted and cannot restore a memory: export again with"
            " reveal=Reveal(...) (mnemonite export FILE --reveal REASON) to make a backup"
        )
    if item.get("version") != VERSION:
        raise InvalidInputError(
            f"export format version {item.get('version')!r}; this mnemonite reads version {VERSION}: upgrade mnemonite"
        )
    return item


async def _load(
    path: Path, header: dict[str, Any], counts: dict[str, int], destination: Store, progress: Progress | None
) -> None:
    before = await _counts(destination)
    if any(before.values()):
        taken = ", ".join(f"{table}: {n}" for table, n in before.items() if n)
        raise InvalidInputError(f"the destination is not empty ({taken}); import into a new database")
    for plan in header.get("plans", []):
        await destination.migrate(MigrationPlan.model_validate(plan))
    async with _writing(destination) as db:
        for table, rows in _tables(path):
            available = set(await _columns(db, table)) | VECTOR_COLUMNS
            columns = list(rows[0])
            missing = [c for c in columns if c not in available]
            if missing:
                raise StoreError(
                    f"the destination's {table} table has no column {missing[0]!r}; upgrade mnemonite there"
                )
            await _insert(db, table, columns, [[_value(row[c]) for c in columns] for row in rows])
            if progress is not None:
                progress(table, len(rows), counts[table])
        await _finish(db)
        for model, dimensions, role in await _embedders(db):
            await set_embedder(db, model, dimensions, role)


def _tables(path: Path, chunk: int = 5_000) -> Iterator[tuple[str, list[dict[str, Any]]]]:
    """The file's rows, as (table, rows) runs of at most ``chunk`` rows of one table."""
    table, rows = "", list[dict[str, Any]]()
    for number, line in _lines(path):
        item = _parse(number, line)
        if "row" not in item:
            continue
        if rows and (item["table"] != table or len(rows) == chunk):
            yield table, rows
            rows = []
        table = item["table"]
        rows.append(item["row"])
    if rows:
        yield table, rows


def _encoded(value: Any) -> Any:
    return {"$b64": base64.b64encode(value).decode()} if isinstance(value, bytes) else value


def _value(value: Any) -> Any:
    if isinstance(value, dict) and "$b64" in value:
        return base64.b64decode(value["$b64"])
    return value


def _version() -> str:
    return __version__
