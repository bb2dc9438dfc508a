"""The graph: an entity's neighbourhood (1 to 3 hops) and the concept graph with its versions."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from fastapi import APIRouter, Request
from starlette.responses import Response

from mnemonite.models.graph import Edge, Entity
from mnemonite.server.ui.access import Viewer, number, page, text
from mnemonite.server.ui.drawing import on_circle, on_rings
from mnemonite.server.ui.render import html

__all__ = ["router"]

router = APIRouter()
MAX_EDGES = 200  # a neighbourhood larger than this is cut: a picture of more says nothing


def _depths(start: str, edges: list[Edge]) -> dict[str, int]:
    """Hops from ``start`` to every node the edges reach (edges come nearest first)."""
    depth = {start: 0}
    for edge in sorted(edges, key=lambda e: e.depth or 0):
        near, far = (edge.source, edge.target) if edge.source in depth else (edge.target, edge.source)
        depth.setdefault(near, edge.depth or 0)
        depth.setdefault(far, depth[near] + 1)
    return depth


async def _neighbourhood(v: Viewer, entity: Entity, hops: int) -> dict[str, Any]:
    edges = await v.mem.graph.neighbors(entity.id, depth=hops, limit=MAX_EDGES)
    depth = _depths(entity.id, edges)
    names = {entity.id: entity}
    for node in depth:
        if node not in names:
            names[node] = await v.who.entity(v.mem, node)
    placed = on_rings(entity.id, depth)
    where = {p.id: p for p in placed}
    return {"entity": entity, "edges": edges, "placed": placed, "where": where, "names": names,
            "cut": len(edges) >= MAX_EDGES}  # fmt: skip


async def _concepts(v: Viewer) -> dict[str, Any]:
    graph = await v.mem.concepts.load_graph(v.scope())
    nodes = sorted(graph.nodes)
    placed = on_circle(nodes) if nodes else []
    return {"concepts": graph, "concept_placed": placed, "concept_where": {p.id: p for p in placed},
            "versions": await v.mem.concepts.versions(v.scope(), limit=20)}  # fmt: skip


async def _graph(request: Request, v: Viewer) -> Response:
    """The scope's entities; with ``entity``, its neighbourhood; and the concept graph."""
    context: dict[str, Any] = {"depth": number(request, "depth", 1, 1, 3), "q": text(request, "q", 500)}
    entity_id = text(request, "entity", 256)
    if v.agent is None and entity_id is not None:  # an entity names its agent's graph
        v = replace(v, agent=(await v.who.entity(v.mem, entity_id)).agent)
    if v.agent is None:  # a graph is one agent's: offer the agents of the user's recent episodes
        recent = await v.mem.episodic.recent(v.scope(), limit=100)
        agents = sorted({e.agent for e in recent if e.agent})
        return html("graph.html", entities=[], agents=agents, **context, **v.context("graph"))
    if context["q"]:
        context["entities"] = await v.mem.graph.search_entities(v.scope(), context["q"], limit=100)
    else:
        context["entities"], context["total"] = await v.mem.graph.entities(v.scope(), limit=200)
    if entity_id is not None:
        context |= await _neighbourhood(v, await v.who.entity(v.mem, entity_id), context["depth"])
    context |= await _concepts(v)
    return html("graph.html", **context, **v.context("graph"))


router.add_api_route("/graph", page(_graph), methods=["GET"])
