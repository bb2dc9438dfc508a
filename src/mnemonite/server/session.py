"""The session tier over HTTP: push, list, search, attributed_for, flush_important, compact, export.

A session lives under the key's user. A session in which the key's scope (its user, and its agent
or the one the request names) has no message answers 404, as a missing one does, so another
tenant's session ids reveal nothing. Compact and export read every agent's turns of the session,
so they need a key bound to the user only. The export is JSON lines (``application/x-ndjson``);
secret events are redacted unless ``reveal`` is given by an ``admin`` key. Replay is not served:
an export names its own user and would write wherever it says.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from pydantic import Field

from mnemonite.errors import InvalidInputError, NotFoundError
from mnemonite.models import Episode
from mnemonite.models.base import Model
from mnemonite.models.messages import Attribution, Message, MessageHit
from mnemonite.scope import Scope
from mnemonite.server.episodic import MAX_K, MAX_QUERY, ScopeFields
from mnemonite.server.verbs import Call, Page, Paged, Verb, page_of
from mnemonite.server.working import reveal_for

__all__ = ["VERBS"]

JSON_LINES = "application/x-ndjson"


class MessagesQuery(Paged, ScopeFields):
    """The session's messages, newest first (paged); ``compacted``: with the turns a summary replaced."""

    compacted: bool = False


class MessageSearch(ScopeFields):
    """Full-text search over the session's messages (summarised turns included)."""

    query: str = Field(min_length=1, max_length=MAX_QUERY)
    k: int = Field(default=10, ge=1, le=MAX_K)


class AttributionQuery(Model):
    """Whose share of the session: ``agent`` (the key's own, for a key bound to one)."""

    user: str | None = None
    agent: str = Field(min_length=1, max_length=256)


class FlushBody(ScopeFields):
    """Promote the session's marked or salient turns (of the scope's agent, when named) to episodes."""

    min_importance: float = Field(default=0.7, ge=0.0, le=1.0)


class CompactBody(ScopeFields):
    """Replace all but the last ``keep_last`` turns by one extractive summary of ``max_lines`` sentences."""

    keep_last: int = Field(default=10, ge=0, le=1_000_000)
    max_lines: int = Field(default=8, ge=1, le=1_000)


class Compacted(Model):
    """The summary written, or None when no turn was older than the ones kept."""

    summary: Message | None


class ExportQuery(Model):
    """A session's events as JSON lines; ``reveal`` (why) shows secret events, for an ``admin`` key."""

    user: str | None = None
    reveal: str | None = Field(default=None, min_length=1, max_length=500)


async def _session(call: Call[Any]) -> Scope:
    """The scope of the path's session; 404 when the scope has no message in it."""
    scope = call.who.scope(user=call.body.user, agent=call.body.agent, session=call.ids["session"])
    if not await call.mem.session.list(scope, limit=1, compacted=True):
        raise NotFoundError(f"no session {scope.session!r} in this key's scope")
    return scope


async def push(call: Call[Message]) -> Message:
    """Append a message to a session (``session`` in the body); its agent defaults to the key's."""
    m = call.body
    if m.session is None:
        raise InvalidInputError('a message names the session it is pushed to: add "session"')
    scope = call.who.scope(user=m.user, agent=m.agent, session=m.session)
    return await call.mem.session.push(scope, m)


async def messages(call: Call[MessagesQuery]) -> Page[Message]:
    """The session's messages, newest first (paged)."""
    q = call.body
    scope = await _session(call)
    found = await call.mem.session.list(scope, limit=q.offset + q.limit + 1, compacted=q.compacted)
    return page_of(found[::-1], q)


async def search(call: Call[MessageSearch]) -> list[MessageHit]:
    """Full-text search over the session's messages, best first."""
    return await call.mem.session.search(await _session(call), call.body.query, call.body.k)


async def attributed_for(call: Call[AttributionQuery]) -> Attribution:
    """What one agent said, read, wrote and called in the session."""
    scope = await _session(call)
    return await call.mem.session.attributed_for(Scope(user=scope.user, session=scope.session), call.body.agent)


async def flush_important(call: Call[FlushBody]) -> list[Episode]:
    """Promote the session's marked or salient turns to episodes, once each; returns the new episodes."""
    scope = await _session(call)
    return await call.mem.session.flush_important(scope, min_importance=call.body.min_importance)


async def compact(call: Call[CompactBody]) -> Compacted:
    """Replace older turns of the session by one extractive summary; the turns stay recoverable."""
    call.who.require_whole_user("compact summarises every agent's turns of the session")
    scope = await _session(call)
    b = call.body
    return Compacted(summary=await call.mem.session.compact(scope, keep_last=b.keep_last, max_lines=b.max_lines))


async def export(call: Call[ExportQuery]) -> bytes:
    """The session's events as JSON lines after one header line (the library's export format)."""
    call.who.require_whole_user("export reads every agent's events of the session")
    reveal = reveal_for(call, call.body.reveal)
    scope = call.who.scope(user=call.body.user, session=call.ids["session"])
    with tempfile.TemporaryDirectory(prefix="mnemonite-export-") as folder:
        path = Path(folder) / "session.jsonl"
        await call.mem.session.export(scope, path, reveal=reveal)
        return path.read_bytes()


_S = "/v1/sessions/{session}"
VERBS: tuple[Verb, ...] = (
    Verb("session", "session.push", "POST", "/v1/messages", "write", push, Message, body=Message, status=201),
    Verb("session", "session.list", "GET", f"{_S}/messages", "read", messages, Page[Message], query=MessagesQuery),
    Verb("session", "session.search", "POST", f"{_S}/search", "read", search, list[MessageHit], body=MessageSearch),
    Verb("session", "session.attributed_for", "GET", f"{_S}/attribution", "read", attributed_for, Attribution,
         query=AttributionQuery),
    Verb("session", "session.flush_important", "POST", f"{_S}/flush", "write", flush_important, list[Episode],
         body=FlushBody),
    Verb("session", "session.compact", "POST", f"{_S}/compact", "write", compact, Compacted, body=CompactBody),
    Verb("session", "session.export", "GET", f"{_S}/export", "read", export, bytes, query=ExportQuery,
         media_type=JSON_LINES),
)  # fmt: skip
