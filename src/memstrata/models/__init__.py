"""The value models of memstrata (pydantic v2, frozen, timezone-aware)."""

from memstrata.models.deltas import AddDelta, DeleteDelta, MemoryDelta, NoopDelta, UpdateDelta, parse_delta
from memstrata.models.episode import Episode
from memstrata.models.fact import DeltaRecord, Fact, FactFilter, FactPayload, Lineage
from memstrata.models.rules import ConsolidationRule, ConsolidationRun, RuleState
from memstrata.models.store import MigrationOp, MigrationPlan, StoreHealth

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
