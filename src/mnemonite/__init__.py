"""mnemonite: layered long-term memory for AI agents.

Everything a user needs is importable from here::

    from mnemonite import Memory, SyncMemory, Scope, Episode, ConsolidationRule
"""

from mnemonite.config import MemoryConfig
from mnemonite.conflicts import LocalePack, define_locale_pack
from mnemonite.embedding import Embedder, OnnxEmbedder, OpenAIEmbedder
from mnemonite.embedding.indexer import IndexProgress
from mnemonite.errors import (
    AmbiguousIdError,
    ConfigurationError,
    ConsolidationRuleError,
    DatabaseNotFoundError,
    DeltaValidationError,
    EmbedderMismatchError,
    EmbeddingError,
    EntityConflictError,
    EpisodeConflictError,
    FactConflictError,
    InvalidInputError,
    MemoryScopeError,
    MigrationNotSupported,
    MnemoniteError,
    NotADatabaseError,
    NotFoundError,
    SchemaVersionError,
    StoreError,
    StoreUnavailableError,
)
from mnemonite.graph import GraphMemory, allocate_memory_budget
from mnemonite.judge import ConflictJudge, OpenAIJudge
from mnemonite.memory import Memory
from mnemonite.models import (
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
from mnemonite.models.conflict import ConflictDecision, ConflictThresholds, JudgeVerdict, PurgeRecord
from mnemonite.models.fact import EntityLink
from mnemonite.models.graph import BudgetConfig, Edge, Entity, EntityContext, GraphStats, RecallOptions, ScoredFact
from mnemonite.models.search import SearchFilter, SearchHit
from mnemonite.salience import (
    RuleBasedScorer,
    SalienceConfig,
    SalienceContext,
    SalienceScorer,
    boost_salience,
    combine_scores,
    compute_salience,
    rank_by_salience,
)
from mnemonite.scope import Scope
from mnemonite.search import Reranker, SearchOptions
from mnemonite.store import FactStore, MemoryStore, SQLiteMemoryStore, Store
from mnemonite.sync import SyncMemory
from mnemonite.tiers import SalientEpisode
from mnemonite.tokens import TokenCounter

__version__ = "0.1.0"

__all__ = [
    "AmbiguousIdError",
    "DatabaseNotFoundError",
    "NotADatabaseError",
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
    "MnemoniteError",
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
