-- mnemonite PostgreSQL schema, version 2: facts (bi-temporal), their provenance and lineage, the delta log.
-- Same columns and encodings as SQLite's facts (its versions 1, 3 and 4 together).
CREATE TABLE IF NOT EXISTS facts (
    seq                   BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id                    TEXT NOT NULL UNIQUE,
    scope_key             TEXT COLLATE "C" NOT NULL,
    user_id               TEXT NOT NULL,
    agent_id              TEXT NOT NULL,
    text                  TEXT NOT NULL,
    subject               TEXT,
    predicate             TEXT,
    object                TEXT,
    payload               TEXT NOT NULL,
    memory_type           TEXT NOT NULL,
    status                TEXT NOT NULL CHECK (status IN ('active', 'pending', 'superseded', 'forgotten')),
    valid_from            TEXT COLLATE "C" NOT NULL,
    valid_to              TEXT COLLATE "C",
    asserted_valid_to     TEXT COLLATE "C",
    recorded_at           TEXT COLLATE "C" NOT NULL,
    superseded_at         TEXT COLLATE "C",
    source_episode_ids    TEXT NOT NULL,
    rule_id               TEXT NOT NULL,
    confidence            DOUBLE PRECISION NOT NULL CHECK (confidence BETWEEN 0 AND 1),
    promotion_ts          TEXT COLLATE "C" NOT NULL,
    salience              DOUBLE PRECISION NOT NULL DEFAULT 0.5,
    access_count          INTEGER NOT NULL DEFAULT 0,
    last_accessed_at      TEXT COLLATE "C",
    tags                  TEXT NOT NULL,
    channels              TEXT NOT NULL,
    summary               TEXT,
    event_date            TEXT COLLATE "C",
    event_date_confidence TEXT,
    text_hash             TEXT,
    entity_links          TEXT NOT NULL DEFAULT '[]',
    token_count           INTEGER,
    summary_token_count   INTEGER,
    text_tsv              tsvector GENERATED ALWAYS AS (to_tsvector('english', text)) STORED
);
CREATE INDEX IF NOT EXISTS idx_facts_scope_recorded ON facts (scope_key, recorded_at);
CREATE INDEX IF NOT EXISTS idx_facts_current ON facts (scope_key, recorded_at) WHERE superseded_at IS NULL;
CREATE INDEX IF NOT EXISTS idx_facts_hash ON facts (scope_key, text_hash) WHERE superseded_at IS NULL;
CREATE INDEX IF NOT EXISTS idx_facts_subject ON facts (scope_key, subject, predicate) WHERE superseded_at IS NULL;
CREATE INDEX IF NOT EXISTS idx_facts_fts ON facts USING GIN (text_tsv);

CREATE TABLE IF NOT EXISTS fact_sources (
    episode_id TEXT NOT NULL,
    fact_id    TEXT NOT NULL REFERENCES facts (id) ON DELETE CASCADE,
    PRIMARY KEY (episode_id, fact_id)
);
CREATE INDEX IF NOT EXISTS idx_fact_sources_fact ON fact_sources (fact_id);

CREATE TABLE IF NOT EXISTS lineage (
    new_id   TEXT NOT NULL,
    old_id   TEXT NOT NULL,
    relation TEXT NOT NULL CHECK (relation IN ('SUPERSEDES', 'CONSOLIDATES')),
    at       TEXT COLLATE "C" NOT NULL,
    PRIMARY KEY (new_id, old_id, relation)
);
CREATE INDEX IF NOT EXISTS idx_lineage_old ON lineage (old_id);

CREATE TABLE IF NOT EXISTS delta_log (
    seq             BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    delta_id        TEXT NOT NULL UNIQUE,
    kind            TEXT NOT NULL,
    rule_id         TEXT NOT NULL,
    body            TEXT NOT NULL,
    emitted_at      TEXT COLLATE "C" NOT NULL,
    applied_at      TEXT COLLATE "C",
    fact_id         TEXT,
    closed_fact_ids TEXT NOT NULL DEFAULT '[]',
    rejected_at     TEXT COLLATE "C",
    rejected_reason TEXT
);
CREATE INDEX IF NOT EXISTS idx_delta_log_pending ON delta_log (seq) WHERE applied_at IS NULL AND rejected_at IS NULL;
CREATE INDEX IF NOT EXISTS idx_delta_log_rule ON delta_log (rule_id, seq);
