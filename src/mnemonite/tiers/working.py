"""The working tier: size-limited blocks an agent keeps in its prompt and edits itself (Letta's core memory).

A block belongs to a (user, agent) and may be attached to other agents of the same user.
Writes are checked against the block's limits before anything is stored: one over the
limit raises `BlockLimitError` saying how much to cut; a read-only block refuses edits.
Under a scope that names a session, every read and write is also logged to that session.
"""

from __future__ import annotations

import builtins
from collections.abc import Callable

from mnemonite._time import utcnow
from mnemonite.errors import BlockLimitError, BlockPatchError, InvalidInputError, NotFoundError, ReadOnlyBlockError
from mnemonite.inputs import checked
from mnemonite.models.blocks import DEFAULT_BLOCK_CHARS, Block
from mnemonite.models.messages import SessionEvent
from mnemonite.models.sensitivity import Sensitivity, check_sensitivity
from mnemonite.privacy import MARKER, Reveal, SecretGuard, check_reveal
from mnemonite.scope import Scope, as_scope, check_id
from mnemonite.store import Store
from mnemonite.tiers._log import agent_scope, event_for
from mnemonite.tokens import TokenCounter, default_counter

__all__ = ["WorkingTier", "check_size", "patched", "render"]

_TRUNCATED = "\n[... truncated to fit the prompt budget]"


def check_size(block: Block, value: str, counter: TokenCounter) -> None:
    """Raise `BlockLimitError` when ``value`` does not fit the block, saying how much to cut."""
    over = len(value) - block.limit
    if over > 0:
        raise BlockLimitError(
            f"block {block.label!r} would hold {len(value)} characters, over its limit of {block.limit}:"
            f" cut at least {over} characters"
        )
    if block.token_limit is not None:
        tokens = counter.count(value)
        if tokens > block.token_limit:
            raise BlockLimitError(
                f"block {block.label!r} would hold {tokens} tokens, over its limit of {block.token_limit}:"
                f" cut at least {tokens - block.token_limit} tokens"
            )


def patched(block: Block, old: str, new: str) -> str:
    """The block's value with the one occurrence of ``old`` replaced by ``new``."""
    if not isinstance(old, str) or not isinstance(new, str) or not old:
        raise BlockPatchError("patch needs the exact, non-empty text to replace and a replacement string")
    found = _occurrences(block.value, old)
    if found == 0:
        raise BlockPatchError(
            f"the text to replace does not occur in block {block.label!r}: read the block and copy the exact text"
        )
    if found > 1:
        raise BlockPatchError(
            f"the text to replace occurs {found} times in block {block.label!r}: include more of the surrounding"
            " text so that it matches exactly once"
        )
    return block.value.replace(old, new, 1)


def _occurrences(text: str, part: str) -> int:
    """How many places ``part`` starts at in ``text``, overlapping ones included."""
    count, start = 0, text.find(part)
    while start >= 0:
        count, start = count + 1, text.find(part, start + 1)
    return count


def render(block: Block, value: str | None = None) -> str:
    """A block as prompt text: its label as a tag, its description, its value."""
    lines = [f"<{block.label}>"]
    if block.description:
        lines.append(f"<description>{block.description}</description>")
    lines += ["<value>", block.value if value is None else value, "</value>", f"</{block.label}>"]
    return "\n".join(lines)


def _fit(block: Block, budget: int, counter: TokenCounter) -> str | None:
    """The block rendered with as much of its value as fits ``budget`` tokens, or None if nothing does."""
    if counter.count(render(block, _TRUNCATED)) > budget:
        return None
    low, high = 0, len(block.value)
    while low < high:  # the longest prefix that fits: budgets are small, a dozen counts
        middle = (low + high + 1) // 2
        if counter.count(render(block, block.value[:middle] + _TRUNCATED)) <= budget:
            low = middle
        else:
            high = middle - 1
    return render(block, block.value[:low] + _TRUNCATED)


@checked
class WorkingTier:
    """``mem.working``: define, write, append, patch, attach, detach, list, read, compile."""

    def __init__(
        self,
        store: Store,
        *,
        sensitivity: Sensitivity = "internal",
        counter: TokenCounter | None = None,
        guard: SecretGuard | None = None,
    ):
        self._store = store
        self._sensitivity = sensitivity
        self._counter = counter
        self._guard = guard or SecretGuard()

    @property
    def counter(self) -> TokenCounter:
        """The token counter limits and budgets are measured with."""
        if self._counter is None:
            self._counter = default_counter()
        return self._counter

    async def define(
        self,
        scope: Scope,
        label: str,
        value: str = "",
        *,
        limit: int = DEFAULT_BLOCK_CHARS,
        token_limit: int | None = None,
        description: str = "",
        read_only: bool = False,
        sensitivity: Sensitivity | None = None,
        replace: bool = False,
    ) -> Block:
        """Create the agent's block ``label``, attached to that agent.

        A label the agent sees already raises `BlockConflictError`, unless ``replace=True``
        redefines the agent's own block (value, limits, flags; the only change a read-only
        block accepts). A value over the limits raises `BlockLimitError`.
        """
        user, agent = agent_scope(scope, "working.define")
        _text(value, "value")
        _text(description, "description")
        (value, description), level = self._guard.texts(
            [value, description], check_sensitivity(sensitivity, self._sensitivity)
        )
        block = Block(
            user=user, agent=agent, label=label, value=value, description=description, limit=limit,
            token_limit=token_limit, read_only=read_only, agents=(agent,), sensitivity=level,
        )  # fmt: skip
        check_size(block, value, self.counter)
        return await self._store.define_block(block, replace=replace, log=self._log(scope, "working.define"))

    async def write(self, scope: Scope, label: str, value: str) -> Block:
        """Replace the value of a block the agent sees (the ``block_rethink`` tool)."""
        _text(value, "value")
        return await self._edit(scope, label, "working.write", lambda block: value)

    async def append(self, scope: Scope, label: str, text: str, *, separator: str = "\n") -> Block:
        """Add text at the end of a block (after ``separator`` unless the block is empty)."""
        _text(text, "text")
        return await self._edit(
            scope, label, "working.append", lambda block: f"{block.value}{separator}{text}" if block.value else text
        )

    async def patch(self, scope: Scope, label: str, old: str, new: str) -> Block:
        """Replace the one occurrence of ``old`` in a block by ``new``; zero or several raise `BlockPatchError`."""
        return await self._edit(scope, label, "working.patch", lambda block: patched(block, old, new))

    async def attach(self, scope: Scope, label: str, agent: str) -> Block:
        """Show the scope's agent's block ``label`` to another ``agent`` of the same user."""
        user, owner = agent_scope(scope, "working.attach")
        return await self._store.attach_block(
            user, owner, label, check_id("agent", agent), utcnow(), self._log(scope, "working.attach")
        )

    async def detach(self, scope: Scope, label: str, agent: str | None = None) -> Block:
        """Hide the scope's agent's block ``label`` from ``agent`` (default: from its owner); the block stays."""
        user, owner = agent_scope(scope, "working.detach")
        target = owner if agent is None else check_id("agent", agent)
        return await self._store.detach_block(user, owner, label, target, self._log(scope, "working.detach"))

    async def list(self, scope: Scope | str) -> builtins.list[Block]:
        """The blocks the scope's agent sees, oldest first (a user id or agent-less scope: every block of the user)."""
        read = as_scope(scope)
        blocks = await self._store.blocks(read.user, read.agent)
        await self._read(read, blocks)
        return blocks

    async def read(self, scope: Scope, label: str) -> Block:
        """The block labelled ``label`` that the scope's agent sees, or `NotFoundError`."""
        user, agent = agent_scope(scope, "working.read")
        found = await self._store.blocks(user, agent, label)
        if not found:
            raise NotFoundError(f"agent {agent!r} sees no block labelled {label!r}; define or attach it first")
        await self._read(scope, found)
        return found[0]

    async def compile(self, scope: Scope, max_tokens: int = 2_000, *, reveal: Reveal | None = None) -> str:
        """The agent's blocks rendered for a prompt, oldest first, within ``max_tokens``.

        A block that does not fit whole is cut (and says so); the blocks after it are left out. A
        secret block's value is a marker unless ``reveal`` is given (the prompt goes to a model).
        """
        shown = check_reveal(reveal) is not None
        user, agent = agent_scope(scope, "working.compile")
        if not isinstance(max_tokens, int) or max_tokens < 1:
            raise InvalidInputError(f"max_tokens must be a positive integer, got {max_tokens!r}")
        blocks = await self._store.blocks(user, agent)
        if not shown:
            blocks = [b.model_copy(update={"value": MARKER}) if b.sensitivity == "secret" else b for b in blocks]
        parts: builtins.list[str] = []
        used = 0
        for block in blocks:
            text = render(block)
            cost = self.counter.count(text) + (1 if parts else 0)
            if used + cost > max_tokens:
                cut = _fit(block, max_tokens - used - (1 if parts else 0), self.counter)
                parts += [cut] if cut is not None else []
                break
            parts.append(text)
            used += cost
        await self._read(scope, blocks)
        return "\n".join(parts)

    async def _edit(self, scope: Scope, label: str, name: str, value_of: Callable[[Block], str]) -> Block:
        user, agent = agent_scope(scope, name)

        def edit(block: Block) -> Block:
            if block.read_only:
                raise ReadOnlyBlockError(f"block {block.label!r} is read-only; it cannot be edited")
            (value,), level = self._guard.texts([value_of(block)], block.sensitivity)
            check_size(block, value, self.counter)
            return block.model_copy(update={"value": value, "updated_at": utcnow(), "sensitivity": level})

        return await self._store.edit_block(user, agent, label, edit, self._log(scope, name))

    def _log(self, scope: Scope, name: str) -> Callable[[Block], SessionEvent | None]:
        def log(block: Block) -> SessionEvent | None:
            return event_for(scope, "memory_write", name, {"block": block.model_dump(mode="json")}, block.sensitivity)

        return log

    async def _read(self, scope: Scope, blocks: builtins.list[Block]) -> None:
        event = event_for(scope, "memory_read", "working.read", {"blocks": [b.id for b in blocks]})
        if event is not None:
            await self._store.log_events([event])


def _text(value: object, name: str) -> None:
    if not isinstance(value, str):
        raise InvalidInputError(f"{name} must be a string, got {type(value).__name__}")
