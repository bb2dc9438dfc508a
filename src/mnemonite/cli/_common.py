"""What every command shares: the memory it opens, output formats, escaping, argument parsing.

Nothing heavy is imported at module level (pydantic models, numpy, the model runtime): ``mnemonite --help``
must start fast, so each command imports what it needs when it runs.
"""

from __future__ import annotations

import csv
import io
import logging
import re
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.text import Text

if TYPE_CHECKING:
    from mnemonite.sync import SyncMemory

console = Console(highlight=False)
err = Console(stderr=True, highlight=False)


@dataclass
class Globals:
    """The options given before the command: ``mnemonite --db X --debug --no-embed CMD``."""

    db: str | None = None
    debug: bool = False
    no_embed: bool = False


GLOBALS = Globals()  # set by the root callback at the start of every invocation


def globals_() -> Globals:
    """The global options of this invocation."""
    return GLOBALS


DbOption = Annotated[
    str | None,
    typer.Option(
        "--db",
        help="Memory: a SQLite path (./m.db) or URL (sqlite:///m.db, postgresql://...)."
        " Default: the global --db, else $MNEMONITE_URL, else ./mnemonite.db.",
        show_default=False,
    ),
]
UserOption = Annotated[str, typer.Option("--user", "-u", help="User id.")]
AgentOption = Annotated[str, typer.Option("--agent", "-a", help="Agent id (every door's default: assistant).")]
OptionalAgent = Annotated[str | None, typer.Option("--agent", "-a", help="Agent id (default: every agent).")]
OptionalSession = Annotated[str | None, typer.Option("--session", "-s", help="Session id (default: every session).")]
JsonOption = Annotated[bool, typer.Option("--json", help="Print JSON: an array of rows, or one object.")]
NlOption = Annotated[bool, typer.Option("--nl", help="Print JSON lines: one object per row.")]
CsvOption = Annotated[bool, typer.Option("--csv", help="Print CSV with a header row.")]
LimitOption = Annotated[int, typer.Option(min=1, help="The most rows to print.")]


class MemoryType(StrEnum):
    """The kinds of fact (`mnemonite.models.fact.MemoryType`)."""

    fact = "fact"
    preference = "preference"
    decision = "decision"
    experience = "experience"
    failure = "failure"
    observation = "observation"
    consolidation = "consolidation"


@contextmanager
def opened(db: str | None, *, create: bool, **overrides: object) -> Iterator[SyncMemory]:
    """The memory named by ``--db`` (command, then global, then the environment), closed afterwards.

    ``create=False`` (commands that read) fails on a missing database instead of creating one. Closing
    embeds the records still waiting for a vector, as `SyncMemory.close` does, unless ``--no-embed``.
    """
    from mnemonite.config import MemoryConfig
    from mnemonite.sync import SyncMemory

    flags = globals_()
    config = MemoryConfig.from_env(None, url=db or flags.db, **overrides)
    with _model_build_notice():
        mem = SyncMemory.open(config=config, create=create)
    try:
        with _model_build_notice():
            yield mem
    except BaseException:
        mem.close(finish_indexing=False)
        raise
    with _model_build_notice():  # embedding what waits may be the machine's first embedding
        _close(mem, embed=not flags.no_embed)


def _close(mem: SyncMemory, *, embed: bool) -> None:
    if not embed:
        mem.close(finish_indexing=False)
        return
    with progress_bar("embedding") as step:  # the whole backlog, with a bar (--no-embed leaves it to the next)
        mem.close(finish_indexing=True, progress=lambda p: step(p.embedded, p.embedded + p.remaining))


@contextmanager
def progress_bar(label: str) -> Iterator[Callable[[int, int], None]]:
    """A progress bar on stderr (a terminal only), drawn from the first ``(done, total)`` the caller reports:
    nothing at all when there is nothing to do."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    columns = (TextColumn(escape(label)), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    bar = Progress(*columns, console=err, transient=True, disable=not err.is_terminal)
    task = bar.add_task(label, total=None)

    def step(done: int, total: int) -> None:
        if not bar.live.is_started:
            bar.start()
        bar.update(task, completed=done, total=total)

    try:
        yield step
    finally:
        bar.stop()


class _ModelBuildNotice(logging.Handler):
    """Says so on stderr when the first command of a machine to embed builds the model's int8 copy (a few seconds)."""

    def emit(self, record: logging.LogRecord) -> None:
        if record.getMessage().startswith("embedding: making an int8 copy"):
            err.print("building the int8 copy of the embedding model (once per machine, a few seconds)...")


@contextmanager
def _model_build_notice() -> Iterator[None]:
    logger = logging.getLogger("mnemonite.embedding")
    handler, level = _ModelBuildNotice(logging.INFO), logger.level
    logger.addHandler(handler)
    if logger.getEffectiveLevel() > logging.INFO:
        logger.setLevel(logging.INFO)
    try:
        yield
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)


def resolve(mem: SyncMemory, kind: str, prefix: str) -> str:
    """The full id for an id or a unique prefix of one (see `Memory.resolve_id`)."""
    return mem.resolve_id(kind, prefix)  # type: ignore[arg-type]  # kind is one of the literals, by the caller


def when(text: str | None, option: str = "time") -> datetime | None:
    """An ISO 8601 time with a timezone, or a usage error."""
    if text is None:
        return None
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise typer.BadParameter(f"not an ISO 8601 time: {text!r}", param_hint=option) from None
    if moment.tzinfo is None:
        naive = moment.isoformat()  # a date alone takes a zone only as a full time: 2025-01-01T00:00:00Z
        raise typer.BadParameter(f"add a timezone, e.g. {naive}Z or {naive}+00:00", param_hint=option)
    return moment


def metadata(pairs: Sequence[str], option: str = "--meta") -> dict[str, Any]:
    """``key=value`` pairs; a value that parses as JSON is taken as JSON."""
    import orjson

    meta: dict[str, Any] = {}
    for pair in pairs:
        key, sep, raw = pair.partition("=")
        if not sep or not key:
            raise typer.BadParameter(f"takes key=value, got {pair!r}", param_hint=option)
        try:
            meta[key] = orjson.loads(raw)
        except orjson.JSONDecodeError:
            meta[key] = raw
    return meta


def text_argument(text: str) -> str:
    """The text itself, or standard input for ``-``."""
    if text != "-":
        return text
    raw = getattr(sys.stdin, "buffer", None)
    if raw is None:
        read = sys.stdin.read().strip()
    else:
        data = raw.read()
        try:
            read = data.decode("utf-8").strip()
        except UnicodeDecodeError as error:
            where = f"byte 0x{data[error.start]:02X} at position {error.start}"
            raise typer.BadParameter(f"standard input is not valid UTF-8 ({where})", param_hint="TEXT") from None
    if not read:
        raise typer.BadParameter("standard input was empty", param_hint="TEXT")
    return read


def say(message: str) -> None:
    """One line on stdout; ``message`` is rich markup whose user strings were escaped with `e`."""
    console.print(message, soft_wrap=True)


def e(value: object) -> str:
    """A user string, escaped for rich markup (``[postgres]`` prints as is), its control characters shown."""
    return escape(shown(value))


# Control characters other than newline and tab: a stored escape sequence would clear or recolour the terminal.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
CELL_CHARS = 600  # a table cell shows this much of a text (--json prints it whole)


def shown(value: object) -> str:
    """A user string as a terminal may show it: control characters as ``\\xNN``."""
    return _CONTROL.sub(lambda found: f"\\x{ord(found.group()):02x}", str(value))


def _cell(value: object) -> Text:
    """A table cell: the text as stored (no markup), control characters shown, a long text cut."""
    text = shown(value)
    if len(text) > CELL_CHARS:
        text = f"{text[:CELL_CHARS]}… ({len(text) - CELL_CHARS:,} more characters; --json prints all)"
    return Text(text)


def _jsonable(item: Any) -> Any:
    return item.model_dump(mode="json") if hasattr(item, "model_dump") else item


def emit_one(item: Any, *, as_json: bool) -> bool:
    """Print one result as a JSON object when asked; returns whether it did."""
    if as_json:
        import orjson

        sys.stdout.write(orjson.dumps(_jsonable(item)).decode() + "\n")
    return as_json


def emit_rows(items: Sequence[Any], *, as_json: bool = False, nl: bool = False, as_csv: bool = False) -> bool:
    """Print rows as a JSON array, JSON lines or CSV when asked; returns whether it did."""
    import orjson

    if sum((as_json, nl, as_csv)) > 1:
        raise typer.BadParameter("give one of --json, --nl, --csv")
    rows = [_jsonable(item) for item in items]
    if as_json:
        sys.stdout.write(orjson.dumps(rows).decode() + "\n")
    elif nl:
        sys.stdout.writelines(orjson.dumps(row).decode() + "\n" for row in rows)
    elif as_csv:
        sys.stdout.write(_csv(rows))
    return as_json or nl or as_csv


def _csv(rows: list[dict[str, Any]]) -> str:
    import orjson

    buffer = io.StringIO()
    names = list(rows[0]) if rows else []
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(names)
    for row in rows:
        cells = (row.get(n) for n in names)
        writer.writerow(c if isinstance(c, str) else "" if c is None else orjson.dumps(c).decode() for c in cells)
    return buffer.getvalue()


FREE_TEXT = frozenset({"text", "content", "reason", "filter", "cadence", "episodes", "matched", "value"})


def table(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> None:
    """A table of escaped cells ("(none)" under an empty one). Only free-text columns wrap: ids, times and
    counts are never cut.

    On a terminal too narrow for that, the table is drawn wider than the terminal rather than cut.
    """
    grid, needed = Table(caption=None if rows else "(none)"), 1
    cells = [[_cell(cell) for cell in row] for row in rows]
    for i, header in enumerate(headers):
        longest = max([len(row[i]) for row in cells] + [len(header)])
        if header in FREE_TEXT:
            grid.add_column(header, overflow="fold", min_width=min(longest, 24), ratio=1)
            needed += min(longest, 24) + 3
        else:
            grid.add_column(header, no_wrap=True, min_width=longest)
            needed += longest + 3
    for row in cells:
        grid.add_row(*row)
    wide = console if needed <= console.width else Console(file=sys.stdout, width=needed, highlight=False)
    wide.print(grid)


def day(moment: datetime | None) -> str:
    return "-" if moment is None else f"{moment:%Y-%m-%d}"


def minute(moment: datetime | None) -> str:
    return "-" if moment is None else f"{moment:%Y-%m-%d %H:%M}"


# -- the agent tiers -------------------------------------------------------------------------------


class Sensitivity(StrEnum):
    """The sensitivity levels (`mnemonite.models.sensitivity.Sensitivity`)."""

    public = "public"
    internal = "internal"
    secret = "secret"


SensitivityOption = Annotated[
    Sensitivity | None,
    typer.Option(help="public, internal or secret (default: the tier's, from the configuration).", show_default=False),
]


def agent_scope(user: str, agent: str, session: str | None = None) -> Any:
    """The `Scope` of one agent of a user (in a session when given)."""
    from mnemonite.scope import Scope

    return Scope(user=user, agent=agent, session=session)


def chosen(sensitivity: Sensitivity | None) -> Any:
    """The chosen sensitivity as the library takes it (None: the tier's default)."""
    return None if sensitivity is None else sensitivity.value
