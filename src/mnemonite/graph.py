"""Graph memory (`mem.graph`): entities, edges, walks, recall by entity, salience upkeep, budgeted context.

Entities are mutable current state (a person's role changes); facts stay the immutable,
bi-temporal record and link to entities with a role (about, by, for, mentions) when they
are remembered. With the parser the graph builds itself from what memory learns (the people,
pets, places and organisations a statement names, the relations it states: `mnemonite.learned_graph`;
`build` reads the facts held from before); by hand::

    alice = await mem.graph.create_entity(scope, name="Alice", entity_type="person")
    await mem.graph.relate(scope, source=alice.id, target=acme.id, relation="WORKS_AT")
    await mem.semantic.remember(scope, "Alice prefers async Python", entities=[(alice.id, "about")])
    print((await mem.graph.context_for(scope, entity="Alice", topic="python")).format())
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from typing import Any

import orjson

from mnemonite._time import utcnow
from mnemonite.errors import InvalidInputError, NotFoundError
from mnemonite.inputs import checked
from mnemonite.learned_graph import GraphLearner
from mnemonite.models import AddDelta, Fact
from mnemonite.models.base import new_id
from mnemonite.models.conflict import ConflictDecision
from mnemonite.models.deltas import LinkDelta
from mnemonite.models.graph import (
    MAX_DEPTH,
    BudgetConfig,
    Direction,
    Edge,
    Entity,
    EntityContext,
    GraphBuildReport,
    GraphStats,
    RecallOptions,
    ScoredFact,
)
from mnemonite.reading import StatementReader
from mnemonite.salience import SalienceConfig, rank_by_salience
from mnemonite.scope import Scope
from mnemonite.store import Store
from mnemonite.tiers.semantic import SemanticTier, check_text, fact_extras, fact_scope
from mnemonite.tokens import TokenCounter, default_counter

__all__ = ["GraphMemory", "allocate_memory_budget"]

AfterWrite = Callable[[], Awaitable[object]]
EDGES_IN_CONTEXT = 50  # per direction: a hub's thousands of edges would not fit a prompt anyway


def allocate_memory_budget(
    candidates: Sequence[ScoredFact], remaining: int, counter: TokenCounter | None = None
) -> tuple[list[ScoredFact], int]:
    """Pack ranked facts into ``remaining`` tokens: the full text if it fits, else the summary, else skip.

    Returns the packed facts (``used_summary`` set where the summary stands in) and the tokens used.
    """
    counter = counter or default_counter()
    packed: list[ScoredFact] = []
    used = 0
    for scored in candidates:
        fact = scored.fact
        full = _tokens(fact, counter)
        if used + full <= remaining:
            packed.append(scored if scored.fact.token_count is not None else _counted(scored, full, fact))
            used += full
            continue
        if fact.summary:
            short = fact.summary_token_count if fact.summary_token_count is not None else counter.count(fact.summary)
            if used + short <= remaining:
                fact = fact.model_copy(update={"summary_token_count": short, "token_count": full})
                packed.append(scored.model_copy(update={"fact": fact, "used_summary": True}))
                used += short
    return packed, used


def _tokens(fact: Fact, counter: TokenCounter) -> int:
    """A fact's stored token count, or its text counted now (facts written by consolidation have none)."""
    return fact.token_count if fact.token_count is not None else counter.count(fact.text)


def _counted(scored: ScoredFact, tokens: int, fact: Fact) -> ScoredFact:
    return scored.model_copy(update={"fact": fact.model_copy(update={"token_count": tokens})})


@checked
class GraphMemory:
    """Entities and edges of each (user, agent), and the graph-aware reads over its facts."""

    def __init__(
        self,
        store: Store,
        semantic: SemanticTier,
        *,
        salience: SalienceConfig | None = None,
        counter: TokenCounter | None = None,
        after_write: AfterWrite | None = None,
    ) -> None:
        self._store = store
        self._semantic = semantic
        self.salience = salience or SalienceConfig()
        self.counter = counter or default_counter()
        self._after_write = after_write

    # -- entities ------------------------------------------------------------------------------

    async def create_entity(
        self,
        scope: Scope,
        *,
        name: str,
        entity_type: str,
        properties: Mapping[str, Any] | None = None,
        owner: str | None = None,
    ) -> Entity:
        """A new entity; its name (case-insensitive) must be free in the scope (`EntityConflictError`), or held by
        an entity the graph learned from a statement, which this one takes over (its id, links and edges stay; the
        type, owner and properties given replace what was learned)."""
        return (await self.create_entities(scope, [{"name": name, "entity_type": entity_type,
                                                    "properties": properties or {}, "owner": owner}]))[0]  # fmt: skip

    async def create_entities(self, scope: Scope, entities: Iterable[Mapping[str, Any]]) -> list[Entity]:
        """Several entities in one transaction (all or none): mappings with name, entity_type[, properties, owner]."""
        user, agent = fact_scope(scope)
        now = utcnow()
        made = [Entity(id=new_id(), user=user, agent=agent, created_at=now, updated_at=now,
                       **_entity_fields(item)) for item in entities]  # fmt: skip
        return await self._store.create_entities(made)

    async def get_entity(self, entity_id: str) -> Entity:
        """An entity by id, or `NotFoundError`."""
        found = await self._store.entity(entity_id)
        if found is None:
            raise NotFoundError(f"no entity with id {entity_id!r}")
        return found

    async def entity(self, scope: Scope, name: str) -> Entity:
        """An entity of the scope by name (case-insensitive), or `NotFoundError`."""
        user, agent = fact_scope(scope)
        found = await self._store.entity_by_name(user, agent, name)
        if found is None:
            raise NotFoundError(f"no entity named {name!r} in this (user, agent) scope")
        return found

    async def update_entity(
        self,
        entity_id: str,
        *,
        name: str | None = None,
        entity_type: str | None = None,
        properties: Mapping[str, Any] | None = None,
        owner: str | None = None,
    ) -> Entity:
        """Change an entity's name, type, properties (replaced whole) or owner; the rest stays."""
        current = await self.get_entity(entity_id)
        props = _json_object(properties) if properties is not None else None
        changes = {"name": " ".join(name.split()) if isinstance(name, str) else name, "entity_type": entity_type,
                   "owner": owner, "properties": props}  # fmt: skip
        data = {
            **current.model_dump(),
            **{k: v for k, v in changes.items() if v is not None},
            "updated_at": utcnow(),
            "learned_from": None,
        }  # edited by hand: a purge of the fact it was learned from leaves it
        if "guessed" in data["properties"]:  # typed by hand now: no relation retypes it
            data["properties"] = {k: v for k, v in data["properties"].items() if k != "guessed"}
        updated = Entity.model_validate(data)
        await self._store.update_entity(updated)
        return updated

    async def entities(
        self, scope: Scope, *, entity_type: str | None = None, limit: int = 100, offset: int = 0
    ) -> tuple[list[Entity], int]:
        """One page of the scope's entities by name, and the total count (for paging)."""
        user, agent = fact_scope(scope)
        if not 1 <= limit <= 10_000 or offset < 0:
            raise InvalidInputError("limit must be in 1..10000 and offset >= 0")
        return await self._store.list_entities(user, agent, entity_type, limit, offset)

    async def search_entities(self, scope: Scope, query: str, *, limit: int = 20) -> list[Entity]:
        """Entities whose name, type or properties match the query's words, best first."""
        user, agent = fact_scope(scope)
        if not isinstance(query, str) or not query.strip():
            raise InvalidInputError("the entity search query must be a non-empty string")
        return await self._store.search_entities(user, agent, query, limit)

    async def delete_entity(self, entity_id: str) -> None:
        """Remove an entity with its edges and fact links; the facts themselves stay."""
        await self.get_entity(entity_id)
        await self._store.delete_entity(entity_id)

    # -- edges ---------------------------------------------------------------------------------

    async def relate(
        self,
        scope: Scope,
        *,
        source: str,
        target: str,
        relation: str,
        properties: Mapping[str, Any] | None = None,
    ) -> Edge:
        """Upsert the edge (source, target, relation): a second call updates its properties."""
        return (await self._relate(scope, [(source, target, relation, properties)]))[0]

    async def relate_many(
        self, scope: Scope, edges: Iterable[tuple[str, str, str] | tuple[str, str, str, Mapping[str, Any]]]
    ) -> int:
        """Upsert many (source, target, relation[, properties]) edges in one transaction; returns how many."""
        items = [(e[0], e[1], e[2], e[3] if len(e) > 3 else None) for e in edges]
        await self._relate(scope, items)
        return len(items)

    async def _relate(self, scope: Scope, items: list[tuple[str, str, str, Mapping[str, Any] | None]]) -> list[Edge]:
        user, agent = fact_scope(scope)
        now = utcnow()
        edges = [Edge(id=new_id(), user=user, agent=agent, source=source, target=target, relation=_relation(relation),
                      properties=_json_object(properties or {}), created_at=now, updated_at=now)
                 for source, target, relation, properties in items]  # fmt: skip
        return await self._store.relate(edges)

    async def unrelate(self, *, source: str, target: str, relation: str) -> None:
        """Remove the edge (source, target, relation), or `NotFoundError`."""
        if not await self._store.unrelate(source, target, _relation(relation)):
            raise NotFoundError(f"no edge {source!r} -[{relation}]-> {target!r}")

    async def neighbors(
        self,
        entity_id: str,
        *,
        relation: str | None = None,
        direction: Direction = "both",
        depth: int = 1,
        limit: int = 1000,
        ended: bool = False,
    ) -> list[Edge]:
        """The edges within ``depth`` hops of an entity, nearest first (``Edge.depth``: hops to the nearer end).

        ``direction`` follows edges out of, into, or both ways through each entity; ``relation``
        follows only that relation. Each entity is visited once, at its shortest distance, so
        cycles end; at most ``limit`` edges. Edges that hold only, unless ``ended`` (an edge learned
        from a fact ends when the fact is superseded or forgotten: where someone lived before).
        """
        if direction not in ("out", "in", "both"):
            raise InvalidInputError(f"direction must be 'out', 'in' or 'both', got {direction!r}")
        if not isinstance(depth, int) or not 1 <= depth <= MAX_DEPTH:
            raise InvalidInputError(f"depth must be an integer in 1..{MAX_DEPTH}, got {depth!r}")
        if not 1 <= limit <= 100_000:
            raise InvalidInputError("limit must be in 1..100000")
        wanted = _relation(relation) if relation is not None else None
        edges = await self._store.neighbors(entity_id, wanted, direction, depth, limit, ended)
        if not edges:
            await self.get_entity(entity_id)  # no edges: an isolated entity, or none at all
        return edges

    async def edges_from(self, entity_id: str, *, limit: int = 1000, ended: bool = False) -> list[Edge]:
        """The edges leaving an entity that hold, oldest first (with ``ended``, those that ended too)."""
        return await self._store.edges_of(entity_id, "source", limit, ended)

    async def edges_to(self, entity_id: str, *, limit: int = 1000, ended: bool = False) -> list[Edge]:
        """The edges arriving at an entity that hold, oldest first (with ``ended``, those that ended too)."""
        return await self._store.edges_of(entity_id, "target", limit, ended)

    # -- memories ------------------------------------------------------------------------------

    async def recall(self, scope: Scope, options: RecallOptions | None = None, **fields: Any) -> list[ScoredFact]:
        """Current facts by salience x relevance under `RecallOptions` (or its fields as keywords)."""
        user, agent = fact_scope(scope)
        opts = options or RecallOptions(**fields)
        rows = await self._store.recall(user, agent, opts, max(5 * opts.limit, 200))
        ranked = rank_by_salience(
            _relevance(rows), self.salience.model_copy(update={"min_salience": opts.min_salience})
        )
        if opts.max_tokens is not None:
            ranked = _within(ranked, opts.max_tokens, self.counter)
        return ranked[: opts.limit]

    async def touch(self, fact_ids: Sequence[str]) -> int:
        """Count an access of each fact: access count, last access time, salience + boost (capped at 1)."""
        return await self._store.touch_facts(list(fact_ids), self.salience.boost_amount, utcnow())

    async def decay_all(self, scope: Scope, factor: float) -> int:
        """Multiply the stored salience of every current fact of the scope by ``factor`` (0..1)."""
        user, agent = fact_scope(scope)
        if not 0.0 <= factor <= 1.0:
            raise InvalidInputError(f"the decay factor must be in [0, 1], got {factor!r}")
        return await self._store.decay_all(user, agent, factor)

    async def consolidate(self, fact_ids: Sequence[str], text: str, *, summary: str | None = None) -> Fact:
        """Write one fact that consolidates several current ones (CONSOLIDATES lineage).

        The sources stay current, their salience x ``consolidation_decay``; the new fact
        (memory type "consolidation") inherits their source episodes and entity links.
        """
        ids = list(dict.fromkeys(fact_ids))
        if not ids:
            raise InvalidInputError("consolidate needs at least one fact id")
        sources = [await self._semantic.get(fact_id) for fact_id in ids]
        first = sources[0]
        links = list(dict.fromkeys(link for fact in sources for link in fact.entities))
        text = check_text(text)
        extras = fact_extras(self.counter, text, links, summary)
        payload = {"text": text, "user": first.user, "agent": first.agent, "memory_type": "consolidation",
                   **{k: v for k, v in extras.items() if v is not None}}  # fmt: skip
        episodes = list(dict.fromkeys(e for fact in sources for e in fact.source_episode_ids))
        delta = AddDelta(fact_payload=payload, source_episode_ids=episodes, promotion_ts=utcnow(),
                         rule_id="consolidate", confidence=min(fact.confidence for fact in sources))  # fmt: skip
        record = await self._store.consolidate_facts(delta, ids, self.salience.consolidation_decay)
        if self._after_write is not None:
            await self._after_write()
        assert record.fact_id is not None
        return await self._semantic.get(record.fact_id)

    async def promote(self, edge: Edge) -> ConflictDecision:
        """Write a graph triple as a fact ("Alice works at Acme"), through `semantic.remember`.

        One-way: the fact keeps the edge id in its payload and links both ends (about, mentions);
        later changes to the edge do not touch the fact.
        """
        source, target = await self.get_entity(edge.source), await self.get_entity(edge.target)
        words = edge.relation.replace("_", " ").lower()
        return await self._semantic.remember_with_decision(
            Scope(user=edge.user, agent=edge.agent),
            f"{source.name} {words} {target.name}",
            subject=source.name,
            predicate=words,
            object=target.name,
            entities=[(source.id, "about"), (target.id, "mentions")],
            payload={"promoted_from_edge": edge.id, "relation": edge.relation},
            rule_id="kg-promotion",
        )

    # -- context ---------------------------------------------------------------------------------

    async def context_for(
        self,
        scope: Scope,
        *,
        entity: str,
        topic: str | None = None,
        max_tokens: int = BudgetConfig().max_tokens,
        budget: BudgetConfig | None = None,
        touch: bool = True,
    ) -> EntityContext:
        """What memory holds about an entity, within a token budget, ready for a prompt (``.format()``).

        Phases: the entity profile (up to ``budget.entity_profile`` tokens), its relations
        (``budget.graph``), then its linked facts (the rest), ranked by decayed salience x
        relevance to ``topic`` (full text); a fact goes in whole, else as its summary, else not.
        Facts with no word of the topic leave the entity's facts ranked by salience alone.
        ``touch`` counts an access of each fact included.
        """
        if budget is None:
            if not isinstance(max_tokens, int) or max_tokens <= 0:
                raise InvalidInputError(f"max_tokens must be a positive integer, got {max_tokens!r}")
            budget = BudgetConfig.for_total(max_tokens)
        user, agent = fact_scope(scope)
        found = await self.entity(scope, entity)
        profile, used = _fit_lines(_profile(found), budget.entity_profile, self.counter)
        edges_out = await self._store.edges_of(found.id, "source", EDGES_IN_CONTEXT)
        edges_in = await self._store.edges_of(found.id, "target", EDGES_IN_CONTEXT)
        names = {e.id: e.name for e in await self._store.entities_by_id(
            list({edge.target for edge in edges_out} | {edge.source for edge in edges_in}))}  # fmt: skip
        names[found.id] = found.name
        shown_out, shown_in, graph_used = self._fit_edges(found, edges_out, edges_in, names, budget.graph)
        opts = RecallOptions(query=topic or None, entity_ids=[found.id], limit=200)
        rows = await self._store.recall(user, agent, opts, 200) if topic else []
        if not rows:
            rows = await self._store.recall(user, agent, opts.model_copy(update={"query": None}), 200)
        ranked = rank_by_salience(_relevance(rows), self.salience)
        remaining = budget.max_tokens - used - graph_used
        packed, memory_used = allocate_memory_budget(ranked, remaining, self.counter)
        if touch and packed:
            await self.touch([scored.fact.id for scored in packed])
        return EntityContext(entity=found, profile=profile, edges_out=shown_out, edges_in=shown_in,
                             entity_names={k: v for k, v in names.items() if k != found.id}, memories=packed,
                             total_tokens=used + graph_used + memory_used, total_candidates=len(ranked))  # fmt: skip

    def _fit_edges(
        self, found: Entity, edges_out: list[Edge], edges_in: list[Edge], names: dict[str, str], budget: int
    ) -> tuple[list[Edge], list[Edge], int]:
        shown_out: list[Edge] = []
        shown_in: list[Edge] = []
        used = 0
        for edge, shown in [(e, shown_out) for e in edges_out] + [(e, shown_in) for e in edges_in]:
            line = f"{names.get(edge.source, edge.source)} {edge.relation} {names.get(edge.target, edge.target)}"
            cost = self.counter.count(line)
            if used + cost > budget:
                break
            shown.append(edge)
            used += cost
        return shown_out, shown_in, used

    async def build(
        self, scope: Scope | None = None, *, progress: Callable[[int, int], None] | None = None, batch: int = 200
    ) -> GraphBuildReport:
        """Learn the graph from the facts a memory holds from before it learned as it wrote (or from before
        ``learn_graph``): each believed fact not yet read is read as `semantic.remember` reads a new one, and what
        it names joins the graph through an audited `LinkDelta` (the fact's text and times stay as they are).

        All scopes, or one (``scope``: a user and agent). Resumable: each scope remembers how far it was read, so
        a second run reads only what came since; reading a fact twice changes nothing more. A fact the caller
        linked to entities is left as linked, a secret one unread. ``progress(facts_read, facts_to_read)`` is called
        after each fact.
        Needs the parser (the ``parser`` extra): without it, `ParserUnavailableError`.
        """
        if not isinstance(batch, int) or not 1 <= batch <= 10_000:
            raise InvalidInputError("batch must be an integer in 1..10000")
        reader = self._semantic.reader or StatementReader(self._semantic.locale)
        reader.load()  # ParserUnavailableError naming the extra, before anything is read
        scopes = [fact_scope(scope)] if scope is not None else await self._store.fact_scopes()
        totals = [(await self._store.facts_to_learn(user, agent, 1))[1] for user, agent in scopes]
        report = GraphBuildReport(scopes=len(scopes), facts_to_read=sum(totals))
        for user, agent in scopes:
            names = frozenset(await self._semantic.names(Scope(user=user, agent=agent)))
            while facts := (await self._store.facts_to_learn(user, agent, batch))[0]:
                for _, fact in facts:
                    report = await self._learn(reader, fact, (user, agent), names, report)
                    if progress is not None:
                        progress(report.facts_read, report.facts_to_read)
                await self._store.learned_upto(user, agent, facts[-1][0])
        if report.facts_linked and self._after_write is not None:
            await self._after_write()
        return report

    async def _learn(
        self, reader: StatementReader, fact: Fact, scope: tuple[str, str], names: frozenset[str],
        report: GraphBuildReport,
    ) -> GraphBuildReport:  # fmt: skip
        user, agent = scope
        skip = fact.entities or fact.sensitivity == "secret"  # linked as told; a secret names nobody in the graph
        planned = None if skip else await GraphLearner(self._store, reader).plan(user, agent, fact.text, names)
        read = report.facts_read + 1
        if planned is None:
            return report.model_copy(update={"facts_read": read})
        change, links = planned
        delta = LinkDelta(fact_id=fact.id, links=[(link.entity_id, link.role) for link in links], graph=change,
                          source_episode_ids=fact.source_episode_ids, promotion_ts=utcnow(), rule_id="graph-build",
                          confidence=fact.confidence)  # fmt: skip
        await self._store.apply_deltas([delta])
        return report.model_copy(update={
            "facts_read": read, "facts_linked": report.facts_linked + 1,
            "entities_made": report.entities_made + len(change.entities), "edges": report.edges + len(change.edges),
        })  # fmt: skip

    async def stats(self, scope: Scope) -> GraphStats:
        """Entity, edge, fact and token counts of the scope, and current facts by memory type."""
        user, agent = fact_scope(scope)
        return await self._store.graph_stats(user, agent)


_LEARNED_MARKS = frozenset({"self", "guessed", "aliases"})  # what the learned graph notes of an entity


def _entity_fields(item: Mapping[str, Any]) -> dict[str, Any]:
    if not isinstance(item, Mapping):
        raise InvalidInputError(f"an entity is a mapping with name and entity_type, got {item!r}")
    unknown = set(item) - {"name", "entity_type", "properties", "owner"}
    if unknown:
        raise InvalidInputError(f"unknown entity fields: {sorted(unknown)}")
    name = item.get("name")
    if not isinstance(name, str) or not name.strip():
        raise InvalidInputError("an entity needs a non-empty name")
    return {"name": " ".join(name.split()), "entity_type": item.get("entity_type"),
            "properties": _json_object(item.get("properties") or {}), "owner": item.get("owner")}  # fmt: skip


def _json_object(value: Mapping[str, Any]) -> dict[str, Any]:
    """Properties are stored as JSON: refuse what JSON cannot hold before anything is written."""
    if not isinstance(value, Mapping):
        raise InvalidInputError(f"properties must be a mapping, got {type(value).__name__}")
    try:
        orjson.dumps(value)
    except TypeError as error:
        raise InvalidInputError(f"properties must be JSON-serialisable: {error}") from None
    return dict(value)


def _relation(relation: str) -> str:
    if not isinstance(relation, str) or not relation.strip():
        raise InvalidInputError("an edge needs a non-empty relation, such as WORKS_AT")
    return relation.strip()


def _relevance(rows: list[tuple[Fact, float]]) -> list[tuple[Fact, float]]:
    """BM25 scores scaled into (0, 1] by the best one (a query-less recall is 1.0 throughout)."""
    best = max((score for _, score in rows), default=1.0)
    return [(fact, score / best if best > 0 else 1.0) for fact, score in rows]


def _within(ranked: list[ScoredFact], max_tokens: int, counter: TokenCounter) -> list[ScoredFact]:
    kept, used = [], 0
    for scored in ranked:
        tokens = _tokens(scored.fact, counter)
        if used + tokens <= max_tokens:
            kept.append(scored)
            used += tokens
    return kept


def _profile(entity: Entity) -> list[str]:
    lines = [f"type: {entity.entity_type}"]
    aliases = entity.properties.get("aliases")
    if isinstance(aliases, list) and aliases:
        lines.append(f"also called: {', '.join(str(a) for a in aliases)}")
    lines += [f"{key}: {value}" for key, value in entity.properties.items() if key not in _LEARNED_MARKS]
    if entity.owner:
        lines.append(f"owner: {entity.owner}")
    return lines


def _fit_lines(lines: list[str], budget: int, counter: TokenCounter) -> tuple[str, int]:
    """As many whole lines as fit ``budget`` tokens."""
    kept, used = [], 0
    for line in lines:
        cost = counter.count(line)
        if used + cost > budget:
            break
        kept.append(line)
        used += cost
    return "\n".join(kept), used
