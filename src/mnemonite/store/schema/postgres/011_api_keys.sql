-- mnemonite PostgreSQL schema, version 11: API keys of the HTTP and MCP server, each bound to one
-- (user[, agent]) scope with capabilities. Only the SHA-256 of a key's secret is kept; the secret is shown once.
CREATE TABLE IF NOT EXISTS api_keys (
    id           TEXT PRIMARY KEY,
    secret_hash  TEXT NOT NULL UNIQUE,
    user_id      TEXT NOT NULL,
    agent_id     TEXT,
    capabilities TEXT NOT NULL,
    label        TEXT,
    created_at   TEXT NOT NULL,
    revoked_at   TEXT
);
CREATE INDEX IF NOT EXISTS idx_api_keys_user ON api_keys(user_id, created_at);
