"""The memory tiers a `Memory` exposes: `episodic` and `semantic`."""

from mnemonite.tiers.episodic import EpisodicTier, SalientEpisode
from mnemonite.tiers.semantic import SemanticTier

__all__ = ["EpisodicTier", "SalientEpisode", "SemanticTier"]
