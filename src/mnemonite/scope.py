"""Whose memory: the `Scope` value and its collision-proof key encoding.

An episode is written under the full (user, session, agent) tuple, encoded as
``/user/<u>/session/<s>/agent/<a>/``. Each component is percent-encoded for ``/``,
``%``, ``_`` and ``\\`` so that no id can forge a separator or act as a LIKE wildcard,
and the trailing separator stops ``alice`` from matching ``alice2`` on prefix scans.
Reads widen by replacing omitted components with ``%``; the only ``%`` left unescaped
in a pattern is such a wildcard, and the stores pass ``ESCAPE '\\'``.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any, Self

from pydantic import BaseModel, ConfigDict, ModelWrapValidatorHandler, ValidationError, model_validator

from mnemonite.errors import MemoryScopeError

__all__ = [
    "DEFAULT_AGENT",
    "Scope",
    "as_scope",
    "encode_component",
    "episode_key",
    "episode_pattern",
    "fact_key",
    "fact_pattern",
    "key_range",
]

_ESCAPES = str.maketrans({"%": "%25", "/": "%2F", "_": "%5F", "\\": "%5C"})
LIKE_ESCAPE = "\\"
# Scope keys are indexed: PostgreSQL refuses an index entry over 2,704 bytes, and three escaped
# components of 128 characters (4 bytes each at most) stay well under it.
MAX_ID_CHARS = 128
# The agent every door acts as when its caller names none: the CLI's ``--agent``, ``mnemonite mcp``, and an
# API key bound to a user only calling the memory tools over HTTP or MCP. One default, so that what one door
# wrote another finds.
DEFAULT_AGENT = "assistant"


def check_id(kind: str, value: object) -> str:
    """Return a scope component, or raise MemoryScopeError saying what is wrong."""
    if not isinstance(value, str):
        raise MemoryScopeError(f"{kind} must be a string, got {type(value).__name__}")
    if not value.strip():
        raise MemoryScopeError(f"{kind} must be a non-blank string, got {value!r}")
    if len(value) > MAX_ID_CHARS:
        raise MemoryScopeError(f"{kind} must be at most {MAX_ID_CHARS} characters, got {len(value)}")
    if "\x00" in value:
        raise MemoryScopeError(f"{kind} must not contain NUL characters")
    if not value.isascii():
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            raise MemoryScopeError(f"{kind} must be valid Unicode (it holds a lone surrogate)") from None
    return value


def encode_component(value: str) -> str:
    """Percent-encode the characters that could forge a separator or a wildcard."""
    return value.translate(_ESCAPES)


def _like_literal(encoded: str) -> str:
    # Encoded components contain '%' (from %2F etc.) but never '_' or '\\'.
    return encoded.replace("%", LIKE_ESCAPE + "%")


@lru_cache(maxsize=65_536)
def check_scope(user: str, session: str, agent: str) -> None:
    """`check_id` of a whole scope, remembered (scopes repeat on ingest)."""
    for kind, value in (("user", user), ("session", session), ("agent", agent)):
        check_id(kind, value)


@lru_cache(maxsize=65_536)
def episode_key(user: str, session: str, agent: str) -> str:
    """The write key of an episode: every component present (cached: scopes repeat on ingest)."""
    parts = (encode_component(check_id(k, v)) for k, v in (("user", user), ("session", session), ("agent", agent)))
    u, s, a = parts
    return f"/user/{u}/session/{s}/agent/{a}/"


def fact_key(user: str, agent: str) -> str:
    """The write key of a fact: session drops out."""
    return f"/user/{encode_component(check_id('user', user))}/agent/{encode_component(check_id('agent', agent))}/"


def _component_pattern(kind: str, value: str | None) -> str:
    return "%" if value is None else _like_literal(encode_component(check_id(kind, value)))


def episode_pattern(user: str, session: str | None, agent: str | None) -> str:
    """LIKE pattern (escape character ``\\``) for a widening episode read."""
    u = _component_pattern("user", user)
    s = _component_pattern("session", session)
    a = _component_pattern("agent", agent)
    return f"/user/{u}/session/{s}/agent/{a}/"


def fact_pattern(user: str, agent: str | None) -> str:
    """LIKE pattern (escape character ``\\``) for a widening fact read."""
    return f"/user/{_component_pattern('user', user)}/agent/{_component_pattern('agent', agent)}/"


def key_range(pattern: str) -> tuple[str, str]:
    """An index range [low, high) that contains every key the pattern can match.

    A wildcard is always a whole component ``/%/`` (a literal ``%`` is escaped), so the
    text before the first one is an exact prefix; ``0`` is the character after ``/``.
    """
    cut = pattern.find("/%/")
    prefix = pattern if cut < 0 else pattern[: cut + 1]
    low = prefix.replace(LIKE_ESCAPE + "%", "%")
    return low, low[:-1] + "0"


class Scope(BaseModel):
    """Whose memory a read or write concerns: a user, optionally narrowed to an agent and a session.

    Omitted components widen a read: ``Scope(user="alice")`` is every session of every agent.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    user: str
    agent: str | None = None
    session: str | None = None

    @model_validator(mode="wrap")
    @classmethod
    def _typed_errors(cls, data: Any, handler: ModelWrapValidatorHandler[Self]) -> Self:
        if isinstance(data, dict):
            for kind in ("user", "agent", "session"):
                if data.get(kind) is not None or kind == "user":
                    check_id(kind, data.get(kind))
        try:
            return handler(data)
        except ValidationError as error:
            first = error.errors()[0]
            if first["type"] == "extra_forbidden":  # a misspelt component would widen a read to every agent
                raise MemoryScopeError(
                    f"invalid Scope: unknown component {first['loc'][0]!r} (a scope is user, agent and session)"
                ) from None
            raise MemoryScopeError(f"invalid Scope: {first['msg']}") from None

    @model_validator(mode="after")
    def _check(self) -> Self:
        check_id("user", self.user)
        if self.agent is not None:
            check_id("agent", self.agent)
        if self.session is not None:
            check_id("session", self.session)
        return self


def as_scope(scope: Scope | str) -> Scope:
    """A read's scope: a `Scope`, or a plain user id meaning every agent and session of that user."""
    if isinstance(scope, Scope):
        return scope
    if isinstance(scope, str):
        return Scope(user=scope)
    raise MemoryScopeError(f"a scope is a Scope or a user id string, got {type(scope).__name__}")
