"""What a search asks for and what it returns."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal, NamedTuple

from pydantic import AwareDatetime, Field, SkipValidation, field_validator

from mnemonite.models.base import Model
from mnemonite.models.episode import Episode
from mnemonite.models.fact import Fact, MemoryType
from mnemonite.models.lifecycle import LifecycleTier
from mnemonite.scope import Scope

Tier = Literal["episodic", "semantic"]
RecordKind = Literal["episode", "fact"]
KIND_OF_TIER: dict[str, RecordKind] = {"episodic": "episode", "semantic": "fact"}


class Positions(NamedTuple):
    """How far a kind's rows have got: the highest seq, the purge log's, and each model's index."""

    last: int
    purged: int
    indexed: dict[str, int]


class SearchFilter(Model):
    """Which records a search may return.

    ``scope`` widens like every read. ``since``/``until`` bound an episode's timestamp or a
    fact's ``valid_from``. Facts are the current ones unless ``as_of`` replays a moment;
    ``memory_types`` and ``tags`` (any of) apply to facts; ``lifecycle`` keeps only the records
    of those hot/warm/cold tiers.
    """

    scope: Scope
    tiers: tuple[Tier, ...] = Field(default=("episodic", "semantic"), min_length=1)
    memory_types: tuple[MemoryType, ...] | None = None
    tags: tuple[str, ...] | None = None
    since: AwareDatetime | None = None
    until: AwareDatetime | None = None
    as_of: AwareDatetime | None = None
    lifecycle: tuple[LifecycleTier, ...] | None = None

    @field_validator("tiers")
    @classmethod
    def _once_each(cls, tiers: tuple[Tier, ...]) -> tuple[Tier, ...]:
        """A tier named twice is searched once (else each of its hits would come back twice)."""
        return tuple(dict.fromkeys(tiers))


class SearchResults(list["SearchHit"]):
    """The hits of a search, best first (a list), and how many records of the searched scope it could not compare
    by meaning: ``unsearched``, records that had no vector yet when it ran (the background indexer lagging behind
    a bulk write). 0: every record was searched both ways. Those records were still searched by full text; a
    search with ``fresh=True`` (or after `Memory.index`) covers them."""

    unsearched: int

    def __init__(self, hits: Iterable[SearchHit] = (), *, unsearched: int = 0) -> None:
        super().__init__(hits)
        self.unsearched = unsearched


class SearchHit(Model):
    """One result, best first, with why it ranked where it did."""

    # Built from stored, already validated records (and a union of two strict models would not re-validate).
    record: SkipValidation[Episode | Fact]
    tier: Tier
    score: float = Field(description="the final score (fused, boosted, reranked, salience-weighted)")
    fulltext_rank: int | None = None
    fulltext_score: float | None = None
    vector_rank: int | None = None
    cosine: float | None = None
    fused: float = 0.0
    salience: float | None = None
    reranked: bool = False
    superseded: bool = Field(
        default=False,
        description="an episode whose facts were all superseded or forgotten since: what it said is not what"
        " memory holds now (SearchOptions.current_first places it below what replaced it)",
    )

    possibly_replaced_by: str | None = Field(
        default=None,
        description="a current fact that a pending candidate update (this fact's id) may replace: another value of"
        " the same attribute, stated later, left for a person or a judge to confirm",
    )

    @property
    def text(self) -> str:
        """The record's text, whichever tier it comes from (an episode's content, a fact's text)."""
        return self.record.content if isinstance(self.record, Episode) else self.record.text

    @property
    def pending(self) -> bool:
        """A fact the conflict pipeline left for a judge: searchable, but not yet confirmed current."""
        return isinstance(self.record, Fact) and self.record.status == "pending"
