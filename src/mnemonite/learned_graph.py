"""The graph memory learns from statements: each fact's people, pets, places and organisations become entities of
its scope, and the relations it states become edges that hold while the fact is believed.

`GraphLearner.plan` reads a statement (`StatementReader.graphs`) and resolves what it names against the scope's
graph before anything is written:

- the user ("I", "my", the user's names) is the scope's own entity, named after the user (``properties.self``);
- a name is the entity of that name or alias, or the one person whose first name it is ("Kofi" and "Kofi Mensah");
  a name the scope holds for another kind of thing ("Jordan" the person, "Jordan" the country) is a new entity
  "Jordan (place)"; a person named in another role than the one of that name already holds ("Ana, Tom's sister"
  where "Ana" is the user's sister) is a new entity "Ana (Tom's sister)";
- a relation without a name ("my sister moved to Lyon") is the one entity that holds that role, if there is one.

The result is a `GraphChange` that rides on the fact's own delta (audited and applied in its transaction) and the
fact's links to the entities (``about`` for what it is about, ``mentions`` for the rest). Edges of a fact end when
the fact is superseded or forgotten; one a statement ends ("I quit Acme") ends at once; where someone lives is held
one at a time.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import TYPE_CHECKING

from mnemonite.models.base import new_id
from mnemonite.models.deltas import GraphChange, LearnedEdge, LearnedEntity
from mnemonite.models.fact import EntityLink
from mnemonite.models.graph import Edge, Entity
from mnemonite.reading.graph import PERSON, PLACE, SINGLE, SYMMETRIC, GraphReading, Mention

if TYPE_CHECKING:
    from mnemonite.reading.statement import StatementReader
    from mnemonite.store.base import Store

SELF = "self"  # the property that marks the scope's own entity
MAX_NAME = 200
_EDGES = 200


class GraphLearner:
    """Plans the graph change of each statement a scope learns."""

    def __init__(self, store: Store, reader: StatementReader) -> None:
        self._store = store
        self.reader = reader

    async def plan(
        self, user: str, agent: str, text: str, names: frozenset[str]
    ) -> tuple[GraphChange, list[EntityLink]] | None:
        """The change a statement makes to the scope's graph and the fact's links, or None where it names nothing
        the graph holds or would hold."""
        [reading] = await asyncio.to_thread(self.reader.graphs, [text], names)
        if not reading.mentions:
            return None
        return await _Plan(self._store, user, agent, names, reading).make()


class _Plan:
    def __init__(self, store: Store, user: str, agent: str, names: frozenset[str], reading: GraphReading) -> None:
        self.store = store
        self.user = user
        self.agent = agent
        self.names = names
        self.reading = reading
        self.change = GraphChange()
        self.made: dict[str, LearnedEntity] = {}  # name key -> planned entity
        self.ids: dict[int, str] = {}  # mention -> entity id (held or planned)
        self.edges: dict[str, list[Edge]] = {}

    async def make(self) -> tuple[GraphChange, list[EntityLink]] | None:
        mentions = self.reading.mentions
        for index in sorted(
            range(len(mentions)), key=lambda i: (mentions[i].user, not mentions[i].named), reverse=True
        ):
            found = await self._resolve(index)  # the user first, then names, then relations without a name
            if found is not None:
                self.ids[index] = found
        for link in self.reading.links:
            source, target = self.ids.get(link.source), self.ids.get(link.target)
            if source is None or target is None or source == target:
                continue
            if link.relation in SYMMETRIC and await self._held(target, link.relation, source):
                source, target = target, source  # one edge either way round
            edge = LearnedEdge(source=source, target=target, relation=link.relation, label=link.label,
                               single=link.relation in SINGLE and not link.ended)  # fmt: skip
            if link.ended:
                self.change.ends.append(edge)
                if link.relation in SYMMETRIC:
                    self.change.ends.append(edge.model_copy(update={"source": target, "target": source}))
            else:
                self.change.edges.append(edge)
        if not self.ids:
            return None
        about = self.ids.get(self.reading.about) if self.reading.about is not None else None
        links = [EntityLink(entity_id=about, role="about")] if about is not None else []
        links += [EntityLink(entity_id=i, role="mentions") for i in dict.fromkeys(self.ids.values()) if i != about]
        self.change = self.change.model_copy(update={"entities": list(self.made.values())})
        return self.change, links

    # -- who each mention is -----------------------------------------------------------------------

    async def _resolve(self, index: int) -> str | None:
        mention = self.reading.mentions[index]
        if mention.user:
            return await self._self()
        if mention.named:
            return await self._named(index, mention)
        owner = self.ids.get(mention.of) if mention.of is not None else None
        if owner is None or owner in {e.id for e in self.made.values()}:
            return None
        holders = {e.source if e.target == owner else e.target for e in await self._edges(owner)
                   if e.current and e.properties.get("as") == mention.role}  # fmt: skip
        return holders.pop() if len(holders) == 1 else None  # "my sister": the one sister the graph knows

    async def _self(self) -> str:
        name = _own_name(self.user, self.names)
        held = await self.store.entity_by_name(self.user, self.agent, name)
        if held is not None and (held.properties.get(SELF) or held.entity_type == PERSON):
            return held.id
        if held is not None:
            name = f"{name} (user)"
        return self._new(name, PERSON, self_entity=True)

    async def _named(self, index: int, mention: Mention) -> str | None:
        if len(mention.name) > MAX_NAME:
            return None  # no name is that long: a list or a paste read as one
        return await self._named_entity(index, mention)

    async def _named_entity(self, index: int, mention: Mention) -> str | None:
        kind = mention.kind
        held = await self.store.entity_by_name(self.user, self.agent, mention.name)
        if held is None:
            held = await self._alias(mention)
        if held is not None and not _same_kind(held.entity_type, kind) and mention.sure:
            if held.properties.get("guessed"):  # the recogniser's guess, corrected by a relation
                self.change.types[held.id] = kind
            else:  # "Jordan" the person, "Jordan" the country
                other = await self.store.entity_by_name(self.user, self.agent, f"{mention.name} ({kind})")
                if other is None:
                    return self._new(f"{mention.name} ({kind})", kind)
                held = other
        if held is not None and mention.role and await self._other_role(held, index, mention):
            whose = await self._owner_name(mention)  # "" without an owner
            if whose:
                distinct = f"{mention.name} ({whose}'s {mention.role})"
                again = await self.store.entity_by_name(self.user, self.agent, distinct)
                return again.id if again is not None else self._new(distinct, kind or PERSON)
        if held is not None:
            if held.name.lower() != mention.name.lower():
                self.change.aliases.setdefault(held.id, []).append(mention.name)
            return held.id
        if not kind:
            return None  # a name nothing says the kind of: not a node on a guess
        return self._new(mention.name, kind, guessed=not mention.sure)

    async def _alias(self, mention: Mention) -> Entity | None:
        """The entity a name is another name of: an alias, or a person's first or full name (only one such)."""
        key = mention.name.casefold()
        first = key.split()[0]
        found: dict[str, Entity] = {}
        for held in await self.store.search_entities(self.user, self.agent, mention.name, 20):
            aliases = [str(a).casefold() for a in held.properties.get("aliases", []) if isinstance(a, str)]
            name = held.name.casefold()
            person = held.entity_type == PERSON and mention.kind in (PERSON, "")
            if key in aliases or (person and (name.split()[0] == key or first == name)):
                found[held.id] = held
        return next(iter(found.values())) if len(found) == 1 else None

    async def _other_role(self, held: Entity, index: int, mention: Mention) -> bool:
        """Whether a person of this name already holds the role the statement gives to someone else's."""
        owner = self.ids.get(mention.of) if mention.of is not None else None
        mine = [link for link in self.reading.links if index in (link.source, link.target) and link.label]
        if owner is None or not mine:
            return False
        for edge in await self._edges(held.id):
            other = edge.target if edge.source == held.id else edge.source
            if edge.properties.get("as") == mention.role and other != owner:
                return True
        return False

    async def _owner_name(self, mention: Mention) -> str:
        owner = self.ids.get(mention.of) if mention.of is not None else None
        if owner is None:
            return ""
        planned = next((e for e in self.made.values() if e.id == owner), None)
        if planned is not None:
            return planned.name
        held = await self.store.entity(owner)
        return held.name if held is not None else ""

    async def _edges(self, entity_id: str) -> list[Edge]:
        if entity_id not in self.edges:
            out = await self.store.edges_of(entity_id, "source", _EDGES)
            self.edges[entity_id] = out + await self.store.edges_of(entity_id, "target", _EDGES)
        return self.edges[entity_id]

    async def _held(self, source: str, relation: str, target: str) -> bool:
        if source in {e.id for e in self.made.values()}:
            return False
        return any(e.target == target and e.relation == relation for e in await self._edges(source))

    def _new(self, name: str, kind: str, *, self_entity: bool = False, guessed: bool = False) -> str:
        key = name.casefold()
        if key not in self.made:
            self.made[key] = LearnedEntity(id=new_id(), name=name, entity_type=kind, aliases=[],
                                           self_entity=self_entity, guessed=guessed)  # fmt: skip
        return self.made[key].id


def _own_name(user: str, names: Sequence[str] | frozenset[str]) -> str:
    """The name of the scope's own entity: the user id where it is a plain name, else a name the user goes by."""
    if user.replace("-", "").replace(" ", "").isalpha():
        return user[:1].upper() + user[1:]
    known = sorted(n for n in names if n.replace(" ", "").isalpha())
    return known[0].title() if known else user


def _same_kind(held: str, kind: str) -> bool:
    """A name read as a place may be an organisation's (a city's council, a club of a town) and back."""
    if not kind or held == kind:
        return True
    return {held, kind} <= {PLACE, "organisation"}


__all__ = ["SELF", "GraphLearner"]
