"""memstrata: layered long-term memory for AI agents.

Everything a user needs is importable from here::

    from memstrata import Memory, SyncMemory, Scope, Episode, ConsolidationRule
"""

from memstrata.config import MemoryConfig
from memstrata.errors import (
    ConfigurationError,
    ConsolidationRuleError,
    DeltaValidationError,
    EpisodeConflictError,
    FactConflictError,
    InvalidInputError,
    MemoryScopeError,
    MemstrataError,
    MigrationNotSupported,
    NotFoundError,
    SchemaVersionError,
    StoreError,
)
from memstrata.memory import Memory
from memstrata.models import (
    AddDelta,
    ConsolidationRule,
    ConsolidationRun,
    DeleteDelta,
    DeltaRecord,
    Episode,
    Fact,
    FactFilter,
    FactPayload,
    Lineage,
    MemoryDelta,
    MigrationOp,
    MigrationPlan,
    NoopDelta,
    RuleState,
    StoreHealth,
    UpdateDelta,
    parse_delta,
)
from memstrata.salience import RuleBasedScorer, SalienceContext, SalienceScorer
from memstrata.scope import Scope
from memstrata.store import FactStore, MemoryStore, SQLiteMemoryStore, Store
from memstrata.sync import SyncMemory
from memstrata.tiers import SalientEpisode

__version__ = "0.1.0"

__all__ = [
    "AddDelta",
    "ConfigurationError",
    "ConsolidationRule",
    "ConsolidationRuleError",
    "ConsolidationRun",
    "DeleteDelta",
    "DeltaRecord",
    "DeltaValidationError",
    "Episode",
    "EpisodeConflictError",
    "Fact",
    "FactConflictError",
    "FactFilter",
    "FactPayload",
    "FactStore",
    "InvalidInputError",
    "Lineage",
    "Memory",
    "MemoryConfig",
    "MemoryDelta",
    "MemoryScopeError",
    "MemoryStore",
    "MemstrataError",
    "MigrationNotSupported",
    "MigrationOp",
    "MigrationPlan",
    "NoopDelta",
    "NotFoundError",
    "RuleBasedScorer",
    "RuleState",
    "SalienceContext",
    "SalienceScorer",
    "SQLiteMemoryStore",
    "SalientEpisode",
    "SchemaVersionError",
    "Scope",
    "Store",
    "StoreError",
    "StoreHealth",
    "SyncMemory",
    "UpdateDelta",
    "parse_delta",
]
