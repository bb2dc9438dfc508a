"""Procedural memory: named workflows an agent can match to the task at hand."""

from __future__ import annotations

from pydantic import AwareDatetime, Field, field_validator

from mnemonite._time import utcnow
from mnemonite.models.base import Model, new_id
from mnemonite.models.sensitivity import Sensitivity

__all__ = ["Procedure", "ProcedureMatch"]


class Procedure(Model):
    """A recipe of one (user, agent): ``name`` is unique there; ``trigger`` says when it applies."""

    id: str = Field(default_factory=new_id, min_length=1, max_length=256)
    user: str
    agent: str
    name: str = Field(min_length=1, max_length=200)
    steps: tuple[str, ...] = Field(min_length=1, max_length=200)
    trigger: str = Field(default="", max_length=10_000)
    sensitivity: Sensitivity = "internal"
    created_at: AwareDatetime = Field(default_factory=utcnow)
    updated_at: AwareDatetime = Field(default_factory=utcnow)

    @field_validator("name")
    @classmethod
    def _name(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("name must not be blank")
        return value.strip()

    @field_validator("steps")
    @classmethod
    def _steps(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        if any(not step.strip() for step in value):
            raise ValueError("every step must be non-blank text")
        return tuple(step.strip() for step in value)

    def text(self) -> str:
        """What a task is matched against: the name, the trigger and the steps."""
        return "\n".join([self.name, self.trigger, *self.steps])


class ProcedureMatch(Model):
    """A procedure and how well it matches a task (higher is better; fused ranks, not a probability)."""

    procedure: Procedure
    score: float
