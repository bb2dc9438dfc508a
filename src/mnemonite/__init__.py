"""mnemonite: layered long-term memory for AI agents.

Everything a user needs is importable from here::

    from mnemonite import Memory, SyncMemory, Scope, Episode, ConsolidationRule
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mnemonite.config import MemoryConfig
    from mnemonite.conflicts import LocalePack, define_locale_pack
    from mnemonite.embedding import Embedder, OnnxEmbedder, OpenAIEmbedder
    from mnemonite.embedding.indexer import IndexProgress
    from mnemonite.errors import (
        AmbiguousIdError,
        ConfigurationError,
        ConsolidationRuleError,
        DatabaseCorruptError,
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
        StoreBusyError,
        StoreError,
        StoreFullError,
        StoreReadOnlyError,
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

# Names load on first use (PEP 562): `mnemonite --help` and `import mnemonite.errors` must not pay
# for numpy, pydantic models and the search engine.
_WHERE: dict[str, str] = {
    "MemoryConfig": "mnemonite.config",
    "LocalePack": "mnemonite.conflicts",
    "define_locale_pack": "mnemonite.conflicts",
    "Embedder": "mnemonite.embedding",
    "OnnxEmbedder": "mnemonite.embedding",
    "OpenAIEmbedder": "mnemonite.embedding",
    "IndexProgress": "mnemonite.embedding.indexer",
    "AmbiguousIdError": "mnemonite.errors",
    "ConfigurationError": "mnemonite.errors",
    "ConsolidationRuleError": "mnemonite.errors",
    "DatabaseNotFoundError": "mnemonite.errors",
    "DeltaValidationError": "mnemonite.errors",
    "EmbedderMismatchError": "mnemonite.errors",
    "EmbeddingError": "mnemonite.errors",
    "EntityConflictError": "mnemonite.errors",
    "EpisodeConflictError": "mnemonite.errors",
    "FactConflictError": "mnemonite.errors",
    "InvalidInputError": "mnemonite.errors",
    "MemoryScopeError": "mnemonite.errors",
    "MigrationNotSupported": "mnemonite.errors",
    "MnemoniteError": "mnemonite.errors",
    "NotADatabaseError": "mnemonite.errors",
    "NotFoundError": "mnemonite.errors",
    "SchemaVersionError": "mnemonite.errors",
    "StoreError": "mnemonite.errors",
    "StoreUnavailableError": "mnemonite.errors",
    # faults named by cause
    "DatabaseCorruptError": "mnemonite.errors",
    "StoreBusyError": "mnemonite.errors",
    "StoreFullError": "mnemonite.errors",
    "StoreReadOnlyError": "mnemonite.errors",
    "GraphMemory": "mnemonite.graph",
    "allocate_memory_budget": "mnemonite.graph",
    "ConflictJudge": "mnemonite.judge",
    "OpenAIJudge": "mnemonite.judge",
    "Memory": "mnemonite.memory",
    "AddDelta": "mnemonite.models",
    "ConsolidationRule": "mnemonite.models",
    "ConsolidationRun": "mnemonite.models",
    "DeleteDelta": "mnemonite.models",
    "DeltaRecord": "mnemonite.models",
    "Episode": "mnemonite.models",
    "Fact": "mnemonite.models",
    "FactFilter": "mnemonite.models",
    "FactPayload": "mnemonite.models",
    "Lineage": "mnemonite.models",
    "MemoryDelta": "mnemonite.models",
    "MigrationOp": "mnemonite.models",
    "MigrationPlan": "mnemonite.models",
    "NoopDelta": "mnemonite.models",
    "RuleState": "mnemonite.models",
    "StoreHealth": "mnemonite.models",
    "UpdateDelta": "mnemonite.models",
    "parse_delta": "mnemonite.models",
    "ConflictDecision": "mnemonite.models.conflict",
    "ConflictThresholds": "mnemonite.models.conflict",
    "JudgeVerdict": "mnemonite.models.conflict",
    "PurgeRecord": "mnemonite.models.conflict",
    "EntityLink": "mnemonite.models.fact",
    "BudgetConfig": "mnemonite.models.graph",
    "Edge": "mnemonite.models.graph",
    "Entity": "mnemonite.models.graph",
    "EntityContext": "mnemonite.models.graph",
    "GraphStats": "mnemonite.models.graph",
    "RecallOptions": "mnemonite.models.graph",
    "ScoredFact": "mnemonite.models.graph",
    "SearchFilter": "mnemonite.models.search",
    "SearchHit": "mnemonite.models.search",
    "RuleBasedScorer": "mnemonite.salience",
    "SalienceConfig": "mnemonite.salience",
    "SalienceContext": "mnemonite.salience",
    "SalienceScorer": "mnemonite.salience",
    "boost_salience": "mnemonite.salience",
    "combine_scores": "mnemonite.salience",
    "compute_salience": "mnemonite.salience",
    "rank_by_salience": "mnemonite.salience",
    "Scope": "mnemonite.scope",
    "Reranker": "mnemonite.search",
    "SearchOptions": "mnemonite.search",
    "FactStore": "mnemonite.store",
    "MemoryStore": "mnemonite.store",
    "SQLiteMemoryStore": "mnemonite.store",
    "Store": "mnemonite.store",
    "SyncMemory": "mnemonite.sync",
    "SalientEpisode": "mnemonite.tiers",
    "TokenCounter": "mnemonite.tokens",
}

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
    # faults named by cause
    "DatabaseCorruptError",
    "StoreBusyError",
    "StoreFullError",
    "StoreReadOnlyError",
]


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'mnemonite' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_WHERE])
