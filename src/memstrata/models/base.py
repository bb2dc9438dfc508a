"""The base of every memstrata model: validation failures raise memstrata's own errors."""

from __future__ import annotations

import uuid
from typing import Any, ClassVar, Self

from pydantic import BaseModel, ConfigDict, ModelWrapValidatorHandler, ValidationError, model_validator

from memstrata.errors import InvalidInputError, MemstrataError


def new_id() -> str:
    """A fresh random id (32 hex characters)."""
    return uuid.uuid4().hex


def describe(error: ValidationError) -> str:
    """One line per problem: where it is and what was wrong."""
    lines = []
    for item in error.errors():
        where = ".".join(str(part) for part in item["loc"]) or "value"
        lines.append(f"{where}: {item['msg']}")
    return "; ".join(lines)


class Model(BaseModel):
    """Frozen, strict-keyed pydantic model whose validation errors are `InvalidInputError`s.

    Subclasses name a narrower error in ``error_type``; the message lists every problem.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")
    error_type: ClassVar[type[MemstrataError]] = InvalidInputError

    @model_validator(mode="wrap")
    @classmethod
    def _typed_errors(cls, data: Any, handler: ModelWrapValidatorHandler[Self]) -> Self:
        try:
            return handler(data)
        except ValidationError as error:
            raise cls.error_type(f"invalid {cls.__name__}: {describe(error)}") from None
