"""The ``mnemonite`` command line: a thin shell over `SyncMemory`, one module per command group.

Every command takes ``--db`` (a SQLite path or a URL; also given before the command, default
``$MNEMONITE_URL``, else ``./mnemonite.db``). Output: a table, or with ``--json`` a JSON array of
rows (commands that list) or one JSON object (commands with one result); ``--nl`` prints one JSON
object per line and ``--csv`` CSV with a header, where rows come out.
"""

from __future__ import annotations

from mnemonite.cli import (
    admin,
    backup,
    blocks,
    concepts,
    episodes,
    facts,
    graph,
    groups,
    inspector,
    lifecycle,
    procedures,
    rules,
    search,
    server,
    session,
)
from mnemonite.cli._app import app

__all__ = ["app", "main"]
_COMMAND_GROUPS = (
    admin,
    backup,
    episodes,
    facts,
    graph,
    rules,
    search,
    server,
    blocks,
    session,
    procedures,
    groups,
    concepts,
    lifecycle,
    inspector,
)  # imported for their commands


def main() -> None:
    """The console script's entry point."""
    app()
