"""The timeline: a scope's episodes and session messages, newest first, filtered by session, time and text."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from fastapi import APIRouter, Request
from starlette.responses import Response

from mnemonite.models import Episode
from mnemonite.models.messages import Message
from mnemonite.search import SearchOptions
from mnemonite.server.ui.access import Viewer, moment, number, page, text
from mnemonite.server.ui.render import html

__all__ = ["Entry", "router"]

router = APIRouter()
# A filter matches words, not meanings: full text only, from the store's index (no model call, no cache to load).
TEXT_ONLY = SearchOptions(use_vectors=False, lexical="fts5", embed_pending=0, embed_head=0)


@dataclass(frozen=True)
class Entry:
    """One line of the timeline: an episode or a session message."""

    kind: str
    id: str
    at: datetime
    session: str | None
    agent: str | None
    who: str
    text: str
    sensitivity: str | None
    metadata: dict[str, Any]


def _of_episode(e: Episode) -> Entry:
    return Entry(
        "episode", e.id, e.timestamp, e.session, e.agent, e.source_node or "", e.content, e.sensitivity, e.metadata
    )


def _of_message(m: Message) -> Entry:
    return Entry("message", m.id, m.timestamp, m.session, m.agent, m.role, m.content, m.sensitivity, m.metadata)


def _kept(entry: Entry, since: datetime | None, until: datetime | None, words: str | None) -> bool:
    if since is not None and entry.at < since:
        return False
    if until is not None and entry.at > until:
        return False
    return words is None or words.lower() in entry.text.lower()


async def _timeline(request: Request, v: Viewer) -> Response:
    """Episodes and messages of the scope, newest first."""
    session, words = text(request, "session", 256), text(request, "q", 500)
    since, until = moment(request, "since"), moment(request, "until")
    limit = number(request, "limit", 100, 1, 1000)
    scope = v.scope(session)
    if words is not None:  # a full-text match, searched: it reaches past the newest ``limit`` episodes
        hits = await v.mem.episodic.search(scope, words, limit, since=since, until=until, options=TEXT_ONLY)
        episodes = [hit.record for hit in hits if isinstance(hit.record, Episode)]
    else:
        episodes = await v.mem.episodic.recent(scope, limit=limit, until=until)
    messages = await v.mem.session.list(scope, limit=limit, until=until)
    entries = [_of_episode(e) for e in episodes] + [_of_message(m) for m in messages]
    kept = [e for e in entries if _kept(e, since, until, words if e.kind == "message" else None)]
    kept.sort(key=lambda e: e.at, reverse=True)
    filters = {"session": session, "q": words, "since": request.query_params.get("since"),
               "until": request.query_params.get("until"), "limit": limit}  # fmt: skip
    return html("timeline.html", entries=kept[:limit], filters=filters, **v.context("timeline"))


router.add_api_route("/timeline", page(_timeline), methods=["GET"])
