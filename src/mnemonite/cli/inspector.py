"""``mnemonite ui``: the memory inspector in a browser, served on this machine only."""

from __future__ import annotations

import asyncio
from typing import Annotated

import typer

from mnemonite.cli._app import app
from mnemonite.cli._common import DbOption, JsonOption, OptionalAgent, e, emit_one, err, globals_, opened

HOST = "127.0.0.1"  # the inspector shows everything a key may read: it never listens beyond this machine


@app.command()
def ui(
    port: Annotated[int, typer.Option(min=1, max=65535, help="Port to listen on (on 127.0.0.1 only).")] = 8766,
    user: Annotated[
        str | None,
        typer.Option("--user", "-u", help="Create a read,write API key for this user and print it (shown once)."),
    ] = None,
    agent: OptionalAgent = None,
    as_json: JsonOption = False,
    db: DbOption = None,
) -> None:
    """Open the memory inspector: serve /ui (and the HTTP API) on 127.0.0.1 and print its address.

    The pages ask for an API key, as the HTTP API does: pass --user to create one now, or create
    one with `mnemonite keys create --user USER --can read,write` (add `admin` to see the rules).
    """
    from mnemonite.cli.server import _extras
    from mnemonite.config import MemoryConfig

    with _extras("ui"):
        from mnemonite.server import serve
    url = db or globals_().db
    with opened(url, create=False) as mem:  # a viewer: a mistyped --db is an error, not a new empty memory
        issued = mem.keys.create(user, agent=agent, label="mnemonite ui") if user else None
        active = mem.keys.active()
    address = f"http://{HOST}:{port}/ui/"

    def announce() -> None:
        if emit_one({"url": address, "key": issued.secret if issued else None}, as_json=as_json):
            return
        err.print(f"inspector on {address} (Ctrl-C stops)")
        if issued is not None:
            err.print(f"API key for user {e(issued.key.user)} (shown once, enter it on the page): {e(issued.secret)}")
        elif active == 0:
            err.print("no API key exists yet: run again with --user USER, or: mnemonite keys create --user USER")
        else:
            err.print("enter an API key on the page (mnemonite keys create --user USER makes one)")

    config = MemoryConfig.from_env(None, url=url)
    asyncio.run(serve(None, host=HOST, port=port, config=config, log_level="warning", announce=announce))
