"""``mnemonite concepts ...``: a user's concept graph of an agent (its concepts, its versions) and graph queries."""

from __future__ import annotations

from typing import Annotated

import typer

from mnemonite.cli._app import app
from mnemonite.cli._common import (
    AgentOption,
    CsvOption,
    DbOption,
    JsonOption,
    NlOption,
    UserOption,
    e,
    emit_one,
    emit_rows,
    opened,
    say,
    table,
)
from mnemonite.scope import DEFAULT_AGENT, Scope

concepts_app = typer.Typer(
    help="The concept graph: a user's concepts learned by an agent, its versions, graph queries.", no_args_is_help=True
)
app.add_typer(concepts_app, name="concepts")
Limit = Annotated[int, typer.Option("--limit", min=1, help="How many rows at most.")]


@concepts_app.command("show")
def show(
    user: UserOption,
    agent: AgentOption = DEFAULT_AGENT,
    limit: Limit = 100,
    as_json: JsonOption = False,
    nl: NlOption = False,
    as_csv: CsvOption = False,
    db: DbOption = None,
) -> None:
    """The user's concepts of the agent: schematic (core) ones first, then by frequency."""
    with opened(db, create=False, embedder="none") as mem:
        graph = mem.concepts.load_graph(Scope(user=user, agent=agent))
    nodes = sorted(graph.nodes.values(), key=lambda n: (n.category != "schematic", -n.frequency, n.label))[:limit]
    rows = [
        {"id": n.id, "label": n.label, "category": n.category, "frequency": n.frequency,
         "records": len(n.sources), "text": n.description}
        for n in nodes
    ]  # fmt: skip
    if emit_rows(rows, as_json=as_json, nl=nl, as_csv=as_csv):
        return
    say(
        f"user {e(user)}, agent {e(agent)}: version {graph.version}, {len(graph.nodes)} concepts,"
        f" {len(graph.edges)} edges"
    )
    table(("id", "label", "category", "frequency", "records", "text"), [tuple(r.values()) for r in rows])


@concepts_app.command("version")
def version(
    user: UserOption,
    agent: AgentOption = DEFAULT_AGENT,
    limit: Limit = 20,
    as_json: JsonOption = False,
    nl: NlOption = False,
    as_csv: CsvOption = False,
    db: DbOption = None,
) -> None:
    """The (user, agent) graph versions, newest first: what each consolidation added and merged."""
    with opened(db, create=False, embedder="none") as mem:
        versions = mem.concepts.versions(Scope(user=user, agent=agent), limit=limit)
    if emit_rows(versions, as_json=as_json, nl=nl, as_csv=as_csv):
        return
    say(f"user {e(user)}, agent {e(agent)}: version {versions[0].version if versions else 0}")
    rows = [
        (v.version, v.at.isoformat(timespec="seconds"), v.session or "-", v.events,
         "-" if v.shift_distance is None else f"{v.shift_distance:.3f}", len(v.nodes_added), len(v.nodes_merged),
         v.edges_added)
        for v in versions
    ]  # fmt: skip
    table(("version", "at", "session", "events", "shift", "added", "merged", "new edges"), rows)


@concepts_app.command("query")
def query(
    question: Annotated[str, typer.Argument(help="The question.")],
    user: UserOption,
    agent: AgentOption = DEFAULT_AGENT,
    k: Annotated[int, typer.Option("-k", min=1, help="How many concepts.")] = 5,
    as_json: JsonOption = False,
    db: DbOption = None,
) -> None:
    """The concepts of the (user, agent) graph that bear on a question, as prompt context."""
    with opened(db, create=False) as mem:
        result = mem.concepts.query(Scope(user=user, agent=agent), question, k)
        text = mem.concepts.format_as_context(result)
    if not emit_one(result, as_json=as_json):
        say(e(text) if text else f"user {e(user)} has no concept of agent {e(agent)} close to that question")
