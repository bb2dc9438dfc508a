"""``mnemonite serve``, ``mnemonite mcp`` and ``mnemonite keys ...``: the memory as a service."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Annotated

import typer

from mnemonite.cli._app import app
from mnemonite.cli._common import (
    CsvOption,
    DbOption,
    JsonOption,
    NlOption,
    OptionalAgent,
    UserOption,
    e,
    emit_one,
    emit_rows,
    err,
    globals_,
    minute,
    opened,
    say,
    table,
)
from mnemonite.scope import DEFAULT_AGENT

if TYPE_CHECKING:
    from mnemonite.server.auth import Door

keys_app = typer.Typer(help="Create, list and revoke the server's API keys.", no_args_is_help=True)
app.add_typer(keys_app, name="keys")


@contextmanager
def _extras(command: str) -> Iterator[None]:
    """A missing optional dependency says which extra to install."""
    try:
        yield
    except ImportError as error:
        from mnemonite.errors import ConfigurationError

        raise ConfigurationError(
            f"mnemonite {command} needs the server extras: pip install 'mnemonite[server,mcp]' ({error})"
        ) from None


ReadOnlyOption = Annotated[
    bool, typer.Option("--read-only", help="Nothing can change memory through this server, whatever a key allows.")
]
NoDestroyOption = Annotated[
    bool,
    typer.Option("--no-destroy", help="Nothing can be forgotten, purged or deleted through it; adding stays."),
]


def _door(read_only: bool, no_destroy: bool) -> Door:
    from mnemonite.server.auth import Door

    return Door(read_only=read_only, no_destroy=no_destroy)


@app.command()
def serve(
    host: Annotated[str, typer.Option(help="Address to listen on; beyond loopback only with an API key.")] = (
        "127.0.0.1"
    ),
    port: Annotated[int, typer.Option(min=1, max=65535, help="Port to listen on.")] = 8765,
    read_only: ReadOnlyOption = False,
    no_destroy: NoDestroyOption = False,
    max_requests: Annotated[
        int | None,
        typer.Option(
            min=1,
            help="Requests run at once (default: 64 per core); as many again times eight wait up to 5 s for a"
            " place, the rest are answered 429 with Retry-After.",
        ),
    ] = None,
    workers: Annotated[
        int,
        typer.Option(
            min=1,
            help="Processes serving the port (over one SQLite file or a PostgreSQL server); this one embeds what"
            " they write and starts one again if it dies.",
        ),
    ] = 1,
    as_json: JsonOption = False,
    db: DbOption = None,
) -> None:
    """Serve the HTTP API (OpenAPI document at /openapi.json), MCP over streamable HTTP (at /mcp/) and the
    inspector (at /ui/) until stopped.

    The memory must exist (a mistyped --db would serve a new, empty one that no API key opens):
    `mnemonite keys create --user USER --db PATH` makes it and its first key."""
    from mnemonite.config import MemoryConfig
    from mnemonite.errors import DatabaseNotFoundError

    with _extras("serve"):
        from mnemonite.server import Capacity, run
    config = MemoryConfig.from_env(None, url=db or globals_().db)
    capacity = Capacity.for_machine() if max_requests is None else Capacity(max_requests, 8 * max_requests)

    base = f"http://{host}:{port}"
    door = _door(read_only, no_destroy)
    policy = door.policy

    def announce() -> None:
        doors = {"url": base, "mcp": f"{base}/mcp/", "ui": f"{base}/ui/", "openapi": f"{base}/openapi.json",
                 "health": f"{base}/health", "policy": policy, "workers": workers}  # fmt: skip
        if not emit_one(doors, as_json=as_json):
            served = f" by {workers} worker processes" if workers > 1 else ""
            err.print(f"serving {e(config.url)} on {e(base)}{served} (Ctrl-C stops)\n  HTTP API   {e(base)}/v1/..."
                      f" (OpenAPI at /openapi.json)\n  MCP        {e(base)}/mcp/\n  inspector  {e(base)}/ui/\n"
                      f"  writes     {e(policy)}")  # fmt: skip

    try:
        run(None, host=host, port=port, config=config, log_level="warning", announce=announce, create=False,
            door=door, capacity=capacity, workers=workers)  # fmt: skip
    except DatabaseNotFoundError as error:
        raise DatabaseNotFoundError(
            f"{error}; to start a new memory with a key: mnemonite keys create --user USER --db PATH"
        ) from None


@app.command()
def mcp(
    user: UserOption,
    agent: Annotated[
        str, typer.Option("--agent", "-a", help="Agent the tools act as (every door's default: assistant).")
    ] = DEFAULT_AGENT,
    session: Annotated[
        str | None, typer.Option("--session", "-s", help="A conversation the tools search and log their calls in.")
    ] = None,
    read_only: ReadOnlyOption = False,
    no_destroy: NoDestroyOption = False,
    as_json: Annotated[bool, typer.Option("--json", help="Accepted for symmetry: stdout is the protocol.")] = False,
    db: DbOption = None,
) -> None:
    """Serve MCP over stdio for one user (for Claude Desktop, Cursor or any MCP host).

    The tools act as --agent (default: assistant, as every door). Every tool is listed; fact_forget is
    annotated destructive for the host to confirm. --read-only lists the reading tools only, --no-destroy
    all but fact_forget."""
    from mnemonite.config import MemoryConfig

    with _extras("mcp"):
        from mnemonite.server.mcp import serve_stdio
    config = MemoryConfig.from_env(None, url=db or globals_().db)
    door = _door(read_only, no_destroy)
    asyncio.run(serve_stdio(config, user=user, agent=agent, session=session, door=door))


@keys_app.command("create")
def keys_create(
    user: UserOption,
    agent: OptionalAgent = None,
    can: Annotated[str, typer.Option(help="Capabilities, comma-separated: read, write, admin.")] = "read,write",
    label: Annotated[str | None, typer.Option(help="A note on what the key is for.")] = None,
    as_json: JsonOption = False,
    db: DbOption = None,
) -> None:
    """Create an API key bound to a user (and agent); its secret is printed this once."""
    with opened(db, create=True) as mem:
        issued = mem.keys.create(user, agent=agent, can=can, label=label)
    if emit_one(issued, as_json=as_json):
        return
    key = issued.key
    say(f"key [bold]{e(key.id)}[/] for user {e(key.user)}" + (f", agent {e(key.agent)}" if key.agent else "")
        + f" can {e(','.join(key.capabilities))}")  # fmt: skip
    say(f"secret (shown once, keep it safe): {e(issued.secret)}")


@keys_app.command("list")
def keys_list(
    user: Annotated[str | None, typer.Option("--user", "-u", help="Only this user's keys.")] = None,
    as_json: JsonOption = False,
    nl: NlOption = False,
    as_csv: CsvOption = False,
    db: DbOption = None,
) -> None:
    """API keys, revoked ones included, without their secrets."""
    with opened(db, create=False) as mem:
        keys = mem.keys.all(user)
    if emit_rows(keys, as_json=as_json, nl=nl, as_csv=as_csv):
        return
    rows = [(k.id, k.user, k.agent or "(any)", ",".join(k.capabilities), k.label or "", minute(k.created_at),
             minute(k.revoked_at) if k.revoked_at else "") for k in keys]  # fmt: skip
    table(("id", "user", "agent", "can", "label", "created", "revoked"), rows)


@keys_app.command("revoke")
def keys_revoke(
    key_id: Annotated[str, typer.Argument(help="The key's id (see: mnemonite keys list).")],
    as_json: JsonOption = False,
    db: DbOption = None,
) -> None:
    """Revoke an API key: requests with it are refused from now on."""
    with opened(db, create=False) as mem:
        key = mem.keys.revoke(key_id)
    if not emit_one(key, as_json=as_json):
        say(f"key {e(key.id)} revoked")
