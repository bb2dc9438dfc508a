"""Search with the explanation of every hit: full-text rank and score, vector rank and cosine, fused
score, salience, final score, and the route the query took (sequential, graph or flat)."""

from __future__ import annotations

from fastapi import APIRouter, Request
from starlette.responses import Response

from mnemonite.server.ui.access import Viewer, number, page, text
from mnemonite.server.ui.render import html

__all__ = ["router"]

router = APIRouter()


async def _search(request: Request, v: Viewer) -> Response:
    """Routed hybrid search over the scope's episodes and facts."""
    query, k = text(request, "q", 2000), number(request, "k", 10, 1, 100)
    routed = await v.mem.retrieve(v.scope(), query, k) if query else None
    return html("search.html", q=query, k=k, routed=routed, **v.context("search"))


router.add_api_route("/search", page(_search), methods=["GET"])
