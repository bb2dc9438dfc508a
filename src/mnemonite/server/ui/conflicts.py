"""The conflict log: every decision of ``remember`` (stage, zone, cosine, reason), and the pending facts
a person may approve or reject; both go through the audited write path and need a key that may write."""

from __future__ import annotations

from fastapi import APIRouter, Request
from starlette.responses import RedirectResponse, Response

from mnemonite.errors import FactConflictError, NotFoundError
from mnemonite.models.conflict import JudgeVerdict
from mnemonite.models.fact import Fact
from mnemonite.server.ui.access import Viewer, form, number, page
from mnemonite.server.ui.render import html, link

__all__ = ["router"]

router = APIRouter()


async def _conflicts(request: Request, v: Viewer) -> Response:
    """The scope's decisions (paged, oldest first) and its pending facts."""
    limit, offset = number(request, "limit", 100, 1, 1000), number(request, "offset", 0, 0, 10_000_000)
    found = await v.mem.semantic.conflicts(v.scope(), limit=offset + limit + 1)
    decisions = found[offset : offset + limit]
    more = offset + limit if len(found) > offset + limit else None
    pending = await v.mem.semantic.facts(v.scope(), status="pending", limit=500)
    replaces = {fact.id: old for fact in pending if (old := await _replaced(v, fact)) is not None}
    return html("conflicts.html", decisions=decisions, pending=pending, replaces=replaces, offset=offset,
                limit=limit, more=more, done=request.query_params.get("done"), **v.context("conflicts"))  # fmt: skip


async def _approve(request: Request, v: Viewer) -> Response:
    """Keep a pending fact: it becomes active, and the decision (stage "judge") is logged."""
    v.who.require("write")
    await form(request)
    fact = await v.who.fact(v.mem, request.path_params["fact_id"])
    reason = f"approved in the inspector with API key {v.who.key_id}"
    old = await _replaced(v, fact)
    verdict = (
        JudgeVerdict(kind="supersede", target_id=old.id, reason=f"{reason}: replaces fact {old.id}")
        if old is not None
        else JudgeVerdict(kind="admit", reason=reason)
    )
    await v.mem.semantic.decide_pending(fact.id, verdict, scope=v.who.scope(agent=fact.agent))
    return RedirectResponse(link("conflicts", agent=v.agent, done="approved"), status_code=303)


async def _replaced(v: Viewer, fact: Fact) -> Fact | None:
    """The current fact a candidate update replaces once approved (None: it stands alone, or that one is gone)."""
    for old_id in fact.may_replace[:1]:
        try:
            old = await v.mem.semantic.get(old_id)
        except NotFoundError:
            return None
        return old if old.status == "active" else None
    return None


async def _reject(request: Request, v: Viewer) -> Response:
    """Drop a pending fact: it is forgotten (a delete delta in the audit log), kept for replay."""
    v.who.require_tier("destroy")
    await form(request)
    fact = await v.who.fact(v.mem, request.path_params["fact_id"])
    if fact.status != "pending":
        raise FactConflictError(f"fact {fact.id!r} is {fact.status}, not pending: there is nothing to reject")
    await v.mem.semantic.forget(fact.id, scope=v.who.scope(agent=fact.agent))
    return RedirectResponse(link("conflicts", agent=v.agent, done="rejected"), status_code=303)


router.add_api_route("/conflicts", page(_conflicts), methods=["GET"])
router.add_api_route("/facts/{fact_id}/approve", page(_approve), methods=["POST"])
router.add_api_route("/facts/{fact_id}/reject", page(_reject), methods=["POST"])
