"""Facts over time: validity (world time) and belief (system time), each on its own axis, replayed at any
moment of either (``valid_at``: what was true then; ``as_of``: what memory believed then); a fact's page
shows its supersede chain, its lineage and the episodes it came from."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from starlette.responses import Response

from mnemonite._time import utcnow
from mnemonite.errors import NotFoundError
from mnemonite.models import Episode, Fact
from mnemonite.models.fact import FactStatus
from mnemonite.server.ui.access import Viewer, moment, number, page, text
from mnemonite.server.ui.drawing import axes_for, bars
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
    """Every fact of the scope on two time axes, or those true ``valid_at`` a moment (world time) as memory
    believed ``as_of`` a moment (system time; now when not given)."""
    as_of, valid_at, subject = moment(request, "as_of"), moment(request, "valid_at"), text(request, "subject", 500)
    limit = number(request, "limit", 200, 1, 2000)
    if as_of is not None or valid_at is not None:
        facts = await v.mem.semantic.facts(v.scope(), as_of=as_of, valid_at=valid_at, subject=subject, limit=limit)
    else:
        facts = await _every_status(v, limit, subject)
    now = utcnow()
    axes = axes_for(facts, now, valid_at=valid_at, as_of=as_of)
    markers = {"valid": axes.world.x(valid_at) if valid_at else None,
               "believed": axes.belief.x(as_of) if as_of else None}  # fmt: skip
    typed = {name: request.query_params.get(name, "") for name in ("as_of", "valid_at")}
    return html("facts.html", rows=[(fact, bars(axes, fact, now)) for fact in facts], axes=axes, markers=markers,
                as_of=as_of, valid_at=valid_at, subject=subject, typed=typed, **v.context("facts"))  # fmt: skip


async def _sources(v: Viewer, fact: Fact) -> list[tuple[str, Episode | None]]:
    """The episodes a fact came from (None for one purged since, or outside the key's scope)."""
    found: list[tuple[str, Episode | None]] = []
    for episode_id in fact.source_episode_ids:
        try:
            found.append((episode_id, await v.who.episode(v.mem, episode_id)))
        except NotFoundError:
            found.append((episode_id, None))
    return found


async def _named(v: Viewer, fact_ids: list[str]) -> dict[str, Fact]:
    """The facts of the scope among ``fact_ids`` (one outside it, or purged since, is left out)."""
    found: dict[str, Fact] = {}
    for fact_id in dict.fromkeys(fact_ids):
        try:
            found[fact_id] = await v.who.fact(v.mem, fact_id)
        except NotFoundError:
            continue
    return found


async def _fact(request: Request, v: Viewer) -> Response:
    """One fact: its fields, supersede chain, lineage, source episodes and conflict decisions."""
    fact = await v.who.fact(v.mem, request.path_params["fact_id"])
    chain = await v.mem.semantic.history(fact.id)
    lineage = await v.mem.semantic.lineage(fact.id)
    now = utcnow()
    axes = axes_for(chain, now)
    context: dict[str, Any] = {
        "fact": fact,
        "chain": [(item, bars(axes, item, now)) for item in chain],
        "axes": axes,
        "lineage": lineage,
        "named_facts": await _named(v, [i for edge in lineage for i in (edge.new_id, edge.old_id)]),
        "sources": await _sources(v, fact),
        "decisions": await v.mem.semantic.conflicts(v.who.scope(agent=fact.agent), fact_id=fact.id, limit=200),
    }
    return html("fact.html", 200, markers={"valid": None, "believed": None}, **context, **v.context("facts"))


router.add_api_route("/facts", page(_facts), methods=["GET"])
router.add_api_route("/facts/{fact_id}", page(_fact), methods=["GET"])
