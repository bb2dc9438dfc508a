-- mnemonite PostgreSQL schema, version 1: episodes. Times are the same fixed-width UTC text as in SQLite
-- (string order = time order), so rows move between backends unchanged. Keys compare bytewise (COLLATE "C"),
-- which the widening reads' index range scans rely on.
CREATE TABLE IF NOT EXISTS episodes (
    seq              BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id               TEXT    NOT NULL UNIQUE,
    scope_key        TEXT    COLLATE "C" NOT NULL,
    user_id          TEXT    NOT NULL,
    session_id       TEXT    NOT NULL,
    agent_id         TEXT    NOT NULL,
    content          TEXT    NOT NULL,
    timestamp        TEXT    COLLATE "C" NOT NULL,
    source_node      TEXT    NOT NULL,
    metadata         TEXT    NOT NULL,
    recorded_at      TEXT    NOT NULL,
    access_count     INTEGER NOT NULL DEFAULT 0,
    last_accessed_at TEXT    COLLATE "C",
    content_tsv      tsvector GENERATED ALWAYS AS (to_tsvector('english', content)) STORED
);
CREATE INDEX IF NOT EXISTS idx_episodes_scope_ts ON episodes (scope_key, timestamp DESC, seq DESC);
CREATE INDEX IF NOT EXISTS idx_episodes_fts ON episodes USING GIN (content_tsv);

CREATE TABLE IF NOT EXISTS episode_sources (
    scope_key   TEXT COLLATE "C" NOT NULL,
    source_node TEXT NOT NULL,
    PRIMARY KEY (scope_key, source_node)
);
