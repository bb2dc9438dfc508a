"""Consolidation: rules, their `when_filter`, classification into deltas, and cadence."""
