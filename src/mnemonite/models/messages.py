"""The session tier's records: messages of the rolling conversation log and the events around them."""

from __future__ import annotations

from typing import Any, Literal

import orjson
from pydantic import Field, SerializationInfo, field_serializer, field_validator

from mnemonite._time import utcnow
from mnemonite.models.base import Model, Moment, new_id
from mnemonite.models.sensitivity import Sensitivity, shown_values

__all__ = ["Attribution", "EventKind", "Message", "MessageHit", "Role", "SessionEvent"]

Role = Literal["user", "assistant", "system", "tool"]
EventKind = Literal["message", "tool_call", "memory_read", "memory_write"]


def _json(value: dict[str, Any]) -> dict[str, Any]:
    try:
        return dict(orjson.loads(orjson.dumps(value)))  # as it is stored and read back: a time as its ISO text
    except TypeError as error:
        raise ValueError(f"must be JSON-serialisable: {error}") from None


class Message(Model):
    """One turn: ``Message("user", "hi", agent="planner")``; ``agent`` is who said it or was spoken to.

    ``important`` marks it for `session.flush_important`; ``metadata.importance`` (0-1, or Park's
    1-10) makes it salient. ``user`` and ``session`` come from the scope it is pushed under.
    ``compacted_into`` is the summary that replaced it in the log (it stays in the export).
    """

    role: Role
    content: str = Field(min_length=1, max_length=1_000_000)
    agent: str | None = None
    id: str = Field(default_factory=new_id, min_length=1, max_length=256)
    user: str | None = None
    session: str | None = None
    timestamp: Moment = Field(default_factory=utcnow)
    important: bool = False
    metadata: dict[str, Any] = Field(default_factory=dict)
    sensitivity: Sensitivity | None = None
    compacted_into: str | None = None

    @field_serializer("metadata", when_used="json")
    def _hide_kept_secrets(self, value: dict[str, Any], info: SerializationInfo) -> dict[str, Any]:
        return shown_values(value, info)

    def __init__(self, role: Role | None = None, content: str | None = None, /, **fields: Any) -> None:
        if role is not None:
            fields["role"] = role
        if content is not None:
            fields["content"] = content
        super().__init__(**fields)

    @field_validator("content")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("content must not be blank")
        return value

    @field_validator("metadata")
    @classmethod
    def _serialisable(cls, value: dict[str, Any]) -> dict[str, Any]:
        return _json(value)


class SessionEvent(Model):
    """One line of a session's log: a message, a tool call, or a memory read or write, by one agent.

    ``name`` says what happened (``working.write``, ``fact_remember``); ``payload`` holds what a
    replay needs (the record written) or what was read (ids).
    """

    kind: EventKind
    name: str = Field(min_length=1, max_length=200)
    user: str
    session: str
    agent: str
    payload: dict[str, Any] = Field(default_factory=dict)
    id: str = Field(default_factory=new_id, min_length=1, max_length=256)
    at: Moment = Field(default_factory=utcnow)
    sensitivity: Sensitivity = "internal"

    @field_validator("payload")
    @classmethod
    def _serialisable(cls, value: dict[str, Any]) -> dict[str, Any]:
        return _json(value)


class Attribution(Model):
    """What one agent said, read and wrote in the scope's sessions, oldest first."""

    agent: str
    said: list[Message]
    read: list[SessionEvent]
    wrote: list[SessionEvent]
    tool_calls: list[SessionEvent]


class MessageHit(Model):
    """A message found by `session.search`, with its full-text relevance (higher is better)."""

    message: Message
    score: float
