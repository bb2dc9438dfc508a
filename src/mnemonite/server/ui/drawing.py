"""The geometry of the pictures, drawn as SVG by the templates: no I/O, no markup, only numbers.

Facts over time: each fact's world-time interval (valid) and system-time interval (believed) as
bars on one shared axis. Graphs: nodes placed on rings around the entity looked at (one ring per
hop), or on one circle for the concept graph.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from mnemonite.models import Fact

__all__ = ["Axis", "Bars", "Placed", "axis_for", "bars", "on_circle", "on_rings"]

WIDTH = 1000  # the viewBox width of an axis; the SVG scales to the page


@dataclass(frozen=True)
class Axis:
    """A time axis from ``start`` to ``end`` mapped onto [0, WIDTH]."""

    start: datetime
    end: datetime

    def x(self, moment: datetime) -> float:
        span = (self.end - self.start).total_seconds() or 1.0
        offset = (moment - self.start).total_seconds() / span
        return round(min(max(offset, 0.0), 1.0) * WIDTH, 1)

    def ticks(self, count: int = 5) -> list[tuple[float, datetime]]:
        span = self.end - self.start
        step = span / count  # rounded to a microsecond: steps may add up past the end (past year 9999), so not beyond
        moments = [self.start + min(step * i, span) for i in range(count + 1)]
        return [(self.x(moment), moment) for moment in moments]


@dataclass(frozen=True)
class Bars:
    """Where a fact's two intervals lie on the axis (x and width), and whether each is still open."""

    valid_x: float
    valid_w: float
    valid_open: bool
    believed_x: float
    believed_w: float
    believed_open: bool


def axis_for(facts: Sequence[Fact], now: datetime, marker: datetime | None = None) -> Axis:
    """An axis spanning every interval of ``facts`` (and ``marker``), up to ``now``, with a small margin."""
    moments = [now] + ([marker] if marker else [])
    for fact in facts:
        moments += [fact.valid_from, fact.recorded_at]
    start, end = min(moments), max(moments)
    margin = max((end - start) / 50, timedelta(minutes=1))
    # a fact valid from year 9999 (or 1) leaves no room for a margin: the axis stops at the representable years
    low = start - min(margin, start - datetime.min.replace(tzinfo=start.tzinfo))
    high = end + min(margin, datetime.max.replace(tzinfo=end.tzinfo) - end)
    return Axis(low, high)


def bars(axis: Axis, fact: Fact, now: datetime) -> Bars:
    """The bars of one fact: valid_from → valid_to and recorded_at → superseded_at (open ends reach now)."""
    v0, v1 = axis.x(fact.valid_from), axis.x(fact.valid_to or now)
    b0, b1 = axis.x(fact.recorded_at), axis.x(fact.superseded_at or now)
    return Bars(v0, max(v1 - v0, 2.0), fact.valid_to is None, b0, max(b1 - b0, 2.0), fact.superseded_at is None)


@dataclass(frozen=True)
class Placed:
    """A node at (x, y) in a 600 x 600 picture."""

    id: str
    x: float
    y: float
    ring: int


def on_rings(center: str, depth_of: dict[str, int]) -> list[Placed]:
    """``center`` in the middle, each other node on the ring of its hop count, spread evenly."""
    rings: dict[int, list[str]] = {}
    for node, depth in sorted(depth_of.items(), key=lambda item: (item[1], item[0])):
        if node != center:
            rings.setdefault(depth, []).append(node)
    placed = [Placed(center, 300.0, 300.0, 0)]
    radius = 260 / max(len(rings), 1)
    for depth, nodes in rings.items():
        placed += _around(nodes, radius * depth, depth, turn=depth * 0.35)
    return placed


def on_circle(nodes: Sequence[str]) -> list[Placed]:
    """Every node on one circle (a single node in the middle)."""
    if len(nodes) == 1:
        return [Placed(nodes[0], 300.0, 300.0, 0)]
    return _around(list(nodes), 250, 1, turn=0.0)


def _around(nodes: list[str], radius: float, ring: int, turn: float) -> list[Placed]:
    step = 2 * math.pi / max(len(nodes), 1)
    placed = []
    for i, node in enumerate(nodes):
        angle = turn + i * step
        placed.append(
            Placed(node, round(300 + radius * math.cos(angle), 1), round(300 + radius * math.sin(angle), 1), ring)
        )
    return placed
