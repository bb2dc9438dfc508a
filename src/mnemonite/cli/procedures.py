"""``mnemonite procedures ...``: the procedural tier (define, remove, list, activate)."""

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
    OptionalAgent,
    SensitivityOption,
    UserOption,
    agent_scope,
    chosen,
    e,
    emit_one,
    emit_rows,
    opened,
    say,
    table,
)
from mnemonite.scope import DEFAULT_AGENT

procedures_app = typer.Typer(help="Procedural memory: named workflows matched to a task.", no_args_is_help=True)
app.add_typer(procedures_app, name="procedures")

Name = Annotated[str, typer.Argument(help="The procedure's name (unique per agent).")]


@procedures_app.command("define")
def procedures_define(
    name: Name,
    user: UserOption,
    step: Annotated[list[str], typer.Option("--step", help="One step, in order (repeatable).")],
    agent: AgentOption = DEFAULT_AGENT,
    trigger: Annotated[str, typer.Option(help="When the procedure applies.")] = "",
    sensitivity: SensitivityOption = None,
    as_json: JsonOption = False,
    db: DbOption = None,
) -> None:
    """Define (or redefine) a procedure of an agent."""
    level = chosen(sensitivity)
    with opened(db, create=True) as mem:
        procedure = mem.procedural.define(agent_scope(user, agent), name, step, trigger=trigger, sensitivity=level)
    if not emit_one(procedure, as_json=as_json):
        say(f"procedure [bold]{e(procedure.name)}[/] defined ({len(procedure.steps)} steps)")


@procedures_app.command("remove")
def procedures_remove(name: Name, user: UserOption, agent: AgentOption = DEFAULT_AGENT, as_json: JsonOption = False,
                      db: DbOption = None) -> None:  # fmt: skip
    """Remove a procedure of an agent."""
    with opened(db, create=False) as mem:
        procedure = mem.procedural.remove(agent_scope(user, agent), name)
    if not emit_one(procedure, as_json=as_json):
        say(f"procedure {e(procedure.name)} removed")


@procedures_app.command("list")
def procedures_list(user: UserOption, agent: OptionalAgent = None, as_json: JsonOption = False, nl: NlOption = False,
                    as_csv: CsvOption = False, db: DbOption = None) -> None:  # fmt: skip
    """The procedures of an agent (of every agent without --agent)."""
    from mnemonite.scope import Scope

    with opened(db, create=False) as mem:
        procedures = mem.procedural.list(Scope(user=user, agent=agent))
    if emit_rows(procedures, as_json=as_json, nl=nl, as_csv=as_csv):
        return
    table(("name", "agent", "trigger", "text"), [(p.name, p.agent, p.trigger, " / ".join(p.steps)) for p in procedures])


@procedures_app.command("activate")
def procedures_activate(
    task: Annotated[str, typer.Argument(help="The task at hand.")],
    user: UserOption,
    agent: AgentOption = DEFAULT_AGENT,
    k: Annotated[int, typer.Option("-k", min=1, help="The most procedures to return.")] = 3,
    as_json: JsonOption = False,
    nl: NlOption = False,
    as_csv: CsvOption = False,
    db: DbOption = None,
) -> None:
    """The agent's procedures that best match a task, best first."""
    with opened(db, create=False) as mem:
        matches = mem.procedural.activate(agent_scope(user, agent), task, k)
    if emit_rows(matches, as_json=as_json, nl=nl, as_csv=as_csv):
        return
    rows = [(f"{m.score:.4f}", m.procedure.name, " / ".join(m.procedure.steps)) for m in matches]
    table(("score", "name", "text"), rows)
