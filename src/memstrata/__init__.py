"""memstrata: layered long-term memory for AI agents."""
