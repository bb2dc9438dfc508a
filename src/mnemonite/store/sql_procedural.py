"""Procedures on the SQL stores: named recipes of one (user, agent), matched to a task by full text
(FTS5 / tsvector) and by the vector of their text, kept beside the row with the model that made it."""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractAsyncContextManager
from typing import Any

import orjson

from mnemonite._time import from_text, to_text
from mnemonite.errors import NotFoundError
from mnemonite.models.messages import SessionEvent
from mnemonite.models.procedures import Procedure
from mnemonite.store.rows import dumps
from mnemonite.store.sql import Connection, is_postgres
from mnemonite.store.sql_search import fts_match, tsquery
from mnemonite.store.sql_session import insert_events

__all__ = ["ProceduralMethods", "ProcedureVector", "delete", "upsert"]

ProcedureVector = tuple[str, bytes]  # (model, float32 bytes)
_COLUMNS = "p.id, p.user_id, p.agent_id, p.name, p.steps, p.trigger_text, p.sensitivity, p.created_at, p.updated_at"


def _procedure(row: Sequence[Any]) -> Procedure:
    return Procedure.trusted({
        "id": row[0], "user": row[1], "agent": row[2], "name": row[3], "steps": tuple(orjson.loads(row[4])),
        "trigger": row[5], "sensitivity": row[6], "created_at": from_text(row[7]), "updated_at": from_text(row[8]),
    })  # fmt: skip


def _scope(user: str, agent: str | None) -> tuple[str, list[object]]:
    return ("p.user_id = ?", [user]) if agent is None else ("p.user_id = ? AND p.agent_id = ?", [user, agent])


async def procedures(db: Connection, user: str, agent: str | None, name: str | None = None) -> list[Procedure]:
    clause, params = _scope(user, agent)
    if name is not None:
        clause, params = clause + " AND p.name = ?", [*params, name]
    rows = await db.execute_fetchall(f"SELECT {_COLUMNS} FROM procedures p WHERE {clause} ORDER BY p.name", params)
    return [_procedure(row) for row in rows]


async def with_vectors(db: Connection, user: str, agent: str) -> list[tuple[Procedure, str | None, bytes | None]]:
    rows = await db.execute_fetchall(
        f"SELECT {_COLUMNS}, p.vector_model, p.trigger_vector FROM procedures p"
        " WHERE p.user_id = ? AND p.agent_id = ? ORDER BY p.name",
        (user, agent),
    )
    return [(_procedure(row), row[9], None if row[10] is None else bytes(row[10])) for row in rows]


async def upsert(db: Connection, procedure: Procedure, vector: ProcedureVector | None = None) -> Procedure:
    """Insert, or redefine the (user, agent)'s procedure of that name (keeping its id and creation time)."""
    existing = await procedures(db, procedure.user, procedure.agent, procedure.name)
    if existing:
        procedure = procedure.model_copy(update={"id": existing[0].id, "created_at": existing[0].created_at})
        await db.execute("DELETE FROM procedures WHERE id = ?", (procedure.id,))
    model, blob = vector if vector is not None else (None, None)
    await db.execute(
        "INSERT INTO procedures (id, user_id, agent_id, name, steps, trigger_text, sensitivity, created_at,"
        " updated_at, vector_model, trigger_vector) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (procedure.id, procedure.user, procedure.agent, procedure.name, dumps(list(procedure.steps)),
         procedure.trigger, procedure.sensitivity, to_text(procedure.created_at), to_text(procedure.updated_at),
         model, blob),
    )  # fmt: skip
    return procedure


async def delete(db: Connection, procedure_id: str) -> None:
    await db.execute("DELETE FROM procedures WHERE id = ?", (procedure_id,))


async def search(db: Connection, user: str, agent: str, terms: Sequence[str], limit: int) -> list[tuple[str, float]]:
    """(procedure id, relevance) best first."""
    if not terms:
        return []
    if is_postgres(db):
        rows = await db.execute_fetchall(
            "SELECT p.id, ts_rank(p.search_tsv, q.query) AS score FROM procedures p,"
            f" (SELECT {tsquery(terms)} AS query) q WHERE p.search_tsv @@ q.query AND p.user_id = ? AND p.agent_id = ?"
            " ORDER BY score DESC, p.name LIMIT ?",
            (*terms, user, agent, limit),
        )
    else:
        rows = await db.execute_fetchall(
            "SELECT p.id, -bm25(procedures_fts, 2.0, 2.0, 1.0) AS score FROM procedures_fts f"
            " JOIN procedures p ON p.seq = f.rowid WHERE procedures_fts MATCH ? AND p.user_id = ? AND p.agent_id = ?"
            " ORDER BY bm25(procedures_fts, 2.0, 2.0, 1.0), p.name LIMIT ?",
            (fts_match(terms), user, agent, limit),
        )
    return [(str(row[0]), float(row[1])) for row in rows]


class ProceduralMethods:
    """The procedure methods of a store (mixed in); each write is one transaction with its session event."""

    def _sql_read(self) -> AbstractAsyncContextManager[Connection]:
        raise NotImplementedError

    def _sql_write(self) -> AbstractAsyncContextManager[Connection]:
        raise NotImplementedError

    async def procedures(self, user: str, agent: str | None, name: str | None = None) -> list[Procedure]:
        async with self._sql_read() as db:
            return await procedures(db, user, agent, name)

    async def procedures_with_vectors(self, user: str, agent: str) -> list[tuple[Procedure, str | None, bytes | None]]:
        async with self._sql_read() as db:
            return await with_vectors(db, user, agent)

    async def search_procedures(
        self, user: str, agent: str, terms: Sequence[str], limit: int
    ) -> list[tuple[str, float]]:
        async with self._sql_read() as db:
            return await search(db, user, agent, terms, limit)

    async def define_procedure(
        self, procedure: Procedure, vector: ProcedureVector | None, event: SessionEvent | None
    ) -> Procedure:
        async with self._sql_write() as db:
            stored = await upsert(db, procedure, vector)
            if event is not None:
                event = event.model_copy(update={"payload": {"procedure": stored.model_dump(mode="json")}})
            await insert_events(db, [event])
        return stored

    async def remove_procedure(self, user: str, agent: str, name: str, event: SessionEvent | None) -> Procedure:
        async with self._sql_write() as db:
            found = await procedures(db, user, agent, name)
            if not found:
                raise NotFoundError(f"agent {agent!r} has no procedure named {name!r}")
            await delete(db, found[0].id)
            if event is not None:
                event = event.model_copy(update={"payload": {"procedure": found[0].model_dump(mode="json")}})
            await insert_events(db, [event])
        return found[0]
