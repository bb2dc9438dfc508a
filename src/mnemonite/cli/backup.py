"""Backups: ``mnemonite backup OUT`` and ``mnemonite restore IN``."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from mnemonite.cli._app import app
from mnemonite.cli._common import DbOption, JsonOption, e, emit_one, opened, say, table
from mnemonite.cli.admin import _table_progress, _url

if TYPE_CHECKING:
    from mnemonite.backup import BackupReport


@app.command()
def backup(
    file: Annotated[Path, typer.Argument(help="The backup file to write (replaced whole when done).")],
    as_json: JsonOption = False,
    db: DbOption = None,
) -> None:
    """Write a consistent backup of the memory while other processes keep writing (SQLite: a database file)."""
    progress, step = _table_progress()
    with progress, opened(db, create=False, embedder="none") as mem:
        report = mem.backup(file, progress=step)
    _summary(report, "backed up", as_json)


@app.command()
def restore(
    file: Annotated[Path, typer.Argument(help="A file written by `mnemonite backup` (or `mnemonite export`).")],
    as_json: JsonOption = False,
    db: DbOption = None,
) -> None:
    """Load a backup into an empty memory (created if missing) and check every table's content hash."""
    import asyncio

    from mnemonite.backup import restore_memory

    progress, step = _table_progress()
    with progress:
        report = asyncio.run(restore_memory(file, _url(db), progress=step))
    _summary(report, f"restored into {e(_url(db))} from", as_json)


def _summary(report: BackupReport, verb: str, as_json: bool) -> None:
    summary = {"file": str(report.path), "format": report.format, "counts": report.counts, "hashes": report.hashes}
    if not emit_one(summary, as_json=as_json):
        table(("table", "rows", "sha256"), [(name, n, report.hashes[name][:16]) for name, n in report.counts.items()])
        say(f"{verb} {sum(report.counts.values())} rows ({report.format}): {e(report.path)}")
