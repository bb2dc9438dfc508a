"""The public surface: pinned exports, sync/async parity, and the architecture rules."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import mnemonite
from mnemonite import Memory, SyncMemory
from mnemonite.concepts import ConceptMemory
from mnemonite.consolidator.runner import Consolidator
from mnemonite.graph import GraphMemory
from mnemonite.keys import ApiKeys
from mnemonite.lifecycle import LifecycleTierManager
from mnemonite.sync import (
    SyncApiKeys,
    SyncConceptMemory,
    SyncConsolidator,
    SyncEpisodicTier,
    SyncGraphMemory,
    SyncLifecycleTierManager,
    SyncSemanticTier,
)
from mnemonite.sync_tiers import SyncProceduralTier, SyncSessionTier, SyncSharedTier, SyncWorkingTier
from mnemonite.sync_tools import SyncTools, SyncToolSet
from mnemonite.tiers import EpisodicTier, SemanticTier
from mnemonite.tiers.procedural import ProceduralTier
from mnemonite.tiers.session import SessionTier
from mnemonite.tiers.shared import SharedTier
from mnemonite.tiers.working import WorkingTier
from mnemonite.tools import Tools, ToolSet

PACKAGE = Path(mnemonite.__file__).parent
ROOT = PACKAGE.parent.parent

EXPORTS = {
    "AddDelta", "ConfigurationError", "ConsolidationRule", "ConsolidationRuleError", "ConsolidationRun",
    "DeleteDelta", "DeltaRecord", "DeltaValidationError", "Episode", "EpisodeConflictError", "Fact",
    "FactConflictError", "FactFilter", "FactPayload", "FactStore", "InvalidInputError", "Lineage", "Memory",
    "MemoryConfig", "MemoryDelta", "MemoryScopeError", "MemoryStore", "MnemoniteError", "MigrationNotSupported",
    "MigrationOp", "MigrationPlan", "NoopDelta", "NotFoundError", "RuleBasedScorer", "RuleState",
    "SalienceContext", "SalienceScorer", "SalientEpisode", "SchemaVersionError", "Scope", "SQLiteMemoryStore",
    "Store", "StoreError", "StoreHealth", "SyncMemory", "UpdateDelta", "parse_delta", "EmbedderMismatchError",
    "EmbeddingError", "Embedder", "OnnxEmbedder", "OpenAIEmbedder", "IndexProgress", "SearchFilter", "SearchHit",
    "Reranker", "SearchOptions", "ConflictDecision", "ConflictJudge", "ConflictThresholds", "JudgeVerdict",
    "LocalePack", "OpenAIJudge", "PurgeRecord", "define_locale_pack", "BudgetConfig", "Edge", "Entity",
    "EntityConflictError", "EntityContext", "EntityLink", "GraphMemory", "GraphStats", "RecallOptions",
    "GraphBuildReport", "GraphChange", "LinkDelta",
    "SalienceConfig", "ScoredFact", "TokenCounter", "allocate_memory_budget", "boost_salience", "combine_scores",
    "compute_salience", "rank_by_salience", "StoreUnavailableError", "AmbiguousIdError", "DatabaseNotFoundError",
    "NotADatabaseError",
    "Consolidator", "ConsolidatorConfig", "CONSOLIDATOR_TIER_DEFAULTS", "CustomTierMisconfiguredError",
    "BudgetExceededError", "LLMProviderError", "ConsolidatorBusyError", "OpenAIProvider", "LLMProvider",
    "PhaseReport", "ConsolidatorStatus", "TopicEpisode",
    # sensitivity, redaction and the memory tools
    "Reveal", "Sensitivity", "SensitivityError", "Recogniser", "SecretPattern", "SecretScanError", "SecretScanner",
    "SecretSpan", "reveal_text", "GuardPolicy", "ToolCall", "ToolError", "ToolResult", "ToolSet",
    "Block", "BlockConflictError", "BlockLimitError", "BlockPatchError", "Group", "GroupAccessError", "Message",
    "Procedure", "ReadOnlyBlockError", "SessionEvent", "SharedItem",
    # the server's API keys
    "ApiKey", "ApiKeys", "IssuedKey", "AuthenticationError", "PermissionDeniedError", "ServerBusyError",
    "InsecureServerError",
    "DatabaseCorruptError", "StoreBusyError", "StoreFullError", "StoreReadOnlyError",
    # the agent every door acts as by default
    "DEFAULT_AGENT",
    # the specification's concept graph, lifecycle and routing classes
    "GraphBuilder", "EventGraph", "SemanticConsolidator", "GraphRetriever", "SemanticShiftEvent", "EventNode",
    "ConceptNode", "RelationshipEdge", "MemoryGraph", "LifecycleTierManager", "AdaptiveRetriever",
}  # fmt: skip


def test_public_api_is_pinned() -> None:
    assert set(mnemonite.__all__) == EXPORTS
    assert all(hasattr(mnemonite, name) for name in mnemonite.__all__)


def public_methods(cls: type) -> dict[str, list[str]]:
    methods = {}
    for name, member in inspect.getmembers(cls):
        if name.startswith("_") or not callable(member):
            continue
        params = [p for p in inspect.signature(member).parameters if p not in ("self", "cls")]
        methods[name] = params
    return methods


def test_sync_and_async_have_the_same_methods_and_parameters() -> None:
    for async_cls, sync_cls in (
        (Memory, SyncMemory),
        (EpisodicTier, SyncEpisodicTier),
        (SemanticTier, SyncSemanticTier),
        (GraphMemory, SyncGraphMemory),
        (Consolidator, SyncConsolidator),
        (WorkingTier, SyncWorkingTier),
        (SessionTier, SyncSessionTier),
        (ProceduralTier, SyncProceduralTier),
        (Tools, SyncTools),
        (ToolSet, SyncToolSet),
        (SharedTier, SyncSharedTier),
        (ApiKeys, SyncApiKeys),
        (ConceptMemory, SyncConceptMemory),
        (LifecycleTierManager, SyncLifecycleTierManager),
    ):
        assert public_methods(async_cls) == public_methods(sync_cls), async_cls.__name__


def imports_of(path: Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return found


def test_nothing_outside_store_imports_a_concrete_store() -> None:
    concrete = ("mnemonite.store.sqlite", "mnemonite.store.SQLiteMemoryStore", "aiosqlite", "sqlite3")
    for path in PACKAGE.rglob("*.py"):
        relative = path.relative_to(PACKAGE)
        if relative.parts[0] == "store" or relative == Path("__init__.py"):
            continue  # the package root re-exports SQLiteMemoryStore for users
        bad = {name for name in imports_of(path) if name.startswith(concrete)}
        assert not bad, f"{relative} imports {bad}"


def test_only_config_reads_the_environment() -> None:
    for path in PACKAGE.rglob("*.py"):
        if path.name != "config.py":
            assert "os.environ" not in path.read_text() and "getenv" not in path.read_text(), path
