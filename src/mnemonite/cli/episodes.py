"""Episodes: ``record``, ``recent`` and ``purge-episodes`` (the episodic tier)."""

from __future__ import annotations

from typing import Annotated, Any

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
    UserOption,
    e,
    emit_one,
    emit_rows,
    metadata,
    opened,
    resolve,
    say,
    table,
    text_argument,
    when,
)


@app.command()
def record(
    content: Annotated[str, typer.Argument(help="What happened: a message, an observation; - reads standard input.")],
    user: UserOption,
    session: Annotated[str, typer.Option("--session", "-s", help="Session id.")],
    agent: Annotated[str, typer.Option("--agent", "-a", help="Agent id.")],
    episode_id: Annotated[str | None, typer.Option("--id", help="Episode id (default: random).")] = None,
    timestamp: Annotated[str | None, typer.Option(help="ISO 8601 time with timezone (default: now).")] = None,
    meta: Annotated[list[str] | None, typer.Option("--meta", help="Metadata key=value (value may be JSON).")] = None,
    source_node: Annotated[str, typer.Option(help="Originating node id.")] = "",
    as_json: JsonOption = False,
    db: DbOption = None,
) -> None:
    """Record one episode under (user, session, agent)."""
    from mnemonite.models import Episode

    fields: dict[str, Any] = {"content": text_argument(content), "metadata": metadata(meta or [])}
    fields |= {"source_node": source_node, "timestamp": when(timestamp, "--timestamp")}
    if episode_id:
        fields["id"] = episode_id
    with opened(db, create=True) as mem:
        episode = mem.episodic.put(
            Episode(**{k: v for k, v in fields.items() if v is not None}), user=user, session=session, agent=agent
        )
    if not emit_one(episode, as_json=as_json):
        say(f"recorded episode [bold]{e(episode.id)}[/]")


@app.command()
def recent(
    user: UserOption,
    session: OptionalSession = None,
    agent: OptionalAgent = None,
    limit: LimitOption = 10,
    as_json: JsonOption = False,
    nl: NlOption = False,
    as_csv: CsvOption = False,
    db: DbOption = None,
) -> None:
    """The newest episodes; leave out --session (and --agent) to widen."""
    with opened(db, create=False) as mem:
        episodes = mem.episodic.recent(user, session, agent, limit=limit)
    if emit_rows(episodes, as_json=as_json, nl=nl, as_csv=as_csv):
        return
    rows = [(f"{x.timestamp:%Y-%m-%d %H:%M:%S}", x.session, x.agent, x.id, x.content) for x in episodes]
    table(("time", "session", "agent", "id", "content"), rows)


@app.command("purge-episodes")
def purge_episodes(
    episode_id: Annotated[
        str | None, typer.Argument(help="The episode (id or unique prefix); leave out to purge a whole scope.")
    ] = None,
    reason: Annotated[str, typer.Option(help="Why (kept in the audit log), e.g. 'GDPR erasure request'.")] = "",
    user: Annotated[str | None, typer.Option("--user", "-u", help="Purge everything this user said.")] = None,
    session: OptionalSession = None,
    agent: OptionalAgent = None,
    derived: Annotated[
        bool, typer.Option("--derived", help="Also purge the facts promoted from these episodes (default: keep them).")
    ] = False,
    as_json: JsonOption = False,
    db: DbOption = None,
) -> None:
    """Remove episodes for good (privacy requests) and name the facts derived from them; audited."""
    from mnemonite.scope import Scope

    if (episode_id is None) == (user is None):
        raise typer.BadParameter("give an EPISODE_ID or --user (with --session/--agent to narrow), not both")
    if not reason.strip():
        raise typer.BadParameter("--reason is required: it is kept in the audit log")
    with opened(db, create=False) as mem:
        if episode_id is not None:
            done = mem.episodic.purge(resolve(mem, "episode", episode_id), reason=reason, derived=derived)
        else:
            assert user is not None
            scope = Scope(user=user, session=session, agent=agent)
            done = mem.episodic.purge_scope(scope, reason=reason, derived=derived)
    if emit_one(done, as_json=as_json):
        return
    say(f"purged {len(done.episode_ids)} episode(s): {e(', '.join(done.episode_ids))}")
    if done.derived_fact_ids and derived:
        say(f"facts derived from them, purged: {e(', '.join(done.derived_fact_ids))}")
    elif done.derived_fact_ids:  # the episodes are gone: --derived would find none now, each fact is purged by id
        say(f"facts derived from them, kept: {e(', '.join(done.derived_fact_ids))}")
        say("to remove one too: mnemonite purge FACT_ID --reason '...' (next time, --derived purges them together)")
