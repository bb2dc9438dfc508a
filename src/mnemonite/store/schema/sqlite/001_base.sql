-- mnemonite SQLite schema, version 1. Times are fixed-width UTC text (string order = time order).
CREATE TABLE IF NOT EXISTS episodes (
    seq              INTEGER PRIMARY KEY,
    id               TEXT    NOT NULL UNIQUE,
    scope_key        TEXT    NOT NULL,
    user_id          TEXT    NOT NULL,
    session_id       TEXT    NOT NULL,
    agent_id         TEXT    NOT NULL,
    content          TEXT    NOT NULL,
    timestamp        TEXT    NOT NULL,
    source_node      TEXT    NOT NULL,
    metadata         TEXT    NOT NULL,
    recorded_at      TEXT    NOT NULL,
    access_count     INTEGER NOT NULL DEFAULT 0,
    last_accessed_at TEXT
);
CREATE INDEX IF NOT EXISTS idx_episodes_scope_ts ON episodes(scope_key, timestamp DESC, seq DESC);

CREATE TABLE IF NOT EXISTS facts (
    seq                   INTEGER PRIMARY KEY,
    id                    TEXT    NOT NULL UNIQUE,
    scope_key             TEXT    NOT NULL,
    user_id               TEXT    NOT NULL,
    agent_id              TEXT    NOT NULL,
    text                  TEXT    NOT NULL,
    subject               TEXT,
    predicate             TEXT,
    object                TEXT,
    payload               TEXT    NOT NULL,
    memory_type           TEXT    NOT NULL,
    status                TEXT    NOT NULL CHECK (status IN ('active', 'pending', 'superseded', 'forgotten')),
    valid_from            TEXT    NOT NULL,
    valid_to              TEXT,
    asserted_valid_to     TEXT,                  -- valid_to as written; valid_to may be closed later
    recorded_at           TEXT    NOT NULL,
    superseded_at         TEXT,
    source_episode_ids    TEXT    NOT NULL,
    rule_id               TEXT    NOT NULL,
    confidence            REAL    NOT NULL CHECK (confidence BETWEEN 0 AND 1),
    promotion_ts          TEXT    NOT NULL,
    salience              REAL    NOT NULL DEFAULT 1.0,
    access_count          INTEGER NOT NULL DEFAULT 0,
    last_accessed_at      TEXT,
    tags                  TEXT    NOT NULL,
    channels              TEXT    NOT NULL,
    summary               TEXT,
    event_date            TEXT,
    event_date_confidence TEXT
);
CREATE INDEX IF NOT EXISTS idx_facts_scope_recorded ON facts(scope_key, recorded_at);
CREATE INDEX IF NOT EXISTS idx_facts_current ON facts(scope_key, recorded_at) WHERE superseded_at IS NULL;

-- Provenance: which episodes a fact was promoted from (resolves `replaces` given as episode ids).
CREATE TABLE IF NOT EXISTS fact_sources (
    episode_id TEXT NOT NULL,
    fact_id    TEXT NOT NULL REFERENCES facts(id) ON DELETE CASCADE,
    PRIMARY KEY (episode_id, fact_id)
) WITHOUT ROWID;

CREATE TABLE IF NOT EXISTS lineage (
    new_id   TEXT NOT NULL,
    old_id   TEXT NOT NULL,
    relation TEXT NOT NULL CHECK (relation IN ('SUPERSEDES', 'CONSOLIDATES')),
    at       TEXT NOT NULL,
    PRIMARY KEY (new_id, old_id, relation)
);
CREATE INDEX IF NOT EXISTS idx_lineage_old ON lineage(old_id);

-- One row per delta: emitted by consolidation (applied_at NULL until applied) or applied directly.
CREATE TABLE IF NOT EXISTS delta_log (
    seq             INTEGER PRIMARY KEY,
    delta_id        TEXT NOT NULL UNIQUE,
    kind            TEXT NOT NULL,
    rule_id         TEXT NOT NULL,
    body            TEXT NOT NULL,
    emitted_at      TEXT NOT NULL,
    applied_at      TEXT,
    fact_id         TEXT,
    closed_fact_ids TEXT NOT NULL DEFAULT '[]',
    rejected_at     TEXT,             -- a consolidation run could not apply it (see rejected_reason)
    rejected_reason TEXT
);
CREATE INDEX IF NOT EXISTS idx_delta_log_pending ON delta_log(seq) WHERE applied_at IS NULL AND rejected_at IS NULL;
CREATE INDEX IF NOT EXISTS idx_delta_log_rule ON delta_log(rule_id, seq);

CREATE TABLE IF NOT EXISTS rules (
    id            TEXT    PRIMARY KEY,
    body          TEXT    NOT NULL,
    registered_at TEXT    NOT NULL,
    last_run_at   TEXT,
    checkpoint    INTEGER NOT NULL DEFAULT 0,
    runs          INTEGER NOT NULL DEFAULT 0
);
