"""Working-memory blocks: named, size-limited text an agent keeps in its prompt and edits itself."""

from __future__ import annotations

from pydantic import AwareDatetime, Field

from mnemonite._time import utcnow
from mnemonite.models.base import Model, new_id
from mnemonite.models.sensitivity import Sensitivity

__all__ = ["DEFAULT_BLOCK_CHARS", "LABEL_PATTERN", "Block"]

DEFAULT_BLOCK_CHARS = 2_000
LABEL_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.\-]{0,99}$"


class Block(Model):
    """One block of a (user, agent): ``label`` is unique among the blocks an agent sees.

    ``limit`` caps the value in characters and ``token_limit`` (optional) in tokens; a
    ``read_only`` block refuses every edit but a redefinition. ``agents`` are the agents it
    is attached to (its owner first, unless detached).
    """

    id: str = Field(default_factory=new_id, min_length=1, max_length=256)
    user: str
    agent: str
    label: str = Field(pattern=LABEL_PATTERN)
    value: str = ""
    description: str = Field(default="", max_length=2_000)
    limit: int = Field(default=DEFAULT_BLOCK_CHARS, ge=1, le=1_000_000)
    token_limit: int | None = Field(default=None, ge=1)
    read_only: bool = False
    sensitivity: Sensitivity = "internal"
    agents: tuple[str, ...] = ()
    created_at: AwareDatetime = Field(default_factory=utcnow)
    updated_at: AwareDatetime = Field(default_factory=utcnow)
