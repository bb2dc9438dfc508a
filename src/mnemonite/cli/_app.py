"""The root `typer` app: global options and the one place errors become one line on stderr."""

from __future__ import annotations

from typing import Annotated, Any

import typer
from typer.core import TyperGroup

from mnemonite.cli import _common
from mnemonite.cli._common import Globals, err, globals_

# typer vendors click in recent releases: take click's exception base from typer's own classes.
_CLICK_ERROR: type[Exception] = next(c for c in typer.BadParameter.__mro__ if c.__name__ == "ClickException")


class _OneLineErrors(TyperGroup):
    """Any failure of a command is ``error: <message>`` and exit code 1, unless ``--debug``.

    Usage errors stay click's (exit code 2); typed `MnemoniteError`s, missing or non-database
    files and locked databases are failures (exit code 1).
    """

    def invoke(self, ctx: Any) -> Any:
        try:
            return super().invoke(ctx)
        except (typer.Exit, typer.Abort, KeyboardInterrupt):
            raise
        except _CLICK_ERROR as error:
            err.print(f"error: {_usage(error)}", markup=False, soft_wrap=True)
            raise typer.Exit(code=getattr(error, "exit_code", 2)) from None
        except Exception as error:
            if globals_().debug:
                raise
            err.print(f"error: {_message(error)}", markup=False, soft_wrap=True)
            raise typer.Exit(code=1) from None


def _message(error: Exception) -> str:
    from mnemonite.errors import MnemoniteError

    text = " ".join(str(error).split())  # one line, even for a multi-line driver message
    return text if isinstance(error, MnemoniteError) else f"{type(error).__name__}: {text}"


def _usage(error: Exception) -> str:
    """A usage error on one line, with where to read more."""
    text = " ".join(error.format_message().split())  # type: ignore[attr-defined]  # a click exception
    context = getattr(error, "ctx", None)
    return f"{text} (see: {context.command_path} --help)" if context is not None else text


def _version(value: bool) -> None:
    if value:
        from mnemonite import __version__

        typer.echo(f"mnemonite {__version__}")
        raise typer.Exit


app = typer.Typer(
    cls=_OneLineErrors,
    help="mnemonite: layered long-term memory for AI agents.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)


@app.callback()
def _root(
    db: Annotated[
        str | None,
        typer.Option(
            "--db",
            help="Memory for every command: a SQLite path (./m.db) or URL (sqlite:///m.db, postgresql://...)."
            " Default: $MNEMONITE_URL, else ./mnemonite.db.",
            show_default=False,
        ),
    ] = None,
    debug: Annotated[bool, typer.Option("--debug", help="Show the whole traceback of an error.")] = False,
    no_embed: Annotated[
        bool, typer.Option("--no-embed", help="Do not embed the records still waiting for a vector on exit.")
    ] = False,
    version: Annotated[
        bool,
        typer.Option("--version", help="Print the version and exit.", callback=_version, is_eager=True),
    ] = False,
) -> None:
    _common.GLOBALS = Globals(db=db, debug=debug, no_embed=no_embed)
