"""``mnemonite blocks ...``: the working tier (define, write, append, patch, attach, detach, list, read, compile)."""

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
    text_argument,
)
from mnemonite.scope import DEFAULT_AGENT

blocks_app = typer.Typer(help="Working memory: size-limited blocks an agent keeps in its prompt.", no_args_is_help=True)
app.add_typer(blocks_app, name="blocks")

Label = Annotated[str, typer.Argument(help="The block's label (letters, digits, _ . -).")]
Value = Annotated[str, typer.Argument(help="Text; - reads standard input.")]


def _done(block: object, verb: str, as_json: bool) -> None:
    if not emit_one(block, as_json=as_json):
        label, size, limit = (getattr(block, name) for name in ("label", "value", "limit"))
        say(f"block [bold]{e(label)}[/] {verb} ({len(size)}/{limit} characters)")


@blocks_app.command("define")
def blocks_define(
    label: Label,
    user: UserOption,
    agent: AgentOption = DEFAULT_AGENT,
    value: Annotated[str, typer.Argument(help="Initial text; - reads standard input.")] = "",
    limit: Annotated[int, typer.Option(min=1, help="The most characters the block may hold.")] = 2_000,
    token_limit: Annotated[int | None, typer.Option(min=1, help="The most tokens the block may hold.")] = None,
    description: Annotated[str, typer.Option(help="What the block is for (shown in the prompt).")] = "",
    read_only: Annotated[bool, typer.Option("--read-only", help="Refuse every edit but a redefinition.")] = False,
    replace: Annotated[bool, typer.Option("--replace", help="Redefine the agent's block of that label.")] = False,
    sensitivity: SensitivityOption = None,
    as_json: JsonOption = False,
    db: DbOption = None,
) -> None:
    """Define a block of an agent (attached to it)."""
    with opened(db, create=True) as mem:
        block = mem.working.define(
            agent_scope(user, agent), label, text_argument(value) if value else "", limit=limit,
            token_limit=token_limit, description=description, read_only=read_only, replace=replace,
            sensitivity=chosen(sensitivity),
        )  # fmt: skip
    _done(block, "defined", as_json)


@blocks_app.command("write")
def blocks_write(label: Label, value: Value, user: UserOption, agent: AgentOption = DEFAULT_AGENT,
                 as_json: JsonOption = False, db: DbOption = None) -> None:  # fmt: skip
    """Replace a block's text."""
    with opened(db, create=False) as mem:
        block = mem.working.write(agent_scope(user, agent), label, text_argument(value))
    _done(block, "written", as_json)


@blocks_app.command("append")
def blocks_append(label: Label, text: Value, user: UserOption, agent: AgentOption = DEFAULT_AGENT,
                  as_json: JsonOption = False, db: DbOption = None) -> None:  # fmt: skip
    """Add text at the end of a block (on a new line)."""
    with opened(db, create=False) as mem:
        block = mem.working.append(agent_scope(user, agent), label, text_argument(text))
    _done(block, "appended to", as_json)


@blocks_app.command("patch")
def blocks_patch(
    label: Label,
    old: Annotated[str, typer.Argument(help="The exact text to replace (must occur once).")],
    new: Annotated[str, typer.Argument(help="Its replacement.")],
    user: UserOption,
    agent: AgentOption = DEFAULT_AGENT,
    as_json: JsonOption = False,
    db: DbOption = None,
) -> None:
    """Replace the one occurrence of OLD in a block by NEW."""
    with opened(db, create=False) as mem:
        block = mem.working.patch(agent_scope(user, agent), label, old, new)
    _done(block, "patched", as_json)


@blocks_app.command("attach")
def blocks_attach(
    label: Label,
    to: Annotated[str, typer.Argument(help="The agent (of the same user) to show the block to.")],
    user: UserOption,
    agent: AgentOption = DEFAULT_AGENT,
    as_json: JsonOption = False,
    db: DbOption = None,
) -> None:
    """Show an agent's block to another agent of the same user."""
    with opened(db, create=False) as mem:
        block = mem.working.attach(agent_scope(user, agent), label, to)
    if not emit_one(block, as_json=as_json):
        say(f"block [bold]{e(label)}[/] attached to {e(', '.join(block.agents))}")


@blocks_app.command("detach")
def blocks_detach(
    label: Label,
    user: UserOption,
    agent: AgentOption = DEFAULT_AGENT,
    frm: Annotated[str | None, typer.Option("--from", help="The agent to hide it from (default: the owner).")] = None,
    as_json: JsonOption = False,
    db: DbOption = None,
) -> None:
    """Hide an agent's block from an agent; the block stays."""
    with opened(db, create=False) as mem:
        block = mem.working.detach(agent_scope(user, agent), label, frm)
    if not emit_one(block, as_json=as_json):
        say(f"block [bold]{e(label)}[/] now attached to {e(', '.join(block.agents) or 'no agent')}")


@blocks_app.command("list")
def blocks_list(user: UserOption, agent: OptionalAgent = None, as_json: JsonOption = False, nl: NlOption = False,
                as_csv: CsvOption = False, db: DbOption = None) -> None:  # fmt: skip
    """The blocks an agent sees (every block of the user without --agent)."""
    from mnemonite.scope import Scope

    with opened(db, create=False) as mem:
        blocks = mem.working.list(Scope(user=user, agent=agent))
    if emit_rows(blocks, as_json=as_json, nl=nl, as_csv=as_csv):
        return
    rows = [
        (b.label, b.agent, ", ".join(b.agents), f"{len(b.value)}/{b.limit}", b.sensitivity, b.value) for b in blocks
    ]
    table(("label", "owner", "agents", "size", "sensitivity", "value"), rows)


@blocks_app.command("read")
def blocks_read(label: Label, user: UserOption, agent: AgentOption = DEFAULT_AGENT, as_json: JsonOption = False,
                db: DbOption = None) -> None:  # fmt: skip
    """One block's text."""
    with opened(db, create=False) as mem:
        block = mem.working.read(agent_scope(user, agent), label)
    if not emit_one(block, as_json=as_json):
        typer.echo(block.value)


@blocks_app.command("compile")
def blocks_compile(
    user: UserOption,
    agent: AgentOption = DEFAULT_AGENT,
    max_tokens: Annotated[int, typer.Option(min=1, help="The prompt budget in tokens.")] = 2_000,
    as_json: JsonOption = False,
    db: DbOption = None,
    reveal: Annotated[
        str | None,
        typer.Option(help="Why secret blocks may be shown; without it a secret block's value is a marker."),
    ] = None,
) -> None:
    """The agent's blocks rendered for a prompt, within the budget (secret blocks redacted unless --reveal)."""
    from mnemonite.privacy import Reveal

    shown = Reveal(reveal) if reveal is not None else None
    with opened(db, create=False) as mem:
        text = mem.working.compile(agent_scope(user, agent), max_tokens, reveal=shown)
    if not emit_one({"prompt": text}, as_json=as_json):
        typer.echo(text)
