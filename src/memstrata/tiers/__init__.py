"""The memory tiers a `Memory` exposes: `episodic` and `semantic`."""

from memstrata.tiers.episodic import EpisodicTier, SalientEpisode
from memstrata.tiers.semantic import SemanticTier

__all__ = ["EpisodicTier", "SalientEpisode", "SemanticTier"]
