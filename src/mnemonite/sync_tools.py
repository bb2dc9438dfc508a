"""Blocking facades of the memory tools: one-line delegates to `mnemonite.tools`."""

from __future__ import annotations

from collections.abc import Coroutine, Mapping
from typing import Any, Protocol, TypeVar

from mnemonite.models.tools import ToolCall, ToolResult
from mnemonite.privacy import Reveal
from mnemonite.scope import Scope
from mnemonite.tools.dispatch import GuardPolicy, Tools, ToolSet

__all__ = ["SyncToolSet", "SyncTools"]

T = TypeVar("T")


class _Runner(Protocol):
    def run(self, coro: Coroutine[Any, Any, T]) -> T: ...


class SyncToolSet:
    """Blocking `ToolSet`: the nine tools bound to one scope."""

    def __init__(self, tools: ToolSet, loop: _Runner) -> None:
        self._tools, self._run = tools, loop.run
        self.scope, self.policy = tools.scope, tools.policy

    @property
    def names(self) -> list[str]:
        return self._tools.names

    def call(
        self, name: str, arguments: Mapping[str, Any] | None = None, *, reveal: Reveal | None = None
    ) -> ToolResult:
        return self._run(self._tools.call(name, arguments, reveal=reveal))

    def openai(self) -> list[dict[str, Any]]:
        return self._tools.openai()

    def anthropic(self) -> list[dict[str, Any]]:
        return self._tools.anthropic()

    def mcp(self) -> list[dict[str, Any]]:
        return self._tools.mcp()


class SyncTools:
    """Blocking ``mem.tools``."""

    def __init__(self, tools: Tools, loop: _Runner) -> None:
        self._tools, self._loop = tools, loop

    def for_scope(self, scope: Scope, *, policy: GuardPolicy | None = None, elsewhere: bool = True) -> SyncToolSet:
        return SyncToolSet(self._tools.for_scope(scope, policy=policy, elsewhere=elsewhere), self._loop)

    def calls(self, scope: Scope | str, *, limit: int = 100) -> list[ToolCall]:
        return self._loop.run(self._tools.calls(scope, limit=limit))

    def flush(self) -> None:
        self._loop.run(self._tools.flush())
