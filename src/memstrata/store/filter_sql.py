"""Compile a parsed `when_filter` into a parameterised SQL condition.

Comparisons are two-valued: ``=`` and ``!=`` are null-safe (a missing metadata key is
simply "not equal"), and every other predicate over NULL is false, so ``NOT`` behaves
as a user reading the filter expects. Backends override the dialect hooks.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

from memstrata.consolidation.filter import BoolOp, Compare, Field, FilterExpr, InList, IsNull, Like, Meta, Not, Value

__all__ = ["FilterCompiler"]

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
