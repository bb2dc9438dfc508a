"""The session side: a transient `EventGraph` per session, and the `GraphBuilder` that detects topic shifts.

After every event the builder measures the cosine distance between the event's embedding and
the open topic (the mean of its events' embeddings: the state the next consolidation will
write); above the threshold (0.30) the finished topic is consolidated before the new one
begins, and a `SemanticShiftEvent` says so. Nothing here is stored: a session's graph lives in
this process until `flush`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from mnemonite.concepts.consolidator import SemanticConsolidator, check_unit
from mnemonite.embedding.base import Embedder, Vectors, normalise
from mnemonite.errors import EmbedderMismatchError, InvalidInputError, MemoryScopeError
from mnemonite.models.concepts import EventNode, GraphVersion, SemanticShiftEvent
from mnemonite.scope import Scope

__all__ = ["EventGraph", "GraphBuilder"]

SHIFT_THRESHOLD = 0.30  # the spec's default cosine distance that counts as a change of topic


@dataclass
class EventGraph:
    """One session's events in order (edges: each event follows the previous one) and its open topic."""

    user: str
    agent: str
    session: str
    events: list[EventNode] = field(default_factory=list)
    topic_start: int = 0
    centroid: Vectors | None = None
    shifts: list[SemanticShiftEvent] = field(default_factory=list)

    @property
    def edges(self) -> list[tuple[str, str]]:
        """(earlier, later) event ids: the session's sequence."""
        return [(a.id, b.id) for a, b in zip(self.events, self.events[1:], strict=False)]

    @property
    def topic(self) -> list[EventNode]:
        """The events of the topic not consolidated yet."""
        return self.events[self.topic_start :]


class GraphBuilder:
    """Keeps an `EventGraph` per (user, session, agent) and consolidates each topic when it ends."""

    def __init__(
        self, embedder: Embedder, consolidator: SemanticConsolidator, *, threshold: float = SHIFT_THRESHOLD
    ) -> None:
        self.embedder = embedder
        self.consolidator = consolidator
        self.threshold = check_unit("threshold", threshold)
        self._graphs: dict[Scope, EventGraph] = {}
        self._locks: dict[Scope, asyncio.Lock] = {}

    def graph(self, scope: Scope) -> EventGraph | None:
        """The session's event graph (None once flushed or before its first event)."""
        return self._graphs.get(_session(scope))

    async def observe(self, scope: Scope, event: EventNode) -> SemanticShiftEvent | None:
        """Add one event; returns the `SemanticShiftEvent` when it starts a new topic."""
        return (await self.observe_many(scope, [event]))[0]

    async def observe_many(self, scope: Scope, events: Sequence[EventNode]) -> list[SemanticShiftEvent | None]:
        """`observe` each event in order (embedded in one batch); one shift or None per event."""
        key = _session(scope)
        checked = [_event(e) for e in events]
        vectors = await self._vectors(checked)
        async with self._locks.setdefault(key, asyncio.Lock()):
            fresh = EventGraph(user=key.user, agent=str(key.agent), session=str(key.session))
            graph = self._graphs.setdefault(key, fresh)
            return [await self._step(graph, e, v) for e, v in zip(checked, vectors, strict=True)]

    async def flush(self, scope: Scope) -> GraphVersion | None:
        """Consolidate the open topic and forget the session's graph (call it when the session ends)."""
        key = _session(scope)
        async with self._locks.setdefault(key, asyncio.Lock()):
            graph = self._graphs.pop(key, None)
            if graph is None or not graph.topic:
                return None
            return await self.consolidator.consolidate(graph.user, graph.agent, graph.topic, session=graph.session)

    async def _step(self, graph: EventGraph, event: EventNode, vector: Vectors) -> SemanticShiftEvent | None:
        shift = None
        if graph.centroid is not None and graph.topic:
            centre = graph.centroid / max(float(np.linalg.norm(graph.centroid)), 1e-12)
            distance = 1.0 - float(centre @ vector)
            if distance > self.threshold:
                shift = await self._shift(graph, distance, event)
        graph.events.append(event)
        graph.centroid = vector.copy() if graph.centroid is None else graph.centroid + vector
        return shift

    async def _shift(self, graph: EventGraph, distance: float, event: EventNode) -> SemanticShiftEvent:
        topic = graph.topic
        version = await self.consolidator.consolidate(
            graph.user, graph.agent, topic, session=graph.session, shift_distance=distance
        )
        shift = SemanticShiftEvent(
            agent=graph.agent,
            session=graph.session,
            distance=round(distance, 6),
            threshold=self.threshold,
            events=tuple(e.id for e in topic),
            at=event.at,
            version=None if version is None else version.version,
        )
        graph.shifts.append(shift)
        graph.topic_start, graph.centroid = len(graph.events), None
        return shift

    async def _vectors(self, events: list[EventNode]) -> list[Vectors]:
        given = {i: self._given(e) for i, e in enumerate(events) if e.embedding is not None}
        todo = [i for i in range(len(events)) if i not in given]
        made: list[Vectors] = list(await self.embedder.embed_batch([events[i].text for i in todo])) if todo else []
        by_index = {**given, **dict(zip(todo, made, strict=True))}
        return [by_index[i] for i in range(len(events))]

    def _given(self, event: EventNode) -> Vectors:
        if event.model != self.embedder.model:
            raise EmbedderMismatchError(
                f"event {event.id} carries a vector of {event.model!r}; this graph is built with"
                f" {self.embedder.model!r} (leave embedding out to have it embedded)"
            )
        vector: Vectors = normalise(np.asarray([event.embedding], dtype=np.float32), self.embedder.dimensions)[0]
        return vector


def _session(scope: Scope) -> Scope:
    if not isinstance(scope, Scope) or scope.session is None or scope.agent is None:
        raise MemoryScopeError("events are observed under a full (user, session, agent) scope")
    return scope


def _event(event: EventNode) -> EventNode:
    if not isinstance(event, EventNode):
        raise InvalidInputError(f"expected an EventNode, got {type(event).__name__}")
    return event
