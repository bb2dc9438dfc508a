"""API keys on the SQL stores (``?`` placeholders, see `mnemonite.store.sql`): create, find by hash, list, revoke."""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractAsyncContextManager
from datetime import datetime
from typing import Any

import orjson

from mnemonite._time import from_text, to_text
from mnemonite.models.keys import ApiKey
from mnemonite.store.sql import Connection

__all__ = ["KeyMethods"]

_COLUMNS = "id, user_id, agent_id, capabilities, label, created_at, revoked_at"


def _key(row: Sequence[Any]) -> ApiKey:
    return ApiKey(
        id=row[0], user=row[1], agent=row[2], capabilities=tuple(orjson.loads(row[3])), label=row[4],
        created_at=from_text(row[5]), revoked_at=from_text(row[6]) if row[6] else None,
    )  # fmt: skip


class KeyMethods:
    """The API-key methods of a store (mixed in)."""

    def _sql_read(self) -> AbstractAsyncContextManager[Connection]:
        raise NotImplementedError

    def _sql_write(self) -> AbstractAsyncContextManager[Connection]:
        raise NotImplementedError

    async def create_key(self, key: ApiKey, secret_hash: str) -> None:
        """Store a new key with the hash of its secret."""
        async with self._sql_write() as db:
            await db.execute(
                f"INSERT INTO api_keys ({_COLUMNS}, secret_hash) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (key.id, key.user, key.agent, orjson.dumps(list(key.capabilities)).decode(), key.label,
                 to_text(key.created_at), None, secret_hash),
            )  # fmt: skip

    async def key_by_hash(self, secret_hash: str) -> ApiKey | None:
        """The key whose secret hashes to ``secret_hash`` (revoked or not), or None."""
        async with self._sql_read() as db:
            cursor = await db.execute(f"SELECT {_COLUMNS} FROM api_keys WHERE secret_hash = ?", (secret_hash,))
            row = await cursor.fetchone()
        return None if row is None else _key(row)

    async def keys(self, user: str | None) -> list[ApiKey]:
        """Every key (of one user, when given), oldest first."""
        where, params = ("WHERE user_id = ?", (user,)) if user is not None else ("", ())
        async with self._sql_read() as db:
            rows = await db.execute_fetchall(f"SELECT {_COLUMNS} FROM api_keys {where} ORDER BY created_at, id", params)
        return [_key(row) for row in rows]

    async def revoke_key(self, key_id: str, now: datetime) -> ApiKey | None:
        """Mark a key revoked (the first revocation's time is kept); None when there is no such key."""
        async with self._sql_write() as db:
            await db.execute(
                "UPDATE api_keys SET revoked_at = COALESCE(revoked_at, ?) WHERE id = ?", (to_text(now), key_id)
            )
            cursor = await db.execute(f"SELECT {_COLUMNS} FROM api_keys WHERE id = ?", (key_id,))
            row = await cursor.fetchone()
        return None if row is None else _key(row)
