-- mnemonite SQLite schema, version 8: every episode and fact carries a sensitivity (public, internal, secret),
-- and every memory tool call leaves one audit row (arguments and result as the model saw them: redacted).
ALTER TABLE episodes ADD COLUMN sensitivity TEXT NOT NULL DEFAULT 'internal'
    CHECK (sensitivity IN ('public', 'internal', 'secret'));
ALTER TABLE facts ADD COLUMN sensitivity TEXT NOT NULL DEFAULT 'internal'
    CHECK (sensitivity IN ('public', 'internal', 'secret'));

CREATE TABLE IF NOT EXISTS tool_calls (
    seq         INTEGER PRIMARY KEY,
    id          TEXT NOT NULL UNIQUE,
    user_id     TEXT NOT NULL,
    agent_id    TEXT NOT NULL,
    session_id  TEXT,
    tool        TEXT NOT NULL,
    guard       TEXT NOT NULL,
    side_effect TEXT NOT NULL,
    arguments   TEXT NOT NULL,
    outcome     TEXT NOT NULL CHECK (outcome IN ('ok', 'error', 'denied')),
    error_code  TEXT,
    result      TEXT NOT NULL,
    called_at   TEXT NOT NULL,
    duration_ms REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS idx_tool_calls_scope ON tool_calls(user_id, agent_id, seq);
