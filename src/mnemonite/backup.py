"""Backups a memory can be restored from: ``Memory.backup(path)``, ``mnemonite backup`` and ``mnemonite restore``.

A backup is one consistent state of the memory, taken while other processes keep writing:

- a memory in one file (SQLite) is copied with SQLite's online backup API into a single-file
  database (format ``"sqlite"``), which SQLite and mnemonite open as they are;
- a server memory (PostgreSQL) is written in the export format of `mnemonite.transfer`
  (format ``"export"``), read in one repeatable-read transaction.

Each backup is checked before it replaces ``path`` (whole, never half-written): the SQLite copy
must pass an integrity check, and the content hash of every table is taken from the backup itself.
A table's content hash is the sha256 of its rows as the export writes them (primary-key order),
so the same memory has the same hashes on SQLite and on PostgreSQL, in a backup and once restored.

`restore_memory` loads either format into an empty memory (SQLite or PostgreSQL, created if
missing) in one transaction, then compares the content hashes of every table with the backup's;
a non-empty destination is refused, never merged into or overwritten.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import orjson

from mnemonite.copy import _counts
from mnemonite.errors import InvalidInputError, NotFoundError, StoreError
from mnemonite.store import Store, memory_url, open_store
from mnemonite.store.base import FileBackupStore
from mnemonite.store.sql import TABLES
from mnemonite.transfer import _export, _table_lines, _verify, export_memory, import_memory, snapshot

__all__ = ["BackupFormat", "BackupReport", "backup_store", "content_hashes", "restore_memory"]

BackupFormat = Literal["sqlite", "export"]
Progress = Callable[[str, int, int], object]  # (table, rows done, rows in the table)
_SQLITE_MAGIC = b"SQLite format 3\x00"


@dataclass(frozen=True)
class BackupReport:
    """A backup written or restored: its file, format, and the row count and content hash of every table."""

    path: Path
    format: BackupFormat
    counts: dict[str, int]
    hashes: dict[str, str]


async def backup_store(
    store: Store, path: str | Path, *, progress: Progress | None = None, source: Path | None = None
) -> BackupReport:
    """Write a consistent backup of ``store`` to ``path`` (replaced whole at the end); see the module docstring.

    ``source`` is the store's own file, if it has one: a backup never replaces it.
    """
    target = Path(path)
    await asyncio.to_thread(_check_target, target, source)
    partial = target.with_name(f".{target.name}.partial")
    _remove(partial)
    try:
        if isinstance(store, FileBackupStore):
            await store.backup_file(partial)
            report = await _checked_copy(partial, progress)
        else:
            report = await _export_snapshot(store, partial, progress)
        os.replace(partial, target)
    finally:
        _remove(partial)
    return BackupReport(target, report.format, report.counts, report.hashes)


def _remove(partial: Path) -> None:
    """A partial backup, and the WAL files its check may have left if it failed."""
    for suffix in ("", "-wal", "-shm"):
        Path(f"{partial}{suffix}").unlink(missing_ok=True)


def _check_target(target: Path, source: Path | None) -> None:
    if not target.parent.is_dir():
        raise NotFoundError(f"no folder {target.parent} to write the backup in: create it first")
    if target.is_dir():
        raise InvalidInputError(f"{target} is a folder: name the backup file to write")
    if source is not None and target.resolve() == source.resolve():
        raise InvalidInputError(f"{target} is the memory's own database file: write the backup somewhere else")


async def _checked_copy(path: Path, progress: Progress | None) -> BackupReport:
    copy = await open_store(memory_url(str(path)), create=False)
    try:
        health = await copy.health(deep=True)
        if not health.ok:
            raise StoreError(f"the backup copy failed its integrity check ({health.integrity}); nothing was replaced")
        counts, hashes = await _hashes(copy, progress)
    finally:
        await copy.close()
    return BackupReport(path, "sqlite", counts, hashes)


async def _export_snapshot(store: Store, path: Path, progress: Progress | None) -> BackupReport:
    async with snapshot(store) as pinned:
        with path.open("wb") as out:
            await _export(pinned, out, progress, True)  # a backup restores: secret text is kept whole
    counts, hashes = await asyncio.to_thread(_file_hashes, path)
    return BackupReport(path, "export", counts, hashes)


async def content_hashes(url: str) -> dict[str, str]:
    """The content hash of every table of the memory at ``url``, read in one snapshot."""
    store = await open_store(url, create=False)
    try:
        return (await _hashes(store, None))[1]
    finally:
        await store.close()


async def _hashes(store: Store, progress: Progress | None) -> tuple[dict[str, int], dict[str, str]]:
    """Rows and content hash per table, read in one snapshot (as the export would write them)."""
    counts: dict[str, int] = {}
    hashes: dict[str, str] = {}
    async with snapshot(store) as pinned:
        for table, _ in TABLES:
            digest, done = hashlib.sha256(), 0
            async for line in _table_lines(pinned, table):
                digest.update(line)
                done += 1
            counts[table], hashes[table] = done, digest.hexdigest()
            if progress is not None:
                progress(table, done, done)
    return counts, hashes


def _file_hashes(path: Path) -> tuple[dict[str, int], dict[str, str]]:
    """Rows and content hash per table of an export file (its row lines are the hashed lines)."""
    digests = {table: hashlib.sha256() for table, _ in TABLES}
    counts = dict.fromkeys(digests, 0)
    with path.open("rb") as handle:
        for line in handle:
            if line.startswith(b'{"row":'):
                table = orjson.loads(line)["table"]
                digests[table].update(line)
                counts[table] += 1
    return counts, {table: digest.hexdigest() for table, digest in digests.items()}


async def restore_memory(path: str | Path, url: str, *, progress: Progress | None = None) -> BackupReport:
    """Load the backup at ``path`` (either format) into the empty memory at ``url`` and verify it.

    Raises `NotFoundError` for a missing file, `NotADatabaseError` or `InvalidInputError` for a
    file that is not a whole backup, `InvalidInputError` when the destination holds memories
    already (nothing is written then), and `StoreError` when the restored content hashes differ
    from the backup's. The backup file is never changed.
    """
    source = Path(path)
    with tempfile.TemporaryDirectory(prefix="mnemonite-restore-") as folder:
        export, kind = await _as_export(source, Path(folder))
        await asyncio.to_thread(_verify, export)  # a damaged backup fails before a destination is created
        counts, expected = await asyncio.to_thread(_file_hashes, export)
        await _require_empty(url)
        await import_memory(export, url, progress=progress)
    restored = await content_hashes(url)
    if restored != expected:
        changed = ", ".join(t for t in expected if restored.get(t) != expected[t])
        raise StoreError(f"the restored memory differs from the backup in: {changed}; restore it again")
    return BackupReport(source, kind, counts, expected)


async def _as_export(source: Path, folder: Path) -> tuple[Path, BackupFormat]:
    """The backup as an export file; a SQLite backup is read from a copy, so the backup itself stays as it was."""
    if await asyncio.to_thread(_format, source) == "export":
        return source, "export"
    copy = folder / "backup.db"
    await asyncio.to_thread(shutil.copyfile, source, copy)
    await export_memory(memory_url(str(copy)), folder / "backup.jsonl")
    return folder / "backup.jsonl", "sqlite"


def _format(path: Path) -> BackupFormat:
    if not path.is_file():
        raise NotFoundError(f"no backup file at {path}")
    with path.open("rb") as handle:
        return "sqlite" if handle.read(len(_SQLITE_MAGIC)) == _SQLITE_MAGIC else "export"


async def _require_empty(url: str) -> None:
    store = await open_store(url)
    try:
        taken = {table: n for table, n in (await _counts(store)).items() if n}
    finally:
        await store.close()
    if taken:
        rows = ", ".join(f"{table}: {n}" for table, n in taken.items())
        raise InvalidInputError(
            f"the destination is not empty ({rows}); restore into a new database"
            " (move a damaged SQLite file aside first, or create an empty PostgreSQL database)"
        )
