-- mnemonite PostgreSQL schema, version 6: graph memory (entities, edges, fact<->entity links).
-- Same columns as SQLite's version 4; the facts' entity_links and token counts are in version 2 here.
CREATE TABLE IF NOT EXISTS entities (
    seq         BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id          TEXT NOT NULL UNIQUE,
    scope_key   TEXT COLLATE "C" NOT NULL,
    user_id     TEXT NOT NULL,
    agent_id    TEXT NOT NULL,
    name        TEXT NOT NULL,
    name_key    TEXT NOT NULL,
    entity_type TEXT NOT NULL,
    properties  TEXT NOT NULL,
    owner       TEXT,
    created_at  TEXT COLLATE "C" NOT NULL,
    updated_at  TEXT COLLATE "C" NOT NULL,
    search_tsv  tsvector GENERATED ALWAYS AS (
        setweight(to_tsvector('english', name), 'A') || setweight(to_tsvector('english', entity_type), 'B')
        || setweight(to_tsvector('english', properties), 'C')
    ) STORED,
    UNIQUE (scope_key, name_key)
);
CREATE INDEX IF NOT EXISTS idx_entities_type ON entities (scope_key, entity_type, name_key);
CREATE INDEX IF NOT EXISTS idx_entities_fts ON entities USING GIN (search_tsv);

CREATE TABLE IF NOT EXISTS edges (
    seq        BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id         TEXT NOT NULL UNIQUE,
    scope_key  TEXT COLLATE "C" NOT NULL,
    user_id    TEXT NOT NULL,
    agent_id   TEXT NOT NULL,
    source_id  TEXT NOT NULL REFERENCES entities (id) ON DELETE CASCADE,
    target_id  TEXT NOT NULL REFERENCES entities (id) ON DELETE CASCADE,
    relation   TEXT NOT NULL,
    properties TEXT NOT NULL,
    created_at TEXT COLLATE "C" NOT NULL,
    updated_at TEXT COLLATE "C" NOT NULL,
    UNIQUE (source_id, target_id, relation),
    CHECK (source_id != target_id)
);
CREATE INDEX IF NOT EXISTS idx_edges_source ON edges (source_id, relation, target_id, seq);
CREATE INDEX IF NOT EXISTS idx_edges_target ON edges (target_id, relation, source_id, seq);
CREATE INDEX IF NOT EXISTS idx_edges_scope ON edges (scope_key);

CREATE TABLE IF NOT EXISTS fact_entities (
    entity_id TEXT NOT NULL REFERENCES entities (id) ON DELETE CASCADE,
    fact_id   TEXT NOT NULL REFERENCES facts (id) ON DELETE CASCADE,
    role      TEXT NOT NULL CHECK (role IN ('about', 'by', 'for', 'mentions')),
    PRIMARY KEY (entity_id, fact_id, role)
);
CREATE INDEX IF NOT EXISTS idx_fact_entities_fact ON fact_entities (fact_id);
