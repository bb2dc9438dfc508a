"""One dispatcher for the nine tools: validate → guard → run → typed result, one audit row per call.

Every way a call can fail comes back as a `ToolResult` with a `ToolError` the model can act on
(what went wrong, what to do), never as an exception or a traceback; nothing is changed then.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import os
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ValidationError

from mnemonite._time import utcnow
from mnemonite.errors import (
    BlockConflictError,
    BlockLimitError,
    BlockPatchError,
    FactConflictError,
    GroupAccessError,
    InvalidInputError,
    MemoryScopeError,
    MnemoniteError,
    NotFoundError,
    ReadOnlyBlockError,
    StoreBusyError,
)
from mnemonite.inputs import INT64_MAX, checked, text_problem
from mnemonite.models.messages import SessionEvent
from mnemonite.models.tools import GuardTier, Outcome, ToolCall, ToolError, ToolResult
from mnemonite.privacy import MARKER, Reveal, SecretGuard, check_reveal
from mnemonite.scope import Scope
from mnemonite.store.base import ToolCallStore
from mnemonite.tools.catalog import TOOLS, NoSessionError, ToolSpec
from mnemonite.tools.export import anthropic_tools, mcp_tools, openai_tools
from mnemonite.tools.reach import ToolMemory
from mnemonite.tracing import tool_span

__all__ = ["GuardPolicy", "ToolRequest", "ToolSet", "Tools"]

log = logging.getLogger("mnemonite.tools")

# Keys that would let a model choose whose memory it touches; the host binds the scope instead.
_SCOPE_KEYS = frozenset({"user", "user_id", "userid", "agent", "agent_id", "session", "session_id", "scope"})
_TEXT_ARGS = frozenset({"text", "old", "new", "value", "query"})
_MAX_NAME = 200
# 20 ms gathers the rows of back-to-back calls into one write: bench/agent.py's block and conversation rows
# cost 1.8x their tier method with a write per call, about 1.05x with this.
_AUDIT_DELAY = 0.02


@dataclass(frozen=True)
class ToolRequest:
    """What an approval callback is shown: the tool, its guard tier and side effect, the scope, the arguments."""

    tool: str
    guard: GuardTier
    side_effect: str
    scope: Scope
    arguments: Mapping[str, Any]


Approve = Callable[[ToolRequest], bool | Awaitable[bool]]


@dataclass(frozen=True)
class GuardPolicy:
    """Which guard tiers the host lets a model use, and which need its approval per call.

    The default allows every tier and asks ``approve`` before a destructive one (``destroy``);
    without an ``approve`` callback those calls are denied. ``GuardPolicy.read_only()`` allows reads only.
    """

    allowed: frozenset[GuardTier] = frozenset({"read", "add", "rewrite", "destroy"})
    needs_approval: frozenset[GuardTier] = frozenset({"destroy"})
    approve: Approve | None = None

    @classmethod
    def read_only(cls) -> GuardPolicy:
        """A policy that lets the model read memory and change nothing."""
        return cls(allowed=frozenset({"read"}), needs_approval=frozenset())

    async def check(self, spec: ToolSpec, scope: Scope, args: BaseModel) -> ToolError | None:
        """None when the call may run, else why not."""
        if spec.guard not in self.allowed:
            return ToolError(code="not_allowed", message=f"{spec.name} is not enabled for you here",
                             hint="do not retry; tell the user you cannot change this memory")  # fmt: skip
        if spec.guard in self.needs_approval:
            request = ToolRequest(spec.name, spec.guard, spec.side_effect, scope, args.model_dump())
            verdict = self.approve(request) if self.approve is not None else False
            if inspect.isawaitable(verdict):
                verdict = await verdict
            if verdict is not True:
                return ToolError(code="needs_approval", message=f"{request.tool} needs approval, which was not given",
                                 hint="do not retry; ask the user to confirm first")  # fmt: skip
        return None


# Error type -> (code, what the model should do). The first matching type wins.
_ERRORS: tuple[tuple[type[MnemoniteError], str, str], ...] = (
    (BlockLimitError, "over_limit", "shorten the text by at least the amount given and call again"),
    (BlockPatchError, "no_unique_match", "read the block in your prompt and pass text that occurs exactly once"),
    (ReadOnlyBlockError, "read_only", "do not retry: this block cannot be edited"),
    (BlockConflictError, "conflict", "use another label"),
    (
        NotFoundError,
        "not_found",
        "check the id or label: use a label of a block in your context, or an id a search returned",
    ),
    (FactConflictError, "conflict", "the fact is no longer current: search again and use the current fact's id"),
    (GroupAccessError, "forbidden", "do not retry: you are not a member of that group"),
    (NoSessionError, "no_session", "do not retry: search memory with recall_episodes or fact_search instead"),
    (MemoryScopeError, "invalid_arguments", "fix the arguments and call again"),
    (InvalidInputError, "invalid_arguments", "fix the arguments and call again"),
    (StoreBusyError, "busy", "the memory is busy: call again in a few seconds"),
)


def _tool_error(error: MnemoniteError) -> ToolError:
    for kind, code, hint in _ERRORS:
        if isinstance(error, kind):
            return ToolError(code=code, message=str(error), hint=hint)
    return ToolError(code="internal_error", message=str(error), hint="do not retry this call now")


def _invalid(error: ValidationError) -> ToolError:
    problems = "; ".join(f"{'.'.join(str(p) for p in item['loc']) or 'arguments'}: {item['msg']}"
                         for item in error.errors(include_url=False, include_input=False))  # fmt: skip
    return ToolError(code="invalid_arguments", message=problems,
                     hint="call again with arguments that match the tool's schema")  # fmt: skip


@dataclass
class ToolSet:
    """The nine tools bound to one (user, agent[, session]): ``await tools.call(name, arguments)``.

    Built by ``mem.tools.for_scope(scope)``. The model never names a user, agent or session:
    a call that tries is refused. ``policy`` is the host's `GuardPolicy`.
    """

    memory: ToolMemory
    audit: AuditWriter
    scope: Scope
    policy: GuardPolicy = field(default_factory=GuardPolicy)
    elsewhere: bool = True

    @property
    def names(self) -> list[str]:
        """The tools' names, in the spec's order."""
        return list(TOOLS)

    def openai(self) -> list[dict[str, Any]]:
        """The tools in the OpenAI Chat Completions ``tools=`` format."""
        return openai_tools(TOOLS.values())

    def anthropic(self) -> list[dict[str, Any]]:
        """The tools in the Anthropic Messages ``tools=`` format."""
        return anthropic_tools(TOOLS.values())

    def mcp(self) -> list[dict[str, Any]]:
        """The tools as MCP ``tools/list`` entries (input and output schemas, behaviour annotations)."""
        return mcp_tools(TOOLS.values())

    async def call(
        self, name: str, arguments: Mapping[str, Any] | None = None, *, reveal: Reveal | None = None
    ) -> ToolResult:
        """Validate, apply the guard policy, run the tier method and audit one call; never raises for bad input.

        Secret text in the result is a marker unless ``reveal`` (a `Reveal`) is given for this call.
        """
        started, at = time.perf_counter(), utcnow()
        call_id = _new_id()
        reveal = check_reveal(reveal)
        spec = TOOLS.get(name) if isinstance(name, str) else None
        with tool_span(str(name)[:_MAX_NAME], self.scope.user, self.scope.agent or "") as traced:
            outcome, payload, secret = await self._outcome(spec, name, arguments, reveal)
            result = _result(str(name)[:_MAX_NAME], call_id, outcome, payload)
            traced(outcome, result.error.code if result.error else "")
        self._audit(spec, name, arguments, result, secret or reveal is not None, at, time.perf_counter() - started)
        return result

    async def _outcome(
        self, spec: ToolSpec | None, name: object, arguments: object, reveal: Reveal | None
    ) -> tuple[Outcome, BaseModel | ToolError, bool]:
        if spec is None:
            return "error", ToolError(code="unknown_tool", message=f"there is no memory tool named {name!r}",
                                      hint=f"use one of: {', '.join(TOOLS)}"), False  # fmt: skip
        if not isinstance(arguments, Mapping) and arguments is not None:
            return "error", ToolError(code="invalid_arguments", message="arguments must be a JSON object",
                                      hint="call again with an object of named arguments"), False  # fmt: skip
        given = dict(arguments or {})
        if smuggled := sorted(key for key in given if isinstance(key, str) and key.lower() in _SCOPE_KEYS):
            return "error", ToolError(code="scope_not_allowed", message=f"argument(s) {', '.join(smuggled)} are not"
                                      " accepted: whose memory this is was set by the host",
                                      hint="call again without them"), False  # fmt: skip
        try:
            args = spec.input.model_validate(given)
        except ValidationError as error:
            return "error", _invalid(error), False
        secret = args.__dict__.get("sensitivity") == "secret"  # not getattr: a missing pydantic attribute is slow
        if denied := await self.policy.check(spec, self.scope, args):
            return "denied", denied, secret
        try:
            output = await spec.run(self.memory, self.scope, args, reveal)
            hint = (
                await spec.elsewhere(self.memory, self.scope, args, output)
                if self.elsewhere and spec.elsewhere
                else None
            )
            if hint:
                said = output.__dict__.get("hint")
                output = output.model_copy(update={"hint": f"{said} {hint}" if said else hint})
        except MnemoniteError as error:
            return "error", _tool_error(error), secret
        except Exception as error:  # a model must get a result, never a traceback
            log.error("memory tool %s failed: %s", spec.name, type(error).__name__)
            return "error", ToolError(code="internal_error", message=f"{spec.name} failed unexpectedly",
                                      hint="do not retry this call"), secret  # fmt: skip
        return "ok", output, secret or output.__dict__.get("sensitivity") == "secret"

    def _audit(
        self, spec: ToolSpec | None, name: object, arguments: object, result: ToolResult, secret: bool,
        at: Any, elapsed: float,
    ) -> None:  # fmt: skip
        scope = self.scope
        shown, recognised = _audited_arguments(arguments, secret, self.memory.secrets)
        secret = secret or recognised
        error = _storable(result.error.model_dump()) if result.error else None
        body = result.output if result.ok else {"error": error}
        if secret and result.ok:
            body = {"redacted": MARKER}  # what a secret or revealed call returned is not kept
        call = ToolCall.trusted({  # built from validated parts: validating again costs a fast tool 10%
            "id": result.call_id, "user": scope.user, "agent": scope.agent or "", "session": scope.session,
            "tool": _storable(result.tool), "guard": spec.guard if spec else "",
            "side_effect": spec.side_effect if spec else "",
            "arguments": shown, "error_code": result.error.code if result.error else None, "result": body or {},
            "outcome": "ok" if result.ok else ("denied" if result.error and result.error.code in _DENIALS else "error"),
            "called_at": at, "duration_ms": elapsed * 1000,
        })  # fmt: skip
        events: Sequence[SessionEvent] = ()
        if scope.session is not None and scope.agent is not None:
            payload = {"call_id": call.id, "tool": call.tool, "arguments": shown, "outcome": call.outcome,
                       "error_code": call.error_code}  # fmt: skip
            events = [SessionEvent.trusted({
                "kind": "tool_call", "name": call.tool, "user": scope.user, "session": scope.session,
                "agent": scope.agent, "payload": payload, "id": _new_id(), "at": at,
                "sensitivity": "secret" if secret else "internal",
            })]  # fmt: skip
        self.audit.add(call, events)


_DENIALS = frozenset({"not_allowed", "needs_approval"})


def _new_id() -> str:
    """A random id like `new_id`'s (32 hex characters), at a tenth of uuid4's cost."""
    return os.urandom(16).hex()


def _audited_arguments(arguments: object, secret: bool, guard: SecretGuard) -> tuple[dict[str, Any], bool]:
    """The arguments as the audit keeps them: tagged secret text as a marker, recognised secrets masked;
    and whether any was recognised."""
    if not isinstance(arguments, Mapping):
        return {"$invalid": type(arguments).__name__}, False
    shown: dict[str, Any] = {}
    for key, value in list(arguments.items())[:50]:
        text = _storable(str(key)[:_MAX_NAME])
        shown[text] = MARKER if secret and text in _TEXT_ARGS and isinstance(value, str) else _jsonable(value)
    masked, level = guard.data(shown, "internal")
    return masked, level == "secret"


def _jsonable(value: Any) -> Any:
    if isinstance(value, int) and not -INT64_MAX - 1 <= value <= INT64_MAX:
        return f"<an integer of {value.bit_length()} bits>"  # the audit stores 64-bit JSON numbers
    if value is None or isinstance(value, bool | int | float | str):
        return _storable(value[:20_000]) if isinstance(value, str) else value
    return _storable(repr(value)[:2_000])


def _storable(value: Any) -> Any:
    """Text as the audit log can store it: a model's JSON may carry lone surrogates or NUL, which no
    database text holds, so they are kept escaped (the call itself was refused or ran without them)."""
    if isinstance(value, str):
        if text_problem(value) is None:
            return value
        return value.encode("utf-8", "backslashreplace").decode().replace("\x00", "\\x00")
    if isinstance(value, dict):
        return {_storable(key): _storable(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_storable(item) for item in value]
    return value


def _result(tool: str, call_id: str, outcome: Outcome, payload: BaseModel | ToolError) -> ToolResult:
    if outcome == "ok":
        output = payload.model_dump(mode="json")
        return ToolResult.trusted({"tool": tool, "ok": True, "output": output, "error": None, "call_id": call_id})
    assert isinstance(payload, ToolError)
    return ToolResult.trusted({"tool": tool, "ok": False, "output": None, "error": payload, "call_id": call_id})


class AuditWriter:
    """Writes the audit rows (and session events) of tool calls in the background, in batches.

    A call returns without waiting for its row: the write of one small row costs as much as a fast
    tool itself (bench/agent.py). Rows are gathered for ``_AUDIT_DELAY`` and written in one transaction,
    so the log trails the calls by a few milliseconds; `flush` (run by `calls` and `Memory.close`) waits.
    """

    def __init__(self, store: ToolCallStore) -> None:
        self._store = store
        self._calls: list[ToolCall] = []
        self._events: list[SessionEvent] = []
        self._task: asyncio.Task[None] | None = None

    def add(self, call: ToolCall, events: Sequence[SessionEvent]) -> None:
        self._calls.append(call)
        self._events.extend(events)
        if self._task is None or self._task.done():
            self._task = asyncio.get_running_loop().create_task(self._drain())

    async def _drain(self) -> None:
        while self._calls or self._events:
            await asyncio.sleep(_AUDIT_DELAY)
            calls, events = self._calls, self._events
            self._calls, self._events = [], []
            try:
                await self._store.log_tool_calls(calls, events)
            except Exception as error:  # the caller is gone: say so in the log, keep the rows for the next flush
                log.error("could not write %d tool-call audit rows: %s", len(calls), error)
                self._calls[:0], self._events[:0] = calls, events
                return

    async def flush(self) -> None:
        """Wait until every queued audit row is written (raises if the store refuses them)."""
        while self._task is not None and not self._task.done():
            await asyncio.shield(self._task)
        if self._calls or self._events:
            calls, events = self._calls, self._events
            self._calls, self._events = [], []
            await self._store.log_tool_calls(calls, events)


@checked
class Tools:
    """``mem.tools``: bind the nine memory tools to a scope, and read their audit log."""

    def __init__(self, memory: ToolMemory, store: ToolCallStore) -> None:
        self._memory = memory
        self._store = store
        self._audit = AuditWriter(store)

    def for_scope(self, scope: Scope, *, policy: GuardPolicy | None = None, elsewhere: bool = True) -> ToolSet:
        """The tools bound to ``scope`` (a user and an agent; a session too for conversation_search).

        ``elsewhere``: a search that finds nothing under the agent while other agents of the user hold matching
        records says which (agents and counts, no content) in its ``hint``; False for a caller that must not
        learn of the user's other agents."""
        if not isinstance(scope, Scope) or scope.agent is None:
            raise MemoryScopeError("tools are bound to Scope(user=..., agent=...[, session=...])")
        return ToolSet(self._memory, self._audit, scope, policy or GuardPolicy(), elsewhere)

    async def calls(self, scope: Scope | str, *, limit: int = 100) -> list[ToolCall]:
        """The audit rows of a user's (and agent's) tool calls, newest first."""
        read = scope if isinstance(scope, Scope) else Scope(user=scope)
        await self.flush()
        return await self._store.tool_calls(read.user, read.agent, limit=limit)

    async def flush(self) -> None:
        """Wait until the audit rows of every call made so far are written (see `AuditWriter`)."""
        await self._audit.flush()
