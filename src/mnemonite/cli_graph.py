"""`mnemonite graph ...`: entities, edges, walks and budgeted context from the command line."""

from __future__ import annotations

from typing import Annotated, Literal

import typer

from mnemonite.cli import DbOption, JsonOption, UserOption, _memory, _metadata, _print_json, console
from mnemonite.scope import Scope

graph_app = typer.Typer(help="Graph memory: entities, relations, walks, context for a prompt.", no_args_is_help=True)
AgentOption = Annotated[str, typer.Option("--agent", "-a", help="Agent id.")]


@graph_app.command("add")
def add_entity(
    name: str,
    user: UserOption,
    agent: AgentOption,
    entity_type: Annotated[str, typer.Option("--type", help="person, tool, project, ...")],
    prop: Annotated[list[str], typer.Option("--prop", help="key=value (repeatable)")] = [],  # noqa: B006
    db: DbOption = None,
) -> None:
    """Create an entity (names are unique per user and agent)."""
    with _memory(db) as mem:
        made = mem.graph.create_entity(
            Scope(user=user, agent=agent), name=name, entity_type=entity_type, properties=_metadata(prop)
        )
        console.print(f"entity {made.id} {made.name} ({made.entity_type})")


@graph_app.command("relate")
def relate(
    source: Annotated[str, typer.Argument(help="Source entity name.")],
    relation: Annotated[str, typer.Argument(help="Relation, e.g. WORKS_AT.")],
    target: Annotated[str, typer.Argument(help="Target entity name.")],
    user: UserOption,
    agent: AgentOption,
    db: DbOption = None,
) -> None:
    """Relate two entities by name (an existing edge is updated)."""
    scope = Scope(user=user, agent=agent)
    with _memory(db) as mem:
        src, dst = mem.graph.entity(scope, source), mem.graph.entity(scope, target)
        edge = mem.graph.relate(scope, source=src.id, target=dst.id, relation=relation)
        console.print(f"edge {edge.id}: {src.name} {edge.relation} {dst.name}")


@graph_app.command("neighbors")
def neighbors(
    name: str,
    user: UserOption,
    agent: AgentOption,
    depth: Annotated[int, typer.Option(min=1)] = 1,
    direction: Annotated[str, typer.Option(help="out, in or both")] = "both",
    relation: Annotated[str | None, typer.Option()] = None,
    limit: Annotated[int, typer.Option(min=1)] = 1000,
    json: JsonOption = False,
    db: DbOption = None,
) -> None:
    """The edges within DEPTH hops of an entity, nearest first."""
    scope = Scope(user=user, agent=agent)
    with _memory(db) as mem:
        start = mem.graph.entity(scope, name)
        edges = mem.graph.neighbors(
            start.id, relation=relation, direction=_direction(direction), depth=depth, limit=limit
        )
        if json:
            _print_json(edges)
            return
        ends = {e.id: e.name for e in mem.graph.entities(scope, limit=10_000)[0]} if edges else {}
        for edge in edges:
            source, target = ends.get(edge.source, edge.source), ends.get(edge.target, edge.target)
            console.print(f"{edge.depth}  {source} {edge.relation} {target}", highlight=False)


@graph_app.command("context")
def context(
    name: str,
    user: UserOption,
    agent: AgentOption,
    topic: Annotated[str | None, typer.Option(help="Full-text topic the memories should be about.")] = None,
    max_tokens: Annotated[int, typer.Option(min=1)] = 2000,
    db: DbOption = None,
) -> None:
    """What memory holds about an entity, within a token budget, formatted for a prompt."""
    with _memory(db) as mem:
        ctx = mem.graph.context_for(Scope(user=user, agent=agent), entity=name, topic=topic, max_tokens=max_tokens)
        console.print(ctx.format(), highlight=False, markup=False)


@graph_app.command("stats")
def stats(user: UserOption, agent: AgentOption, db: DbOption = None) -> None:
    """Entity, edge, fact and token counts of a user's graph memory."""
    with _memory(db) as mem:
        console.print_json(mem.graph.stats(Scope(user=user, agent=agent)).model_dump_json())


def _direction(text: str) -> Literal["out", "in", "both"]:
    if text not in ("out", "in", "both"):
        raise typer.BadParameter(f"--direction is out, in or both, got {text!r}")
    return text  # type: ignore[return-value]  # checked above
