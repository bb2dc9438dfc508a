"""The base of every mnemonite model: validation failures raise mnemonite's own errors."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Annotated, Any, ClassVar, Self

from pydantic import (
    AfterValidator,
    AwareDatetime,
    BaseModel,
    ConfigDict,
    ModelWrapValidatorHandler,
    ValidationError,
    model_validator,
)

from mnemonite.errors import InvalidInputError, MnemoniteError
from mnemonite.inputs import check_strings, moment_problem


def new_id() -> str:
    """A fresh random id (32 hex characters)."""
    return uuid.uuid4().hex


def _storable(value: datetime) -> datetime:
    problem = moment_problem(value)
    if problem:
        raise ValueError(problem)
    return value


# A timezone-aware time that can be stored: in UTC, within the years 1-9999.
Moment = Annotated[AwareDatetime, AfterValidator(_storable)]


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
    error_type: ClassVar[type[MnemoniteError]] = InvalidInputError

    @model_validator(mode="wrap")
    @classmethod
    def _typed_errors(cls, data: Any, handler: ModelWrapValidatorHandler[Self]) -> Self:
        if isinstance(data, dict):
            check_strings(f"invalid {cls.__name__}", data, cls.error_type)
        try:
            return handler(data)
        except ValidationError as error:
            raise cls.error_type(f"invalid {cls.__name__}: {describe(error)}") from None

    @classmethod
    def trusted(cls, values: dict[str, Any]) -> Self:
        """A model from values this library validated when it wrote them (rows read back), unchecked.

        Validation costs microseconds per model, which adds up when a read returns thousands
        (a graph walk). ``values`` must hold every field, already of its type; tests pin that
        the result equals the validated model.
        """
        model = cls.__new__(cls)
        object.__setattr__(model, "__dict__", values)
        object.__setattr__(model, "__pydantic_fields_set__", set(values))
        object.__setattr__(model, "__pydantic_extra__", None)
        object.__setattr__(model, "__pydantic_private__", None)
        return model
