"""``mnemonite graph ...``: entities, edges, walks and budgeted context."""

from __future__ import annotations

from enum import StrEnum
from typing import TYPE_CHECKING, Annotated

import typer

from mnemonite.cli._app import app
from mnemonite.cli._common import (
    AgentOption,
    CsvOption,
    DbOption,
    JsonOption,
    NlOption,
    UserOption,
    console,
    e,
    emit_one,
    emit_rows,
    metadata,
    opened,
    say,
    table,
)
from mnemonite.scope import DEFAULT_AGENT

if TYPE_CHECKING:
    from mnemonite.models.graph import Edge, Entity
    from mnemonite.sync import SyncMemory

graph_app = typer.Typer(help="Graph memory: entities, relations, walks, context for a prompt.", no_args_is_help=True)
app.add_typer(graph_app, name="graph")
EntityRef = Annotated[str, typer.Argument(help="An entity name, or an entity id or unique prefix of one.")]


class Direction(StrEnum):
    """Which edges a walk follows (`mnemonite.models.graph.Direction`)."""

    out = "out"
    in_ = "in"
    both = "both"


def _entity(mem: SyncMemory, user: str, agent: str, ref: str) -> Entity:
    """The entity named ``ref`` in the scope, else the one whose id is or starts with ``ref``."""
    from mnemonite.errors import NotFoundError
    from mnemonite.scope import Scope

    try:
        return mem.graph.entity(Scope(user=user, agent=agent), ref)
    except NotFoundError:
        try:
            return mem.graph.get_entity(mem.resolve_id("entity", ref))
        except NotFoundError:
            raise NotFoundError(f"no entity named {ref!r} (user {user!r}, agent {agent!r}), nor with that id") from None


@graph_app.command("add")
def add_entity(
    name: Annotated[str, typer.Argument(help="The entity's name (unique per user and agent).")],
    user: UserOption,
    entity_type: Annotated[str, typer.Option("--type", help="person, tool, project, ...")],
    agent: AgentOption = DEFAULT_AGENT,
    prop: Annotated[list[str] | None, typer.Option("--prop", help="Property key=value (repeatable).")] = None,
    as_json: JsonOption = False,
    db: DbOption = None,
) -> None:
    """Create an entity."""
    from mnemonite.scope import Scope

    properties = metadata(prop or [], "--prop")
    with opened(db, create=True) as mem:
        made = mem.graph.create_entity(
            Scope(user=user, agent=agent), name=name, entity_type=entity_type, properties=properties
        )
    if not emit_one(made, as_json=as_json):
        say(f"entity {e(made.id)} {e(made.name)} ({e(made.entity_type)})")


@graph_app.command("relate")
def relate(
    source: EntityRef,
    relation: Annotated[str, typer.Argument(help="Relation, e.g. WORKS_AT.")],
    target: EntityRef,
    user: UserOption,
    agent: AgentOption = DEFAULT_AGENT,
    as_json: JsonOption = False,
    db: DbOption = None,
) -> None:
    """Relate two entities (an existing edge is updated)."""
    from mnemonite.scope import Scope

    with opened(db, create=False) as mem:
        src, dst = _entity(mem, user, agent, source), _entity(mem, user, agent, target)
        edge = mem.graph.relate(Scope(user=user, agent=agent), source=src.id, target=dst.id, relation=relation)
    if not emit_one(edge, as_json=as_json):
        say(f"edge {e(edge.id)}: {e(src.name)} {e(edge.relation)} {e(dst.name)}")


@graph_app.command("unrelate")
def unrelate(
    source: EntityRef,
    relation: Annotated[str, typer.Argument(help="Relation, e.g. WORKS_AT.")],
    target: EntityRef,
    user: UserOption,
    agent: AgentOption = DEFAULT_AGENT,
    as_json: JsonOption = False,
    db: DbOption = None,
) -> None:
    """Remove the edge SOURCE RELATION TARGET."""
    with opened(db, create=False) as mem:
        src, dst = _entity(mem, user, agent, source), _entity(mem, user, agent, target)
        mem.graph.unrelate(source=src.id, target=dst.id, relation=relation)
    if not emit_one({"source": src.id, "relation": relation, "target": dst.id}, as_json=as_json):
        say(f"removed {e(src.name)} {e(relation)} {e(dst.name)}")


@graph_app.command("delete")
def delete(
    entity: EntityRef,
    user: UserOption,
    agent: AgentOption = DEFAULT_AGENT,
    as_json: JsonOption = False,
    db: DbOption = None,
) -> None:
    """Delete an entity and its edges; the facts that mention it stay."""
    with opened(db, create=False) as mem:
        found = _entity(mem, user, agent, entity)
        mem.graph.delete_entity(found.id)
    if not emit_one({"deleted": found.id}, as_json=as_json):
        say(f"deleted entity {e(found.id)} {e(found.name)}")


@graph_app.command("entities")
def entities(
    user: UserOption,
    agent: AgentOption = DEFAULT_AGENT,
    entity_type: Annotated[str | None, typer.Option("--type", help="Only entities of this type.")] = None,
    limit: Annotated[int, typer.Option(min=1, help="The most entities to print.")] = 100,
    offset: Annotated[int, typer.Option(min=0, help="Skip this many first (paging).")] = 0,
    as_json: JsonOption = False,
    nl: NlOption = False,
    as_csv: CsvOption = False,
    db: DbOption = None,
) -> None:
    """The entities of a user and agent, by name, a page at a time."""
    from mnemonite.scope import Scope

    with opened(db, create=False) as mem:
        found, total = mem.graph.entities(
            Scope(user=user, agent=agent), entity_type=entity_type, limit=limit, offset=offset
        )
    if emit_rows(found, as_json=as_json, nl=nl, as_csv=as_csv):
        return
    table(("id", "name", "type"), [(x.id, x.name, x.entity_type) for x in found])
    say(f"{offset + 1 if found else offset}-{offset + len(found)} of {total}")


@graph_app.command("neighbors")
def neighbors(
    entity: EntityRef,
    user: UserOption,
    agent: AgentOption = DEFAULT_AGENT,
    depth: Annotated[int, typer.Option(min=1, help="How many hops to walk.")] = 1,
    direction: Annotated[Direction, typer.Option(help="Which edges to follow.")] = Direction.both,
    relation: Annotated[str | None, typer.Option(help="Only edges of this relation.")] = None,
    limit: Annotated[int, typer.Option(min=1, help="The most edges to print.")] = 1000,
    ended: Annotated[
        bool, typer.Option("--ended", help="Edges that ended too (learned from a fact since replaced or forgotten).")
    ] = False,
    as_json: JsonOption = False,
    nl: NlOption = False,
    as_csv: CsvOption = False,
    db: DbOption = None,
) -> None:
    """The edges within DEPTH hops of an entity that hold, nearest first (``--ended``: those that ended too)."""
    from mnemonite.scope import Scope

    with opened(db, create=False) as mem:
        start = _entity(mem, user, agent, entity)
        edges = mem.graph.neighbors(
            start.id, relation=relation, direction=direction.value, depth=depth, limit=limit, ended=ended
        )
        if emit_rows(edges, as_json=as_json, nl=nl, as_csv=as_csv):
            return
        ends = {x.id: x.name for x in mem.graph.entities(Scope(user=user, agent=agent), limit=10_000)[0]}
    rows = [(edge.depth, ends.get(edge.source, edge.source), edge.relation, ends.get(edge.target, edge.target),
             _held(edge)) for edge in edges]  # fmt: skip
    table(("depth", "source", "relation", "target", "held"), rows)


def _held(edge: Edge) -> str:
    """When an edge holds: since its fact's world time, until that fact stopped being believed; "" if made by hand."""
    if edge.valid_from is None:  # made by hand (""), or said to have ended without a start
        return "" if edge.valid_to is None else f"until {edge.valid_to:%Y-%m-%d}"
    since = f"since {edge.valid_from:%Y-%m-%d}"
    return since if edge.valid_to is None else f"{edge.valid_from:%Y-%m-%d} → {edge.valid_to:%Y-%m-%d}"


@graph_app.command("context")
def context(
    entity: Annotated[str, typer.Argument(help="The entity's name.")],
    user: UserOption,
    agent: AgentOption = DEFAULT_AGENT,
    topic: Annotated[str | None, typer.Option(help="Full-text topic the memories should be about.")] = None,
    max_tokens: Annotated[int, typer.Option(min=1, help="The token budget.")] = 2000,
    as_json: JsonOption = False,
    db: DbOption = None,
) -> None:
    """What memory holds about an entity, within a token budget, formatted for a prompt."""
    from mnemonite.scope import Scope

    with opened(db, create=False) as mem:
        ctx = mem.graph.context_for(Scope(user=user, agent=agent), entity=entity, topic=topic, max_tokens=max_tokens)
    if not emit_one(ctx, as_json=as_json):
        console.print(ctx.format(), markup=False)


@graph_app.command("stats")
def stats(
    user: UserOption, agent: AgentOption = DEFAULT_AGENT, as_json: JsonOption = False, db: DbOption = None
) -> None:
    """Entity, edge, fact and token counts of a user's graph memory."""
    from mnemonite.scope import Scope

    with opened(db, create=False) as mem:
        found = mem.graph.stats(Scope(user=user, agent=agent))
    if not emit_one(found, as_json=as_json):
        table(("metric", "value"), list(found.model_dump().items()))


@graph_app.command("build")
def build(
    user: Annotated[
        str | None, typer.Option("--user", "-u", help="Only this user's facts (default: every user).")
    ] = None,
    agent: Annotated[str | None, typer.Option("--agent", "-a", help="With --user: only this agent's facts.")] = None,
    as_json: JsonOption = False,
    db: DbOption = None,
) -> None:
    """Build the graph from the facts a memory holds from before: the people, pets, places and organisations they
    name become entities, the relations they state edges. Resumable: run it again to read only what came since."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    from mnemonite.cli._common import err
    from mnemonite.scope import Scope

    if agent is not None and user is None:
        raise typer.BadParameter("--agent needs --user", param_hint="--agent")
    scope = Scope(user=user, agent=agent or DEFAULT_AGENT) if user is not None else None
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn())
    with opened(db, create=False) as mem, Progress(*columns, console=err, transient=True,
                                                   disable=not err.is_terminal) as bar:  # fmt: skip
        task = bar.add_task("reading facts", total=None)
        report = mem.graph.build(scope, progress=lambda done, total: bar.update(task, completed=done, total=total))
    if not emit_one(report, as_json=as_json):
        say(f"read {report.facts_read} fact(s) of {report.scopes} scope(s); {report.facts_linked} joined the graph:"
            f" {report.entities_made} new entities, {report.edges} edges")  # fmt: skip
