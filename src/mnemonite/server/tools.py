"""The nine memory tools over HTTP: the same dispatcher (`mem.tools.for_scope(scope).call`) MCP serves.

``POST /v1/tools/{tool}`` runs one tool for the key's scope: its user, and its agent, else the ``agent``
the request names, else `DEFAULT_AGENT` (as every door). ``session`` binds ``conversation_search`` and
logs the call in that session: as that tool reads every participant's turns, only a key bound to the
user alone may name one. The answer is the dispatcher's `ToolResult`, whose ``ok: false`` carries an error
written for a model; an HTTP failure is for the request itself: an unknown tool (404), a key
that may not write calling a tool that changes memory, or a server started ``--read-only`` or
``--no-destroy`` asked for a tool it does not run (403), ``reveal`` without ``admin`` (403).
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from mnemonite.errors import NotFoundError
from mnemonite.models.base import Model
from mnemonite.models.tools import ToolResult
from mnemonite.scope import DEFAULT_AGENT
from mnemonite.server.episodic import ScopeFields
from mnemonite.server.verbs import Call, Verb
from mnemonite.server.working import reveal_for
from mnemonite.tools import TOOLS
from mnemonite.tools.export import mcp_tools

__all__ = ["VERBS"]


class ToolBody(ScopeFields):
    """One tool call: its ``arguments`` (the tool's input schema, see ``GET /v1/tools``)."""

    arguments: dict[str, Any] = Field(default_factory=dict)
    session: str | None = Field(default=None, min_length=1, max_length=256)
    reveal: str | None = Field(default=None, min_length=1, max_length=500)


class ToolInfo(Model):
    """A tool as a model sees it: name, description, input and output schemas, behaviour annotations."""

    name: str
    description: str
    inputSchema: dict[str, Any]  # noqa: N815  # MCP's own key names
    outputSchema: dict[str, Any]  # noqa: N815
    annotations: dict[str, Any]


async def tools(call: Call[None]) -> list[ToolInfo]:
    """The nine memory tools with their schemas (as MCP ``tools/list`` gives them)."""
    return [ToolInfo.model_validate(entry) for entry in mcp_tools(TOOLS.values())]


async def run_tool(call: Call[ToolBody]) -> ToolResult:
    """Call one memory tool for the key's scope; its result, or the error a model would be shown."""
    spec = TOOLS.get(call.ids["tool"])
    if spec is None:
        raise NotFoundError(f"there is no memory tool named {call.ids['tool']!r}; use one of: {', '.join(TOOLS)}")
    call.who.require_tier(spec.guard)
    b = call.body
    if b.session is not None:
        call.who.require_whole_user("conversation_search reads the turns of every agent taking part in the session")
    reveal = reveal_for(call, b.reveal)
    scope = call.who.scope(user=b.user, agent=b.agent or call.who.agent or DEFAULT_AGENT, session=b.session)
    toolset = call.mem.tools.for_scope(scope, policy=call.who.policy(), elsewhere=call.who.sees_every_agent)
    return await toolset.call(spec.name, b.arguments, reveal=reveal)


VERBS: tuple[Verb, ...] = (
    Verb("tools", "tools.list", "GET", "/v1/tools", "read", tools, list[ToolInfo]),
    Verb("tools", "tools.call", "POST", "/v1/tools/{tool}", "read", run_tool, ToolResult, body=ToolBody),
)  # fmt: skip
