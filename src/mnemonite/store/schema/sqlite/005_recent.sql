-- mnemonite SQLite schema, version 5: recent() over a whole user (any session) reads an index in order
-- instead of sorting every row of the user's sessions.
CREATE INDEX IF NOT EXISTS idx_episodes_user_ts ON episodes(user_id, timestamp DESC, seq DESC);
