"""memstrata: layered long-term memory for AI agents.

Everything a user needs is importable from here::

    from memstrata import Memory, SyncMemory, Scope, Episode, ConsolidationRule
"""

from memstrata.config import MemoryConfig
from memstrata.conflicts import LocalePack, define_locale_pack
from memstrata.embedding import Embedder, OnnxEmbedder, OpenAIEmbedder
from memstrata.embedding.indexer import IndexProgress
from memstrata.errors import (
    ConfigurationError,
    ConsolidationRuleError,
    DeltaValidationError,
    EmbedderMismatchError,
    EmbeddingError,
    EntityConflictError,
    EpisodeConflictError,
    FactConflictError,
    InvalidInputError,
    MemoryScopeError,
    MemstrataError,
    MigrationNotSupported,
    NotFoundError,
    SchemaVersionError,
    StoreError,
    StoreUnavailableError,
)
from memstrata.graph import GraphMemory, allocate_memory_budget
from memstrata.judge import ConflictJudge, OpenAIJudge
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
from memstrata.models.conflict import ConflictDecision, ConflictThresholds, JudgeVerdict, PurgeRecord
from memstrata.models.fact import EntityLink
from memstrata.models.graph import BudgetConfig, Edge, Entity, EntityContext, GraphStats, RecallOptions, ScoredFact
from memstrata.models.search import SearchFilter, SearchHit
from memstrata.salience import (
    RuleBasedScorer,
    SalienceConfig,
    SalienceContext,
    SalienceScorer,
    boost_salience,
    combine_scores,
    compute_salience,
    rank_by_salience,
)
from memstrata.scope import Scope
from memstrata.search import Reranker, SearchOptions
from memstrata.store import FactStore, MemoryStore, SQLiteMemoryStore, Store
from memstrata.sync import SyncMemory
from memstrata.tiers import SalientEpisode
from memstrata.tokens import TokenCounter

__version__ = "0.1.0"

__all__ = [
    "AddDelta",
    "BudgetConfig",
    "ConfigurationError",
    "ConflictDecision",
    "ConflictJudge",
    "ConflictThresholds",
    "ConsolidationRule",
    "ConsolidationRuleError",
    "ConsolidationRun",
    "DeleteDelta",
    "DeltaRecord",
    "DeltaValidationError",
    "Edge",
    "Embedder",
    "EmbedderMismatchError",
    "EmbeddingError",
    "Entity",
    "EntityConflictError",
    "EntityContext",
    "EntityLink",
    "Episode",
    "EpisodeConflictError",
    "Fact",
    "FactConflictError",
    "FactFilter",
    "FactPayload",
    "FactStore",
    "GraphMemory",
    "GraphStats",
    "IndexProgress",
    "InvalidInputError",
    "JudgeVerdict",
    "Lineage",
    "LocalePack",
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
    "OnnxEmbedder",
    "OpenAIEmbedder",
    "OpenAIJudge",
    "PurgeRecord",
    "RecallOptions",
    "Reranker",
    "RuleBasedScorer",
    "RuleState",
    "SQLiteMemoryStore",
    "SalienceConfig",
    "SalienceContext",
    "SalienceScorer",
    "SalientEpisode",
    "SchemaVersionError",
    "Scope",
    "ScoredFact",
    "SearchFilter",
    "SearchHit",
    "SearchOptions",
    "Store",
    "StoreError",
    "StoreHealth",
    "StoreUnavailableError",
    "SyncMemory",
    "TokenCounter",
    "UpdateDelta",
    "allocate_memory_budget",
    "boost_salience",
    "combine_scores",
    "compute_salience",
    "define_locale_pack",
    "parse_delta",
    "rank_by_salience",
]
