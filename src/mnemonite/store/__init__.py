"""Storage backends behind one protocol; `open_store` picks one from a URL."""

from __future__ import annotations

from pathlib import Path

from mnemonite.errors import ConfigurationError
from mnemonite.store.base import FactStore, MemoryStore, Store
from mnemonite.store.sqlite import SQLiteMemoryStore

__all__ = ["FactStore", "MemoryStore", "SQLiteMemoryStore", "Store", "open_store", "sqlite_path"]


def sqlite_path(url: str) -> Path | str:
    """``sqlite:///relative.db``, ``sqlite:////abs/path.db`` or ``sqlite:///:memory:`` to a path."""
    rest = url.removeprefix("sqlite://")
    if rest in (":memory:", "/:memory:"):
        return ":memory:"
    if not rest.startswith("/") or rest == "/":
        raise ConfigurationError(f"SQLite URL must look like sqlite:///path/to/file.db, got {url!r}")
    return Path(rest[1:])


async def open_store(url: str) -> Store:
    """Open and bootstrap the store a URL names."""
    if url.startswith("sqlite://"):
        store = SQLiteMemoryStore(sqlite_path(url))
        await store.bootstrap()
        return store
    if url.startswith(("postgresql://", "postgres://")):
        from mnemonite.store.postgres import PostgresMemoryStore  # needs the postgres extra

        server = PostgresMemoryStore(url)
        await server.bootstrap()
        return server
    raise ConfigurationError(
        f"unsupported memory URL {url!r}: use sqlite:///path/to/file.db or postgresql://user@host/database"
    )
