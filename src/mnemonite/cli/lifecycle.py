"""``mnemonite lifecycle ...``: the records' hot / warm / cold tiers."""

from __future__ import annotations

from typing import Annotated

import typer

from mnemonite.cli._app import app
from mnemonite.cli._common import DbOption, JsonOption, UserOption, e, emit_one, opened, say

lifecycle_app = typer.Typer(help="Hot / warm / cold tiers: demote what went stale, count.", no_args_is_help=True)
app.add_typer(lifecycle_app, name="lifecycle")


@lifecycle_app.command("sweep")
def sweep(
    user: Annotated[str | None, typer.Option("--user", "-u", help="User id (default: every user).")] = None,
    as_json: JsonOption = False,
    db: DbOption = None,
) -> None:
    """Demote HOT records not accessed for an hour to WARM, and WARM ones not accessed for 7 days to COLD."""
    with opened(db, create=False, embedder="none") as mem:
        report = mem.lifecycle.sweep(user)
    if not emit_one(report, as_json=as_json):
        say(f"hot -> warm: {report.hot_to_warm}, warm -> cold: {report.warm_to_cold}")


@lifecycle_app.command("stats")
def stats(user: UserOption, as_json: JsonOption = False, db: DbOption = None) -> None:
    """How many of a user's records are hot, warm and cold (never accessed: cold)."""
    with opened(db, create=False, embedder="none") as mem:
        counts = mem.lifecycle.stats(user)
    if not emit_one(counts, as_json=as_json):
        say(f"{e(user)}: hot {counts.hot}, warm {counts.warm}, cold {counts.cold} ({counts.total} records)")
