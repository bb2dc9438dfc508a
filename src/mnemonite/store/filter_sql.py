"""Compile a parsed `when_filter` into a parameterised SQL condition.

Comparisons are two-valued: ``=`` and ``!=`` are null-safe (a missing metadata key is
simply "not equal"), and every other predicate over NULL is false, so ``NOT`` behaves
as a user reading the filter expects. Backends override the dialect hooks.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

import orjson

from mnemonite.consolidation.filter import BoolOp, Compare, Field, FilterExpr, InList, IsNull, Like, Meta, Not, Value

__all__ = ["FilterCompiler", "PostgresFilterCompiler"]

_Params = list[object]


class FilterCompiler:
    """SQLite dialect; subclass and override the hooks for another database."""

    placeholder = "?"
    columns: ClassVar[Mapping[str, str]] = {
        "id": "id",
        "content": "content",
        "timestamp": "timestamp",
        "source_node": "source_node",
        "user": "user_id",
        "session": "session_id",
        "agent": "agent_id",
    }
    equal = "IS"
    not_equal = "IS NOT"

    def metadata_path(self, path: tuple[str, ...]) -> tuple[str, _Params]:
        json_path = "$" + "".join(f'."{key}"' for key in path)
        return f"json_extract(metadata, {self.placeholder})", [json_path]

    def compile(self, expr: FilterExpr | None) -> tuple[str, _Params]:
        """SQL text and its parameters; the empty filter is ``1 = 1``."""
        if expr is None:
            return "1 = 1", []
        return self._expr(expr)

    def _expr(self, expr: FilterExpr) -> tuple[str, _Params]:
        if isinstance(expr, BoolOp):
            left, lp = self._expr(expr.left)
            right, rp = self._expr(expr.right)
            return f"({left} {expr.op} {right})", lp + rp
        if isinstance(expr, Not):
            inner, params = self._expr(expr.part)
            return f"(NOT {inner})", params
        if isinstance(expr, IsNull):
            operand, params = self._operand(expr.operand)
            return f"({operand} IS NULL)", params
        return self._predicate(expr)

    def _predicate(self, expr: Compare | InList | Like) -> tuple[str, _Params]:
        if isinstance(expr, Compare):
            left, lp = self._operand(expr.left)
            right, rp = self._operand(expr.right)
            if expr.op in ("=", "!="):
                op = self.equal if expr.op == "=" else self.not_equal
                return f"({left} {op} {right})", lp + rp
            return f"COALESCE({left} {expr.op} {right}, FALSE)", lp + rp
        operand, params = self._operand(expr.operand)
        if isinstance(expr, Like):
            pattern, pp = self._operand(expr.pattern)
            return f"COALESCE({operand} LIKE {pattern}, FALSE)", params + pp
        if not expr.values:
            return "FALSE", []
        marks = ", ".join(self.placeholder for _ in expr.values)
        return f"COALESCE({operand} IN ({marks}), FALSE)", params + [v.value for v in expr.values]

    def _operand(self, operand: Field | Meta | Value) -> tuple[str, _Params]:
        if isinstance(operand, Field):
            return self.columns[operand.name], []
        if isinstance(operand, Meta):
            return self.metadata_path(operand.path)
        return self.placeholder, [operand.value]


class PostgresFilterCompiler(FilterCompiler):
    """PostgreSQL: metadata paths are ``jsonb`` and compare with ``jsonb`` literals, so numbers compare
    as numbers and strings as strings, as in SQLite; columns are text."""

    equal = "IS NOT DISTINCT FROM"
    not_equal = "IS DISTINCT FROM"

    def metadata_path(self, path: tuple[str, ...]) -> tuple[str, _Params]:
        # A JSON null reads as SQL NULL, as SQLite's json_extract gives it.
        return f"NULLIF(metadata::jsonb #> CAST({self.placeholder} AS text[]), 'null'::jsonb)", [list(path)]

    def _predicate(self, expr: Compare | InList | Like) -> tuple[str, _Params]:
        if isinstance(expr, Like):  # LIKE reads text: a metadata value as its text form
            operand, params = self._text(expr.operand)
            pattern, pp = self._text(expr.pattern)
            return f"COALESCE({operand} LIKE {pattern}, FALSE)", params + pp
        if isinstance(expr, InList):
            operand, params = self._operand(expr.operand)
            if not expr.values:
                return "FALSE", []
            values = [self._value(v, json=isinstance(expr.operand, Meta)) for v in expr.values]
            return f"COALESCE({operand} IN ({', '.join(v for v, _ in values)}), FALSE)", params + [
                p for _, vp in values for p in vp
            ]
        json = isinstance(expr.left, Meta) or isinstance(expr.right, Meta)
        left, lp = self._side(expr.left, json)
        right, rp = self._side(expr.right, json)
        if expr.op in ("=", "!="):
            return f"({left} {self.equal if expr.op == '=' else self.not_equal} {right})", lp + rp
        return f"COALESCE({left} {expr.op} {right}, FALSE)", lp + rp

    def _side(self, operand: Field | Meta | Value, json: bool) -> tuple[str, _Params]:
        if isinstance(operand, Value):
            return self._value(operand, json)
        if isinstance(operand, Field) and json:
            return f"to_jsonb({self.columns[operand.name]})", []
        return self._operand(operand)

    def _value(self, value: Value, json: bool) -> tuple[str, _Params]:
        if json:
            return f"CAST({self.placeholder} AS jsonb)", [orjson.dumps(value.value).decode()]
        return f"CAST({self.placeholder} AS text)", [None if value.value is None else _text_of(value.value)]

    def _text(self, operand: Field | Meta | Value) -> tuple[str, _Params]:
        if isinstance(operand, Meta):
            return f"(metadata::jsonb #>> CAST({self.placeholder} AS text[]))", [list(operand.path)]
        if isinstance(operand, Value):
            return self._value(operand, json=False)
        return self._operand(operand)


def _text_of(value: object) -> str:
    """A literal compared with a text column, written as SQLite's text affinity would store it."""
    if isinstance(value, bool):
        return str(int(value))
    return str(value)
