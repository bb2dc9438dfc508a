"""``mnemonite rules ...``: register, list and remove consolidation rules."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from mnemonite.cli._app import app
from mnemonite.cli._common import (
    CsvOption,
    DbOption,
    JsonOption,
    NlOption,
    e,
    emit_one,
    emit_rows,
    minute,
    opened,
    say,
    table,
)

rules_app = typer.Typer(help="Register, list and remove consolidation rules.", no_args_is_help=True)
app.add_typer(rules_app, name="rules")


@rules_app.command("add")
def rules_add(
    rule_id: Annotated[str, typer.Argument(help="The rule's id: letters, digits, _ . : -")],
    every: Annotated[int | None, typer.Option(min=1, help="Fire after N new episodes (1 = streaming).")] = None,
    cron: Annotated[str | None, typer.Option(help='Fire on a cron schedule, e.g. "0 3 * * *" (UTC).')] = None,
    when: Annotated[str, typer.Option("--filter", help="when_filter, e.g. \"metadata.intent != 'noop'\".")] = "",
    emits: Annotated[list[str] | None, typer.Option("--emits", help="Fact channel (repeatable).")] = None,
    as_json: JsonOption = False,
    db: DbOption = None,
) -> None:
    """Register or redefine a rule (default cadence: nightly at 03:00 UTC)."""
    from mnemonite.models import ConsolidationRule

    if every is not None and cron is not None:
        raise typer.BadParameter("give --every or --cron, not both", param_hint="--every / --cron")
    cadence: dict[str, Any] = {"every": every} if every is not None else {"cron": cron or "0 3 * * *"}
    rule = ConsolidationRule(id=rule_id, cadence=cadence, when_filter=when, then_emits=emits or ["facts"])
    with opened(db, create=True) as mem:
        state = mem.add_rule(rule)
    if not emit_one(state, as_json=as_json):
        say(f"rule [bold]{e(state.rule.id)}[/] registered ({e(state.rule.cadence)})")


@rules_app.command("list")
def rules_list(
    as_json: JsonOption = False, nl: NlOption = False, as_csv: CsvOption = False, db: DbOption = None
) -> None:
    """Registered rules, their cadence and progress."""
    with opened(db, create=False) as mem:
        states = mem.rules()
    if emit_rows(states, as_json=as_json, nl=nl, as_csv=as_csv):
        return
    rows = [
        (s.rule.id, s.rule.cadence, s.rule.when_filter or "(all)", minute(s.last_run_at), minute(s.next_run_at()),
         s.episodes_since)
        for s in states
    ]  # fmt: skip
    table(("id", "cadence", "filter", "last run", "next run", "new episodes"), rows)


@rules_app.command("remove")
def rules_remove(
    rule_id: Annotated[str, typer.Argument(help="A rule id, or any unique prefix of one.")],
    as_json: JsonOption = False,
    db: DbOption = None,
) -> None:
    """Unregister a rule; the facts it promoted stay."""
    with opened(db, create=False) as mem:
        full = mem.resolve_id("rule", rule_id)
        mem.remove_rule(full)
    if not emit_one({"removed": full}, as_json=as_json):
        say(f"rule {e(full)} removed")
