"""What the memory tools return to a model, and the audit row each call leaves."""

from __future__ import annotations

from typing import Any, Literal

import orjson
from pydantic import AwareDatetime, Field

from mnemonite.models.base import Model

__all__ = ["GuardTier", "Outcome", "SideEffect", "ToolCall", "ToolError", "ToolResult"]

GuardTier = Literal["read", "add", "rewrite", "destroy"]
"""How much a tool may change memory: nothing, add to it, rewrite what is there, or remove it."""
SideEffect = Literal["read_only", "idempotent_write", "write", "destructive"]
"""What a runtime may assume when it retries or sandboxes a call."""
Outcome = Literal["ok", "error", "denied"]


class ToolError(Model):
    """Why a tool call did not happen, written for the model: what went wrong and what to do instead."""

    code: str
    message: str
    hint: str


class ToolResult(Model):
    """The answer to one tool call: ``output`` when ``ok``, else ``error``. Never a traceback.

    Secret text in ``output`` is a marker unless the call was given a `Reveal`.
    """

    tool: str
    ok: bool
    output: dict[str, Any] | None = None
    error: ToolError | None = None
    call_id: str

    def content(self) -> str:
        """The result as the JSON text a runtime hands back to the model."""
        body = self.output if self.ok else {"error": self.error.model_dump() if self.error else None}
        return orjson.dumps(body).decode()


class ToolCall(Model):
    """The audit row of one tool call (arguments and result as the model saw them: secret text redacted)."""

    id: str
    user: str
    agent: str
    session: str | None = None
    tool: str
    guard: str
    side_effect: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    outcome: Outcome
    error_code: str | None = None
    result: dict[str, Any] = Field(default_factory=dict)
    called_at: AwareDatetime
    duration_ms: float = Field(ge=0)
