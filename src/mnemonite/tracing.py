"""Optional OpenTelemetry spans. With ``opentelemetry-api`` installed (``pip install mnemonite[tracing]``)
and a tracer provider configured by the application, mnemonite emits ``memory.conflict`` and
``memory.tool`` spans; otherwise this is a no-op. Spans carry no secret text: the reason of a decision
about a secret fact is redacted, and tool spans carry names and outcomes only."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, Protocol

from mnemonite.models.conflict import ConflictDecision
from mnemonite.privacy import redact

try:
    from opentelemetry import trace as _trace

    trace: Any = _trace
except ImportError:  # tracing is optional
    trace = None


class Record(Protocol):
    def __call__(self, decision: ConflictDecision, sensitivity: str = "internal") -> None: ...


@contextmanager
def span(name: str) -> Iterator[Record]:
    """A span around a conflict decision; call what it yields with the decision to attach its attributes
    (kind, stage, zone, cosine, reason, fact id, scope) and the fact's sensitivity."""
    if trace is None:
        yield _ignore
        return
    with trace.get_tracer("mnemonite").start_as_current_span(name) as current:

        def record(decision: ConflictDecision, sensitivity: str = "internal") -> None:
            attributes: dict[str, str | float] = {
                "mnemonite.decision": decision.kind,
                "mnemonite.stage": decision.stage,
                "mnemonite.zone": decision.zone or "",
                "mnemonite.reason": redact(decision.reason, sensitivity),
                "mnemonite.sensitivity": sensitivity,
                "mnemonite.fact_id": decision.fact_id,
                "mnemonite.user": decision.user,
                "mnemonite.agent": decision.agent,
            }
            if decision.cosine is not None:
                attributes["mnemonite.cosine"] = decision.cosine
            current.set_attributes(attributes)

        yield record


def _ignore(decision: ConflictDecision, sensitivity: str = "internal") -> None:
    pass


@contextmanager
def tool_span(tool: str, user: str, agent: str) -> Iterator[Callable[[str, str], None]]:
    """A ``memory.tool`` span around one tool call; call what it yields with (outcome, error code).

    Nothing is done until the application sets a tracer provider: a no-op span costs a fast tool 10%.
    """
    if trace is None or isinstance(trace.get_tracer_provider(), trace.ProxyTracerProvider):
        yield _ignore_outcome
        return
    with trace.get_tracer("mnemonite").start_as_current_span("memory.tool") as current:
        current.set_attributes({"mnemonite.tool": tool, "mnemonite.user": user, "mnemonite.agent": agent})

        def outcome(result: str, code: str) -> None:
            current.set_attributes({"mnemonite.outcome": result, "mnemonite.error_code": code})

        yield outcome


def _ignore_outcome(result: str, code: str) -> None:
    pass
