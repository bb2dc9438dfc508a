"""What a store reports about itself, and the migration plans it accepts."""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field

from mnemonite.errors import MigrationNotSupported, MnemoniteError
from mnemonite.models.base import Model


class StoreHealth(Model):
    """A store's vital signs. ``fragment_count`` is the number of stored episodes;
    ``pending_embeddings`` the records the active embedder has not embedded yet (0 without one).

    ``integrity`` is the database's own consistency check, run only when asked for (it
    reads every page); ``ok`` is false when that check found a problem.
    """

    ok: bool
    integrity: str | None = None
    backend: str
    location: str
    schema_version: int
    fragment_count: int
    fact_count: int
    active_fact_count: int
    pending_delta_count: int
    rule_count: int
    journal_mode: str
    size_bytes: int | None = None
    pending_embeddings: int = 0


class MigrationOp(Model):
    """One schema change. Only ``add_column`` of a nullable column is supported."""

    error_type: ClassVar[type[MnemoniteError]] = MigrationNotSupported

    op: str
    table: str
    column: str = Field(pattern=r"^[A-Za-z_][A-Za-z0-9_]{0,62}$")
    sql_type: str = "TEXT"
    nullable: bool = True


class MigrationPlan(Model):
    """Schema changes that take the database to ``version``, applied atomically, at most once."""

    error_type: ClassVar[type[MnemoniteError]] = MigrationNotSupported

    version: int = Field(ge=2)
    description: str = ""
    ops: list[MigrationOp] = Field(min_length=1)
