"""API keys of the server: each bound to one (user[, agent]) scope, with capabilities."""

from __future__ import annotations

from typing import Literal

from pydantic import AwareDatetime, Field, field_validator

from mnemonite.models.base import Model
from mnemonite.scope import check_id

Capability = Literal["read", "write", "admin"]
CAPABILITIES: tuple[Capability, ...] = ("read", "write", "admin")


class ApiKey(Model):
    """A key as stored and listed: never its secret (only the SHA-256 of it is kept).

    ``user`` (and ``agent`` when set) is the only scope the key reaches. Capabilities:
    ``read`` (search, recall, lists), ``write`` (record, remember, supersede, forget, the graph),
    ``admin`` (purges, consolidation rules and runs, store health).
    """

    id: str = Field(min_length=1, max_length=64)
    user: str
    agent: str | None = None
    capabilities: tuple[Capability, ...] = Field(min_length=1)
    label: str | None = Field(default=None, max_length=200)
    created_at: AwareDatetime
    revoked_at: AwareDatetime | None = None

    @field_validator("user", "agent")
    @classmethod
    def _scope_id(cls, value: str | None) -> str | None:
        return None if value is None else check_id("scope", value)

    @field_validator("capabilities")
    @classmethod
    def _ordered(cls, value: tuple[Capability, ...]) -> tuple[Capability, ...]:
        return tuple(c for c in CAPABILITIES if c in value)

    @property
    def active(self) -> bool:
        """Whether the key still opens anything (not revoked)."""
        return self.revoked_at is None


class IssuedKey(Model):
    """A key just created: the stored record and its secret, shown this once."""

    key: ApiKey
    secret: str
