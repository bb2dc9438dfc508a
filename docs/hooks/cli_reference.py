"""Build hook: the command-line reference is generated from the commands themselves (their --help)."""

from __future__ import annotations

from typing import Any

MARKER = "<!-- cli-reference -->"


def _leaves(group: Any, path: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    found: list[tuple[str, ...]] = []
    for name, command in sorted(group.commands.items()):
        found += _leaves(command, (*path, name)) if hasattr(command, "commands") else [(*path, name)]
    return found


def reference() -> str:
    """One section per command: its help text, as ``mnemonite CMD --help`` prints it."""
    import typer
    from typer.testing import CliRunner

    from mnemonite.cli import app

    runner = CliRunner()
    sections = []
    for path in _leaves(typer.main.get_command(app)):
        shown = runner.invoke(app, [*path, "--help"], env={"COLUMNS": "100", "TERM": "dumb"}).stdout
        sections.append(f"## mnemonite {' '.join(path)}\n\n```text\n{shown.rstrip()}\n```\n")
    return "\n".join(sections)


def on_page_markdown(markdown: str, **_: Any) -> str:
    """Replace the marker of the CLI page with the generated reference."""
    return markdown.replace(MARKER, reference()) if MARKER in markdown else markdown
