"""The concept graph: session event graphs, semantic-shift consolidation, and graph retrieval."""

from mnemonite.concepts.consolidator import SemanticConsolidator
from mnemonite.concepts.extract import ConceptExtractor, KeyPhraseExtractor
from mnemonite.concepts.graph import EventGraph, GraphBuilder
from mnemonite.concepts.retriever import GraphRetriever, format_as_context
from mnemonite.concepts.tier import ConceptMemory
from mnemonite.models.concepts import (
    ConceptConfig,
    ConceptNode,
    EventNode,
    GraphResult,
    GraphVersion,
    MemoryGraph,
    RelationshipEdge,
    SemanticShiftEvent,
)

__all__ = [
    "ConceptConfig",
    "ConceptExtractor",
    "ConceptMemory",
    "ConceptNode",
    "EventGraph",
    "EventNode",
    "GraphBuilder",
    "GraphResult",
    "GraphRetriever",
    "GraphVersion",
    "KeyPhraseExtractor",
    "MemoryGraph",
    "RelationshipEdge",
    "SemanticConsolidator",
    "SemanticShiftEvent",
    "format_as_context",
]
