-- The background consolidator: usage per day and phase, claimed work with checkpoints, topic episodes.
CREATE TABLE IF NOT EXISTS consolidator_usage (
    day               TEXT    NOT NULL,
    phase             TEXT    NOT NULL,
    prompt_tokens     BIGINT  NOT NULL DEFAULT 0,
    completion_tokens BIGINT  NOT NULL DEFAULT 0,
    cost              DOUBLE PRECISION NOT NULL DEFAULT 0,
    calls             BIGINT  NOT NULL DEFAULT 0,
    runs              BIGINT  NOT NULL DEFAULT 0,
    PRIMARY KEY (day, phase)
);
CREATE TABLE IF NOT EXISTS consolidator_jobs (
    phase         TEXT    NOT NULL,
    scope_key     TEXT    NOT NULL,
    user_id       TEXT    NOT NULL,
    agent_id      TEXT    NOT NULL,
    session_id    TEXT    NOT NULL,
    checkpoint    BIGINT  NOT NULL DEFAULT 0,
    upto          BIGINT  NOT NULL DEFAULT 0,
    claimed_by    TEXT,
    claimed_until TEXT,
    summary       TEXT,
    updated_at    TEXT    NOT NULL,
    PRIMARY KEY (phase, scope_key)
);
CREATE INDEX IF NOT EXISTS idx_consolidator_jobs_open ON consolidator_jobs(phase, user_id);
CREATE TABLE IF NOT EXISTS consolidator_scan (
    phase   TEXT    PRIMARY KEY,
    scanned BIGINT  NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS consolidator_episodes (
    id         TEXT    PRIMARY KEY,
    scope_key  TEXT    NOT NULL,
    user_id    TEXT    NOT NULL,
    agent_id   TEXT    NOT NULL,
    session_id TEXT    NOT NULL,
    first_seq  BIGINT  NOT NULL,
    last_seq   BIGINT  NOT NULL,
    turn_ids   TEXT    NOT NULL,
    summary    TEXT    NOT NULL,
    created_at TEXT    NOT NULL
);
CREATE INDEX IF NOT EXISTS idx_consolidator_episodes_scope ON consolidator_episodes(scope_key, first_seq);
