"""The geometry of the pictures, drawn as SVG by the templates: no I/O, no markup, only numbers.

Facts over time: two clocks on two axes. World time (``valid_from`` → ``valid_to``: when a fact was
true) and system time (``recorded_at`` → ``superseded_at``: when memory held it) seldom share a
range (a fact recorded today may be about last year), so each has its own. Graphs: nodes placed on
rings around the entity looked at (one ring per hop), or on one circle for the concept graph.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from mnemonite.models import Fact

__all__ = ["Axes", "Axis", "Bars", "Placed", "Tick", "axes_for", "bars", "on_circle", "on_rings"]

# An axis is drawn in percent of its width: SVG lengths in % need no stretched viewBox, so a bar can have a
# floor in pixels (a belief held for a millisecond is still a bar one can see and point at).
WIDTH = 100.0
# How a tick's time of day reads (a pattern, then how many characters of it), coarsest first: the first that
# tells every tick apart is used; none at all for ticks days apart.
CLOCKS = (("", 0), ("%H:%M", 5), ("%H:%M:%S", 8), ("%H:%M:%S.%f", 12), ("%H:%M:%S.%f", 15))


@dataclass(frozen=True)
class Tick:
    """A labelled tick: ``day`` on the first tick and wherever the date changes, ``clock`` the time of day
    when ticks lie less than a day apart (empty otherwise)."""

    x: float
    moment: datetime
    day: str
    clock: str


@dataclass(frozen=True)
class Axis:
    """A time axis from ``start`` to ``end`` mapped onto [0, WIDTH]."""

    start: datetime
    end: datetime

    def x(self, moment: datetime) -> float:
        span = (self.end - self.start).total_seconds() or 1.0
        offset = (moment - self.start).total_seconds() / span
        return round(min(max(offset, 0.0), 1.0) * WIDTH, 2)

    def ticks(self, count: int = 4) -> list[tuple[float, datetime]]:
        span = self.end - self.start
        step = span / count  # rounded to a microsecond: steps may add up past the end (past year 9999), so not beyond
        moments = [self.start + min(step * i, span) for i in range(count + 1)]
        return [(self.x(moment), moment) for moment in moments]

    def labels(self, count: int = 4) -> list[Tick]:
        """The ticks with labels that tell them apart: dates for a long span, times of day for a short one."""
        ticks = self.ticks(count)
        for pattern, cut in CLOCKS:
            shown = [(moment.strftime("%Y-%m-%d"), moment.strftime(pattern)[:cut]) for _, moment in ticks]
            if len(set(shown)) == len(shown):
                break
        days = [day if i == 0 or day != shown[i - 1][0] else "" for i, (day, _) in enumerate(shown)]
        return [Tick(x, moment, day, hour) for (x, moment), day, (_, hour) in zip(ticks, days, shown, strict=True)]


def _axis(moments: Iterable[datetime]) -> Axis:
    """An axis spanning ``moments``, with a small margin."""
    listed = list(moments)
    start, end = min(listed), max(listed)
    margin = max((end - start) / 50, timedelta(seconds=1))
    # a fact valid from year 9999 (or 1) leaves no room for a margin: the axis stops at the representable years
    low = start - min(margin, start - datetime.min.replace(tzinfo=start.tzinfo))
    high = end + min(margin, datetime.max.replace(tzinfo=end.tzinfo) - end)
    return Axis(low, high)


@dataclass(frozen=True)
class Axes:
    """The world-time axis (validity) and the system-time axis (belief) of a set of facts."""

    world: Axis
    belief: Axis


def axes_for(
    facts: Sequence[Fact], now: datetime, valid_at: datetime | None = None, as_of: datetime | None = None
) -> Axes:
    """Axes spanning every interval of ``facts`` up to ``now``, and the moments replayed on each."""
    world = [now, *([valid_at] if valid_at else []), *(m for f in facts for m in (f.valid_from, f.valid_to or now))]
    belief = [now, *([as_of] if as_of else []), *(m for f in facts for m in (f.recorded_at, f.superseded_at or now))]
    return Axes(_axis(world), _axis(belief))


@dataclass(frozen=True)
class Bars:
    """Where a fact's two intervals lie, each on its own axis (x and width), and whether each is still open."""

    valid_x: float
    valid_w: float
    valid_open: bool
    believed_x: float
    believed_w: float
    believed_open: bool


def bars(axes: Axes, fact: Fact, now: datetime) -> Bars:
    """The bars of one fact: valid_from → valid_to and recorded_at → superseded_at (open ends reach now)."""
    v0, v1 = axes.world.x(fact.valid_from), axes.world.x(fact.valid_to or now)
    b0, b1 = axes.belief.x(fact.recorded_at), axes.belief.x(fact.superseded_at or now)
    return Bars(v0, max(v1 - v0, 0.0), fact.valid_to is None, b0, max(b1 - b0, 0.0), fact.superseded_at is None)


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
