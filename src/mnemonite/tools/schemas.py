"""The input and output model of each memory tool; their JSON schemas are what a model sees.

Inputs forbid unknown keys and carry no user, agent or session: a toolset is bound to one scope
by the host (`Memory.tools.for_scope`), so the model never chooses whose memory it touches.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from mnemonite.models.sensitivity import Sensitivity

__all__ = [
    "BlockAppendInput",
    "BlockOutput",
    "BlockReplaceInput",
    "BlockRethinkInput",
    "ConversationSearchInput",
    "ConversationSearchOutput",
    "EpisodeHit",
    "FactForgetInput",
    "FactForgetOutput",
    "FactHit",
    "FactRememberInput",
    "FactRememberOutput",
    "FactSearchInput",
    "FactSearchOutput",
    "FactSupersedeInput",
    "FactSupersedeOutput",
    "MessageHit",
    "RecallEpisodesInput",
    "RecallEpisodesOutput",
    "ToolInput",
    "ToolOutput",
]

MAX_TEXT = 20_000
MAX_QUERY = 2_000
Label = Field(min_length=1, max_length=200, description="The block's label, as shown in your prompt (e.g. 'human').")
HINT = (
    "Present only when something may be missing: records not searched by meaning yet (still being indexed),"
    " or nothing found here while other agents of the user hold matches (says which)."
)
Id = Field(min_length=1, max_length=256, description="The fact's id, as returned by fact_search or fact_remember.")


class ToolInput(BaseModel):
    """Arguments of a tool: strict keys, strict types (a number is not a string)."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)


class ToolOutput(BaseModel):
    """What a tool returns to the model."""

    model_config = ConfigDict(frozen=True)


# -- working memory blocks --------------------------------------------------------------------


class BlockAppendInput(ToolInput):
    label: str = Label
    text: str = Field(min_length=1, max_length=MAX_TEXT, description="Text to add at the end of the block.")


class BlockReplaceInput(ToolInput):
    label: str = Label
    old: str = Field(
        min_length=1,
        max_length=MAX_TEXT,
        description="Exact text currently in the block; it must occur exactly once (copy enough of it).",
    )
    new: str = Field(max_length=MAX_TEXT, description="The text to put in its place (empty to delete it).")


class BlockRethinkInput(ToolInput):
    label: str = Label
    value: str = Field(max_length=MAX_TEXT, description="The block's complete new content, replacing all of it.")


class BlockOutput(ToolOutput):
    label: str
    value: str = Field(description="The block's content after the edit.")
    chars: int = Field(description="Characters the block now holds.")
    limit: int = Field(description="The most characters the block may hold.")
    sensitivity: Sensitivity


# -- facts -------------------------------------------------------------------------------------

MemoryKind = Literal["fact", "preference", "decision", "experience", "failure", "observation"]


class FactRememberInput(ToolInput):
    text: str = Field(
        min_length=1, max_length=MAX_TEXT, description="One self-contained statement, e.g. 'The user lives in Oslo'."
    )
    memory_type: MemoryKind = Field(default="fact", description="What kind of statement it is.")
    sensitivity: Sensitivity | None = Field(
        default=None, description="'secret' for credentials, health or anything the user asked to keep private."
    )


class FactRememberOutput(ToolOutput):
    decision: Literal["supersede", "dedup", "pending", "admit"] = Field(
        description="admit: stored as new; dedup: already known; supersede: replaced an older fact; pending: stored,"
        " awaiting review."
    )
    fact_id: str
    replaced_ids: list[str] = Field(description="Facts this one superseded or duplicates.")
    reason: str


class FactSearchInput(ToolInput):
    query: str = Field(min_length=1, max_length=MAX_QUERY, description="What to look for, in natural language.")
    k: int = Field(default=5, ge=1, le=50, description="How many facts to return at most.")


class FactHit(ToolOutput):
    id: str
    text: str
    memory_type: str
    score: float
    recorded_at: str
    status: Literal["active", "pending"] = Field(
        default="active",
        exclude_if=lambda status: status == "active",
        description="pending: a later statement not yet confirmed (a candidate update); treat it as likely",
    )
    possibly_replaced_by: str | None = Field(
        default=None,
        exclude_if=lambda found: found is None,
        description="The id of a later fact that may replace this one (another value, not yet confirmed).",
    )


class FactSearchOutput(ToolOutput):
    facts: list[FactHit]
    hint: str | None = Field(default=None, exclude_if=lambda hint: hint is None, description=HINT)


class FactSupersedeInput(ToolInput):
    fact_id: str = Id
    text: str = Field(min_length=1, max_length=MAX_TEXT, description="The statement that is true now.")


class FactSupersedeOutput(ToolOutput):
    old_id: str
    fact_id: str = Field(description="The id of the new, current fact.")
    text: str


class FactForgetInput(ToolInput):
    fact_id: str = Id


class FactForgetOutput(ToolOutput):
    fact_id: str
    status: str = Field(description="'forgotten': no longer believed, kept in history.")


# -- episodes and the conversation -------------------------------------------------------------


class RecallEpisodesInput(ToolInput):
    query: str = Field(min_length=1, max_length=MAX_QUERY, description="What happened that you want to recall.")
    k: int = Field(default=5, ge=1, le=50, description="How many episodes to return at most.")


class EpisodeHit(ToolOutput):
    id: str
    content: str
    timestamp: str
    relevance: float = Field(description="How well it matches the query, 0..1.")
    recency: float = Field(description="How recently it happened or was recalled, 0..1.")
    salience: float = Field(description="How important it was marked, 0..1.")
    score: float = Field(description="The three signals combined; results are sorted by it.")
    superseded: bool = Field(
        default=False,
        description="True: what it said no longer holds; the facts read from it were replaced or forgotten since.",
    )


class RecallEpisodesOutput(ToolOutput):
    episodes: list[EpisodeHit]
    hint: str | None = Field(default=None, exclude_if=lambda hint: hint is None, description=HINT)


class ConversationSearchInput(ToolInput):
    query: str = Field(min_length=1, max_length=MAX_QUERY, description="Words to look for in this conversation.")
    k: int = Field(default=10, ge=1, le=50, description="How many messages to return at most.")


class MessageHit(ToolOutput):
    id: str
    role: str
    agent: str
    content: str
    timestamp: str


class ConversationSearchOutput(ToolOutput):
    messages: list[MessageHit]
