"""The checks every public input passes before it reaches a model runtime or a database driver.

Two doors, one set of rules: `checked` guards the arguments of the public methods (from their type
annotations), and `check_strings` guards the values a model is built from (`mnemonite.models.base`).
What either refuses is an `InvalidInputError` (`MemoryScopeError` for a scope) naming the argument,
raised before anything is read or written:

- text must be valid Unicode without NUL: a lone surrogate cannot be encoded for SQLite, PostgreSQL
  or the tokenizer, and PostgreSQL text cannot hold NUL (SQLite can: refusing it everywhere keeps the
  backends alike);
- an integer must be an ``int`` (not a bool) that fits in 64 bits, the widest both databases store, and a
  ``limit`` (how many rows to return) at least 1;
- a float must be a finite number;
- a timestamp must be a timezone-aware ``datetime``;
- a model argument must be an instance of its model, a list a list (not a string) of valid items.

Annotations this module does not know (protocols, callables, ``Any``) are left to the method.
"""

from __future__ import annotations

import functools
import inspect
import math
import types
import typing
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any, Literal, TypeVar

from mnemonite.errors import InvalidInputError, MemoryScopeError, MnemoniteError

__all__ = ["INT64_MAX", "check_strings", "check_text", "checked", "text_problem"]

INT64_MAX = 2**63 - 1
_SCOPE_PARAMETERS = frozenset({"scope", "user", "session", "agent"})
_MAX_DEPTH = 64  # deeper JSON than this is refused rather than walked (a recursion guard)

Problem = str | None
Check = Callable[[object], Problem]
C = TypeVar("C", bound=type)


def text_problem(value: str) -> Problem:
    """What makes a string unstorable (a NUL or a lone surrogate), or None."""
    if "\x00" in value:
        return f"must not contain NUL characters (at position {value.index(chr(0))})"
    if not value.isascii():
        try:
            value.encode("utf-8")
        except UnicodeEncodeError as error:
            return f"must be valid Unicode: a lone surrogate U+{ord(value[error.start]):04X} at position {error.start}"
    return None


def check_text(where: str, value: str, error: type[MnemoniteError] = InvalidInputError) -> str:
    """Return ``value``, or raise ``error`` naming ``where`` if it holds a NUL or a lone surrogate."""
    problem = text_problem(value)
    if problem is not None:
        raise error(f"{where} {problem}")
    return value


def check_strings(where: str, value: object, error: type[MnemoniteError] = InvalidInputError) -> None:
    """Walk JSON-like data (mappings, lists, strings, numbers) and refuse unstorable text, non-finite
    floats, integers beyond 64 bits and nesting deeper than 64 levels."""
    problem = _walk(value, 0)
    if problem is not None:
        raise error(f"{where}: {problem}")


def _walk(value: object, depth: int) -> Problem:
    if depth > _MAX_DEPTH:
        return f"nested deeper than {_MAX_DEPTH} levels"
    if isinstance(value, str):
        return text_problem(value)
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, datetime):
        return f"{value.isoformat()} has no timezone" if value.tzinfo is None else moment_problem(value)
    if isinstance(value, int | float):
        problem = _number_problem(value)
        return None if problem is None else f"{value} {problem}"
    if isinstance(value, Mapping):
        return _first(_walk(item, depth + 1) for pair in value.items() for item in pair)
    if isinstance(value, list | tuple | set | frozenset):
        return _first(_walk(item, depth + 1) for item in value)
    return None


def _first(problems: Iterable[Problem]) -> Problem:
    return next((p for p in problems if p is not None), None)


def _number_problem(value: float) -> Problem:
    if isinstance(value, int):
        return None if -INT64_MAX - 1 <= value <= INT64_MAX else "does not fit in 64 bits"
    return None if math.isfinite(value) else "is not a finite number"


# -- argument checks built from annotations ---------------------------------------------------


def _is_str(value: object) -> Problem:
    return text_problem(value) if isinstance(value, str) else "must be a string"


def _is_int(value: object) -> Problem:
    if isinstance(value, bool) or not isinstance(value, int):
        return "must be an integer"
    return _number_problem(value)


def _is_float(value: object) -> Problem:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return "must be a number"
    return _number_problem(value)


def _is_bool(value: object) -> Problem:
    return None if isinstance(value, bool) else "must be True or False"


def _is_datetime(value: object) -> Problem:
    if not isinstance(value, datetime):
        return "must be a datetime"
    if value.utcoffset() is None:
        return "must be timezone-aware (e.g. datetime.now(UTC))"
    return moment_problem(value)


def moment_problem(value: datetime) -> Problem:
    """Times are stored in UTC: one whose UTC time falls outside years 1-9999 cannot be."""
    try:
        value.astimezone(UTC)
    except (OverflowError, ValueError):
        return f"{value.isoformat()} is outside the years 1-9999 in UTC"
    return None


def _is_none(value: object) -> Problem:
    return None if value is None else "must be None"


def _is_json(value: object) -> Problem:
    return _walk(value, 0) if isinstance(value, Mapping) else "must be a mapping"


def _instance(kind: type) -> Check:
    def check(value: object) -> Problem:
        return None if isinstance(value, kind) else f"must be a {kind.__name__}"

    return check


def _literal(choices: tuple[object, ...]) -> Check:
    def check(value: object) -> Problem:
        return None if value in choices else f"must be one of {', '.join(map(repr, choices))}"

    return check


def _items(item: Check) -> Check:
    def check(value: object) -> Problem:
        if isinstance(value, str | bytes | Mapping):
            return "must be a list, not a single value"
        if not isinstance(value, list | tuple | set | frozenset):
            return None if isinstance(value, Iterable) else "must be a list"  # a generator is read once, later
        return _first(f"[{i}] {p}" for i, v in enumerate(value) if (p := item(v)) is not None)

    return check


def _fixed_tuple(args: tuple[object, ...]) -> Check | None:
    members = [_checker(arg) for arg in args]
    if any(m is None for m in members):
        return None
    checks = [m for m in members if m is not None]

    def check(value: object) -> Problem:
        if not isinstance(value, tuple) or len(value) != len(checks):
            return f"must be a tuple of {len(checks)}"
        return _first(
            f"[{i}] {p}" for i, (c, v) in enumerate(zip(checks, value, strict=True)) if (p := c(v)) is not None
        )

    return check


def _union(members: list[Check]) -> Check:
    def check(value: object) -> Problem:
        problems = [member(value) for member in members]
        if any(p is None for p in problems):
            return None
        return " or ".join(dict.fromkeys(p for p in problems if p is not None))

    return check


_SIMPLE: dict[object, Check] = {
    str: _is_str,
    int: _is_int,
    float: _is_float,
    bool: _is_bool,
    datetime: _is_datetime,
    type(None): _is_none,
    None: _is_none,
}
_LISTS = (list, tuple, Sequence, Iterable, set, frozenset)


def _checker(annotation: object) -> Check | None:
    """A check for an annotation, or None where this module cannot tell a good value from a bad one."""
    if annotation in _SIMPLE:
        return _SIMPLE[annotation]
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin in (typing.Union, types.UnionType):
        members = [_checker(arg) for arg in args]
        return None if any(m is None for m in members) else _union([m for m in members if m is not None])
    if origin is Literal:
        return _literal(args)
    if origin in (dict, Mapping):
        return _is_json
    if origin is tuple and args and args[-1] is not Ellipsis:
        return _fixed_tuple(args)
    if origin in _LISTS and args:
        item = _checker(args[0])
        return None if item is None else _items(item)
    mine = isinstance(annotation, type) and annotation.__module__.startswith("mnemonite.")
    # A protocol is checked where it can be at run time (its methods are there), else left to the method.
    if mine and (not getattr(annotation, "_is_protocol", False) or getattr(annotation, "_is_runtime_protocol", False)):
        return _instance(annotation)  # type: ignore[arg-type]  # narrowed by `mine`
    return None


def _annotation(function: Callable[..., Any], parameter: inspect.Parameter) -> object:
    annotation = parameter.annotation
    if not isinstance(annotation, str):
        return annotation
    try:
        return eval(annotation, function.__globals__)
    except Exception:  # a name imported for type checking only: that parameter goes unchecked
        return inspect.Parameter.empty


def _plan(function: Callable[..., Any]) -> tuple[list[str], dict[str, Check]]:
    """The names positional arguments bind to (``*args`` names each extra one) and the checks by name."""
    parameters = list(inspect.signature(function).parameters.values())
    positional = [p.name for p in parameters if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    positional += [p.name for p in parameters if p.kind == p.VAR_POSITIONAL]
    checks = {}
    for parameter in parameters:
        if parameter.kind != parameter.VAR_KEYWORD and (check := _checker(_annotation(function, parameter))):
            checks[parameter.name] = _at_least_one if parameter.name == "limit" and check is _is_int else check
    return positional, checks


def _at_least_one(value: object) -> Problem:
    """A ``limit`` (how many rows to return) is a positive integer: 0 or -1 does not mean "all"."""
    problem = _is_int(value)
    return problem if problem is not None or value >= 1 else "must be at least 1"  # type: ignore[operator]


def _refuse(where: str, name: str, value: object, problem: str) -> None:
    error = MemoryScopeError if name in _SCOPE_PARAMETERS else InvalidInputError
    shown = repr(value) if len(repr(value)) <= 40 else f"{repr(value)[:37]}..."
    raise error(f"{where}: {name}={shown} {problem}")


def _guarded(function: Callable[..., Any]) -> Callable[..., Any]:
    positional, checks = _plan(function)
    if not checks:
        return function
    where = function.__qualname__

    def check_all(args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        named = zip(positional + positional[-1:] * (len(args) - len(positional)), args, strict=False)
        for name, value in [*named, *kwargs.items()]:
            check = checks.get(name)
            if check is not None and (problem := check(value)) is not None:
                _refuse(where, name, value, problem)

    @functools.wraps(function)
    async def guarded(*args: Any, **kwargs: Any) -> Any:
        check_all(args, kwargs)
        return await function(*args, **kwargs)

    return guarded


def checked(cls: C) -> C:
    """Check the arguments of every public coroutine method (and classmethod) of ``cls`` on each call."""
    for name, member in list(vars(cls).items()):
        if name.startswith("_"):
            continue
        if isinstance(member, classmethod) and inspect.iscoroutinefunction(member.__func__):
            setattr(cls, name, classmethod(_guarded(member.__func__)))
        elif inspect.iscoroutinefunction(member):
            setattr(cls, name, _guarded(member))
    return cls
