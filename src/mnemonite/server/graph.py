"""Graph memory over HTTP: entities, edges, walks, recall, budgeted context, consolidation of facts, stats."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from mnemonite.models import Fact
from mnemonite.models.base import Model
from mnemonite.models.graph import (
    MAX_DEPTH,
    BudgetConfig,
    Direction,
    Edge,
    Entity,
    EntityContext,
    GraphStats,
    RecallOptions,
    ScoredFact,
)
from mnemonite.server.episodic import ScopeFields
from mnemonite.server.semantic import MAX_TEXT
from mnemonite.server.verbs import Call, Page, Paged, Verb, page_of

__all__ = ["VERBS"]


class EntityBody(ScopeFields):
    """A new entity; its name (case-insensitive) must be free in the scope."""

    name: str = Field(min_length=1, max_length=500)
    entity_type: str = Field(min_length=1, max_length=100)
    properties: dict[str, Any] = Field(default_factory=dict)
    owner: str | None = None


class EntityChange(Model):
    """What to change on an entity (properties are replaced whole); what is left out stays."""

    name: str | None = Field(default=None, min_length=1, max_length=500)
    entity_type: str | None = Field(default=None, min_length=1, max_length=100)
    properties: dict[str, Any] | None = None
    owner: str | None = None


class EntitiesQuery(Paged):
    """The scope's entities by name (paged), of one type when given."""

    user: str | None = None
    agent: str | None = None
    entity_type: str | None = None


class EntitySearch(Model):
    """Entities whose name, type or properties match the query's words."""

    user: str | None = None
    agent: str | None = None
    q: str = Field(min_length=1, max_length=500)
    limit: int = Field(default=20, ge=1, le=1000)


class NameQuery(Model):
    """An entity of the scope by name (case-insensitive)."""

    user: str | None = None
    agent: str | None = None
    name: str = Field(min_length=1, max_length=500)


class EdgesQuery(Model):
    """The edges leaving (``out``) or arriving at (``in``) an entity, oldest first."""

    end: Literal["out", "in"] = "out"
    limit: int = Field(default=100, ge=1, le=10_000)
    ended: bool = False  # edges that ended too (learned from a fact since replaced or forgotten)


class DecayBody(ScopeFields):
    """Multiply the stored salience of every current fact of the scope by ``factor``."""

    factor: float = Field(ge=0.0, le=1.0)


class TouchBody(Model):
    """Count an access of each fact: access count, last access, salience boost."""

    fact_ids: list[str] = Field(min_length=1, max_length=1000)


class Count(Model):
    """How many records the call changed."""

    count: int


class WalkQuery(Model):
    """A walk from an entity: ``depth`` hops, following ``direction`` (and only ``relation``, when given)."""

    relation: str | None = None
    direction: Direction = "both"
    depth: int = Field(default=1, ge=1, le=MAX_DEPTH)
    limit: int = Field(default=100, ge=1, le=10_000)
    ended: bool = False  # edges that ended too (learned from a fact since replaced or forgotten)


class EdgeBody(ScopeFields):
    """The edge (source, target, relation), upserted: a second call updates its properties."""

    source: str = Field(min_length=1)
    target: str = Field(min_length=1)
    relation: str = Field(min_length=1, max_length=100)
    properties: dict[str, Any] = Field(default_factory=dict)


class EdgeQuery(Model):
    """The edge to remove."""

    source: str = Field(min_length=1)
    target: str = Field(min_length=1)
    relation: str = Field(min_length=1, max_length=100)


class Removed(Model):
    """What was removed."""

    removed: str


class RecallBody(RecallOptions):
    """Current facts by salience x relevance (`RecallOptions`), within the scope."""

    user: str | None = None
    agent: str | None = None


class ContextBody(ScopeFields):
    """What memory holds about an entity, within a token budget, ready for a prompt."""

    entity: str = Field(min_length=1, max_length=500)
    topic: str | None = Field(default=None, max_length=2000)
    max_tokens: int = Field(default=BudgetConfig().max_tokens, ge=1, le=200_000)


class Context(Model):
    """The gathered context, and its rendering for a prompt."""

    context: EntityContext
    text: str


class ConsolidateBody(Model):
    """One fact that consolidates several current ones of the scope (CONSOLIDATES lineage)."""

    fact_ids: list[str] = Field(min_length=1, max_length=1000)
    text: str = Field(min_length=1, max_length=MAX_TEXT)
    summary: str | None = None


class StatsQuery(Model):
    """Counts of one (user, agent) graph."""

    user: str | None = None
    agent: str | None = None


async def create_entity(call: Call[EntityBody]) -> Entity:
    """Create an entity (a person, tool, project...) in the scope's graph."""
    b = call.body
    scope = call.who.scope(user=b.user, agent=b.agent)
    return await call.mem.graph.create_entity(
        scope, name=b.name, entity_type=b.entity_type, properties=b.properties, owner=b.owner
    )


async def entities(call: Call[EntitiesQuery]) -> Page[Entity]:
    """The scope's entities by name (paged)."""
    q = call.body
    scope = call.who.scope(user=q.user, agent=q.agent)
    found, _ = await call.mem.graph.entities(scope, entity_type=q.entity_type, limit=q.limit + 1, offset=q.offset)
    return page_of(found, q, skipped=True)


async def search_entities(call: Call[EntitySearch]) -> list[Entity]:
    """Entities matching the query's words, best first."""
    scope = call.who.scope(user=call.body.user, agent=call.body.agent)
    return await call.mem.graph.search_entities(scope, call.body.q, limit=call.body.limit)


async def entity_by_name(call: Call[NameQuery]) -> Entity:
    """An entity of the scope by name (case-insensitive)."""
    return await call.mem.graph.entity(call.who.scope(user=call.body.user, agent=call.body.agent), call.body.name)


async def edges(call: Call[EdgesQuery]) -> list[Edge]:
    """The edges leaving or arriving at an entity that hold (``ended``: those that ended too), oldest first."""
    found = await call.who.entity(call.mem, call.ids["entity_id"])
    if call.body.end == "out":
        return await call.mem.graph.edges_from(found.id, limit=call.body.limit, ended=call.body.ended)
    return await call.mem.graph.edges_to(found.id, limit=call.body.limit, ended=call.body.ended)


async def decay(call: Call[DecayBody]) -> Count:
    """Decay the salience of every current fact of the scope by a factor in [0, 1]."""
    scope = call.who.scope(user=call.body.user, agent=call.body.agent)
    return Count(count=await call.mem.graph.decay_all(scope, call.body.factor))


async def touch(call: Call[TouchBody]) -> Count:
    """Count an access of each of the scope's facts named (salience boost, capped at 1)."""
    ids = [(await call.who.fact(call.mem, fact_id)).id for fact_id in call.body.fact_ids]
    return Count(count=await call.mem.graph.touch(ids))


async def get_entity(call: Call[None]) -> Entity:
    """One entity of the scope by id."""
    return await call.who.entity(call.mem, call.ids["entity_id"])


async def update_entity(call: Call[EntityChange]) -> Entity:
    """Change an entity's name, type, properties or owner."""
    found = await call.who.entity(call.mem, call.ids["entity_id"])
    return await call.mem.graph.update_entity(found.id, **call.body.model_dump(exclude_none=True))


async def delete_entity(call: Call[None]) -> Removed:
    """Remove an entity with its edges and fact links; the facts stay."""
    found = await call.who.entity(call.mem, call.ids["entity_id"])
    await call.mem.graph.delete_entity(found.id)
    return Removed(removed=found.id)


async def neighbors(call: Call[WalkQuery]) -> list[Edge]:
    """The edges within ``depth`` hops of an entity that hold (``ended``: those that ended too), nearest first."""
    found = await call.who.entity(call.mem, call.ids["entity_id"])
    q = call.body
    return await call.mem.graph.neighbors(
        found.id, relation=q.relation, direction=q.direction, depth=q.depth, limit=q.limit, ended=q.ended
    )


async def relate(call: Call[EdgeBody]) -> Edge:
    """Upsert the edge (source, target, relation) between two entities of the scope."""
    b = call.body
    call.who.scope(user=b.user, agent=b.agent)
    source = await call.who.entity(call.mem, b.source)
    target = await call.who.entity(call.mem, b.target)  # ids or id prefixes: the entities' full ids below
    scope = call.who.scope(agent=source.agent)
    return await call.mem.graph.relate(
        scope, source=source.id, target=target.id, relation=b.relation, properties=b.properties
    )


async def unrelate(call: Call[EdgeQuery]) -> Removed:
    """Remove the edge (source, target, relation)."""
    b = call.body
    source = await call.who.entity(call.mem, b.source)
    target = await call.who.entity(call.mem, b.target)
    await call.mem.graph.unrelate(source=source.id, target=target.id, relation=b.relation)
    return Removed(removed=f"{source.id} -[{b.relation}]-> {target.id}")


async def recall(call: Call[RecallBody]) -> list[ScoredFact]:
    """Current facts of the scope by salience x relevance, best first."""
    scope = call.who.scope(user=call.body.user, agent=call.body.agent)
    return await call.mem.graph.recall(scope, RecallOptions(**call.body.model_dump(exclude={"user", "agent"})))


async def context(call: Call[ContextBody]) -> Context:
    """What memory holds about an entity within a token budget, and its rendering for a prompt."""
    b = call.body
    scope = call.who.scope(user=b.user, agent=b.agent)
    found = await call.mem.graph.context_for(scope, entity=b.entity, topic=b.topic, max_tokens=b.max_tokens)
    return Context(context=found, text=found.format())


async def consolidate(call: Call[ConsolidateBody]) -> Fact:
    """Write one fact consolidating several current facts of the scope; the sources stay, decayed."""
    ids = [(await call.who.fact(call.mem, fact_id)).id for fact_id in call.body.fact_ids]
    return await call.mem.graph.consolidate(ids, call.body.text, summary=call.body.summary)


async def stats(call: Call[StatsQuery]) -> GraphStats:
    """Entity, edge, fact and token counts of the scope."""
    return await call.mem.graph.stats(call.who.scope(user=call.body.user, agent=call.body.agent))


VERBS: tuple[Verb, ...] = (
    Verb("graph", "graph.create_entity", "POST", "/v1/entities", "write", create_entity, Entity, body=EntityBody,
         status=201),
    Verb("graph", "graph.entities", "GET", "/v1/entities", "read", entities, Page[Entity], query=EntitiesQuery),
    Verb("graph", "graph.search_entities", "GET", "/v1/entities/search", "read", search_entities, list[Entity],
         query=EntitySearch),
    Verb("graph", "graph.entity", "GET", "/v1/entities/by-name", "read", entity_by_name, Entity, query=NameQuery),
    Verb("graph", "graph.get_entity", "GET", "/v1/entities/{entity_id}", "read", get_entity, Entity),
    Verb("graph", "graph.update_entity", "PATCH", "/v1/entities/{entity_id}", "write", update_entity, Entity,
         body=EntityChange),
    Verb("graph", "graph.delete_entity", "DELETE", "/v1/entities/{entity_id}", "write", delete_entity, Removed),
    Verb("graph", "graph.neighbors", "GET", "/v1/entities/{entity_id}/neighbors", "read", neighbors, list[Edge],
         query=WalkQuery),
    Verb("graph", "graph.edges", "GET", "/v1/entities/{entity_id}/edges", "read", edges, list[Edge],
         query=EdgesQuery),
    Verb("graph", "graph.relate", "POST", "/v1/edges", "write", relate, Edge, body=EdgeBody, status=201),
    Verb("graph", "graph.unrelate", "DELETE", "/v1/edges", "write", unrelate, Removed, query=EdgeQuery),
    Verb("graph", "graph.recall", "POST", "/v1/recall", "read", recall, list[ScoredFact], body=RecallBody),
    Verb("graph", "graph.context_for", "POST", "/v1/context", "read", context, Context, body=ContextBody),
    Verb("graph", "graph.consolidate", "POST", "/v1/facts/consolidate", "write", consolidate, Fact,
         body=ConsolidateBody, status=201),
    Verb("graph", "graph.decay_all", "POST", "/v1/graph/decay", "write", decay, Count, body=DecayBody),
    Verb("graph", "graph.touch", "POST", "/v1/facts/touch", "write", touch, Count, body=TouchBody),
    Verb("graph", "graph.stats", "GET", "/v1/graph/stats", "read", stats, GraphStats, query=StatsQuery),
)  # fmt: skip
