"""SQLite's failures, named by cause: what happened to the file, and what to do about it.

SQLite reports a full disk, a read-only file, a lock held by another process or a damaged file
as result codes (``sqlite_errorcode``; the low byte is the primary code). Each becomes a
`StoreError` subclass whose message says the cause and the remedy. A failed statement rolled its
transaction back, so every message can promise that nothing of the call was written.
"""

from __future__ import annotations

import errno
import os
import shutil
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from mnemonite.errors import (
    DatabaseCorruptError,
    NotADatabaseError,
    StoreBusyError,
    StoreError,
    StoreFullError,
    StoreReadOnlyError,
)

__all__ = ["check_target", "translated"]

# Primary result codes (https://www.sqlite.org/rescode.html).
_PERM, _BUSY, _LOCKED, _READONLY, _IOERR, _CORRUPT, _FULL, _CANTOPEN, _NOTADB = 3, 5, 6, 8, 10, 11, 13, 14, 26
_LOW_SPACE = 8 * 1024 * 1024  # an I/O error with less free space than this is a full disk


def check_target(path: Path) -> None:
    """Refuse a path SQLite could not open, before a connection thread is started for it."""
    if path.is_dir():
        raise NotADatabaseError(f"{path} is a folder, not a database file: give a file path such as {path}/memory.db")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except FileExistsError:
        raise NotADatabaseError(f"{path.parent} is a file, not a folder: {path} cannot be created in it") from None
    except OSError as error:
        raise _os_error(path, error) from None


def _os_error(path: Path, error: OSError) -> StoreError:
    if error.errno == errno.ENOSPC:
        return StoreFullError(f"the disk holding {path} is full ({error.strerror}): free some space and retry")
    if error.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
        return StoreReadOnlyError(
            f"cannot create the folder of {path} ({error.strerror}): make it writable or choose another path"
        )
    return StoreError(f"cannot create the folder of {path}: {error.strerror}")


@contextmanager
def translated(path: Path | str, busy_timeout: float) -> Iterator[None]:
    """Translate driver errors into typed `StoreError`s at the boundary (httpx's pattern)."""
    try:
        yield
    except sqlite3.Error as error:
        raise typed(error, path, busy_timeout) from error


def typed(error: sqlite3.Error, path: Path | str, busy_timeout: float) -> StoreError:
    """The `StoreError` subclass for a driver error, its message naming the cause and the remedy."""
    text = " ".join(str(error).split())  # one line: a damaged schema's message quotes its broken SQL
    code = (getattr(error, "sqlite_errorcode", None) or 0) & 0xFF
    if code in (_BUSY, _LOCKED) or "locked" in text:
        return StoreBusyError(
            f"SQLite: {text}: another connection held the write lock longer than the busy timeout"
            f" ({busy_timeout:g} s); retry, or allow a longer wait with MemoryConfig.busy_timeout"
            " (MNEMONITE_BUSY_TIMEOUT, seconds)"
        )
    if code == _NOTADB or "file is not a database" in text:
        return NotADatabaseError(f"{path} is not a SQLite database (SQLite: {text})")
    if "could not decode to utf-8" in text.lower():  # a page overwritten inside a text: its bytes are not quoted
        return DatabaseCorruptError(
            f"{path} is damaged (SQLite: a stored text is not valid UTF-8): restore a backup, or salvage it with"
            f" `sqlite3 {path} .recover`"
        )
    if code == _CORRUPT:
        return DatabaseCorruptError(
            f"{path} is damaged (SQLite: {text}): restore a backup, or salvage it with `sqlite3 {path} .recover`"
        )
    if code == _FULL or (code == _IOERR and _low_space(path)):
        return StoreFullError(
            f"the disk holding {path} is full (SQLite: {text}): free some space and retry; nothing of this call"
            " was written"
        )
    if code in (_READONLY, _PERM):
        return StoreReadOnlyError(
            f"{path} cannot be written (SQLite: {text}): a memory is opened for writing even to be read; make the"
            f" file and its folder writable (SQLite writes {Path(path).name}-wal and -shm beside it), or copy it"
            " somewhere writable; nothing of this call was written"
        )
    return _open_or_io(text, code, path)


def _open_or_io(text: str, code: int, path: Path | str) -> StoreError:
    if code == _CANTOPEN:
        folder = Path(path).parent
        if not os.access(folder, os.W_OK | os.X_OK):
            return StoreReadOnlyError(f"cannot open {path} (SQLite: {text}): its folder {folder} is not writable")
        return StoreError(f"cannot open {path} (SQLite: {text}): check the path and its permissions")
    if code == _IOERR:
        return StoreError(
            f"SQLite could not read or write {path} ({text}): check the disk, its free space and the file's"
            " permissions; nothing of this call was written"
        )
    return StoreError(f"SQLite: {text}")


def _low_space(path: Path | str) -> bool:
    try:
        return shutil.disk_usage(Path(path).parent).free < _LOW_SPACE
    except OSError:
        return False
