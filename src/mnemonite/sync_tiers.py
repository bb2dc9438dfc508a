"""Blocking facades of the agent tiers (working, session, procedural, shared): one-line delegates."""

from __future__ import annotations

import builtins
from collections.abc import Coroutine, Iterable, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any, Protocol, TypeVar

from mnemonite.models import Episode
from mnemonite.models.blocks import DEFAULT_BLOCK_CHARS, Block
from mnemonite.models.messages import Attribution, EventKind, Message, MessageHit, SessionEvent
from mnemonite.models.procedures import Procedure, ProcedureMatch
from mnemonite.models.sensitivity import Sensitivity
from mnemonite.models.shared import Group, GroupKind, SharedItem
from mnemonite.privacy import Reveal
from mnemonite.scope import Scope
from mnemonite.tiers.procedural import ProceduralTier
from mnemonite.tiers.session import SessionTier
from mnemonite.tiers.shared import SharedTier
from mnemonite.tiers.working import WorkingTier

__all__ = ["SyncProceduralTier", "SyncSessionTier", "SyncSharedTier", "SyncWorkingTier"]

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

    def compile(self, scope: Scope, max_tokens: int = 2_000, *, reveal: Reveal | None = None) -> str:
        return self._run(self._tier.compile(scope, max_tokens, reveal=reveal))


class SyncSessionTier:
    """Blocking ``mem.session``."""

    def __init__(self, tier: SessionTier, loop: _Runner) -> None:
        self._tier, self._run = tier, loop.run

    def push(self, scope: Scope, message: Message) -> Message:
        return self._run(self._tier.push(scope, message))

    def push_many(self, scope: Scope, messages: Iterable[Message]) -> builtins.list[Message]:
        return self._run(self._tier.push_many(scope, messages))

    def list(
        self, scope: Scope | str, *, limit: int = 50, compacted: bool = False, until: datetime | None = None
    ) -> builtins.list[Message]:
        return self._run(self._tier.list(scope, limit=limit, compacted=compacted, until=until))

    def search(self, scope: Scope | str, query: str, k: int = 10) -> builtins.list[MessageHit]:
        return self._run(self._tier.search(scope, query, k))

    def attributed_for(self, scope: Scope | str, agent: str) -> Attribution:
        return self._run(self._tier.attributed_for(scope, agent))

    def log_event(
        self,
        scope: Scope,
        kind: EventKind,
        name: str,
        payload: dict[str, Any] | None = None,
        *,
        sensitivity: Sensitivity | None = None,
    ) -> SessionEvent:
        return self._run(self._tier.log_event(scope, kind, name, payload, sensitivity=sensitivity))

    def events(self, scope: Scope | str) -> builtins.list[SessionEvent]:
        return self._run(self._tier.events(scope))

    def flush_important(self, scope: Scope, *, min_importance: float = 0.7) -> builtins.list[Episode]:
        return self._run(self._tier.flush_important(scope, min_importance=min_importance))

    def compact(self, scope: Scope, *, keep_last: int = 10, max_lines: int = 8) -> Message | None:
        return self._run(self._tier.compact(scope, keep_last=keep_last, max_lines=max_lines))

    def export(self, scope: Scope, path: str | Path, *, reveal: Reveal | None = None) -> int:
        return self._run(self._tier.export(scope, path, reveal=reveal))

    def replay(self, path: str | Path) -> int:
        return self._run(self._tier.replay(path))


class SyncProceduralTier:
    """Blocking ``mem.procedural``."""

    def __init__(self, tier: ProceduralTier, loop: _Runner) -> None:
        self._tier, self._run = tier, loop.run

    def define(
        self,
        scope: Scope,
        name: str,
        steps: Sequence[str],
        *,
        trigger: str = "",
        sensitivity: Sensitivity | None = None,
    ) -> Procedure:
        return self._run(self._tier.define(scope, name, steps, trigger=trigger, sensitivity=sensitivity))

    def remove(self, scope: Scope, name: str) -> Procedure:
        return self._run(self._tier.remove(scope, name))

    def list(self, scope: Scope | str) -> builtins.list[Procedure]:
        return self._run(self._tier.list(scope))

    def activate(
        self, scope: Scope, task_text: str, k: int = 3, *, min_similarity: float = 0.2
    ) -> builtins.list[ProcedureMatch]:
        return self._run(self._tier.activate(scope, task_text, k, min_similarity=min_similarity))


class SyncSharedTier:
    """Blocking ``mem.shared``."""

    def __init__(self, tier: SharedTier, loop: _Runner) -> None:
        self._tier, self._run = tier, loop.run

    def create(self, scope: Scope, name: str, *, kind: GroupKind = "team") -> Group:
        return self._run(self._tier.create(scope, name, kind=kind))

    def add_member(self, scope: Scope, group: str, member: Scope, *, owner: bool = False) -> Group:
        return self._run(self._tier.add_member(scope, group, member, owner=owner))

    def remove_member(self, scope: Scope, group: str, member: Scope) -> Group:
        return self._run(self._tier.remove_member(scope, group, member))

    def groups(self, scope: Scope) -> builtins.list[Group]:
        return self._run(self._tier.groups(scope))

    def attach(
        self,
        scope: Scope,
        group: str,
        *,
        fact_id: str | None = None,
        block: str | None = None,
        sensitivity: Sensitivity | None = None,
    ) -> SharedItem:
        return self._run(self._tier.attach(scope, group, fact_id=fact_id, block=block, sensitivity=sensitivity))

    def detach(self, scope: Scope, group: str, item_id: str) -> SharedItem:
        return self._run(self._tier.detach(scope, group, item_id))

    def list_for(self, scope: Scope, *, group: str | None = None) -> builtins.list[SharedItem]:
        return self._run(self._tier.list_for(scope, group=group))
