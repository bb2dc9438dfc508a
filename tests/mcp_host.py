"""An MCP host's configuration, launched as the host launches it: the entry's command, args and env, through the
SDK's own stdio client, with only the memory moved to a test database."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from mnemonite.tools import catalog

# The host finds `mnemonite` on its PATH: here, beside the interpreter the package is installed in.
HOST_PATH = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])


def with_database(server: dict[str, Any], db: Path) -> dict[str, Any]:
    """The entry with its memory at ``db``: the value of ``--db`` in its args, or ``MNEMONITE_URL`` in its env."""
    args, env = list(server.get("args", [])), dict(server.get("env", {}))
    if "--db" in args:
        args[args.index("--db") + 1] = str(db)
    else:
        assert "MNEMONITE_URL" in env, f"the entry names no memory: {server}"
        env["MNEMONITE_URL"] = f"sqlite:///{db}"
    return {**server, "args": args, "env": env}


async def remember_and_search(server: dict[str, Any]) -> list[str]:
    """Launch the entry, check the nine tools are listed, remember a fact, and return what fact_search finds."""
    env = {**server.get("env", {}), "PATH": HOST_PATH}
    params = StdioServerParameters(command=server["command"], args=server["args"], env=env)
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        return await exercise(session)


async def exercise(session: ClientSession) -> list[str]:
    """What a host does first: list the tools (the nine), remember a fact, search for it; returns the texts found."""
    await session.initialize()
    assert {tool.name for tool in (await session.list_tools()).tools} == set(catalog.TOOLS)
    made = await session.call_tool("fact_remember", {"text": "I live in Porto"})
    assert not made.is_error and made.structured_content is not None, made.content
    assert made.structured_content["decision"] == "admit"
    found = await session.call_tool("fact_search", {"query": "where do I live"})
    assert not found.is_error and found.structured_content is not None, found.content
    return [fact["text"] for fact in found.structured_content["facts"]]
