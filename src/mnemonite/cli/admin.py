"""The store as a whole: ``health``, ``migrate``, ``scan``, ``copy``, ``demo``, ``consolidate``."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from mnemonite.cli._app import app
from mnemonite.cli._common import (
    DbOption,
    JsonOption,
    console,
    e,
    emit_one,
    emit_rows,
    err,
    globals_,
    opened,
    progress_bar,
    say,
    table,
)
from mnemonite.cli.consolidator import PhaseName

if TYPE_CHECKING:
    from mnemonite.models import ConsolidationRun
    from mnemonite.sync import SyncMemory


@app.command()
def health(
    deep: Annotated[bool, typer.Option(help="Also run the integrity check (reads the whole file).")] = False,
    as_json: JsonOption = False,
    db: DbOption = None,
) -> None:
    """Counts, schema version, records waiting for a vector and (with --deep) integrity of the store."""
    with opened(db, create=False) as mem:
        report = mem.health(deep=deep)
    if not emit_one(report, as_json=as_json):
        table(("metric", "value"), list(report.model_dump().items()))
    if not report.ok:
        raise typer.Exit(code=1)


@app.command()
def migrate(
    plan_file: Annotated[Path, typer.Argument(help="A MigrationPlan as JSON.", exists=True, dir_okay=False)],
    as_json: JsonOption = False,
    db: DbOption = None,
) -> None:
    """Apply a schema migration plan (adding nullable columns only)."""
    from mnemonite.models import MigrationPlan

    plan = MigrationPlan.model_validate_json(plan_file.read_bytes())
    with opened(db, create=True) as mem:
        mem.migrate(plan)
    if not emit_one({"applied": str(plan_file)}, as_json=as_json):
        say(f"applied {e(plan_file)}")


def _table_progress() -> Any:
    """A rich bar per table (on a terminal), and the callback that drives them."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn

    columns = (TextColumn("{task.description:>16}"), BarColumn(), MofNCompleteColumn())
    progress = Progress(*columns, console=err, transient=True, disable=not err.is_terminal)
    tasks: dict[str, TaskID] = {}

    def step(name: str, done: int, total: int) -> None:
        if name not in tasks:
            tasks[name] = progress.add_task(name, total=total)
        progress.update(tasks[name], completed=done)

    return progress, step


def _url(db: str | None) -> str:
    from mnemonite.config import MemoryConfig

    return MemoryConfig.from_env(None, url=db or globals_().db).url


@app.command()
def scan(
    mask: Annotated[
        bool, typer.Option("--mask", help="Rewrite every row that holds one as a write would have stored it.")
    ] = False,
    as_json: JsonOption = False,
    db: DbOption = None,
) -> None:
    """Report the secrets nobody tagged that the memory holds in clear (card numbers, keys, passwords);
    --mask replaces each by [secret: kind] in place (audited; run it again to resume)."""
    progress, step = _table_progress()
    with opened(db, create=False) as mem, progress:
        report = mem.scan_secrets(mask=mask, progress=step)
    if emit_one(report, as_json=as_json):
        return
    if report.kinds:
        table(("kind", "values"), [(kind, n) for kind, n in Counter(report.kinds).most_common()])
        table(("table", "rows holding one"), sorted(report.rows.items()))
    found = sum(report.rows.values())
    if mask:
        say(f"read {report.read} rows; masked {report.masked} rows in place")
    elif found:
        say(f"read {report.read} rows; {found} hold secrets in clear: `mnemonite scan --mask` masks them in place")
    else:
        say(f"read {report.read} rows; no secret found in clear")


@app.command("export")
def export(
    file: Annotated[Path, typer.Argument(help="The JSON-lines file to write (replaced whole when done).")],
    as_json: JsonOption = False,
    db: DbOption = None,
    reveal: Annotated[
        str | None,
        typer.Option(help="Why secret text may be written (a backup); without it secret text is redacted."),
    ] = None,
) -> None:
    """Write the whole memory (every record, its history, the audit logs, vectors) to a JSON-lines file.

    Secret text is redacted unless --reveal gives a reason; only an unredacted export can be imported.
    """
    import asyncio

    from mnemonite.privacy import Reveal
    from mnemonite.transfer import export_memory

    shown = Reveal(reveal) if reveal is not None else None
    progress, step = _table_progress()
    with progress:
        report = asyncio.run(export_memory(_url(db), file, progress=step, reveal=shown))
    _transfer_summary(report, "exported", as_json)


@app.command("import")
def import_(
    file: Annotated[Path, typer.Argument(help="A file written by `mnemonite export`.")],
    as_json: JsonOption = False,
    db: DbOption = None,
) -> None:
    """Load an export into an empty memory (created if missing) after checking its counts and hash."""
    import asyncio

    from mnemonite.transfer import import_memory

    progress, step = _table_progress()
    with progress:
        report = asyncio.run(import_memory(file, _url(db), progress=step))
    _transfer_summary(report, "imported", as_json)


def _transfer_summary(report: Any, verb: str, as_json: bool) -> None:
    summary = {"file": str(report.path), "counts": report.counts, "sha256": report.sha256}
    if not emit_one(summary, as_json=as_json):
        table(("table", "rows"), [(name, n) for name, n in report.counts.items() if n])
        say(f"{verb} {sum(report.counts.values())} rows; sha256 {report.sha256}")


@app.command()
def copy(
    source: Annotated[str, typer.Argument(help="Memory to copy from: a SQLite path or a URL; it must exist.")],
    destination: Annotated[str, typer.Argument(help="An empty memory to copy into: a SQLite path or a URL.")],
    as_json: JsonOption = False,
) -> None:
    """Copy a whole memory into an empty one (another backend too), then verify every table's row count."""
    import asyncio

    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn

    from mnemonite.copy import copy_memory

    columns = (TextColumn("{task.description:>16}"), BarColumn(), MofNCompleteColumn())
    with Progress(*columns, console=err, transient=True, disable=not err.is_terminal) as progress:
        tasks: dict[str, TaskID] = {}

        def step(name: str, done: int, total: int) -> None:
            if name not in tasks:
                tasks[name] = progress.add_task(name, total=total)
            progress.update(tasks[name], completed=done)

        report = asyncio.run(copy_memory(source, destination, progress=step))
    summary = {"source": report.source, "destination": report.destination, "ok": report.ok}
    if not emit_one(summary, as_json=as_json):
        rows = [
            (n, c, report.destination[n], "ok" if report.destination[n] == c else "MISMATCH")
            for n, c in report.source.items()
        ]
        table(("table", "source rows", "copied rows", ""), rows)
    if not report.ok:
        err.print("error: row counts differ; the destination is incomplete", markup=False)
        raise typer.Exit(code=1)
    if not as_json:
        say(f"copied {sum(report.source.values())} rows; every table's count matches")


@app.command()
def demo(
    db: Annotated[
        str | None,
        typer.Option(
            "--db",
            help="SQLite path or URL to create, or a postgresql:// URL of a scratch database (also given before the"
            " command: mnemonite --db X demo). Default: mnemonite-demo.db.",
            show_default=False,
        ),
    ] = None,
    fresh: Annotated[
        bool,
        typer.Option(
            help="Start from nothing: delete the file, or every mnemonite table of the database; refused where it"
            " holds any user's records but the demo's."
        ),
    ] = False,
    as_json: Annotated[
        bool, typer.Option("--json", help="Tell the story on stderr; print the memory's URL as a JSON object.")
    ] = False,
) -> None:
    """Record a three-session conversation, consolidate it, and travel in time."""
    import asyncio

    from mnemonite.demo import DEMO_DB, NOT_A_MEMORY, other_users, run_demo
    from mnemonite.store import erase_memory, memory_file, memory_url

    db = db or globals_().db or DEMO_DB
    path = memory_file(db)
    if path is not None and path.exists() and not fresh:
        raise typer.BadParameter(f"{path} exists; pass --fresh to replace it or choose another --db", param_hint="--db")
    if fresh:
        others = asyncio.run(other_users(db))
        if others:
            what = (
                "is not a mnemonite memory"
                if others == [NOT_A_MEMORY]
                else f"holds other users' records ({', '.join(others)})"
            )
            raise typer.BadParameter(
                f"{memory_url(db)} {what}: --fresh deletes a demo's memory only; choose another --db",
                param_hint="--db",
            )
        asyncio.run(erase_memory(db))
    run_demo(memory_url(db), err if as_json else console)
    emit_one({"db": memory_url(db)}, as_json=as_json)


@app.command()
def consolidate(
    rule_id: Annotated[
        str | None, typer.Argument(help="Run this rule (an id or a unique prefix) now, until it has caught up.")
    ] = None,
    phase: Annotated[
        PhaseName | None,
        typer.Option(help="Run one phase of the background consolidator now (rule-based unless a model is set)."),
    ] = None,
    status: Annotated[
        bool, typer.Option("--status", help="Show the consolidator's tier, today's usage and the waiting jobs.")
    ] = False,
    watch: Annotated[
        bool, typer.Option("--watch", help="Run the consolidator's phases on their cadences until Ctrl-C.")
    ] = False,
    user: Annotated[str | None, typer.Option(help="With --phase: only this user's sessions.")] = None,
    poll: Annotated[float, typer.Option(min=0.1, help="With --watch: seconds between cadence checks.")] = 5.0,
    as_json: JsonOption = False,
    db: DbOption = None,
) -> None:
    """Run one rule now, or every registered rule whose cadence is due; or the background consolidator
    (--phase, --status, --watch)."""
    from mnemonite.cli import consolidator

    if sum([rule_id is not None, phase is not None, status, watch]) > 1:
        raise typer.BadParameter("give one of RULE_ID, --phase, --status, --watch", param_hint="--phase")
    if phase is not None:
        return consolidator.run_phase(db, phase, user, as_json)
    if status:
        return consolidator.show_status(db, as_json)
    if watch:
        return consolidator.watch(db, poll, as_json)
    with opened(db, create=False) as mem:
        runs = mem.run_due() if rule_id is None else _catch_up(mem, mem.resolve_id("rule", rule_id))
    if emit_rows(runs, as_json=as_json):
        return
    if not runs:
        say("no rule is due")
    for run in runs:
        _report(run)


def _report(run: ConsolidationRun) -> None:
    applied = [d for d in run.deltas if d.applied_at is not None]
    kinds = ", ".join(f"{k} {sum(1 for d in applied if d.kind == k)}" for k in ("add", "update", "delete", "noop"))
    scanned = f"{run.episodes_scanned} episode{'' if run.episodes_scanned == 1 else 's'}"
    say(f"rule [bold]{e(run.rule_id)}[/]: scanned {scanned}, applied {kinds}")
    for done in run.deltas:
        if done.rejected_at is not None:
            err.print(
                f"rejected {done.kind} from {done.delta.source_episode_ids}: {done.rejected_reason}", markup=False
            )


def _catch_up(mem: SyncMemory, rule_id: str) -> list[ConsolidationRun]:
    state = next((s for s in mem.rules() if s.rule.id == rule_id), None)
    total = state.episodes_since if state else 0
    merged: list[ConsolidationRun] = []
    with progress_bar("consolidating") as step:
        while True:
            run = mem.consolidate(rule_id)
            merged.append(run)
            step(sum(r.episodes_scanned for r in merged), total)
            if run.remaining == 0 or run.episodes_scanned == 0:
                break
    deltas = [d for run in merged for d in run.deltas]
    scanned = sum(run.episodes_scanned for run in merged)
    return [merged[-1].model_copy(update={"deltas": deltas, "episodes_scanned": scanned})]
