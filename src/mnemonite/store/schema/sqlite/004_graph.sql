-- mnemonite SQLite schema, version 4: graph memory (entities, edges, fact<->entity links) and token counts.
-- A fact keeps its links as written (facts are immutable); fact_entities indexes them for recall by entity.
ALTER TABLE facts ADD COLUMN entity_links TEXT NOT NULL DEFAULT '[]';
ALTER TABLE facts ADD COLUMN token_count INTEGER;
ALTER TABLE facts ADD COLUMN summary_token_count INTEGER;

CREATE TABLE IF NOT EXISTS entities (
    seq         INTEGER PRIMARY KEY,
    id          TEXT NOT NULL UNIQUE,
    scope_key   TEXT NOT NULL,
    user_id     TEXT NOT NULL,
    agent_id    TEXT NOT NULL,
    name        TEXT NOT NULL,
    name_key    TEXT NOT NULL,              -- the name case-folded: unique within a (user, agent)
    entity_type TEXT NOT NULL,
    properties  TEXT NOT NULL,
    owner       TEXT,
    created_at  TEXT NOT NULL,
    updated_at  TEXT NOT NULL,
    UNIQUE (scope_key, name_key)
);
CREATE INDEX IF NOT EXISTS idx_entities_type ON entities(scope_key, entity_type, name_key);

CREATE VIRTUAL TABLE IF NOT EXISTS entities_fts USING fts5(
    name, entity_type, properties, content = 'entities', content_rowid = 'seq', tokenize = 'porter unicode61'
);
CREATE TRIGGER IF NOT EXISTS entities_fts_insert AFTER INSERT ON entities BEGIN
    INSERT INTO entities_fts (rowid, name, entity_type, properties)
        VALUES (new.seq, new.name, new.entity_type, new.properties);
END;
CREATE TRIGGER IF NOT EXISTS entities_fts_delete AFTER DELETE ON entities BEGIN
    INSERT INTO entities_fts (entities_fts, rowid, name, entity_type, properties)
        VALUES ('delete', old.seq, old.name, old.entity_type, old.properties);
END;
CREATE TRIGGER IF NOT EXISTS entities_fts_update AFTER UPDATE ON entities BEGIN
    INSERT INTO entities_fts (entities_fts, rowid, name, entity_type, properties)
        VALUES ('delete', old.seq, old.name, old.entity_type, old.properties);
    INSERT INTO entities_fts (rowid, name, entity_type, properties)
        VALUES (new.seq, new.name, new.entity_type, new.properties);
END;

-- Directed, unique per (source, target, relation); both ends in the edge's own scope; no self-loops.
CREATE TABLE IF NOT EXISTS edges (
    seq        INTEGER PRIMARY KEY,
    id         TEXT NOT NULL UNIQUE,
    scope_key  TEXT NOT NULL,
    user_id    TEXT NOT NULL,
    agent_id   TEXT NOT NULL,
    source_id  TEXT NOT NULL REFERENCES entities(id) ON DELETE CASCADE,
    target_id  TEXT NOT NULL REFERENCES entities(id) ON DELETE CASCADE,
    relation   TEXT NOT NULL,
    properties TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    UNIQUE (source_id, target_id, relation),
    CHECK (source_id != target_id)
);
CREATE INDEX IF NOT EXISTS idx_edges_source ON edges(source_id, relation, target_id, seq);
CREATE INDEX IF NOT EXISTS idx_edges_target ON edges(target_id, relation, source_id, seq);
CREATE INDEX IF NOT EXISTS idx_edges_scope ON edges(scope_key);

CREATE TABLE IF NOT EXISTS fact_entities (
    entity_id TEXT NOT NULL REFERENCES entities(id) ON DELETE CASCADE,
    fact_id   TEXT NOT NULL REFERENCES facts(id) ON DELETE CASCADE,
    role      TEXT NOT NULL CHECK (role IN ('about', 'by', 'for', 'mentions')),
    PRIMARY KEY (entity_id, fact_id, role)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS idx_fact_entities_fact ON fact_entities(fact_id);
