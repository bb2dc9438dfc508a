-- mnemonite PostgreSQL schema, version 4: the conflict pipeline of semantic.remember, and purges
-- (SQLite's version 3; facts.text_hash and its index are in version 2 here).
CREATE TABLE IF NOT EXISTS fact_conflicts (
    seq            BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id             TEXT NOT NULL UNIQUE,
    scope_key      TEXT COLLATE "C" NOT NULL,
    user_id        TEXT NOT NULL,
    agent_id       TEXT NOT NULL,
    kind           TEXT NOT NULL CHECK (kind IN ('supersede', 'dedup', 'pending', 'admit')),
    stage          TEXT NOT NULL,
    zone           TEXT,
    cosine         DOUBLE PRECISION,
    reason         TEXT NOT NULL,
    fact_id        TEXT NOT NULL,
    matched_ids    TEXT NOT NULL,
    candidate_text TEXT NOT NULL,
    decided_at     TEXT COLLATE "C" NOT NULL
);
CREATE INDEX IF NOT EXISTS idx_fact_conflicts_scope ON fact_conflicts (scope_key, seq);

CREATE TABLE IF NOT EXISTS purges (
    seq       BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id        TEXT NOT NULL UNIQUE,
    user_id   TEXT NOT NULL,
    agent_id  TEXT NOT NULL,
    fact_ids  TEXT NOT NULL,
    reason    TEXT NOT NULL,
    purged_at TEXT COLLATE "C" NOT NULL
);
CREATE INDEX IF NOT EXISTS idx_purges_user ON purges (user_id, seq);
