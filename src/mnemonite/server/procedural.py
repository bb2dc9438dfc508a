"""The procedural tier over HTTP: an agent's named workflows (define, remove, list, activate).

A procedure belongs to one (user, agent), like a block: a name the scope's agent has no procedure
under is 404, whoever else has one.
"""

from __future__ import annotations

from pydantic import Field

from mnemonite.models.procedures import Procedure, ProcedureMatch
from mnemonite.models.sensitivity import Sensitivity
from mnemonite.server.episodic import MAX_QUERY, ScopeFields
from mnemonite.server.verbs import Call, Page, Paged, Verb, page_of

__all__ = ["VERBS"]


class ProcedureBody(ScopeFields):
    """A procedure of the scope's agent (an existing name is redefined, keeping its id)."""

    name: str = Field(min_length=1, max_length=200)
    steps: list[str] = Field(min_length=1, max_length=200)
    trigger: str = Field(default="", max_length=10_000)
    sensitivity: Sensitivity | None = None


class ProceduresQuery(Paged, ScopeFields):
    """The scope's procedures by name (a key bound to a user only, naming no agent: every agent's)."""


class ActivateBody(ScopeFields):
    """The agent's procedures that best match a task, by full text and by meaning."""

    task: str = Field(min_length=1, max_length=MAX_QUERY)
    k: int = Field(default=3, ge=1, le=100)
    min_similarity: float = Field(default=0.2, ge=-1.0, le=1.0)


async def define(call: Call[ProcedureBody]) -> Procedure:
    """Define (or redefine) a procedure of the scope's agent: ordered steps and when it applies."""
    b = call.body
    scope = call.who.scope(user=b.user, agent=b.agent)
    return await call.mem.procedural.define(scope, b.name, b.steps, trigger=b.trigger, sensitivity=b.sensitivity)


async def procedures(call: Call[ProceduresQuery]) -> Page[Procedure]:
    """The scope's procedures by name (paged)."""
    scope = call.who.scope(user=call.body.user, agent=call.body.agent)
    return page_of(await call.mem.procedural.list(scope), call.body)


async def remove(call: Call[ScopeFields]) -> Procedure:
    """Remove a procedure of the scope's agent; returns it."""
    scope = call.who.scope(user=call.body.user, agent=call.body.agent)
    return await call.mem.procedural.remove(scope, call.ids["procedure"])


async def activate(call: Call[ActivateBody]) -> list[ProcedureMatch]:
    """The scope's agent's procedures that best match a task, best first."""
    b = call.body
    scope = call.who.scope(user=b.user, agent=b.agent)
    return await call.mem.procedural.activate(scope, b.task, b.k, min_similarity=b.min_similarity)


VERBS: tuple[Verb, ...] = (
    Verb("procedural", "procedural.define", "POST", "/v1/procedures", "write", define, Procedure,
         body=ProcedureBody, status=201),
    Verb("procedural", "procedural.list", "GET", "/v1/procedures", "read", procedures, Page[Procedure],
         query=ProceduresQuery),
    Verb("procedural", "procedural.activate", "POST", "/v1/procedures/activate", "read", activate,
         list[ProcedureMatch], body=ActivateBody),
    Verb("procedural", "procedural.remove", "DELETE", "/v1/procedures/{procedure}", "write", remove, Procedure,
         query=ScopeFields),
)  # fmt: skip
