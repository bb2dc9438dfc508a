"""Validation of user migration plans: only "add a nullable column" is ever allowed.

Memory rows are never rewritten by a migration, so a plan may only widen the schema;
everything else raises MigrationNotSupported before anything is executed.
"""

from __future__ import annotations

from mnemonite.errors import MigrationNotSupported
from mnemonite.models import MigrationPlan

MIGRATABLE_TABLES = frozenset({"episodes", "facts", "lineage", "delta_log", "rules"})
COLUMN_TYPES = frozenset({"TEXT", "INTEGER", "REAL", "BLOB", "NUMERIC", "BOOLEAN", "TIMESTAMP"})


def check_plan(plan: MigrationPlan, *, applied_body: str | None, latest: int) -> list[str]:
    """The DDL statements to run for a plan, or [] if this very plan was applied already."""
    if applied_body is not None:
        if MigrationPlan.model_validate_json(applied_body) == plan:
            return []
        raise MigrationNotSupported(f"migration version {plan.version} was already applied with different operations")
    if plan.version <= latest:
        raise MigrationNotSupported(f"migration version must be greater than {latest}, got {plan.version}")
    statements = []
    for op in plan.ops:
        if op.op != "add_column":
            raise MigrationNotSupported(f"only add_column is supported, got {op.op!r}")
        if not op.nullable:
            raise MigrationNotSupported(f"column {op.table}.{op.column} must be nullable (existing rows have no value)")
        if op.table not in MIGRATABLE_TABLES:
            raise MigrationNotSupported(f"unknown table {op.table!r}; one of {', '.join(sorted(MIGRATABLE_TABLES))}")
        if op.sql_type.upper() not in COLUMN_TYPES:
            raise MigrationNotSupported(f"column type {op.sql_type!r} is not one of {', '.join(sorted(COLUMN_TYPES))}")
        statements.append(f'ALTER TABLE {op.table} ADD COLUMN "{op.column}" {op.sql_type.upper()}')
    return statements
