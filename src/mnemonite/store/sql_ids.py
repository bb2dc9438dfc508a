"""Id prefixes to full ids, on the SQL stores (``?`` placeholders, see `mnemonite.store.sql`).

Shown ids are long (32 hex digits); people type the first few. A prefix must match exactly one
record of its kind: none is `NotFoundError`, several is `AmbiguousIdError` with a few candidates.
"""

from __future__ import annotations

from contextlib import AbstractAsyncContextManager
from typing import Literal

from mnemonite.errors import AmbiguousIdError, InvalidInputError, NotFoundError
from mnemonite.store.sql import Connection

__all__ = ["IdKind", "IdMethods", "resolve_id"]

IdKind = Literal["episode", "fact", "entity", "rule"]
_TABLES: dict[str, str] = {"episode": "episodes", "fact": "facts", "entity": "entities", "rule": "rules"}
_SHOWN = 5


def like_prefix(prefix: str) -> str:
    """A LIKE pattern (``ESCAPE '\\'``) matching the strings that start with ``prefix``, wildcards taken literally."""
    escaped = prefix.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"{escaped}%"


async def resolve_id(
    db: Connection, kind: IdKind, prefix: str, user: str | None = None, agent: str | None = None
) -> str:
    """The one id of ``kind`` equal to or starting with ``prefix``; among ``user``'s records (and ``agent``'s)
    when given, so that neither the match nor the candidates of an ambiguous prefix reach beyond them."""
    table = _TABLES.get(kind)
    if table is None:
        raise InvalidInputError(f"kind must be one of {', '.join(_TABLES)}, got {kind!r}")
    if not prefix:
        raise InvalidInputError(f"an empty {kind} id matches every {kind}: give at least one character")
    if (user is not None or agent is not None) and kind == "rule":
        raise InvalidInputError("rules belong to the whole memory: resolve a rule id without a user or agent")
    where, params = "id LIKE ? ESCAPE '\\'", [like_prefix(prefix)]
    for column, value in (("user_id", user), ("agent_id", agent)):
        if value is not None:
            where, params = f"{where} AND {column} = ?", [*params, value]
    rows = list(
        await db.execute_fetchall(
            f"SELECT id FROM {table} WHERE {where} ORDER BY id LIMIT ?",  # fixed names and columns
            (*params, _SHOWN + 1),
        )
    )
    ids = [str(row[0]) for row in rows]
    if prefix in ids or len(ids) == 1:
        return prefix if prefix in ids else ids[0]
    if not ids:
        raise NotFoundError(f"no {kind} with an id starting with {prefix!r}")
    shown = ", ".join(ids[:_SHOWN]) + (", ..." if len(ids) > _SHOWN else "")
    raise AmbiguousIdError(f"{kind} id prefix {prefix!r} matches several: {shown}; give more characters")


class IdMethods:
    """`resolve_id` of a store (mixed in)."""

    def _sql_read(self) -> AbstractAsyncContextManager[Connection]:
        raise NotImplementedError

    async def resolve_id(self, kind: IdKind, prefix: str, user: str | None = None, agent: str | None = None) -> str:
        """The full id of the one ``kind`` record (of ``user`` and ``agent``, when given) whose id is or starts
        with ``prefix``."""
        async with self._sql_read() as db:
            return await resolve_id(db, kind, prefix, user, agent)
