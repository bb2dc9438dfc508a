"""mnemonite: layered long-term memory for AI agents.

Everything a user needs is importable from here::

    from mnemonite import Memory, SyncMemory, Scope, Episode, ConsolidationRule
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from mnemonite._version import __version__ as __version__

if TYPE_CHECKING:
    # the specification's concept graph, lifecycle and routing classes
    from mnemonite.concepts.consolidator import SemanticConsolidator
    from mnemonite.concepts.graph import EventGraph, GraphBuilder
    from mnemonite.concepts.retriever import GraphRetriever
    from mnemonite.config import MemoryConfig
    from mnemonite.conflicts import LocalePack, define_locale_pack

    # the background consolidator
    from mnemonite.consolidator.budget import CONSOLIDATOR_TIER_DEFAULTS, ConsolidatorConfig
    from mnemonite.consolidator.llm import LLMProvider, OpenAIProvider
    from mnemonite.consolidator.runner import Consolidator
    from mnemonite.embedding import Embedder, OnnxEmbedder, OpenAIEmbedder
    from mnemonite.embedding.indexer import IndexProgress

    # the agent tiers
    from mnemonite.errors import (
        AmbiguousIdError,
        AuthenticationError,
        BlockConflictError,
        BlockLimitError,
        BlockPatchError,
        BudgetExceededError,
        ConfigurationError,
        ConsolidationRuleError,
        ConsolidatorBusyError,
        CustomTierMisconfiguredError,
        DatabaseCorruptError,
        DatabaseNotFoundError,
        DeltaValidationError,
        EmbedderMismatchError,
        EmbeddingError,
        EntityConflictError,
        EpisodeConflictError,
        FactConflictError,
        GroupAccessError,
        InsecureServerError,
        InvalidInputError,
        LLMProviderError,
        MemoryScopeError,
        MigrationNotSupported,
        MnemoniteError,
        NotADatabaseError,
        NotFoundError,
        PermissionDeniedError,
        ReadOnlyBlockError,
        SchemaVersionError,
        SecretScanError,
        SensitivityError,
        ServerBusyError,
        StoreBusyError,
        StoreError,
        StoreFullError,
        StoreReadOnlyError,
        StoreUnavailableError,
    )
    from mnemonite.graph import GraphMemory, allocate_memory_budget
    from mnemonite.judge import ConflictJudge, OpenAIJudge
    from mnemonite.keys import ApiKeys
    from mnemonite.lifecycle import LifecycleTierManager
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
    from mnemonite.models.blocks import Block
    from mnemonite.models.concepts import ConceptNode, EventNode, MemoryGraph, RelationshipEdge, SemanticShiftEvent
    from mnemonite.models.conflict import ConflictDecision, ConflictThresholds, JudgeVerdict, PurgeRecord
    from mnemonite.models.consolidator import ConsolidatorStatus, PhaseReport, TopicEpisode
    from mnemonite.models.deltas import GraphChange, LinkDelta
    from mnemonite.models.fact import EntityLink
    from mnemonite.models.graph import (
        BudgetConfig,
        Edge,
        Entity,
        EntityContext,
        GraphBuildReport,
        GraphStats,
        RecallOptions,
        ScoredFact,
    )
    from mnemonite.models.keys import ApiKey, IssuedKey
    from mnemonite.models.messages import Message, SessionEvent
    from mnemonite.models.procedures import Procedure
    from mnemonite.models.search import SearchFilter, SearchHit
    from mnemonite.models.sensitivity import Sensitivity
    from mnemonite.models.shared import Group, SharedItem
    from mnemonite.models.tools import ToolCall, ToolError, ToolResult
    from mnemonite.privacy import Reveal, reveal_text
    from mnemonite.recognisers import Recogniser, SecretPattern, SecretScanner, SecretSpan
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
    from mnemonite.scope import DEFAULT_AGENT, Scope
    from mnemonite.search import Reranker, SearchOptions
    from mnemonite.search.routing import AdaptiveRetriever
    from mnemonite.store import FactStore, MemoryStore, SQLiteMemoryStore, Store
    from mnemonite.sync import SyncMemory
    from mnemonite.tiers import SalientEpisode
    from mnemonite.tokens import TokenCounter
    from mnemonite.tools import GuardPolicy, ToolSet

# Names load on first use (PEP 562): `mnemonite --help` and `import mnemonite.errors` must not pay
# for numpy, pydantic models and the search engine.
_WHERE: dict[str, str] = {
    "GraphBuilder": "mnemonite.concepts.graph",
    "EventGraph": "mnemonite.concepts.graph",
    "SemanticConsolidator": "mnemonite.concepts.consolidator",
    "GraphRetriever": "mnemonite.concepts.retriever",
    "SemanticShiftEvent": "mnemonite.models.concepts",
    "EventNode": "mnemonite.models.concepts",
    "ConceptNode": "mnemonite.models.concepts",
    "RelationshipEdge": "mnemonite.models.concepts",
    "MemoryGraph": "mnemonite.models.concepts",
    "LifecycleTierManager": "mnemonite.lifecycle",
    "AdaptiveRetriever": "mnemonite.search.routing",
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
    "GraphBuildReport": "mnemonite.models.graph",
    "GraphChange": "mnemonite.models.deltas",
    "LinkDelta": "mnemonite.models.deltas",
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
    "DEFAULT_AGENT": "mnemonite.scope",
    "Reranker": "mnemonite.search",
    "SearchOptions": "mnemonite.search",
    "FactStore": "mnemonite.store",
    "MemoryStore": "mnemonite.store",
    "SQLiteMemoryStore": "mnemonite.store",
    "Store": "mnemonite.store",
    "SyncMemory": "mnemonite.sync",
    "SalientEpisode": "mnemonite.tiers",
    "TokenCounter": "mnemonite.tokens",
    # the background consolidator
    "Consolidator": "mnemonite.consolidator.runner",
    "ConsolidatorConfig": "mnemonite.consolidator.budget",
    "CONSOLIDATOR_TIER_DEFAULTS": "mnemonite.consolidator.budget",
    "CustomTierMisconfiguredError": "mnemonite.errors",
    "BudgetExceededError": "mnemonite.errors",
    "LLMProviderError": "mnemonite.errors",
    "ConsolidatorBusyError": "mnemonite.errors",
    "OpenAIProvider": "mnemonite.consolidator.llm",
    "LLMProvider": "mnemonite.consolidator.llm",
    "PhaseReport": "mnemonite.models.consolidator",
    "ConsolidatorStatus": "mnemonite.models.consolidator",
    "TopicEpisode": "mnemonite.models.consolidator",
    # sensitivity, redaction and the memory tools
    "SensitivityError": "mnemonite.errors",
    "SecretScanError": "mnemonite.errors",
    "reveal_text": "mnemonite.privacy",
    "Recogniser": "mnemonite.recognisers",
    "SecretPattern": "mnemonite.recognisers",
    "SecretScanner": "mnemonite.recognisers",
    "SecretSpan": "mnemonite.recognisers",
    "Reveal": "mnemonite.privacy",
    "GuardPolicy": "mnemonite.tools",
    "ToolSet": "mnemonite.tools",
    "ToolCall": "mnemonite.models.tools",
    "ToolError": "mnemonite.models.tools",
    "ToolResult": "mnemonite.models.tools",
    "Sensitivity": "mnemonite.models.sensitivity",
    # the agent tiers
    "BlockConflictError": "mnemonite.errors",
    "BlockLimitError": "mnemonite.errors",
    "BlockPatchError": "mnemonite.errors",
    "GroupAccessError": "mnemonite.errors",
    "ReadOnlyBlockError": "mnemonite.errors",
    "Block": "mnemonite.models.blocks",
    "Message": "mnemonite.models.messages",
    "SessionEvent": "mnemonite.models.messages",
    "Procedure": "mnemonite.models.procedures",
    "Group": "mnemonite.models.shared",
    "SharedItem": "mnemonite.models.shared",
    # the server's API keys
    "AuthenticationError": "mnemonite.errors",
    "InsecureServerError": "mnemonite.errors",
    "PermissionDeniedError": "mnemonite.errors",
    "ServerBusyError": "mnemonite.errors",
    "ApiKeys": "mnemonite.keys",
    "ApiKey": "mnemonite.models.keys",
    "IssuedKey": "mnemonite.models.keys",
}

__all__ = [
    "DEFAULT_AGENT",
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
    "GraphBuildReport",
    "GraphChange",
    "GraphStats",
    "LinkDelta",
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
    "reveal_text",
    "rank_by_salience",
    # the background consolidator
    "Consolidator",
    "ConsolidatorConfig",
    "CONSOLIDATOR_TIER_DEFAULTS",
    "CustomTierMisconfiguredError",
    "BudgetExceededError",
    "LLMProviderError",
    "ConsolidatorBusyError",
    "OpenAIProvider",
    "LLMProvider",
    "PhaseReport",
    "ConsolidatorStatus",
    "TopicEpisode",
    # sensitivity, redaction and the memory tools
    "Recogniser",
    "Reveal",
    "SecretPattern",
    "SecretScanError",
    "SecretScanner",
    "SecretSpan",
    "Sensitivity",
    "GuardPolicy",
    "ToolCall",
    "ToolError",
    "ToolResult",
    "ToolSet",
    "SensitivityError",
    # the agent tiers
    "Block",
    "BlockConflictError",
    "BlockLimitError",
    "BlockPatchError",
    "Group",
    "GroupAccessError",
    "Message",
    "Procedure",
    "ReadOnlyBlockError",
    "SessionEvent",
    "SharedItem",
    # the server's API keys
    "ApiKey",
    "ApiKeys",
    "AuthenticationError",
    "InsecureServerError",
    "IssuedKey",
    "PermissionDeniedError",
    "ServerBusyError",
    # faults named by cause
    "DatabaseCorruptError",
    "StoreBusyError",
    "StoreFullError",
    "StoreReadOnlyError",
    "GraphBuilder",
    "EventGraph",
    "SemanticConsolidator",
    "GraphRetriever",
    "SemanticShiftEvent",
    "EventNode",
    "ConceptNode",
    "RelationshipEdge",
    "MemoryGraph",
    "LifecycleTierManager",
    "AdaptiveRetriever",
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
