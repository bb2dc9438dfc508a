"""The session events the tiers write: a read or a write made under a scope that names a session."""

from __future__ import annotations

from typing import Any

from mnemonite.errors import MemoryScopeError
from mnemonite.models.messages import EventKind, SessionEvent
from mnemonite.models.sensitivity import Sensitivity
from mnemonite.scope import Scope

__all__ = ["agent_scope", "event_for"]


def agent_scope(scope: Scope, verb: str) -> tuple[str, str]:
    """(user, agent) of a scope that must name its agent."""
    if not isinstance(scope, Scope):
        raise MemoryScopeError(f"{verb} takes a Scope, got {type(scope).__name__}")
    if scope.agent is None:
        raise MemoryScopeError(f"{verb} needs a scope with an agent: Scope(user=..., agent=...)")
    return scope.user, scope.agent


def event_for(
    scope: Scope, kind: EventKind, name: str, payload: dict[str, Any], sensitivity: Sensitivity = "internal"
) -> SessionEvent | None:
    """The event to log, or None when the scope names no session (or no agent) to log it in."""
    if scope.session is None or scope.agent is None:
        return None
    return SessionEvent(
        kind=kind, name=name, user=scope.user, session=scope.session, agent=scope.agent, payload=payload,
        sensitivity=sensitivity,
    )  # fmt: skip
