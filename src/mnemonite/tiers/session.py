"""The session tier: the rolling message log of a conversation, shared by the agents taking part.

Every message and every memory read or write made under a scope that names the session is an
event of that session, attributed to one agent. `export` writes the events as JSON lines and
`replay` loads them into another memory, reproducing the same state. `compact` replaces older
turns in the log by an extractive summary; the turns themselves stay (in `list(compacted=True)`
and in the export). `flush_important` promotes marked or salient turns to episodes.
"""

from __future__ import annotations

import builtins
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from datetime import datetime
from os import PathLike
from pathlib import Path
from typing import Any

import orjson

from mnemonite.errors import InvalidInputError, MemoryScopeError, NotFoundError
from mnemonite.inputs import checked, text_problem
from mnemonite.models import Episode
from mnemonite.models.messages import Attribution, EventKind, Message, MessageHit, SessionEvent
from mnemonite.models.sensitivity import SENSITIVITIES, Sensitivity, check_sensitivity
from mnemonite.privacy import MARKER, SECRETS_KEY, Reveal, SecretGuard, check_reveal
from mnemonite.salience import importance_of
from mnemonite.scope import Scope, as_scope, check_id
from mnemonite.search import query as q
from mnemonite.store import Store
from mnemonite.tiers._log import event_for

__all__ = ["EXPORT_FORMAT", "SessionTier", "summarise"]

EXPORT_FORMAT = "mnemonite-session"
_SENTENCE = re.compile(r"(?<=[.!?])\s+")


def _session_scope(scope: Scope, verb: str) -> tuple[str, str]:
    if not isinstance(scope, Scope):
        raise MemoryScopeError(f"{verb} takes a Scope, got {type(scope).__name__}")
    if scope.session is None:
        raise MemoryScopeError(f"{verb} needs a scope with a session: Scope(user=..., session=...)")
    return scope.user, scope.session


def _most_sensitive(levels: Iterable[Sensitivity]) -> Sensitivity:
    return max(levels, key=SENSITIVITIES.index, default="public")


def summarise(turns: Sequence[Message], max_lines: int) -> str:
    """An extractive summary: the ``max_lines`` sentences carrying the turns' most frequent words,
    in the order they were said, each with who said it."""
    sentences = [
        (i, turn, s.strip()) for i, turn in enumerate(turns) for s in _SENTENCE.split(turn.content) if s.strip()
    ]
    weight = Counter(word for _, _, sentence in sentences for word in q.terms(sentence))

    def score(item: tuple[int, Message, str]) -> float:
        words = q.terms(item[2])
        base = sum(weight[word] for word in words) / (1 + len(words)) ** 0.5
        return float(base) * (2.0 if item[1].important else 1.0)

    chosen = sorted(sorted(range(len(sentences)), key=lambda k: -score(sentences[k]))[:max_lines])
    lines = [f"- {sentences[k][1].agent} ({sentences[k][1].role}): {sentences[k][2]}" for k in chosen]
    return f"Summary of {len(turns)} earlier turns:\n" + "\n".join(lines)


@checked
class SessionTier:
    """``mem.session``: push, list, search, attributed_for, log_event, events, flush_important, compact,
    export, replay."""

    def __init__(
        self, store: Store, *, sensitivity: Sensitivity = "internal", guard: SecretGuard | None = None
    ) -> None:
        self._store = store
        self._sensitivity = sensitivity
        self._guard = guard or SecretGuard()

    async def push(self, scope: Scope, message: Message) -> Message:
        """Append a message to the scope's session; its ``agent`` defaults to the scope's agent."""
        return (await self.push_many(scope, [message]))[0]

    async def push_many(self, scope: Scope, messages: Iterable[Message]) -> builtins.list[Message]:
        """Append messages in order, in one transaction."""
        stored = [self._scoped(scope, m) for m in messages]
        events = [
            SessionEvent(
                kind="message",
                name="session.push",
                user=m.user,
                session=m.session,
                agent=m.agent,
                payload={"message": m.model_dump(mode="json")},
                at=m.timestamp,
                sensitivity=m.sensitivity,
            )
            for m in stored
            if m.user is not None and m.session is not None and m.agent is not None and m.sensitivity is not None
        ]
        await self._store.push_messages(stored, events)
        return stored

    def _scoped(self, scope: Scope, message: Message) -> Message:
        user, session = _session_scope(scope, "session.push")
        if not isinstance(message, Message):
            raise InvalidInputError(f"push takes a Message, got {type(message).__name__}")
        agent = message.agent or scope.agent
        if agent is None:
            raise MemoryScopeError("a message needs an agent: Message(..., agent=...) or a scope with an agent")
        for name, carried, given in (("user", message.user, user), ("session", message.session, session)):
            if carried is not None and carried != given:
                raise MemoryScopeError(
                    f"message {message.id} carries {name}={carried!r} but was pushed under {given!r}"
                )
        guarded = self._guard.text(message.content, check_sensitivity(message.sensitivity, self._sensitivity))
        noted = guarded.spans or SECRETS_KEY in message.metadata  # a note the caller wrote is replaced, never kept
        masked = {"content": guarded.text, "metadata": guarded.into(message.metadata)} if noted else {}
        return message.model_copy(
            update={
                "user": user, "session": session, "agent": check_id("agent", agent),
                "sensitivity": guarded.sensitivity, **masked,
                "compacted_into": None,  # only compact marks a turn as summarised
            }
        )  # fmt: skip

    async def list(
        self, scope: Scope | str, *, limit: int = 50, compacted: bool = False, until: datetime | None = None
    ) -> builtins.list[Message]:
        """The scope's newest ``limit`` messages (at or before ``until`` when given), oldest first
        (widening: omit the session or the agent).

        Turns replaced by a summary are left out unless ``compacted=True``.
        """
        read = as_scope(scope)
        return await self._store.messages(
            read.user, read.session, read.agent, limit=_limit(limit), compacted=compacted, until=until
        )

    async def search(self, scope: Scope | str, query: str, k: int = 10) -> builtins.list[MessageHit]:
        """Full-text search over the scope's messages (summarised turns included), best first."""
        read = as_scope(scope)
        if not isinstance(query, str) or not query.strip():
            raise InvalidInputError("the search query must be a non-empty string")
        found = await self._store.search_messages(read.user, read.session, read.agent, q.terms(query), _limit(k))
        return [MessageHit(message=message, score=score) for message, score in found]

    async def attributed_for(self, scope: Scope | str, agent: str) -> Attribution:
        """What ``agent`` said, read, wrote and called in the scope's sessions (the scope's agent is ignored)."""
        read = as_scope(scope)
        agent = check_id("agent", agent)
        events = await self._store.session_events(read.user, read.session, agent)
        said = [Message.model_validate(e.payload["message"]) for e in events if e.name == "session.push"]
        return Attribution(
            agent=agent, said=said, read=[e for e in events if e.kind == "memory_read"],
            wrote=[e for e in events if e.kind == "memory_write"],
            tool_calls=[e for e in events if e.kind == "tool_call"],
        )  # fmt: skip

    async def log_event(
        self,
        scope: Scope,
        kind: EventKind,
        name: str,
        payload: dict[str, Any] | None = None,
        *,
        sensitivity: Sensitivity | None = None,
    ) -> SessionEvent:
        """Record an event (a tool call, a read or write made elsewhere) in the scope's session, by its agent."""
        _session_scope(scope, "session.log_event")
        masked, level = self._guard.data(payload or {}, check_sensitivity(sensitivity, self._sensitivity))
        event = event_for(scope, kind, name, masked, level)
        if event is None:
            raise MemoryScopeError("log_event needs a scope with an agent: Scope(user=..., session=..., agent=...)")
        await self._store.log_events([event])
        return event

    async def events(self, scope: Scope | str) -> builtins.list[SessionEvent]:
        """The scope's events in the order they happened."""
        read = as_scope(scope)
        return await self._store.session_events(read.user, read.session, read.agent)

    async def flush_important(self, scope: Scope, *, min_importance: float = 0.7) -> builtins.list[Episode]:
        """Promote the session's marked (``important``) or salient (``metadata.importance`` at least
        ``min_importance``) messages to episodes, once each; returns the new episodes.

        An episode keeps the message's id, time and speaker, and ``metadata`` names its source.
        """
        user, session = _session_scope(scope, "session.flush_important")
        turns = await self._store.messages(user, session, scope.agent, limit=1_000_000, compacted=True)
        chosen = [m for m in turns if m.important or importance_of(_as_episode(m)) >= min_importance]
        fresh = [_as_episode(m) for m in chosen if await self._store.get_episode(m.id) is None]
        if not fresh:
            return []
        event = event_for(
            scope if scope.agent else scope.model_copy(update={"agent": fresh[0].agent}), "memory_write",
            "session.flush", {"episodes": [e.model_dump(mode="json") for e in fresh]},
            _most_sensitive(m.sensitivity or self._sensitivity for m in chosen),
        )  # fmt: skip
        await self._store.put_many(fresh, [event] if event is not None else [])
        return fresh

    async def compact(self, scope: Scope, *, keep_last: int = 10, max_lines: int = 8) -> Message | None:
        """Replace all but the last ``keep_last`` turns of the session by one extractive summary
        (at most ``max_lines`` sentences, each attributed); returns it, or None when nothing is older.

        The summarised turns stay recoverable: `list(compacted=True)`, `search` and the export hold them.
        """
        user, session = _session_scope(scope, "session.compact")
        if not isinstance(keep_last, int) or keep_last < 0 or not isinstance(max_lines, int) or max_lines < 1:
            raise InvalidInputError("compact needs keep_last >= 0 and max_lines >= 1")
        turns = await self._store.messages(user, session, None, limit=1_000_000)
        older = turns[: len(turns) - keep_last] if keep_last else turns
        if not older:
            return None
        agent = scope.agent or older[-1].agent
        summary = self._scoped(
            Scope(user=user, session=session, agent=agent),
            Message(
                "system", summarise(older, max_lines), agent=agent, timestamp=older[-1].timestamp,
                metadata={"summary_of": [m.id for m in older], "speakers": dict(Counter(m.agent for m in older))},
                sensitivity=_most_sensitive(m.sensitivity or self._sensitivity for m in older),
            ),
        )  # fmt: skip
        assert summary.agent is not None and summary.sensitivity is not None
        event = SessionEvent(
            kind="memory_write", name="session.compact", user=user, session=session, agent=summary.agent,
            payload={"summary": summary.model_dump(mode="json"), "compacted": [m.id for m in older]},
            sensitivity=summary.sensitivity,
        )  # fmt: skip
        await self._store.compact_messages(summary, [m.id for m in older], event)
        return summary

    async def export(self, scope: Scope, path: str | Path, *, reveal: Reveal | None = None) -> int:
        """Write the session's events (messages, tool calls, memory reads and writes) to ``path`` as JSON
        lines, after one header line; returns how many events. The file is replaced whole.

        What a secret event carries is redacted (its payload becomes a marker) unless ``reveal``
        is given; such a file says ``"redacted": true`` and cannot be replayed.
        """
        shown = check_reveal(reveal) is not None
        user, session = _session_scope(scope, "session.export")
        events = await self._store.session_events(user, session, None)
        if not events:
            raise NotFoundError(f"no session {session!r} for user {user!r}")
        hidden = not shown and any(event.sensitivity == "secret" for event in events)
        target = _export_path(path)
        header = {"format": EXPORT_FORMAT, "version": 1, "user": user, "session": session, "events": len(events),
                  "redacted": hidden}  # fmt: skip
        lines = [orjson.dumps(header)]
        for event in events:
            if hidden and event.sensitivity == "secret":
                event = event.model_copy(update={"payload": {"redacted": MARKER}})
            lines.append(orjson.dumps({"event": event.model_dump(mode="json")}))
        _write_whole(target, b"\n".join(lines) + b"\n")
        return len(events)

    async def replay(self, path: str | Path) -> int:
        """Load an exported session into this memory, which must not hold that session yet, in one
        transaction; the memory then holds the state the session produced (blocks, messages, summaries,
        episodes, procedures, groups). Returns how many events were replayed. A file that is not a
        session export changes nothing."""
        header, events = _read_export(_export_path(path))
        if header.get("redacted"):
            raise InvalidInputError(
                "this session export has its secret events redacted and cannot be replayed: export it again"
                " with reveal=Reveal(...) (mnemonite session export --reveal REASON)"
            )
        if await self._store.session_events(header["user"], header["session"], None):
            raise InvalidInputError(
                f"this memory holds session {header['session']!r} of user {header['user']!r} already;"
                " replay into an empty memory"
            )
        await self._store.replay_events(events)
        return len(events)


def _write_whole(target: Path, content: bytes) -> None:
    """Write a file whole or not at all: a partial file is renamed over the target once complete."""
    partial = target.with_name(f".{target.name}.partial")
    try:
        partial.write_bytes(content)
        partial.replace(target)
    except OSError as error:
        partial.unlink(missing_ok=True)
        raise InvalidInputError(f"cannot write the session export to {str(target)[:200]}: {error.strerror}") from None


def _export_path(path: object) -> Path:
    if not isinstance(path, str | PathLike) or (isinstance(path, str) and text_problem(path)):
        raise InvalidInputError(f"path must be a file path (a str or Path), got {path!r:.60}")
    return Path(path)


def _read_export(path: Path) -> tuple[dict[str, Any], builtins.list[SessionEvent]]:
    try:
        if not path.is_file():
            raise NotFoundError(f"no session export at {str(path)[:200]}")
        content = path.read_bytes()
    except OSError as error:  # a name too long, a folder that cannot be read
        raise InvalidInputError(f"cannot read a session export at {str(path)[:200]}: {error.strerror}") from None
    try:
        lines = [orjson.loads(line) for line in content.splitlines() if line.strip()]
    except orjson.JSONDecodeError as error:
        raise InvalidInputError(f"{path} is not a session export (not JSON lines: {error})") from None
    header = lines[0] if lines and isinstance(lines[0], dict) else {}
    if header.get("format") != EXPORT_FORMAT or header.get("version") != 1:
        raise InvalidInputError(f"{path} is not a mnemonite session export (format {EXPORT_FORMAT!r}, version 1)")
    if header.get("events") != len(lines) - 1:
        raise InvalidInputError(
            f"{path} was cut short or edited: {len(lines) - 1} events, the header says {header.get('events')}"
        )
    try:
        events = [SessionEvent.model_validate(line["event"]) for line in lines[1:]]
    except (KeyError, TypeError):
        raise InvalidInputError(f"{path} holds a line that is not an event") from None
    if any((e.user, e.session) != (header["user"], header["session"]) for e in events):
        raise InvalidInputError(f"{path} holds events of another session than its header says")
    return header, events


def _as_episode(message: Message) -> Episode:
    return Episode(
        id=message.id, content=message.content, timestamp=message.timestamp, source_node=message.agent or "",
        user=message.user, session=message.session, agent=message.agent,
        metadata={**_importance(message), "source": "session", "message_id": message.id, "role": message.role},
        sensitivity=message.sensitivity or "internal",
    )  # fmt: skip


def _importance(message: Message) -> dict[str, Any]:
    value = message.metadata.get("importance")
    return {"importance": value} if isinstance(value, int | float) and not isinstance(value, bool) else {}


def _limit(value: object) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise InvalidInputError(f"limit must be a positive integer, got {value!r}")
    return value
