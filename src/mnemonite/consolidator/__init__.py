"""The background consolidator: light, standard and deep phases under a daily cost budget.

`Consolidator` lives in `mnemonite.consolidator.runner` (``mem.consolidator``); this package's
root holds only the settings, so `MemoryConfig` can name them without importing the phases.
"""

from mnemonite.consolidator.budget import CONSOLIDATOR_TIER_DEFAULTS, ConsolidatorConfig, TierDefaults

__all__ = ["CONSOLIDATOR_TIER_DEFAULTS", "ConsolidatorConfig", "TierDefaults"]
