"""Typed memory deltas: the only way facts change.

Provenance (``source_episode_ids``, ``promotion_ts``, ``rule_id``, ``confidence``) is
mandatory on every variant, and ``replaces`` on update and delete, so a malformed delta
cannot land. ``delta_id`` makes applying idempotent: the same delta applied twice is
applied once.
"""

from __future__ import annotations

from typing import Annotated, Any, ClassVar, Literal

from pydantic import AwareDatetime, Field, TypeAdapter, ValidationError

from mnemonite.errors import DeltaValidationError, MnemoniteError
from mnemonite.models.base import Model, describe, new_id

__all__ = [
    "AddDelta",
    "DeleteDelta",
    "GraphChange",
    "LearnedEdge",
    "LearnedEntity",
    "LinkDelta",
    "MemoryDelta",
    "NoopDelta",
    "UpdateDelta",
    "parse_delta",
]

Confidence = Annotated[float, Field(ge=0.0, le=1.0)]
Ids = Annotated[list[Annotated[str, Field(min_length=1)]], Field(min_length=1)]


class _Delta(Model):
    error_type: ClassVar[type[MnemoniteError]] = DeltaValidationError

    delta_id: str = Field(default_factory=new_id, min_length=1)
    source_episode_ids: list[Annotated[str, Field(min_length=1)]]
    promotion_ts: AwareDatetime
    rule_id: str = Field(min_length=1)
    confidence: Confidence


class LearnedEntity(Model):
    """An entity a fact's statement names, made with the fact unless the scope holds one of that name by then."""

    id: str = Field(min_length=1)
    name: str = Field(min_length=1, max_length=500)
    entity_type: str = Field(min_length=1, max_length=100)
    aliases: list[str] = Field(default_factory=list)
    self_entity: bool = False  # the scope's own user (``properties.self``)
    guessed: bool = False  # its type is the entity recogniser's guess, which a relation may correct later


class LearnedEdge(Model):
    """A relation a fact states between two entities (ids of the scope's entities or of `LearnedEntity`s)."""

    source: str = Field(min_length=1)
    target: str = Field(min_length=1)
    relation: str = Field(min_length=1, max_length=100)
    label: str = ""  # the word that said it ("sister"), kept in the edge's properties as "as"
    single: bool = False  # the source holds one of this relation at a time: the edge ends its others


class GraphChange(Model):
    """What a fact adds to the graph, applied with it in one transaction: entities to make, names to add to
    existing ones (``aliases``: entity id -> names), the edges the fact holds (open while the fact is
    believed), the edges it says no longer hold (``ends``) and the types a relation gives entities whose type was
    guessed (``types``). The fact's links to the entities are its payload's ``entities``."""

    entities: list[LearnedEntity] = Field(default_factory=list)
    aliases: dict[str, list[str]] = Field(default_factory=dict)
    edges: list[LearnedEdge] = Field(default_factory=list)
    ends: list[LearnedEdge] = Field(default_factory=list)
    types: dict[str, str] = Field(default_factory=dict)  # entity id -> the type a relation says, for a guessed one


class AddDelta(_Delta):
    """Insert a new fact (and, with ``graph``, what it adds to the graph)."""

    kind: Literal["add"] = "add"
    fact_payload: dict[str, Any]
    graph: GraphChange | None = None


class UpdateDelta(_Delta):
    """Close the facts named in ``replaces`` (and the edges they held) and insert their successor."""

    kind: Literal["update"] = "update"
    replaces: Ids
    fact_payload: dict[str, Any]
    graph: GraphChange | None = None


class LinkDelta(_Delta):
    """Join a held fact to the graph without changing what it says (``graph build``): the entities it names are
    made, its ``links`` to them (entity id, role) added, the edges it states opened from its ``valid_from``."""

    kind: Literal["link"] = "link"
    fact_id: str = Field(min_length=1)
    links: list[tuple[str, Literal["about", "by", "for", "mentions"]]] = Field(default_factory=list)
    graph: GraphChange | None = None  # None once the fact is purged (the audit row keeps no name)


class DeleteDelta(_Delta):
    """Close the facts named in ``replaces``; nothing is inserted."""

    kind: Literal["delete"] = "delete"
    replaces: Ids


class NoopDelta(_Delta):
    """Change nothing; leave an audit row."""

    kind: Literal["noop"] = "noop"


MemoryDelta = Annotated[AddDelta | UpdateDelta | DeleteDelta | NoopDelta | LinkDelta, Field(discriminator="kind")]
_ADAPTER: TypeAdapter[MemoryDelta] = TypeAdapter(MemoryDelta)


def parse_delta(value: object) -> MemoryDelta:
    """Validate a delta object or a mapping/JSON into a MemoryDelta, or raise DeltaValidationError."""
    if isinstance(value, AddDelta | UpdateDelta | DeleteDelta | NoopDelta | LinkDelta):
        return value
    try:
        if isinstance(value, str | bytes):
            return _ADAPTER.validate_json(value)
        return _ADAPTER.validate_python(value)
    except ValidationError as error:
        raise DeltaValidationError(f"invalid MemoryDelta: {describe(error)}") from None
