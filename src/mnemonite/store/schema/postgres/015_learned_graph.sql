-- mnemonite PostgreSQL schema, version 15: the graph learned from facts. An edge read from a fact names it and holds
-- while the fact does (valid_to: when the fact stopped being believed); an entity made from a fact names that fact
-- (a purge removes what only it made); graph_build is how far `graph build` has read each scope's facts.
ALTER TABLE edges ADD COLUMN IF NOT EXISTS fact_id TEXT;
ALTER TABLE edges ADD COLUMN IF NOT EXISTS valid_from TEXT COLLATE "C";
ALTER TABLE edges ADD COLUMN IF NOT EXISTS valid_to TEXT COLLATE "C";
ALTER TABLE entities ADD COLUMN IF NOT EXISTS learned_from TEXT;
CREATE INDEX IF NOT EXISTS idx_edges_fact ON edges (fact_id) WHERE fact_id IS NOT NULL;
CREATE INDEX IF NOT EXISTS idx_entities_learned ON entities (learned_from) WHERE learned_from IS NOT NULL;

CREATE TABLE IF NOT EXISTS graph_build (
    scope_key TEXT COLLATE "C" PRIMARY KEY,
    last_seq  BIGINT NOT NULL
);
