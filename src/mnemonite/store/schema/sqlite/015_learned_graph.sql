-- mnemonite SQLite schema, version 15: the graph learned from facts. An edge read from a fact names it and holds
-- while the fact does (valid_to: when the fact stopped being believed); an entity made from a fact names that fact
-- (a purge removes what only it made); graph_build is how far `graph build` has read each scope's facts.
ALTER TABLE edges ADD COLUMN fact_id TEXT;
ALTER TABLE edges ADD COLUMN valid_from TEXT;
ALTER TABLE edges ADD COLUMN valid_to TEXT;
ALTER TABLE entities ADD COLUMN learned_from TEXT;
CREATE INDEX IF NOT EXISTS idx_edges_fact ON edges(fact_id) WHERE fact_id IS NOT NULL;
CREATE INDEX IF NOT EXISTS idx_entities_learned ON entities(learned_from) WHERE learned_from IS NOT NULL;

CREATE TABLE IF NOT EXISTS graph_build (
    scope_key TEXT PRIMARY KEY,
    last_seq  INTEGER NOT NULL
);
