"""`when_filter`: a SQL WHERE fragment, parsed into an allow-listed expression.

Raw SQL from a rule would be an injection hole, so the fragment is parsed with sqlglot
and rebuilt from a small vocabulary: episode columns, ``metadata.<key>`` paths,
literals, comparisons, AND/OR/NOT, IN, LIKE, BETWEEN and IS NULL. Anything else — a
subquery, a function, another table, a comment, a second statement — is refused with
a ConsolidationRuleError naming the offending part. Stores compile the result to
parameterised SQL for their dialect; no text from the rule reaches the database.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import TypeAlias

import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError

from mnemonite.errors import ConsolidationRuleError

__all__ = [
    "EPISODE_COLUMNS",
    "BoolOp",
    "Compare",
    "Field",
    "FilterExpr",
    "InList",
    "IsNull",
    "Like",
    "Meta",
    "Not",
    "Value",
    "parse_filter",
]

EPISODE_COLUMNS: tuple[str, ...] = ("id", "content", "timestamp", "source_node", "user", "session", "agent")
MAX_FILTER_CHARS = 4000
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1  # what SQLite INTEGER and PostgreSQL bigint hold
_KEY = re.compile(r"^[A-Za-z0-9_\-]{1,64}$")


@dataclass(frozen=True)
class Field:
    """An episode column."""

    name: str


@dataclass(frozen=True)
class Meta:
    """A path into the episode's metadata, e.g. ``metadata.intent``."""

    path: tuple[str, ...]


@dataclass(frozen=True)
class Value:
    """A literal, always sent to the database as a parameter."""

    value: str | int | float | bool | None


Operand: TypeAlias = Field | Meta | Value


@dataclass(frozen=True)
class Compare:
    """``left op right`` with op one of = != < <= > >=."""

    op: str
    left: Operand
    right: Operand


@dataclass(frozen=True)
class InList:
    operand: Operand
    values: tuple[Value, ...]


@dataclass(frozen=True)
class Like:
    operand: Operand
    pattern: Value


@dataclass(frozen=True)
class IsNull:
    operand: Operand


@dataclass(frozen=True)
class Not:
    part: FilterExpr


@dataclass(frozen=True)
class BoolOp:
    """``AND`` or ``OR`` of two parts."""

    op: str
    left: FilterExpr
    right: FilterExpr


FilterExpr: TypeAlias = Compare | InList | Like | IsNull | Not | BoolOp

_COMPARE: dict[type[exp.Expr], str] = {
    exp.EQ: "=",
    exp.NEQ: "!=",
    exp.LT: "<",
    exp.LTE: "<=",
    exp.GT: ">",
    exp.GTE: ">=",
}


def parse_filter(text: str) -> FilterExpr | None:
    """Parse a when_filter; ``None`` means match every episode (the empty filter)."""
    if not text.strip():
        return None
    if len(text) > MAX_FILTER_CHARS:
        raise ConsolidationRuleError(f"when_filter is longer than {MAX_FILTER_CHARS} characters")
    _check_tokens(text)
    try:
        statements = sqlglot.parse(text, read="sqlite")
    except SqlglotError as error:
        raise ConsolidationRuleError(f"when_filter cannot be parsed: {error}") from None
    if len(statements) != 1 or statements[0] is None:
        raise ConsolidationRuleError("when_filter must be a single expression")
    return _condition(statements[0])


def _check_tokens(text: str) -> None:
    try:
        tokens = sqlglot.Dialect.get_or_raise("sqlite").tokenize(text)
    except SqlglotError as error:
        raise ConsolidationRuleError(f"when_filter cannot be parsed: {error}") from None
    for token in tokens:
        if token.token_type.name == "SEMICOLON":
            raise ConsolidationRuleError("when_filter must not contain ';' (one expression only)")
        if token.comments:
            raise ConsolidationRuleError("when_filter must not contain comments")


def _refuse(node: exp.Expr, what: str) -> ConsolidationRuleError:
    return ConsolidationRuleError(f"when_filter: {what} is not allowed: {node.sql(dialect='sqlite')!r}")


def _condition(node: exp.Expr) -> FilterExpr:
    if isinstance(node, exp.Paren):
        return _condition(node.this)
    if isinstance(node, exp.And | exp.Or):
        op = "AND" if isinstance(node, exp.And) else "OR"
        return BoolOp(op, _condition(node.this), _condition(node.expression))
    if isinstance(node, exp.Not):
        return Not(_condition(node.this))
    compare = _COMPARE.get(type(node))
    if compare is not None:
        return Compare(compare, _operand(node.this), _operand(node.expression))
    return _predicate(node)


def _predicate(node: exp.Expr) -> FilterExpr:
    if isinstance(node, exp.In):
        if node.args.get("query") or node.args.get("unnest") or node.args.get("field"):
            raise _refuse(node, "IN over a subquery")
        return InList(_operand(node.this), tuple(_literal(v) for v in node.expressions))
    if isinstance(node, exp.Like) and not node.args.get("escape"):
        return Like(_operand(node.this), _literal(node.expression))
    if isinstance(node, exp.Is) and isinstance(node.expression, exp.Null):
        return IsNull(_operand(node.this))
    if isinstance(node, exp.Between):
        operand = _operand(node.this)
        low = Compare(">=", operand, _operand(node.args["low"]))
        return BoolOp("AND", low, Compare("<=", operand, _operand(node.args["high"])))
    if isinstance(node, exp.Column | exp.Literal | exp.Boolean):
        raise _refuse(node, "a bare value where a condition is expected")
    raise _refuse(node, _describe(node))


def _operand(node: exp.Expr) -> Operand:
    if isinstance(node, exp.Paren):
        return _operand(node.this)
    if isinstance(node, exp.Column):
        return _column(node)
    return _literal(node)


def _column(node: exp.Column) -> Field | Meta:
    parts = [part.name for part in node.parts]
    if len(parts) == 1 and parts[0].lower() in EPISODE_COLUMNS:
        return Field(parts[0].lower())
    if len(parts) >= 2 and parts[0].lower() == "metadata":
        bad = [key for key in parts[1:] if not _KEY.match(key)]
        if bad:
            raise _refuse(node, f"metadata key {bad[0]!r} (letters, digits, '_' and '-' only)")
        return Meta(tuple(parts[1:]))
    allowed = ", ".join(EPISODE_COLUMNS)
    raise ConsolidationRuleError(
        f"when_filter: unknown column {node.sql(dialect='sqlite')!r}; use one of {allowed} or metadata.<key>"
    )


def _literal(node: exp.Expr) -> Value:
    if isinstance(node, exp.Literal):
        if node.is_string:
            return Value(node.this)
        return Value(_bounded(node, _number(node)))
    if isinstance(node, exp.Neg) and isinstance(node.this, exp.Literal) and not node.this.is_string:
        return Value(_bounded(node, -_number(node.this)))
    if isinstance(node, exp.Boolean):
        return Value(bool(node.this))
    if isinstance(node, exp.Null):
        return Value(None)
    raise _refuse(node, _describe(node))


def _number(node: exp.Literal) -> int | float:
    text = str(node.this)
    try:
        return int(text)
    except ValueError:
        try:
            return float(text)
        except ValueError:
            raise _refuse(node, "a malformed number") from None


def _bounded(node: exp.Expr, number: int | float) -> int | float:
    """A number both databases store: an integer of 64 bits, a finite float."""
    if isinstance(number, int) and not INT64_MIN <= number <= INT64_MAX:
        raise _refuse(node, "an integer outside the 64-bit range")
    if isinstance(number, float) and not math.isfinite(number):
        raise _refuse(node, "a number too large to store")
    return number


def _describe(node: exp.Expr) -> str:
    if isinstance(node, exp.Subquery | exp.Select | exp.Query):
        return "a subquery"
    if isinstance(node, exp.Anonymous):
        return f"the function {node.name.upper()}"
    if isinstance(node, exp.Func):
        return f"the function {node.sql_name()}"
    if isinstance(node, exp.Placeholder | exp.Parameter):
        return "a placeholder"
    return f"the construct {type(node).__name__}"
