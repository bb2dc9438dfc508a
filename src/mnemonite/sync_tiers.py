"""Blocking facades of the agent tiers (working, session, procedural, shared): one-line delegates."""

from __future__ import annotations

import builtins
from collections.abc import Coroutine
from typing import Any, Protocol, TypeVar

from mnemonite.models.blocks import DEFAULT_BLOCK_CHARS, Block
from mnemonite.models.sensitivity import Sensitivity
from mnemonite.scope import Scope
from mnemonite.tiers.working import WorkingTier

__all__ = ["SyncWorkingTier"]

T = TypeVar("T")


class _Runner(Protocol):
    def run(self, coro: Coroutine[Any, Any, T]) -> T: ...


class SyncWorkingTier:
    """Blocking ``mem.working``."""

    def __init__(self, tier: WorkingTier, loop: _Runner) -> None:
        self._tier, self._run = tier, loop.run

    def define(
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
        return self._run(
            self._tier.define(
                scope, label, value, limit=limit, token_limit=token_limit, description=description,
                read_only=read_only, sensitivity=sensitivity, replace=replace,
            )
        )  # fmt: skip

    def write(self, scope: Scope, label: str, value: str) -> Block:
        return self._run(self._tier.write(scope, label, value))

    def append(self, scope: Scope, label: str, text: str, *, separator: str = "\n") -> Block:
        return self._run(self._tier.append(scope, label, text, separator=separator))

    def patch(self, scope: Scope, label: str, old: str, new: str) -> Block:
        return self._run(self._tier.patch(scope, label, old, new))

    def attach(self, scope: Scope, label: str, agent: str) -> Block:
        return self._run(self._tier.attach(scope, label, agent))

    def detach(self, scope: Scope, label: str, agent: str | None = None) -> Block:
        return self._run(self._tier.detach(scope, label, agent))

    def list(self, scope: Scope | str) -> builtins.list[Block]:
        return self._run(self._tier.list(scope))

    def read(self, scope: Scope, label: str) -> Block:
        return self._run(self._tier.read(scope, label))

    def compile(self, scope: Scope, max_tokens: int = 2_000) -> str:
        return self._run(self._tier.compile(scope, max_tokens))
