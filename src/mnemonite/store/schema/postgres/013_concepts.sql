-- mnemonite PostgreSQL schema, version 13: the concept graph (per user and agent, versioned) and the hot/warm/cold lifecycle.
-- Same tables and encodings as SQLite's version 11.
-- One row per (user, agent): its graph's version (incremented by every consolidation) and the model its vectors are of.
CREATE TABLE IF NOT EXISTS concept_graphs (
    user_id    TEXT    NOT NULL,
    agent_id   TEXT    NOT NULL,
    version    INTEGER NOT NULL,
    model      TEXT    NOT NULL,
    updated_at TEXT    NOT NULL,
    PRIMARY KEY (user_id, agent_id)
);

CREATE TABLE IF NOT EXISTS concept_nodes (
    seq           BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id            TEXT    NOT NULL UNIQUE,
    user_id       TEXT    NOT NULL,
    agent_id      TEXT    NOT NULL,
    label         TEXT    NOT NULL,
    description   TEXT    NOT NULL,
    frequency     INTEGER NOT NULL CHECK (frequency >= 1),
    category      TEXT    NOT NULL CHECK (category IN ('regular', 'schematic')),
    model         TEXT    NOT NULL,
    unit_vector   BYTEA   NOT NULL,          -- float32, L2-normalised (not "vector": that name is pgvector's column in copies)
    created_at    TEXT    NOT NULL,
    updated_at    TEXT    NOT NULL,
    first_version INTEGER NOT NULL,
    last_version  INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS idx_concept_nodes_owner ON concept_nodes(user_id, agent_id, seq);

CREATE TABLE IF NOT EXISTS concept_edges (
    seq        BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id         TEXT    NOT NULL UNIQUE,
    user_id    TEXT    NOT NULL,
    agent_id   TEXT    NOT NULL,
    source_id  TEXT    NOT NULL REFERENCES concept_nodes(id) ON DELETE CASCADE,
    target_id  TEXT    NOT NULL REFERENCES concept_nodes(id) ON DELETE CASCADE,
    relation   TEXT    NOT NULL,
    weight     INTEGER NOT NULL CHECK (weight >= 1),
    created_at TEXT    NOT NULL,
    updated_at TEXT    NOT NULL,
    UNIQUE (user_id, agent_id, source_id, target_id, relation),
    CHECK (source_id != target_id)
);

-- Which records (episode ids) taught a concept: graph retrieval leads back to them.
CREATE TABLE IF NOT EXISTS concept_sources (
    node_id   TEXT NOT NULL REFERENCES concept_nodes(id) ON DELETE CASCADE,
    record_id TEXT NOT NULL,
    PRIMARY KEY (node_id, record_id)
);

-- The audit trail: one row per consolidation, never rewritten.
CREATE TABLE IF NOT EXISTS concept_versions (
    user_id          TEXT    NOT NULL,
    agent_id         TEXT    NOT NULL,
    version          INTEGER NOT NULL,
    at               TEXT    NOT NULL,
    session_id       TEXT,
    events           INTEGER NOT NULL,
    shift_distance   REAL,
    nodes_added      TEXT    NOT NULL,
    nodes_merged     TEXT    NOT NULL,
    edges_added      INTEGER NOT NULL,
    edges_reinforced INTEGER NOT NULL,
    PRIMARY KEY (user_id, agent_id, version)
);

-- A record's lifecycle tier; a record without a row is cold. accesses: its latest access times (JSON, newest first).
CREATE TABLE IF NOT EXISTS record_tiers (
    kind             TEXT NOT NULL CHECK (kind IN ('episode', 'fact')),
    record_id        TEXT NOT NULL,
    user_id          TEXT NOT NULL,
    tier             TEXT NOT NULL CHECK (tier IN ('hot', 'warm', 'cold')),
    last_accessed_at TEXT COLLATE "C" NOT NULL,
    accesses         TEXT NOT NULL,
    changed_at       TEXT NOT NULL,
    PRIMARY KEY (kind, record_id)
);
CREATE INDEX IF NOT EXISTS idx_record_tiers_sweep ON record_tiers(tier, last_accessed_at);
CREATE INDEX IF NOT EXISTS idx_record_tiers_user ON record_tiers(user_id, tier);
