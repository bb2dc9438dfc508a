"""``mnemonite session ...``: the session tier's message log (push, list, search, flush, compact, export, replay)."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from mnemonite.cli._app import app
from mnemonite.cli._common import (
    CsvOption,
    DbOption,
    JsonOption,
    LimitOption,
    NlOption,
    OptionalAgent,
    OptionalSession,
    SensitivityOption,
    UserOption,
    chosen,
    e,
    emit_one,
    emit_rows,
    opened,
    say,
    table,
    text_argument,
)

session_app = typer.Typer(help="Sessions: the rolling message log, its export and replay.", no_args_is_help=True)
app.add_typer(session_app, name="session")

SessionOption = Annotated[str, typer.Option("--session", "-s", help="Session id.")]


class Role(StrEnum):
    """Who speaks (`mnemonite.models.messages.Role`)."""

    user = "user"
    assistant = "assistant"
    system = "system"
    tool = "tool"


@session_app.command("push")
def session_push(
    content: Annotated[str, typer.Argument(help="The message; - reads standard input.")],
    user: UserOption,
    session: SessionOption,
    agent: Annotated[str, typer.Option("--agent", "-a", help="The agent who said it or was spoken to.")],
    role: Annotated[Role, typer.Option(help="user, assistant, system or tool.")] = Role.user,
    important: Annotated[bool, typer.Option("--important", help="Mark it for flush_important.")] = False,
    sensitivity: SensitivityOption = None,
    as_json: JsonOption = False,
    db: DbOption = None,
) -> None:
    """Append a message to a session."""
    from mnemonite.models.messages import Message
    from mnemonite.scope import Scope

    message = Message(
        role.value, text_argument(content), agent=agent, important=important,
        sensitivity=chosen(sensitivity),
    )  # fmt: skip
    with opened(db, create=True) as mem:
        stored = mem.session.push(Scope(user=user, session=session, agent=agent), message)
    if not emit_one(stored, as_json=as_json):
        say(f"pushed message [bold]{e(stored.id)}[/]")


@session_app.command("list")
def session_list(
    user: UserOption,
    session: OptionalSession = None,
    agent: OptionalAgent = None,
    limit: LimitOption = 50,
    compacted: Annotated[bool, typer.Option("--compacted", help="Include turns replaced by a summary.")] = False,
    as_json: JsonOption = False,
    nl: NlOption = False,
    as_csv: CsvOption = False,
    db: DbOption = None,
) -> None:
    """The newest messages in time order; leave out --session (or --agent) to widen."""
    from mnemonite.scope import Scope

    with opened(db, create=False) as mem:
        messages = mem.session.list(Scope(user=user, session=session, agent=agent), limit=limit, compacted=compacted)
    if emit_rows(messages, as_json=as_json, nl=nl, as_csv=as_csv):
        return
    rows = [(f"{m.timestamp:%Y-%m-%d %H:%M:%S}", m.session, m.agent, m.role, m.content) for m in messages]
    table(("time", "session", "agent", "role", "content"), rows)


@session_app.command("search")
def session_search(
    query: Annotated[str, typer.Argument(help="Words to look for.")],
    user: UserOption,
    session: OptionalSession = None,
    agent: OptionalAgent = None,
    k: Annotated[int, typer.Option("-k", min=1, help="The most messages to return.")] = 10,
    as_json: JsonOption = False,
    nl: NlOption = False,
    as_csv: CsvOption = False,
    db: DbOption = None,
) -> None:
    """Full-text search over the messages, best first."""
    from mnemonite.scope import Scope

    with opened(db, create=False) as mem:
        hits = mem.session.search(Scope(user=user, session=session, agent=agent), query, k)
    if emit_rows(hits, as_json=as_json, nl=nl, as_csv=as_csv):
        return
    table(("score", "session", "agent", "content"), [(f"{h.score:.3f}", h.message.session, h.message.agent,
                                                       h.message.content) for h in hits])  # fmt: skip


@session_app.command("export")
def session_export(
    path: Annotated[Path, typer.Argument(help="The JSON-lines file to write.")],
    user: UserOption,
    session: SessionOption,
    as_json: JsonOption = False,
    db: DbOption = None,
    reveal: Annotated[
        str | None,
        typer.Option(help="Why secret events may be written whole (to replay); without it they are redacted."),
    ] = None,
) -> None:
    """Write a session's events (messages, tool calls, memory reads and writes) as JSON lines.

    Secret events are redacted unless --reveal gives a reason; only an unredacted export can be replayed.
    """
    from mnemonite.privacy import Reveal
    from mnemonite.scope import Scope

    shown = Reveal(reveal) if reveal is not None else None
    with opened(db, create=False) as mem:
        count = mem.session.export(Scope(user=user, session=session), path, reveal=shown)
    if not emit_one({"path": str(path), "events": count}, as_json=as_json):
        say(f"exported {count} events to {e(path)}")


@session_app.command("replay")
def session_replay(
    path: Annotated[Path, typer.Argument(help="A file written by 'mnemonite session export'.")],
    as_json: JsonOption = False,
    db: DbOption = None,
) -> None:
    """Load an exported session into a memory that does not hold it yet, reproducing its state."""
    with opened(db, create=True) as mem:
        count = mem.session.replay(path)
    if not emit_one({"path": str(path), "events": count}, as_json=as_json):
        say(f"replayed {count} events from {e(path)}")


@session_app.command("flush")
def session_flush(
    user: UserOption,
    session: SessionOption,
    min_importance: Annotated[
        float, typer.Option(min=0, max=1, help="The importance that makes a turn salient.")
    ] = 0.7,
    as_json: JsonOption = False,
    db: DbOption = None,
) -> None:
    """Promote a session's marked or salient messages to episodes (once each)."""
    from mnemonite.scope import Scope

    with opened(db, create=False) as mem:
        episodes = mem.session.flush_important(Scope(user=user, session=session), min_importance=min_importance)
    if not emit_one({"episodes": [x.id for x in episodes]}, as_json=as_json):
        say(f"{len(episodes)} messages promoted to episodes")


@session_app.command("compact")
def session_compact(
    user: UserOption,
    session: SessionOption,
    keep_last: Annotated[int, typer.Option(min=0, help="How many of the newest turns stay as they are.")] = 10,
    max_lines: Annotated[int, typer.Option(min=1, help="The most sentences in the summary.")] = 8,
    as_json: JsonOption = False,
    db: DbOption = None,
) -> None:
    """Replace a session's older turns by an attributed summary (the turns stay in the export)."""
    from mnemonite.scope import Scope

    with opened(db, create=False) as mem:
        summary = mem.session.compact(Scope(user=user, session=session), keep_last=keep_last, max_lines=max_lines)
    if not emit_one(summary, as_json=as_json):
        typer.echo(summary.content if summary is not None else "nothing older to compact")
