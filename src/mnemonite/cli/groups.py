"""``mnemonite groups ...``: the shared tier (groups, members, what they share)."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated

import typer

from mnemonite.cli._app import app
from mnemonite.cli._common import (
    AgentOption,
    CsvOption,
    DbOption,
    JsonOption,
    NlOption,
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

groups_app = typer.Typer(
    help="Shared memory: groups of agents and the facts and blocks they share.", no_args_is_help=True
)
app.add_typer(groups_app, name="groups")

GroupArgument = Annotated[str, typer.Argument(help="The group's name or id.")]
MemberUser = Annotated[str, typer.Option("--member-user", help="The member's user id.")]
MemberAgent = Annotated[str, typer.Option("--member-agent", help="The member's agent id.")]


class Kind(StrEnum):
    """The kinds of group (`mnemonite.models.shared.GroupKind`)."""

    household = "household"
    team = "team"
    org = "org"


def _members(group: object) -> str:
    return ", ".join(f"{m.user}/{m.agent}" + (" (owner)" if m.role == "owner" else "") for m in group.members)  # type: ignore[attr-defined]


@groups_app.command("create")
def groups_create(
    name: Annotated[str, typer.Argument(help="The group's name (unique per user).")],
    user: UserOption,
    agent: AgentOption = DEFAULT_AGENT,
    kind: Annotated[Kind, typer.Option(help="household, team or org.")] = Kind.team,
    as_json: JsonOption = False,
    db: DbOption = None,
) -> None:
    """Create a group owned by an agent."""
    with opened(db, create=True) as mem:
        group = mem.shared.create(agent_scope(user, agent), name, kind=kind.value)
    if not emit_one(group, as_json=as_json):
        say(f"group [bold]{e(group.name)}[/] created ({e(group.id)})")


@groups_app.command("add-member")
def groups_add_member(group: GroupArgument, user: UserOption, member_user: MemberUser, member_agent: MemberAgent,
                      agent: AgentOption = DEFAULT_AGENT, as_json: JsonOption = False,
                      db: DbOption = None) -> None:  # fmt: skip
    """Add a (user, agent) to a group the agent owns."""
    with opened(db, create=False) as mem:
        updated = mem.shared.add_member(agent_scope(user, agent), group, agent_scope(member_user, member_agent))
    if not emit_one(updated, as_json=as_json):
        say(f"group {e(updated.name)}: {e(_members(updated))}")


@groups_app.command("remove-member")
def groups_remove_member(
    group: GroupArgument,
    user: UserOption,
    member_user: MemberUser,
    member_agent: MemberAgent,
    agent: AgentOption = DEFAULT_AGENT,
    as_json: JsonOption = False,
    db: DbOption = None,
) -> None:
    """Remove a (user, agent) from a group the agent owns."""
    with opened(db, create=False) as mem:
        updated = mem.shared.remove_member(agent_scope(user, agent), group, agent_scope(member_user, member_agent))
    if not emit_one(updated, as_json=as_json):
        say(f"group {e(updated.name)}: {e(_members(updated))}")


@groups_app.command("list")
def groups_list(user: UserOption, agent: AgentOption = DEFAULT_AGENT, as_json: JsonOption = False, nl: NlOption = False,
                as_csv: CsvOption = False, db: DbOption = None) -> None:  # fmt: skip
    """The groups an agent is a member of."""
    with opened(db, create=False) as mem:
        groups = mem.shared.groups(agent_scope(user, agent))
    if emit_rows(groups, as_json=as_json, nl=nl, as_csv=as_csv):
        return
    table(("name", "kind", "id", "members"), [(g.name, g.kind, g.id, _members(g)) for g in groups])


@groups_app.command("share")
def groups_share(
    group: GroupArgument,
    user: UserOption,
    agent: AgentOption = DEFAULT_AGENT,
    fact: Annotated[str | None, typer.Option("--fact", help="The id of one of the agent's facts.")] = None,
    block: Annotated[str | None, typer.Option("--block", help="The label of a block the agent sees.")] = None,
    sensitivity: SensitivityOption = None,
    as_json: JsonOption = False,
    db: DbOption = None,
) -> None:
    """Share a fact or a block with a group the agent is a member of."""
    level = chosen(sensitivity)
    with opened(db, create=False) as mem:
        fact_id = mem.resolve_id("fact", fact) if fact is not None else None
        item = mem.shared.attach(agent_scope(user, agent), group, fact_id=fact_id, block=block, sensitivity=level)
    if not emit_one(item, as_json=as_json):
        say(f"shared {item.kind} {e(item.item_id)} with {e(item.group)} ({e(item.id)})")


@groups_app.command("unshare")
def groups_unshare(
    group: GroupArgument,
    item: Annotated[str, typer.Argument(help="The shared fact's or block's id, or the share's id.")],
    user: UserOption,
    agent: AgentOption = DEFAULT_AGENT,
    as_json: JsonOption = False,
    db: DbOption = None,
) -> None:
    """Stop sharing a fact or block with a group."""
    with opened(db, create=False) as mem:
        removed = mem.shared.detach(agent_scope(user, agent), group, item)
    if not emit_one(removed, as_json=as_json):
        say(f"{removed.kind} {e(removed.item_id)} no longer shared with {e(removed.group)}")


@groups_app.command("shared")
def groups_shared(user: UserOption, agent: AgentOption = DEFAULT_AGENT, as_json: JsonOption = False,
                  nl: NlOption = False, as_csv: CsvOption = False, db: DbOption = None) -> None:  # fmt: skip
    """What the agent's groups share with it."""
    with opened(db, create=False) as mem:
        items = mem.shared.list_for(agent_scope(user, agent))
    if emit_rows(items, as_json=as_json, nl=nl, as_csv=as_csv):
        return
    rows = [
        (
            i.group,
            i.kind,
            f"{i.shared_by.user}/{i.shared_by.agent}",
            i.fact.text if i.fact else i.block.value if i.block else "",
        )
        for i in items
    ]
    table(("group", "kind", "by", "text"), rows)
