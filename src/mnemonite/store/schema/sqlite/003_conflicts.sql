-- mnemonite SQLite schema, version 3: the conflict pipeline of semantic.remember, and purges.
-- Stage 1 looks current facts up by the MD5 of their canonical text.
ALTER TABLE facts ADD COLUMN text_hash TEXT;
UPDATE facts SET text_hash = mnemonite_text_hash(text);
CREATE INDEX IF NOT EXISTS idx_facts_hash ON facts(scope_key, text_hash) WHERE superseded_at IS NULL;
CREATE INDEX IF NOT EXISTS idx_facts_subject ON facts(scope_key, subject, predicate) WHERE superseded_at IS NULL;

-- One row per decision of remember (and of a judge, and of an explicit supersede).
CREATE TABLE IF NOT EXISTS fact_conflicts (
    seq            INTEGER PRIMARY KEY,
    id             TEXT NOT NULL UNIQUE,
    scope_key      TEXT NOT NULL,
    user_id        TEXT NOT NULL,
    agent_id       TEXT NOT NULL,
    kind           TEXT NOT NULL CHECK (kind IN ('supersede', 'dedup', 'pending', 'admit')),
    stage          TEXT NOT NULL,
    zone           TEXT,
    cosine         REAL,
    reason         TEXT NOT NULL,
    fact_id        TEXT NOT NULL,
    matched_ids    TEXT NOT NULL,
    candidate_text TEXT NOT NULL,
    decided_at     TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS idx_fact_conflicts_scope ON fact_conflicts(scope_key, seq);

-- Real removals (privacy requests): which facts, why, when. The text itself is gone.
CREATE TABLE IF NOT EXISTS purges (
    seq       INTEGER PRIMARY KEY,
    id        TEXT NOT NULL UNIQUE,
    user_id   TEXT NOT NULL,
    agent_id  TEXT NOT NULL,
    fact_ids  TEXT NOT NULL,
    reason    TEXT NOT NULL,
    purged_at TEXT NOT NULL
);
