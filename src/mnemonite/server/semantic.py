"""The semantic tier over HTTP: remember (with its decision), supersede, forget, purge, facts (now or
as of a moment), history, lineage, search, the decision log, the user's names."""

from __future__ import annotations

from typing import Any

from pydantic import AwareDatetime, Field

from mnemonite.models import Fact, Lineage
from mnemonite.models.base import Model
from mnemonite.models.conflict import ConflictDecision, PurgeRecord
from mnemonite.models.fact import EntityLink, EventDateConfidence, FactStatus, MemoryType
from mnemonite.models.search import SearchHit
from mnemonite.server.episodic import MAX_K, MAX_QUERY, PurgeBody, ScopeFields
from mnemonite.server.verbs import Call, Page, Paged, Verb, page_of

__all__ = ["VERBS"]

MAX_TEXT = 20_000


class Statement(Model):
    """A statement's text and the optional fields a fact carries."""

    text: str = Field(min_length=1, max_length=MAX_TEXT)
    memory_type: MemoryType = "fact"
    subject: str | None = Field(default=None, max_length=500)
    predicate: str | None = Field(default=None, max_length=500)
    object: str | None = Field(default=None, max_length=500)
    tags: list[str] = Field(default_factory=list, max_length=100)
    summary: str | None = Field(default=None, max_length=MAX_TEXT)
    payload: dict[str, Any] | None = None
    entities: list[EntityLink] = Field(default_factory=list, max_length=100)


class RememberBody(Statement):
    """A statement to remember: the conflict pipeline decides whether it supersedes, duplicates, waits
    for a judge (pending) or is admitted."""

    user: str | None = None
    agent: str | None = None
    valid_from: AwareDatetime | None = None
    confidence: float = Field(default=1.0, ge=0.0, le=1.0)
    event_date: AwareDatetime | None = None
    event_date_confidence: EventDateConfidence | None = None


class Remembered(Model):
    """What remember decided, and the fact memory holds afterwards (new, or the duplicate kept)."""

    decision: ConflictDecision
    fact: Fact


class FactsQuery(Paged):
    """Facts of the scope, newest first: current ones, what memory believed ``as_of`` (system time),
    or what held ``valid_at`` (world time)."""

    user: str | None = None
    agent: str | None = None
    as_of: AwareDatetime | None = None
    valid_at: AwareDatetime | None = None
    status: FactStatus | None = None
    subject: str | None = None
    predicate: str | None = None


class FactSearch(ScopeFields):
    """Hybrid search over the scope's facts: current ones, or as of a moment."""

    query: str = Field(min_length=1, max_length=MAX_QUERY)
    k: int = Field(default=10, ge=1, le=MAX_K)
    as_of: AwareDatetime | None = None
    memory_types: tuple[MemoryType, ...] | None = None
    tags: tuple[str, ...] | None = None
    since: AwareDatetime | None = None
    until: AwareDatetime | None = None


class ConflictsQuery(Paged):
    """The decision log of the scope, oldest first; ``fact_id`` narrows to one fact's decisions."""

    user: str | None = None
    agent: str | None = None
    fact_id: str | None = None


class NamesQuery(Model):
    """Whose names: the key's user, under one agent."""

    user: str | None = None
    agent: str | None = None


class NamesBody(NamesQuery):
    """Names the user goes by ("Jo", "Joanna"): a statement about one of them is about the user."""

    names: list[str] = Field(min_length=1, max_length=50)


async def _linked(call: Call[Any], links: list[EntityLink]) -> list[EntityLink]:
    """Entity links, each to an entity of the caller's scope (another tenant's is 404)."""
    resolved = []
    for link in links:  # an id prefix names the entity as a full id does
        entity = await call.who.entity(call.mem, link.entity_id)
        resolved.append(link if entity.id == link.entity_id else link.model_copy(update={"entity_id": entity.id}))
    return resolved


async def remember(call: Call[RememberBody]) -> Remembered:
    """Remember a statement through the five-stage conflict pipeline, and say what was decided."""
    body = call.body
    scope = call.who.scope(user=body.user, agent=body.agent)
    fields = body.model_dump(exclude={"user", "agent", "text", "entities"})
    decision = await call.mem.semantic.remember_with_decision(
        scope, body.text, entities=await _linked(call, body.entities), **fields
    )
    return Remembered(decision=decision, fact=await call.mem.semantic.get(decision.fact_id))


async def facts(call: Call[FactsQuery]) -> Page[Fact]:
    """Facts of the scope, newest first (paged): current, ``as_of`` a moment, or ``valid_at`` one."""
    q = call.body
    scope = call.who.scope(user=q.user, agent=q.agent)
    found = await call.mem.semantic.facts(
        scope, as_of=q.as_of, valid_at=q.valid_at, status=q.status, subject=q.subject, predicate=q.predicate,
        limit=q.offset + q.limit + 1,
    )  # fmt: skip
    return page_of(found, q)


async def get(call: Call[None]) -> Fact:
    """One fact of the scope by id, whatever its status."""
    return await call.who.fact(call.mem, call.ids["fact_id"])


async def supersede(call: Call[Statement]) -> Fact:
    """Replace a current fact explicitly: the old one is closed, the new one cites it (SUPERSEDES)."""
    old = await call.who.fact(call.mem, call.ids["fact_id"])
    body = call.body
    fields = body.model_dump(exclude={"text", "entities"}, exclude_unset=True)
    if body.entities:
        fields["entities"] = await _linked(call, body.entities)
    return await call.mem.semantic.supersede(old.id, body.text, **fields)


async def forget(call: Call[None]) -> Fact:
    """Soft-delete a current fact: no longer believed from now on, kept for ``as_of`` replay."""
    fact = await call.who.fact(call.mem, call.ids["fact_id"])
    return await call.mem.semantic.forget(fact.id)


async def purge(call: Call[PurgeBody]) -> PurgeRecord:
    """Remove a fact and its whole supersede chain for good (a privacy request)."""
    fact = await call.who.fact(call.mem, call.ids["fact_id"])
    return await call.mem.semantic.purge(fact.id, reason=call.body.reason)


async def history(call: Call[None]) -> list[Fact]:
    """Every version in the fact's supersede chain, oldest first, with validity intervals."""
    fact = await call.who.fact(call.mem, call.ids["fact_id"])
    return await call.mem.semantic.history(fact.id)


async def lineage(call: Call[None]) -> list[Lineage]:
    """The lineage edges (SUPERSEDES, CONSOLIDATES) touching a fact."""
    fact = await call.who.fact(call.mem, call.ids["fact_id"])
    return await call.mem.semantic.lineage(fact.id)


async def search(call: Call[FactSearch]) -> list[SearchHit]:
    """Hybrid search over the scope's facts, best first, each hit with how it ranked."""
    q = call.body
    return await call.mem.semantic.search(
        call.who.scope(user=q.user, agent=q.agent), q.query, q.k, as_of=q.as_of, memory_types=q.memory_types,
        tags=q.tags, since=q.since, until=q.until,
    )  # fmt: skip


async def conflicts(call: Call[ConflictsQuery]) -> Page[ConflictDecision]:
    """The conflict decisions of the scope, oldest first (paged)."""
    q = call.body
    fact_id = None if q.fact_id is None else (await call.who.fact(call.mem, q.fact_id)).id  # a prefix: its full id
    scope = call.who.scope(user=q.user, agent=q.agent)
    found = await call.mem.semantic.conflicts(scope, fact_id=fact_id, limit=q.offset + q.limit + 1)
    return page_of(found, q)


async def names(call: Call[NamesQuery]) -> list[str]:
    """The names the user goes by, lower-cased."""
    return await call.mem.semantic.names(call.who.scope(user=call.body.user, agent=call.body.agent))


async def add_names(call: Call[NamesBody]) -> list[str]:
    """Record names the user goes by; returns every name known."""
    scope = call.who.scope(user=call.body.user, agent=call.body.agent)
    return await call.mem.semantic.add_names(scope, *call.body.names)


VERBS: tuple[Verb, ...] = (
    Verb("semantic", "semantic.remember", "POST", "/v1/facts", "write", remember, Remembered, body=RememberBody,
         status=201),
    Verb("semantic", "semantic.facts", "GET", "/v1/facts", "read", facts, Page[Fact], query=FactsQuery),
    Verb("semantic", "semantic.search", "POST", "/v1/facts/search", "read", search, list[SearchHit],
         body=FactSearch),
    Verb("semantic", "semantic.get", "GET", "/v1/facts/{fact_id}", "read", get, Fact),
    Verb("semantic", "semantic.supersede", "POST", "/v1/facts/{fact_id}/supersede", "write", supersede, Fact,
         body=Statement),
    Verb("semantic", "semantic.forget", "DELETE", "/v1/facts/{fact_id}", "write", forget, Fact),
    Verb("semantic", "semantic.purge", "POST", "/v1/facts/{fact_id}/purge", "admin", purge, PurgeRecord,
         body=PurgeBody),
    Verb("semantic", "semantic.history", "GET", "/v1/facts/{fact_id}/history", "read", history, list[Fact]),
    Verb("semantic", "semantic.lineage", "GET", "/v1/facts/{fact_id}/lineage", "read", lineage, list[Lineage]),
    Verb("semantic", "semantic.conflicts", "GET", "/v1/conflicts", "read", conflicts, Page[ConflictDecision],
         query=ConflictsQuery),
    Verb("semantic", "semantic.names", "GET", "/v1/names", "read", names, list[str], query=NamesQuery),
    Verb("semantic", "semantic.add_names", "POST", "/v1/names", "write", add_names, list[str], body=NamesBody),
)  # fmt: skip
