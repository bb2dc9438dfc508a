"""The MCP server (the official ``mcp`` SDK): memory tools and resources for a model, over stdio or HTTP.

Tools: ``remember``, ``search``, ``recall``, ``forget``. Resources: the user's current facts
(``mnemonite://facts``), one fact (``mnemonite://facts/{fact_id}``) and the graph's entities
(``mnemonite://entities``). Every call runs as one `Principal`: fixed for a stdio server started
for one user, or the API key of each HTTP request (`authenticated`), so a key reaches only its scope.
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from typing import Any, TypeVar, cast

import orjson
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from starlette.types import ASGIApp, Receive, Scope, Send

from mnemonite import __version__
from mnemonite.config import MemoryConfig
from mnemonite.errors import MnemoniteError
from mnemonite.memory import Memory
from mnemonite.models import Fact
from mnemonite.models.fact import MemoryType
from mnemonite.models.graph import RecallOptions
from mnemonite.server.auth import Principal
from mnemonite.server.problems import problem, status_of

__all__ = ["DEFAULT_AGENT", "authenticated", "build_mcp"]

DEFAULT_AGENT = "mcp"  # the agent of facts written through a key bound to a user only
Method = TypeVar("Method", bound=Callable[..., Awaitable[Any]])
CALLER: ContextVar[Principal | None] = ContextVar("mnemonite_mcp_caller", default=None)

INSTRUCTIONS = (
    "Long-term memory of the user you are talking with. Call `search` before answering anything that may "
    "depend on what the user told you before; call `remember` when the user states a lasting fact, "
    "preference or decision about themselves; call `forget` when they retract one."
)


def build_mcp(memory: Callable[[], Memory], caller: Principal | None = None) -> MCPServer:
    """The MCP server over the memory ``memory()`` returns; ``caller`` fixes the principal (stdio),
    else each HTTP request's key decides (see `authenticated`)."""
    server = MCPServer("mnemonite", version=__version__, instructions=INSTRUCTIONS, log_level="WARNING")
    tools = _Tools(memory, caller)
    for tool in (tools.remember, tools.search, tools.recall, tools.forget):
        server.add_tool(tool, name=tool.__name__, description=(tool.__doc__ or "").strip())
    server.resource("mnemonite://facts", name="facts", mime_type="application/json")(tools.facts_resource)
    server.resource("mnemonite://entities", name="entities", mime_type="application/json")(tools.entities_resource)
    server.resource("mnemonite://facts/{fact_id}", name="fact", mime_type="application/json")(tools.fact_resource)
    return server


def _told(method: Method) -> Method:
    """A tool or resource whose typed errors reach the model as their message (not as a crash)."""

    @functools.wraps(method)
    async def told(*args: Any, **kwargs: Any) -> Any:
        try:
            return await method(*args, **kwargs)
        except MnemoniteError as error:
            raise ToolError(f"{type(error).__name__}: {error}") from None

    return cast(Method, told)


class _Tools:
    """The tools and resources, bound to a memory and (optionally) a fixed caller."""

    def __init__(self, memory: Callable[[], Memory], caller: Principal | None) -> None:
        self._memory, self._caller = memory, caller

    def _who(self, capability: Any) -> tuple[Memory, Principal]:
        who = self._caller or CALLER.get()
        if who is None:
            raise MnemoniteError("no caller: the MCP endpoint is served behind API-key authentication")
        who.require(capability)
        return self._memory(), who

    def _scope(self, who: Principal) -> Any:
        return who.scope(agent=who.agent or DEFAULT_AGENT)

    @_told
    async def remember(
        self, text: str, memory_type: MemoryType = "fact", tags: list[str] | None = None
    ) -> dict[str, Any]:
        """Store a lasting statement about the user in long-term memory, e.g. "I moved to Berlin",
        "I prefer tea to coffee", "We chose PostgreSQL for the billing service".

        Write one self-contained statement in the user's words (first person is fine). memory_type is one
        of fact, preference, decision, experience, failure, observation. Memory resolves conflicts itself:
        a changed fact supersedes the old one, a repeat is recognised as a duplicate. Returns what was
        decided (admit, supersede, dedup or pending) and the id of the fact memory now holds.
        """
        mem, who = self._who("write")
        decision = await mem.semantic.remember_with_decision(
            self._scope(who),
            text,
            memory_type=memory_type,
            tags=tags or [],
            rule_id="mcp",
        )
        return {"decision": decision.kind, "fact_id": decision.fact_id, "reason": decision.reason,
                "replaced": decision.matched_ids if decision.kind == "supersede" else []}  # fmt: skip

    @_told
    async def search(self, query: str, k: int = 5) -> list[dict[str, Any]]:
        """Search the user's long-term memory (what they said, and the facts kept about them) for what
        is relevant to a question, best first. Use a short natural-language query, e.g. "where does the
        user live". Each result has the text, whether it is a fact or a past message, when, and a score.
        """
        mem, who = self._who("read")
        hits = await mem.search(who.scope(), query, max(1, min(k, 50)))
        return [_hit(hit.tier, hit.record, hit.score) for hit in hits]

    @_told
    async def recall(self, query: str | None = None, limit: int = 10) -> list[dict[str, Any]]:
        """Recall the user's most important current facts (by salience: how recent, used and important),
        optionally only those matching the words of query. Use at the start of a conversation to know
        the user, or to list what memory holds on a topic.
        """
        mem, who = self._who("read")
        scored = await mem.graph.recall(
            self._scope(who), RecallOptions(query=query or None, limit=max(1, min(limit, 100)))
        )
        return [_fact(item.fact) | {"score": round(item.score, 4)} for item in scored]

    @_told
    async def forget(self, fact_id: str) -> dict[str, Any]:
        """Forget one fact, by the fact_id that search, recall or remember returned, when the user
        retracts it or asks for it to be forgotten. It is no longer believed from now on (history keeps it).
        """
        mem, who = self._who("write")
        fact = await who.fact(mem, fact_id)
        forgotten = await mem.semantic.forget(fact.id)
        return {"forgotten": forgotten.id, "text": forgotten.text, "status": forgotten.status}

    @_told
    async def facts_resource(self) -> str:
        """The user's current facts, newest first."""
        mem, who = self._who("read")
        return orjson.dumps([_fact(f) for f in await mem.semantic.facts(who.scope(), limit=200)]).decode()

    @_told
    async def entities_resource(self) -> str:
        """The entities of the user's graph, by name."""
        mem, who = self._who("read")
        found, _ = await mem.graph.entities(self._scope(who), limit=200)
        return orjson.dumps([e.model_dump(mode="json") for e in found]).decode()

    @_told
    async def fact_resource(self, fact_id: str) -> str:
        """One fact with its whole history (every version, oldest first)."""
        mem, who = self._who("read")
        fact = await who.fact(mem, fact_id)
        return orjson.dumps([_fact(f) for f in await mem.semantic.history(fact.id)]).decode()


def _hit(tier: str, record: Any, score: float) -> dict[str, Any]:
    if isinstance(record, Fact):
        return _fact(record) | {"tier": tier, "score": round(score, 4)}
    return {"tier": tier, "id": record.id, "text": record.content, "when": record.timestamp.isoformat(),
            "session": record.session, "score": round(score, 4)}  # fmt: skip


def _fact(fact: Fact) -> dict[str, Any]:
    return {"id": fact.id, "text": fact.text, "memory_type": fact.memory_type, "status": fact.status,
            "valid_from": fact.valid_from.isoformat(),
            "valid_to": fact.valid_to.isoformat() if fact.valid_to else None}  # fmt: skip


def authenticated(app: ASGIApp, memory: Callable[[], Memory]) -> ASGIApp:
    """``app`` (the streamable HTTP endpoint) behind API-key authentication: a request without an
    active key is answered 401 with a problem-details body; otherwise its calls run as the key."""

    async def guarded(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        secret = headers.get("authorization", "").removeprefix("Bearer ").strip() or None
        try:
            who = Principal.of_key(await memory().keys.authenticate(secret))
        except MnemoniteError as error:
            path = scope.get("root_path", "") + scope.get("path", "")
            await problem(status_of(error), str(error), path, type(error).__name__)(scope, receive, send)
            return
        token = CALLER.set(who)
        try:
            await app(scope, receive, send)
        finally:
            CALLER.reset(token)

    return guarded


async def serve_stdio(config: MemoryConfig, *, user: str, agent: str | None) -> None:
    """Serve MCP over stdin/stdout for one (user, agent) until the host closes the pipe."""
    caller = Principal.local(user, agent)
    caller.scope()  # a blank user or agent fails before anything is opened
    async with await Memory.open(config=config) as mem:
        await build_mcp(lambda: mem, caller).run_stdio_async()
