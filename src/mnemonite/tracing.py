"""Optional OpenTelemetry spans. With ``opentelemetry-api`` installed (``pip install mnemonite[tracing]``)
and a tracer provider configured by the application, mnemonite emits ``memory.conflict`` spans;
otherwise this is a no-op."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from mnemonite.models.conflict import ConflictDecision

try:
    from opentelemetry import trace as _trace

    trace: Any = _trace
except ImportError:  # tracing is optional
    trace = None


Record = Callable[[ConflictDecision], None]


@contextmanager
def span(name: str) -> Iterator[Record]:
    """A span around a conflict decision; call what it yields with the decision to attach its attributes
    (kind, stage, zone, cosine, reason, fact id, scope)."""
    if trace is None:
        yield _ignore
        return
    with trace.get_tracer("mnemonite").start_as_current_span(name) as current:

        def record(decision: ConflictDecision) -> None:
            attributes: dict[str, str | float] = {
                "mnemonite.decision": decision.kind,
                "mnemonite.stage": decision.stage,
                "mnemonite.zone": decision.zone or "",
                "mnemonite.reason": decision.reason,
                "mnemonite.fact_id": decision.fact_id,
                "mnemonite.user": decision.user,
                "mnemonite.agent": decision.agent,
            }
            if decision.cosine is not None:
                attributes["mnemonite.cosine"] = decision.cosine
            current.set_attributes(attributes)

        yield record


def _ignore(decision: ConflictDecision) -> None:
    pass
