"""The value models of mnemonite (pydantic v2, frozen, timezone-aware)."""

from mnemonite.models.deltas import AddDelta, DeleteDelta, MemoryDelta, NoopDelta, UpdateDelta, parse_delta
from mnemonite.models.episode import Episode
from mnemonite.models.fact import DeltaRecord, Fact, FactFilter, FactPayload, Lineage
from mnemonite.models.rules import ConsolidationRule, ConsolidationRun, RuleState
from mnemonite.models.store import MigrationOp, MigrationPlan, StoreHealth

__all__ = [
    "AddDelta",
    "ConsolidationRule",
    "ConsolidationRun",
    "DeleteDelta",
    "DeltaRecord",
    "Episode",
    "Fact",
    "FactFilter",
    "FactPayload",
    "Lineage",
    "MemoryDelta",
    "MigrationOp",
    "MigrationPlan",
    "NoopDelta",
    "RuleState",
    "StoreHealth",
    "UpdateDelta",
    "parse_delta",
]
