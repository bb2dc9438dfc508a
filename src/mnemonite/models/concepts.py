"""The concept graph: session events, semantic shifts, and the persistent graph of concepts of each (user, agent).

Events live only in memory, for one session (`EventGraph`); what a finished topic taught the
agent about one user is merged into that user's `MemoryGraph` of the agent (`ConceptNode`s and
`RelationshipEdge`s), one auditable `GraphVersion` per consolidation.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar, Literal

import numpy as np
import numpy.typing as npt
from pydantic import AwareDatetime, Field, field_validator

from mnemonite._time import utcnow
from mnemonite.errors import ConfigurationError, MnemoniteError
from mnemonite.models.base import Model, new_id

__all__ = [
    "ConceptConfig",
    "ConceptNode",
    "EventKind",
    "EventNode",
    "ExtractedConcept",
    "GraphResult",
    "GraphVersion",
    "MemoryGraph",
    "RelationshipEdge",
    "ScoredConcept",
    "SemanticShiftEvent",
    "TopicMerge",
]

EventKind = Literal["llm_call", "tool_call", "memory_read", "message"]
ConceptCategory = Literal["regular", "schematic"]
MAX_EVENT_CHARS = 100_000


class EventNode(Model):
    """One thing the agent did in a session: an LLM call, a tool call, a memory read, a message.

    ``record_id`` names the stored record the event came from (an episode id), so the concepts a
    topic yields can lead back to it. ``embedding``/``model`` may be given when the caller has
    the vector already; a vector of another model than the builder's is refused.
    """

    id: str = Field(default_factory=new_id, min_length=1, max_length=256)
    kind: EventKind = "message"
    text: str = Field(min_length=1, max_length=MAX_EVENT_CHARS)
    at: AwareDatetime = Field(default_factory=utcnow)
    record_id: str | None = None
    embedding: tuple[float, ...] | None = None
    model: str | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)

    @field_validator("text")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("an event needs text (its embedding is what semantic shift is measured on)")
        return value


class SemanticShiftEvent(Model):
    """The topic changed: ``distance`` (cosine) from the open topic exceeded ``threshold``.

    ``events`` are the finished topic's event ids, consolidated before the next topic began;
    ``version`` is the graph version that consolidation wrote (None: nothing to extract).
    """

    agent: str
    session: str
    distance: float
    threshold: float
    events: tuple[str, ...]
    at: AwareDatetime
    version: int | None = None


class ExtractedConcept(Model):
    """A concept a topic names, before it is merged into the graph."""

    label: str = Field(min_length=1, max_length=200)
    description: str = ""
    weight: float = Field(default=1.0, ge=0)


class ConceptNode(Model):
    """A concept of a (user, agent) graph. ``frequency`` counts the topics that named it; at 5 it is
    ``schematic`` (``metadata["category"]``), a core concept surfaced first."""

    id: str
    agent: str
    label: str
    description: str
    frequency: int
    metadata: dict[str, Any]
    model: str
    created_at: AwareDatetime
    updated_at: AwareDatetime
    first_version: int
    last_version: int
    sources: tuple[str, ...] = ()

    @property
    def category(self) -> ConceptCategory:
        return "schematic" if self.metadata.get("category") == "schematic" else "regular"


class RelationshipEdge(Model):
    """``source`` --relation--> ``target``: ``precedes`` (a topic followed another) or ``co_occurs``
    (named in one topic). ``weight`` counts how often it was seen."""

    id: str
    agent: str
    source: str
    target: str
    relation: str
    weight: int
    created_at: AwareDatetime
    updated_at: AwareDatetime


class MemoryGraph(Model):
    """A user's concept graph of one agent as an adjacency list: nodes by id, edges, and its version."""

    user: str
    agent: str
    version: int
    model: str | None
    nodes: dict[str, ConceptNode]
    edges: list[RelationshipEdge]


class GraphVersion(Model):
    """One consolidation of a (user, agent) graph: what it added and merged (the audit trail)."""

    user: str
    agent: str
    version: int
    at: AwareDatetime
    session: str | None
    events: int
    shift_distance: float | None
    nodes_added: tuple[str, ...]
    nodes_merged: tuple[str, ...]
    edges_added: int
    edges_reinforced: int


class ScoredConcept(Model):
    """A node a graph query reached: its cosine with the question (seeds) or the walk's decayed score."""

    node: ConceptNode
    score: float
    depth: int


class GraphResult(Model):
    """What `GraphRetriever.query` found: nodes (schematic first, then by score) and the edges among them."""

    user: str
    agent: str
    question: str
    version: int
    concepts: list[ScoredConcept]
    edges: list[RelationshipEdge]

    @property
    def empty(self) -> bool:
        return not self.concepts


@dataclass(frozen=True)
class TopicMerge:
    """What one consolidation asks the store to merge, in one transaction: a topic's concepts
    (``vectors`` row i is ``concepts[i]``'s, unit length, of ``model``) and the records it came from."""

    user: str
    agent: str
    session: str | None
    model: str
    concepts: tuple[ExtractedConcept, ...]
    vectors: npt.NDArray[np.float32]
    sources: tuple[str, ...]
    events: int
    shift_distance: float | None
    merge_at: float = 0.85
    schematic_at: int = 5


class ConceptConfig(Model):
    """The concept graph's settings (the defaults are the spec's): ``shift_threshold`` (cosine
    distance that ends a topic), ``merge_at`` (similarity at which a concept is an existing node),
    ``schematic_at`` (frequency of a core concept), ``max_concepts`` per topic; graph queries start
    from ``seeds`` nodes at cosine >= ``min_cosine`` and walk ``depth`` hops."""

    shift_threshold: float = Field(default=0.30, ge=0, le=1)
    merge_at: float = Field(default=0.85, ge=0, le=1)
    schematic_at: int = Field(default=5, ge=1)
    max_concepts: int = Field(default=5, ge=1, le=50)
    seeds: int = Field(default=3, ge=1, le=100)
    min_cosine: float = Field(default=0.3, ge=0, le=1)
    depth: int = Field(default=1, ge=0, le=6)

    error_type: ClassVar[type[MnemoniteError]] = ConfigurationError
