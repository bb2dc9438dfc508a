-- mnemonite SQLite schema, version 12: provenance read from the fact's side. Search boosts a fact whose source
-- episodes' speaker the query names (one lookup per candidate fact), and deleting a fact cascades by fact_id.
-- PostgreSQL has had this index since its version 2.
CREATE INDEX IF NOT EXISTS idx_fact_sources_fact ON fact_sources(fact_id);
