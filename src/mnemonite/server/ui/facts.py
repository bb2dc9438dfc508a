"""Facts over time: validity (world time) and belief (system time) on one axis, replayed ``as of`` any
moment; a fact's page shows its supersede chain, its lineage and the episodes it came from."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from starlette.responses import Response

from mnemonite._time import utcnow
from mnemonite.errors import NotFoundError
from mnemonite.models import Episode, Fact
from mnemonite.models.fact import FactStatus
from mnemonite.server.ui.access import Viewer, moment, number, page, text
from mnemonite.server.ui.drawing import axis_for, bars
from mnemonite.server.ui.render import html

__all__ = ["router"]

router = APIRouter()
STATUSES: tuple[FactStatus, ...] = ("active", "pending", "superseded", "forgotten")


async def _every_status(v: Viewer, limit: int, subject: str | None) -> list[Fact]:
    """The newest ``limit`` facts of the scope whatever their status (a plain read returns current ones)."""
    found: list[Fact] = []
    for status in STATUSES:
        found += await v.mem.semantic.facts(v.scope(), status=status, subject=subject, limit=limit)
    found.sort(key=lambda fact: fact.recorded_at, reverse=True)
    return found[:limit]


async def _facts(request: Request, v: Viewer) -> Response:
    """Every fact of the scope on a time axis, or what memory believed ``as_of`` a moment."""
    as_of, subject = moment(request, "as_of"), text(request, "subject", 500)
    limit = number(request, "limit", 200, 1, 2000)
    if as_of is not None:
        facts = await v.mem.semantic.facts(v.scope(), as_of=as_of, subject=subject, limit=limit)
    else:
        facts = await _every_status(v, limit, subject)
    now = utcnow()
    axis = axis_for(facts, now, as_of)
    rows = [(fact, bars(axis, fact, now)) for fact in facts]
    marker = axis.x(as_of) if as_of is not None else None
    return html("facts.html", rows=rows, axis=axis, marker=marker, as_of=as_of, subject=subject,
                as_of_text=request.query_params.get("as_of", ""), **v.context("facts"))  # fmt: skip


async def _sources(v: Viewer, fact: Fact) -> list[tuple[str, Episode | None]]:
    """The episodes a fact came from (None for one purged since, or outside the key's scope)."""
    found: list[tuple[str, Episode | None]] = []
    for episode_id in fact.source_episode_ids:
        try:
            found.append((episode_id, await v.who.episode(v.mem, episode_id)))
        except NotFoundError:
            found.append((episode_id, None))
    return found


async def _fact(request: Request, v: Viewer) -> Response:
    """One fact: its fields, supersede chain, lineage, source episodes and conflict decisions."""
    fact = await v.who.fact(v.mem, request.path_params["fact_id"])
    chain = await v.mem.semantic.history(fact.id)
    now = utcnow()
    axis = axis_for(chain, now)
    context: dict[str, Any] = {
        "fact": fact,
        "chain": [(item, bars(axis, item, now)) for item in chain],
        "axis": axis,
        "lineage": await v.mem.semantic.lineage(fact.id),
        "sources": await _sources(v, fact),
        "decisions": await v.mem.semantic.conflicts(v.who.scope(agent=fact.agent), fact_id=fact.id, limit=200),
    }
    return html("fact.html", 200, marker=None, **context, **v.context("facts"))


router.add_api_route("/facts", page(_facts), methods=["GET"])
router.add_api_route("/facts/{fact_id}", page(_fact), methods=["GET"])
