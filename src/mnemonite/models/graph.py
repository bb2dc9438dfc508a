"""Graph memory: entities (mutable current state), edges between them, and what a context query returns.

Facts link to entities through `EntityLink` (a role per link); the facts themselves stay the
immutable, bi-temporal record of the semantic tier.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import AwareDatetime, Field, ValidationInfo, field_validator

from mnemonite.models.base import Model
from mnemonite.models.fact import EntityLink, Fact, MemoryType, Role

__all__ = [  # EntityLink and Role live beside Fact, which carries them
    "BudgetConfig",
    "Direction",
    "Edge",
    "Entity",
    "EntityContext",
    "EntityLink",
    "GraphBuildReport",
    "GraphStats",
    "RecallOptions",
    "Role",
    "ScoredFact",
]

Direction = Literal["out", "in", "both"]
ROLES: tuple[Role, ...] = ("about", "by", "for", "mentions")

DEFAULT_MAX_TOKENS = 2000
DEFAULT_ENTITY_PROFILE_BUDGET = 200
DEFAULT_GRAPH_BUDGET = 300
MAX_NAME_CHARS = 500
MAX_DEPTH = 6


class Entity(Model):
    """A node of one (user, agent)'s graph: a person, tool, project, concept... Mutable; names are unique per scope."""

    id: str
    user: str
    agent: str
    name: str = Field(min_length=1, max_length=MAX_NAME_CHARS)
    entity_type: str = Field(min_length=1, max_length=100)
    properties: dict[str, Any] = Field(default_factory=dict)
    owner: str | None = None
    created_at: AwareDatetime
    updated_at: AwareDatetime
    learned_from: str | None = None  # the fact the graph learned it from; None once made or taken over by hand


class Edge(Model):
    """A directed relation between two entities of one scope, unique on (source, target, relation).

    ``depth`` is set by `GraphMemory.neighbors` only: how many hops from the walk's start the
    edge's nearer end lies (0: the edge touches the start). An edge learned from a fact names it
    (``fact_id``) and holds from the fact's ``valid_from`` until the fact stops being believed
    (``valid_to``: superseded or forgotten); an edge made by `relate` holds until removed.
    """

    id: str
    user: str
    agent: str
    source: str
    target: str
    relation: str = Field(min_length=1, max_length=100)
    properties: dict[str, Any] = Field(default_factory=dict)
    created_at: AwareDatetime
    updated_at: AwareDatetime
    fact_id: str | None = None
    valid_from: AwareDatetime | None = None
    valid_to: AwareDatetime | None = None
    depth: int | None = None

    @property
    def current(self) -> bool:
        """Whether the edge holds now (an edge learned from a fact: while the fact is believed)."""
        return self.valid_to is None


class GraphBuildReport(Model):
    """What `GraphMemory.build` read and learned: scopes, facts read of those to read, facts it joined to the graph,
    the entities it made and the edges it opened."""

    scopes: int = 0
    facts_to_read: int = 0
    facts_read: int = 0
    facts_linked: int = 0
    entities_made: int = 0
    edges: int = 0


class RecallOptions(Model):
    """Which current facts `semantic.recall` returns, best first (spec: ``RecallOpts``).

    ``query`` is a full-text query (BM25); without one, facts rank by salience alone.
    ``entity_ids`` keeps facts linked to any of them; ``tags`` keeps facts carrying all of them.
    ``max_tokens`` stops adding facts once their token counts would pass it.
    """

    query: str | None = Field(default=None, max_length=2000)
    memory_type: MemoryType | None = None
    entity_ids: list[str] = Field(default_factory=list)
    tags: list[str] = Field(default_factory=list)
    min_salience: float = Field(default=0.0, ge=0.0, le=1.0)
    max_tokens: int | None = Field(default=None, ge=1)
    limit: int = Field(default=20, ge=1, le=10_000)


class ScoredFact(Model):
    """A fact with its ranking: decayed salience, relevance to the query, and their product."""

    fact: Fact
    salience: float
    relevance: float = 1.0
    score: float
    used_summary: bool = False

    @property
    def tokens(self) -> int:
        """Tokens of what a context includes: the summary's when it stands in for the text."""
        count = self.fact.summary_token_count if self.used_summary else self.fact.token_count
        return count or 0


class BudgetConfig(Model):
    """The phased token budget of `context_for`: entity profile, then graph neighbourhood, then memories."""

    max_tokens: int = Field(default=DEFAULT_MAX_TOKENS, ge=1)
    entity_profile: int = Field(default=DEFAULT_ENTITY_PROFILE_BUDGET, ge=0)
    graph: int = Field(default=DEFAULT_GRAPH_BUDGET, ge=0)

    @field_validator("graph")
    @classmethod
    def _fits(cls, graph: int, info: ValidationInfo) -> int:
        total, profile = info.data.get("max_tokens"), info.data.get("entity_profile")
        if total is not None and profile is not None and profile + graph > total:
            raise ValueError(f"entity_profile ({profile}) + graph ({graph}) exceed max_tokens ({total})")
        return graph

    @classmethod
    def for_total(cls, max_tokens: int) -> BudgetConfig:
        """The spec's split of ``max_tokens``; the fixed phases shrink in proportion for small budgets."""
        if max_tokens >= DEFAULT_MAX_TOKENS:
            return cls(max_tokens=max_tokens)
        share = max_tokens / DEFAULT_MAX_TOKENS
        return cls(
            max_tokens=max_tokens,
            entity_profile=int(DEFAULT_ENTITY_PROFILE_BUDGET * share),
            graph=int(DEFAULT_GRAPH_BUDGET * share),
        )

    @property
    def memory_budget(self) -> int:
        """What is left for memories after the entity profile and graph phases."""
        return self.max_tokens - self.entity_profile - self.graph


class EntityContext(Model):
    """What `context_for` gathered about one entity within a token budget (spec: ``EntityRecall``)."""

    entity: Entity
    profile: str
    edges_out: list[Edge] = Field(default_factory=list)
    edges_in: list[Edge] = Field(default_factory=list)
    entity_names: dict[str, str] = Field(default_factory=dict, description="entity id -> name for edge ends")
    memories: list[ScoredFact] = Field(default_factory=list)
    total_tokens: int = 0
    total_candidates: int = 0

    def format(self) -> str:
        """The context as plain text, ready to paste into an LLM prompt."""
        lines = [f"## {self.entity.name} ({self.entity.entity_type})", self.profile]
        if self.edges_out or self.edges_in:
            lines.append("")
            lines.append("### Relations")
            for edge in self.edges_out:
                lines.append(f"- {self.entity.name} {edge.relation} {self.entity_names.get(edge.target, edge.target)}")
            for edge in self.edges_in:
                lines.append(f"- {self.entity_names.get(edge.source, edge.source)} {edge.relation} {self.entity.name}")
        if self.memories:
            lines.append("")
            lines.append("### Memories")
            for scored in self.memories:
                fact = scored.fact
                text = fact.summary if scored.used_summary and fact.summary else fact.text
                lines.append(f"- [{fact.memory_type}] {text}")
        return "\n".join(line for line in lines if line is not None).strip() + "\n"


class GraphStats(Model):
    """Counts of one scope's graph memory."""

    entities: int
    edges: int
    memories: int = Field(description="facts ever recorded, superseded and forgotten ones included")
    active_memories: int = Field(description="facts memory holds now")
    total_memory_tokens: int = Field(description="tokens of the facts memory holds now")
    memories_by_type: dict[str, int] = Field(default_factory=dict, description="facts held now, by memory type")
