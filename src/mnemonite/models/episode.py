"""Episodes: immutable raw events written under a full (user, session, agent) scope."""

from __future__ import annotations

from typing import Any

import orjson
from pydantic import Field, SerializationInfo, field_serializer, field_validator

from mnemonite._time import utcnow
from mnemonite.errors import MemoryScopeError
from mnemonite.models.base import Model, Moment, new_id
from mnemonite.models.sensitivity import SensitivityField, shown_values
from mnemonite.scope import check_id, check_scope

INTENTS: tuple[str, ...] = ("add", "update", "delete", "noop")
MAX_CONTENT_CHARS = 1_000_000


class Episode(Model):
    """One raw event: a message, an observation, a tool result.

    ``user``, ``session`` and ``agent`` may be left out and given to ``put`` instead; a
    stored episode always carries all three. Honoured ``metadata`` keys: ``intent``
    (add, update, delete, noop), ``replaces`` (fact or episode ids), ``subject``,
    ``predicate``, ``object``, plus ``memory_type`` and ``confidence`` for the facts
    consolidation promotes.
    """

    id: str = Field(default_factory=new_id, min_length=1, max_length=256)
    content: str = Field(min_length=1, max_length=MAX_CONTENT_CHARS)
    timestamp: Moment = Field(default_factory=utcnow)
    source_node: str = Field(default="", max_length=256)  # indexed with the scope key (see scope.MAX_ID_CHARS)
    user: str | None = None
    session: str | None = None
    agent: str | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)
    access_count: int = Field(default=0, ge=0)
    last_accessed_at: Moment | None = None
    sensitivity: SensitivityField = Field(default="internal", description="left out: the episodic tier's default")

    @field_serializer("metadata", when_used="json")
    def _hide_kept_secrets(self, value: dict[str, Any], info: SerializationInfo) -> dict[str, Any]:
        return shown_values(value, info)

    @field_validator("content")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("content must not be blank")
        return value

    @field_validator("metadata")
    @classmethod
    def _honoured_keys(cls, value: dict[str, Any]) -> dict[str, Any]:
        try:
            value = orjson.loads(orjson.dumps(value))  # as it is stored and read back: a time as its ISO text
        except TypeError as error:
            raise ValueError(f"metadata must be JSON-serialisable: {error}") from None
        intent = value.get("intent")
        if intent is not None and intent not in INTENTS:
            raise ValueError(f"metadata.intent must be one of {', '.join(INTENTS)}, got {intent!r}")
        for key in ("subject", "predicate", "object", "memory_type"):
            if key in value and not isinstance(value[key], str):
                raise ValueError(f"metadata.{key} must be a string")
        if "replaces" in value:
            value = {**value, "replaces": _as_id_list(value["replaces"])}
        if intent in ("update", "delete") and not value.get("replaces"):
            raise ValueError(f"metadata.intent={intent!r} requires metadata.replaces (fact or episode ids)")
        confidence = value.get("confidence")
        if confidence is not None and not (isinstance(confidence, int | float) and 0 <= confidence <= 1):
            raise ValueError("metadata.confidence must be a number in [0, 1]")
        return value

    def in_scope(self, user: str | None = None, session: str | None = None, agent: str | None = None) -> Episode:
        """This episode under a complete (user, session, agent): given values fill in what it lacks.

        A given value that contradicts one the episode carries, or a component missing on
        both sides, raises MemoryScopeError.
        """
        if user is session is agent is None and type(self.user) is type(self.session) is type(self.agent) is str:
            check_scope(self.user, self.session, self.agent)  # the common case: cached
            return self
        scope: dict[str, str] = {}
        for name, given in (("user", user), ("session", session), ("agent", agent)):
            carried = getattr(self, name)
            if given is not None and carried is not None and given != carried:
                raise MemoryScopeError(f"episode {self.id} carries {name}={carried!r} but was put under {given!r}")
            value = given if given is not None else carried
            if value is None:
                raise MemoryScopeError(f"episode {self.id} has no {name}: pass {name}=... or set it on the episode")
            scope[name] = check_id(name, value)
        if (self.user, self.session, self.agent) == (scope["user"], scope["session"], scope["agent"]):
            return self
        return self.model_copy(update=scope)


def _as_id_list(value: object) -> list[str]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise ValueError("metadata.replaces must be an id or a list of non-empty ids")
    return list(value)
