"""What the tools call on a memory: the four tiers they run and the recogniser of secrets their audit uses.

`Memory` satisfies it; the tools name this protocol instead of `Memory`, so the tools package and
``mnemonite.memory`` do not import each other (the memory builds its tools, the tools never build a memory).
"""

from __future__ import annotations

from typing import Protocol

from mnemonite.privacy import SecretGuard
from mnemonite.tiers.episodic import EpisodicTier
from mnemonite.tiers.semantic import SemanticTier
from mnemonite.tiers.session import SessionTier
from mnemonite.tiers.working import WorkingTier

__all__ = ["ToolMemory"]


class ToolMemory(Protocol):
    """The parts of a memory the nine tools reach."""

    @property
    def episodic(self) -> EpisodicTier: ...

    @property
    def semantic(self) -> SemanticTier: ...

    @property
    def working(self) -> WorkingTier: ...

    @property
    def session(self) -> SessionTier: ...

    @property
    def secrets(self) -> SecretGuard: ...
