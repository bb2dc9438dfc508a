"""Working blocks and the consolidator: what the agent keeps in context, budgets used today, last runs."""

from __future__ import annotations

from fastapi import APIRouter, Request
from starlette.responses import Response

from mnemonite.server.ui.access import Viewer, page
from mnemonite.server.ui.render import html

__all__ = ["router"]

router = APIRouter()


async def _status(request: Request, v: Viewer) -> Response:
    """The scope's working blocks, the consolidator's status, and (for an admin key) the rules' last runs."""
    blocks = await v.mem.working.list(v.scope())
    consolidator = await v.mem.consolidator.status()
    rules = await v.mem.rules() if "admin" in v.who.capabilities else None
    return html("status.html", blocks=blocks, consolidator=consolidator, rules=rules, **v.context("status"))


router.add_api_route("/status", page(_status), methods=["GET"])
