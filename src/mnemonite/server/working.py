"""The working tier over HTTP: an agent's size-limited blocks (define, write, append, patch, attach, detach,
list, read, compile).

A block belongs to one (user, agent): the key's user, and the key's agent (or, for a key bound to a
user only, the ``agent`` the request names). A label the scope's agent does not see is 404, whoever
else holds one. Attaching a block to another agent (or detaching it from one) names that agent, so a
key bound to one agent may only attach to and detach from itself.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from mnemonite.models.base import Model
from mnemonite.models.blocks import DEFAULT_BLOCK_CHARS, Block
from mnemonite.models.sensitivity import Sensitivity
from mnemonite.privacy import Reveal
from mnemonite.scope import Scope
from mnemonite.server.episodic import ScopeFields
from mnemonite.server.verbs import Call, Page, Paged, Verb, page_of

__all__ = ["VERBS", "reveal_for"]

MAX_VALUE = 1_000_000  # a block's own limit is at most this many characters


class DefineBody(ScopeFields):
    """A new block of the scope's agent (``replace``: redefine the agent's own block of that label)."""

    label: str = Field(min_length=1, max_length=100)
    value: str = Field(default="", max_length=MAX_VALUE)
    limit: int = Field(default=DEFAULT_BLOCK_CHARS, ge=1, le=MAX_VALUE)
    token_limit: int | None = Field(default=None, ge=1, le=MAX_VALUE)
    description: str = Field(default="", max_length=2_000)
    read_only: bool = False
    sensitivity: Sensitivity | None = None
    replace: bool = False


class WriteBody(ScopeFields):
    """The block's new value, whole."""

    value: str = Field(max_length=MAX_VALUE)


class AppendBody(ScopeFields):
    """Text to add at the end of the block, after ``separator`` unless the block is empty."""

    text: str = Field(min_length=1, max_length=MAX_VALUE)
    separator: str = Field(default="\n", max_length=100)


class PatchBody(ScopeFields):
    """Replace the one occurrence of ``old`` in the block by ``new``."""

    old: str = Field(min_length=1, max_length=MAX_VALUE)
    new: str = Field(max_length=MAX_VALUE)


class AttachBody(ScopeFields):
    """Show the block to ``target``, another agent of the same user."""

    target: str = Field(min_length=1, max_length=256)


class DetachBody(ScopeFields):
    """Hide the block from ``target`` (default: from the agent that owns it); the block stays."""

    target: str | None = Field(default=None, min_length=1, max_length=256)


class BlocksQuery(Paged, ScopeFields):
    """The blocks the scope's agent sees, oldest first (a key bound to a user only, naming no agent:
    every block of the user)."""


class CompileBody(ScopeFields):
    """The agent's blocks rendered for a prompt within ``max_tokens``. A secret block's value is a
    marker unless ``reveal`` (why it may be shown) is given by a key with the ``admin`` capability."""

    max_tokens: int = Field(default=2_000, ge=1, le=200_000)
    reveal: str | None = Field(default=None, min_length=1, max_length=500)


class Compiled(Model):
    """The prompt text of the agent's blocks."""

    text: str


def reveal_for(call: Call[Any], reason: str | None) -> Reveal | None:
    """The library's `Reveal` for a request that asks for one; only an ``admin`` key may (else 403)."""
    if reason is None:
        return None
    call.who.require("admin")
    return Reveal(reason)


def _scope(call: Call[Any]) -> Scope:
    return call.who.scope(user=call.body.user, agent=call.body.agent)


def _label(call: Call[Any]) -> str:
    return call.ids["label"]


async def define(call: Call[DefineBody]) -> Block:
    """Define a block of the scope's agent; a label the agent sees already is 409 unless ``replace``."""
    b = call.body
    return await call.mem.working.define(
        _scope(call), b.label, b.value, limit=b.limit, token_limit=b.token_limit, description=b.description,
        read_only=b.read_only, sensitivity=b.sensitivity, replace=b.replace,
    )  # fmt: skip


async def blocks(call: Call[BlocksQuery]) -> Page[Block]:
    """The blocks the scope's agent sees, oldest first (paged)."""
    return page_of(await call.mem.working.list(_scope(call)), call.body)


async def read(call: Call[ScopeFields]) -> Block:
    """The block the scope's agent sees under this label."""
    return await call.mem.working.read(_scope(call), _label(call))


async def write(call: Call[WriteBody]) -> Block:
    """Replace the block's value (over its limit: 422, saying how much to cut; read-only: 409)."""
    return await call.mem.working.write(_scope(call), _label(call), call.body.value)


async def append(call: Call[AppendBody]) -> Block:
    """Add text at the end of the block."""
    return await call.mem.working.append(_scope(call), _label(call), call.body.text, separator=call.body.separator)


async def patch(call: Call[PatchBody]) -> Block:
    """Replace the one occurrence of ``old`` in the block; none or several is 422."""
    return await call.mem.working.patch(_scope(call), _label(call), call.body.old, call.body.new)


async def attach(call: Call[AttachBody]) -> Block:
    """Show the scope's agent's block to another agent of the same user."""
    scope = _scope(call)
    call.who.scope(agent=call.body.target)
    return await call.mem.working.attach(scope, _label(call), call.body.target)


async def detach(call: Call[DetachBody]) -> Block:
    """Hide the scope's agent's block from an agent (default: from its owner); the block stays."""
    scope = _scope(call)
    if call.body.target is not None:
        call.who.scope(agent=call.body.target)
    return await call.mem.working.detach(scope, _label(call), call.body.target)


async def compile_blocks(call: Call[CompileBody]) -> Compiled:
    """The agent's blocks rendered for a prompt, oldest first, within a token budget."""
    reveal = reveal_for(call, call.body.reveal)
    text = await call.mem.working.compile(_scope(call), call.body.max_tokens, reveal=reveal)
    return Compiled(text=text)


VERBS: tuple[Verb, ...] = (
    Verb("working", "working.define", "POST", "/v1/blocks", "write", define, Block, body=DefineBody, status=201),
    Verb("working", "working.list", "GET", "/v1/blocks", "read", blocks, Page[Block], query=BlocksQuery),
    Verb("working", "working.compile", "POST", "/v1/blocks/compile", "read", compile_blocks, Compiled,
         body=CompileBody),
    Verb("working", "working.read", "GET", "/v1/blocks/{label}", "read", read, Block, query=ScopeFields),
    Verb("working", "working.write", "POST", "/v1/blocks/{label}/write", "write", write, Block, body=WriteBody),
    Verb("working", "working.append", "POST", "/v1/blocks/{label}/append", "write", append, Block,
         body=AppendBody),
    Verb("working", "working.patch", "POST", "/v1/blocks/{label}/patch", "write", patch, Block, body=PatchBody),
    Verb("working", "working.attach", "POST", "/v1/blocks/{label}/attach", "write", attach, Block,
         body=AttachBody),
    Verb("working", "working.detach", "POST", "/v1/blocks/{label}/detach", "write", detach, Block,
         body=DetachBody),
)  # fmt: skip
