"""Storage backends behind one protocol; `open_store` picks one from a URL."""

from __future__ import annotations

import contextlib
import os
import sqlite3
from pathlib import Path

from mnemonite.errors import ConfigurationError, DatabaseNotFoundError
from mnemonite.store.base import FactStore, MemoryStore, Store
from mnemonite.store.sqlite import SQLiteMemoryStore
from mnemonite.store.sqlite_faults import check_target

__all__ = [
    "FactStore",
    "MemoryStore",
    "SQLiteMemoryStore",
    "Store",
    "erase_memory",
    "memory_file",
    "memory_url",
    "memory_users",
    "open_store",
    "sqlite_path",
]


def sqlite_path(url: str) -> Path | str:
    """``sqlite:///relative.db``, ``sqlite:////abs/path.db`` or ``sqlite:///:memory:`` to a path."""
    rest = url.removeprefix("sqlite://")
    if rest in (":memory:", "/:memory:"):
        return ":memory:"
    if not rest.startswith("/") or rest == "/":
        raise ConfigurationError(f"SQLite URL must look like sqlite:///path/to/file.db, got {url!r}")
    if "?" in rest:  # a SQLite URI's options would become part of the file's name
        raise ConfigurationError(f"SQLite URL options are not supported ({url!r}): name the file alone")
    return Path(rest[1:])


def memory_url(text: str) -> str:
    """A memory URL from a URL or a bare SQLite path: ``m.db``, ``./m.db`` and ``/tmp/m.db`` become
    ``sqlite:///m.db``, ``sqlite:///./m.db`` and ``sqlite:////tmp/m.db``; URLs are returned as they are."""
    if "://" in text or text == "":
        return text
    if text.startswith("file:"):
        raise ConfigurationError(f"{text!r} is a SQLite URI: give the path (m.db) or sqlite:///path/to/file.db")
    return f"sqlite:///{os.path.expanduser(text)}"  # "~/m.db" from Python, where no shell expanded it


def _sqlite_target(url: str, *, create: bool) -> Path | str:
    path = sqlite_path(url)
    if not create and path != ":memory:" and not Path(path).is_file():
        if Path(path).is_dir():
            check_target(Path(path))  # a folder: say so, as a write does
        raise DatabaseNotFoundError(f"no database at {path}: check the path (nothing was created)")
    return path


async def open_store(url: str, *, create: bool = True, busy_timeout: float = 10.0) -> Store:
    """Open and bootstrap the store a URL (or a bare SQLite path) names.

    ``create=False`` opens only an existing memory: a missing SQLite file, or a PostgreSQL database
    without mnemonite's tables, raises `DatabaseNotFoundError` and nothing (no file, no folder, no
    table) is created. ``busy_timeout``: seconds a write waits for a lock another connection holds
    before `StoreBusyError`.
    """
    url = memory_url(url)
    if url.startswith("sqlite://"):
        store = SQLiteMemoryStore(_sqlite_target(url, create=create), busy_timeout=busy_timeout)
        await store.bootstrap()
        return store
    if url.startswith(("postgresql://", "postgres://")):
        from mnemonite.store.postgres import PostgresMemoryStore  # needs the postgres extra

        server = PostgresMemoryStore(url, busy_timeout=busy_timeout)
        await server.bootstrap(create=create)
        return server
    raise ConfigurationError(
        f"unsupported memory URL {url!r}: use sqlite:///path/to/file.db or postgresql://user@host/database"
    )


async def erase_memory(url: str) -> None:
    """Delete the memory a URL names: a SQLite file (and its WAL), or every mnemonite table of a PostgreSQL database."""
    url = memory_url(url)
    if url.startswith("sqlite://"):
        _unlink_sqlite(sqlite_path(url))
        return
    from mnemonite.store.postgres import PostgresMemoryStore  # needs the postgres extra

    await PostgresMemoryStore(url).drop_tables()


def memory_file(url: str) -> Path | None:
    """The file of a SQLite memory URL (or bare path), else None: a server database has none."""
    url = memory_url(url)
    if not url.startswith("sqlite://"):
        return None
    path = sqlite_path(url)
    return None if path == ":memory:" else Path(path)


def _unlink_sqlite(path: Path | str) -> None:
    if path != ":memory:":
        for suffix in ("", "-wal", "-shm"):
            Path(f"{path}{suffix}").unlink(missing_ok=True)


async def memory_users(url: str) -> set[str] | None:
    """Every user whose records the memory at ``url`` holds (empty where there is no memory yet), or None where
    ``url`` names a file that is not a mnemonite memory. Reads only: nothing is created or migrated."""
    path = memory_file(url)
    if path is not None:
        if not path.exists():
            return set()
        try:
            with contextlib.closing(sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)) as db:
                tables = [str(row[0]) for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
                if tables and "episodes" not in tables:
                    return None
                owned = [t for t in tables if any(c[1] == "user_id" for c in db.execute(f'PRAGMA table_info("{t}")'))]
                return {str(row[0]) for t in owned for row in db.execute(f'SELECT DISTINCT user_id FROM "{t}"')}
        except sqlite3.DatabaseError:
            return None
    from mnemonite.store.postgres import PostgresMemoryStore  # needs the postgres extra

    return await PostgresMemoryStore(memory_url(url)).users()
