"""The MCP server (the official ``mcp`` SDK): memory tools and resources for a model, over stdio or HTTP.

Tools: the nine memory tools (``block_append`` ... ``conversation_search``), listed with the
dispatcher's schemas and run by it (`mnemonite.tools`), exactly as ``mem.tools.for_scope(scope)``
and ``POST /v1/tools/{tool}`` run them. Resources: the agent's working blocks (``mnemonite://blocks``,
``mnemonite://blocks/{label}``; a secret block's value is a marker), the current facts the tools work on
(``mnemonite://facts``: the user's, under the agent), one fact (``mnemonite://facts/{fact_id}``) and the
graph's entities (``mnemonite://entities``). Every call runs as one `Principal`: fixed for a stdio server started
for one user, or the API key of each HTTP request (`authenticated`), so a key reaches only its scope.
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from typing import Any, TypeVar, cast

import orjson
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ResourceNotFoundError
from mcp_types import CallToolResult, TextContent
from mcp_types import Tool as MCPTool
from starlette.types import ASGIApp, Receive, Scope, Send

from mnemonite import __version__
from mnemonite.config import MemoryConfig
from mnemonite.errors import MnemoniteError, NotFoundError
from mnemonite.memory import Memory
from mnemonite.models import Fact
from mnemonite.models.blocks import Block
from mnemonite.privacy import redact_record
from mnemonite.scope import DEFAULT_AGENT
from mnemonite.scope import Scope as MemoryScope
from mnemonite.server.auth import OPEN, Door, Principal
from mnemonite.server.problems import problem, rpc_problem, status_of
from mnemonite.tools import TOOLS
from mnemonite.tools.export import mcp_tools

__all__ = ["authenticated", "build_mcp"]

Method = TypeVar("Method", bound=Callable[..., Awaitable[Any]])
CALLER: ContextVar[Principal | None] = ContextVar("mnemonite_mcp_caller", default=None)
LISTED = [MCPTool.model_validate(entry) for entry in mcp_tools(TOOLS.values())]

INSTRUCTIONS = (
    "Long-term memory of the user you are talking with. Your memory blocks (resource mnemonite://blocks) are"
    " what you keep in mind: edit them with block_append, block_replace and block_rethink. Call fact_search"
    " before answering anything that may depend on what the user told you before; call fact_remember when the"
    " user states a lasting fact, preference or decision; fact_supersede when one changed; fact_forget when they"
    " retract one. recall_episodes finds past conversations and events; conversation_search the current one."
)


class MemoryServer(MCPServer):
    """An MCP server whose tools are the nine memory tools of the dispatcher, bound to each call's caller."""

    def __init__(self, caller: Callable[[], tuple[Memory, Principal, MemoryScope]], door: Door) -> None:
        super().__init__("mnemonite", version=__version__, instructions=INSTRUCTIONS, log_level="WARNING")
        self._caller = caller
        self._listed = [tool for tool in LISTED if TOOLS[tool.name].guard in door.tiers]

    async def list_tools(self) -> list[MCPTool]:
        """The memory tools the door runs, with the dispatcher's input and output schemas."""
        return self._listed

    def _tool_input_schema(self, name: str) -> dict[str, Any] | None:
        spec = TOOLS.get(name)
        return None if spec is None else spec.input.model_json_schema()

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> CallToolResult:
        """Run one tool through the dispatcher for the caller's scope; its error is a result the model reads."""
        try:
            mem, who, scope = self._caller()
        except MnemoniteError as error:
            return _failed(f"{type(error).__name__}: {error}")
        tools = mem.tools.for_scope(scope, policy=who.policy(), elsewhere=who.sees_every_agent)
        result = await tools.call(name, arguments)
        return CallToolResult(content=[TextContent(text=result.content())], structured_content=result.output,
                              is_error=not result.ok)  # fmt: skip


def _failed(text: str) -> CallToolResult:
    return CallToolResult(content=[TextContent(text=text)], is_error=True)


def build_mcp(
    memory: Callable[[], Memory], caller: Principal | None = None, session: str | None = None, *, door: Door = OPEN
) -> MCPServer:
    """The MCP server over the memory ``memory()`` returns; ``caller`` fixes the principal (stdio),
    else each HTTP request's key decides (see `authenticated`); ``session`` binds the tools to a
    conversation (``conversation_search``, and each call logged in it). The tools a ``door`` does not run
    are left out of the list (and refused if called anyway)."""
    resources = _Resources(memory, caller)
    server = MemoryServer(lambda: resources.bound(session), door)
    for uri, name, method in (
        ("mnemonite://blocks", "blocks", resources.blocks_resource),
        ("mnemonite://blocks/{label}", "block", resources.block_resource),
        ("mnemonite://facts", "facts", resources.facts_resource),
        ("mnemonite://entities", "entities", resources.entities_resource),
        ("mnemonite://facts/{fact_id}", "fact", resources.fact_resource),
    ):
        server.resource(uri, name=name, mime_type="application/json")(method)
    return server


def _told(method: Method) -> Method:
    """A resource whose typed errors reach the client as their message (not as an internal error);
    a missing record is the protocol's "not found"."""

    @functools.wraps(method)
    async def told(*args: Any, **kwargs: Any) -> Any:
        try:
            return await method(*args, **kwargs)
        except MnemoniteError as error:
            kind = ResourceNotFoundError if isinstance(error, NotFoundError) else ResourceError
            raise kind(f"{type(error).__name__}: {error}") from None

    return cast(Method, told)


class _Resources:
    """The resources, bound to a memory and (optionally) a fixed caller."""

    def __init__(self, memory: Callable[[], Memory], caller: Principal | None) -> None:
        self._memory, self._caller = memory, caller

    def _who(self, capability: Any) -> tuple[Memory, Principal]:
        who = self._caller or CALLER.get()
        if who is None:
            raise MnemoniteError("no caller: the MCP endpoint is served behind API-key authentication")
        who.require(capability)
        return self._memory(), who

    def bound(self, session: str | None) -> tuple[Memory, Principal, MemoryScope]:
        """The memory, the caller and the scope its tools run in (its agent, or DEFAULT_AGENT)."""
        mem, who = self._who("read")
        return mem, who, who.scope(agent=who.agent or DEFAULT_AGENT, session=session)

    def _scope(self, who: Principal) -> MemoryScope:
        return who.scope(agent=who.agent or DEFAULT_AGENT)

    @_told
    async def blocks_resource(self) -> str:
        """Your memory blocks (the labelled sections you keep in mind), oldest first; secret values are masked."""
        mem, who = self._who("read")
        return orjson.dumps([_block(b) for b in await mem.working.list(self._scope(who))]).decode()

    @_told
    async def block_resource(self, label: str) -> str:
        """One of your memory blocks, by its label."""
        mem, who = self._who("read")
        return orjson.dumps(_block(await mem.working.read(self._scope(who), label))).decode()

    @_told
    async def facts_resource(self) -> str:
        """The current facts the tools work on (the user's, kept under this agent), newest first."""
        mem, who = self._who("read")
        return orjson.dumps([_fact(f) for f in await mem.semantic.facts(self._scope(who), limit=200)]).decode()

    @_told
    async def entities_resource(self) -> str:
        """The entities of the user's graph, by name."""
        mem, who = self._who("read")
        found, _ = await mem.graph.entities(self._scope(who), limit=200)
        return orjson.dumps([e.model_dump(mode="json") for e in found]).decode()

    @_told
    async def fact_resource(self, fact_id: str) -> str:
        """One fact with its whole history (every version, oldest first): one the tools reach, as the list shows."""
        mem, who = self._who("read")
        fact = await who.fact(mem, fact_id)
        if fact.agent != self._scope(who).agent:  # another agent's fact of the user: unknown here, as to the tools
            raise NotFoundError(f"no fact with id {fact_id!r}")
        return orjson.dumps([_fact(f) for f in await mem.semantic.history(fact.id)]).decode()


def _block(block: Block) -> dict[str, Any]:
    shown = redact_record(block)
    return {"label": shown.label, "value": shown.value, "description": shown.description, "chars": len(block.value),
            "limit": shown.limit, "read_only": shown.read_only, "sensitivity": shown.sensitivity}  # fmt: skip


def _fact(fact: Fact) -> dict[str, Any]:
    return {"id": fact.id, "text": fact.text, "memory_type": fact.memory_type, "status": fact.status,
            "valid_from": fact.valid_from.isoformat(),
            "valid_to": fact.valid_to.isoformat() if fact.valid_to else None}  # fmt: skip


def authenticated(app: ASGIApp, memory: Callable[[], Memory], door: Door = OPEN) -> ASGIApp:
    """``app`` (the streamable HTTP endpoint) behind API-key authentication: a request without an
    active key is answered 401, with a problem-details body, or for an MCP client a JSON-RPC error carrying
    them (so the SDK's client raises "AuthenticationError: ..." rather than a bare failure); otherwise its calls
    run as the key, through ``door``."""

    async def guarded(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        secret = headers.get("authorization", "").removeprefix("Bearer ").strip() or None
        try:
            who = Principal.of_key(await memory().keys.authenticate(secret), door)
        except MnemoniteError as error:
            root, path = scope.get("root_path", ""), scope.get("path", "")
            path = path if path.startswith(root) else root + path  # Starlette keeps the mount's prefix in path
            # an MCP client (it accepts an event stream) reads a JSON-RPC error; anyone else problem details
            answer = rpc_problem if "text/event-stream" in headers.get("accept", "") else problem
            await answer(status_of(error), str(error), path, type(error).__name__)(scope, receive, send)
            return
        token = CALLER.set(who)
        try:
            await app(scope, receive, send)
        finally:
            CALLER.reset(token)

    return guarded


async def serve_stdio(
    config: MemoryConfig, *, user: str, agent: str | None, session: str | None = None, door: Door = OPEN
) -> None:
    """Serve MCP over stdin/stdout for one (user, agent[, session]) until the host closes the pipe; ``door``
    leaves out the tools it does not run (`Door`)."""
    caller = Principal.local(user, agent, door)
    caller.scope(session=session)  # a blank user, agent or session fails before anything is opened
    async with await Memory.open(config=config) as mem:
        await build_mcp(lambda: mem, caller, session, door=door).run_stdio_async()
