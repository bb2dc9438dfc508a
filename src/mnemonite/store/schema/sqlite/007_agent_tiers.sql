-- mnemonite SQLite schema, version 7: the working, session, procedural and shared tiers.
-- Every read names the user (and agent, session) by exact column values, never by a LIKE pattern.
CREATE TABLE IF NOT EXISTS blocks (
    seq         INTEGER PRIMARY KEY,
    id          TEXT NOT NULL UNIQUE,
    user_id     TEXT NOT NULL,
    agent_id    TEXT NOT NULL,              -- the owner
    label       TEXT NOT NULL,
    value       TEXT NOT NULL,
    description TEXT NOT NULL,
    char_limit  INTEGER NOT NULL,
    token_limit INTEGER,
    read_only   INTEGER NOT NULL,
    sensitivity TEXT NOT NULL CHECK (sensitivity IN ('public', 'internal', 'secret')),
    created_at  TEXT NOT NULL,
    updated_at  TEXT NOT NULL,
    UNIQUE (user_id, agent_id, label)
);

-- Which agents of the user see a block; a label is unique among the blocks one agent sees.
CREATE TABLE IF NOT EXISTS block_agents (
    block_id    TEXT NOT NULL REFERENCES blocks(id) ON DELETE CASCADE,
    user_id     TEXT NOT NULL,
    agent_id    TEXT NOT NULL,
    label       TEXT NOT NULL,
    attached_at TEXT NOT NULL,
    PRIMARY KEY (block_id, agent_id),
    UNIQUE (user_id, agent_id, label)
);

CREATE TABLE IF NOT EXISTS session_messages (
    seq            INTEGER PRIMARY KEY,
    id             TEXT NOT NULL UNIQUE,
    user_id        TEXT NOT NULL,
    session_id     TEXT NOT NULL,
    agent_id       TEXT NOT NULL,
    role           TEXT NOT NULL CHECK (role IN ('user', 'assistant', 'system', 'tool')),
    content        TEXT NOT NULL,
    important      INTEGER NOT NULL,
    metadata       TEXT NOT NULL,
    sensitivity    TEXT NOT NULL CHECK (sensitivity IN ('public', 'internal', 'secret')),
    timestamp      TEXT NOT NULL,
    compacted_into TEXT
);
CREATE INDEX IF NOT EXISTS idx_session_messages_agent ON session_messages(user_id, agent_id, timestamp, seq);
CREATE INDEX IF NOT EXISTS idx_session_messages_session ON session_messages(user_id, session_id, timestamp, seq);

CREATE VIRTUAL TABLE IF NOT EXISTS session_messages_fts USING fts5(
    content, content = 'session_messages', content_rowid = 'seq', tokenize = 'porter unicode61'
);
CREATE TRIGGER IF NOT EXISTS session_messages_fts_insert AFTER INSERT ON session_messages BEGIN
    INSERT INTO session_messages_fts (rowid, content) VALUES (new.seq, new.content);
END;
CREATE TRIGGER IF NOT EXISTS session_messages_fts_delete AFTER DELETE ON session_messages BEGIN
    INSERT INTO session_messages_fts (session_messages_fts, rowid, content) VALUES ('delete', old.seq, old.content);
END;

-- Everything that happened in a session, in order: the source of its export and replay.
CREATE TABLE IF NOT EXISTS session_events (
    seq         INTEGER PRIMARY KEY,
    id          TEXT NOT NULL UNIQUE,
    user_id     TEXT NOT NULL,
    session_id  TEXT NOT NULL,
    agent_id    TEXT NOT NULL,
    kind        TEXT NOT NULL CHECK (kind IN ('message', 'tool_call', 'memory_read', 'memory_write')),
    name        TEXT NOT NULL,
    payload     TEXT NOT NULL,
    sensitivity TEXT NOT NULL CHECK (sensitivity IN ('public', 'internal', 'secret')),
    at          TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS idx_session_events_session ON session_events(user_id, session_id, seq);

CREATE TABLE IF NOT EXISTS procedures (
    seq            INTEGER PRIMARY KEY,
    id             TEXT NOT NULL UNIQUE,
    user_id        TEXT NOT NULL,
    agent_id       TEXT NOT NULL,
    name           TEXT NOT NULL,
    steps          TEXT NOT NULL,
    trigger_text   TEXT NOT NULL,
    sensitivity    TEXT NOT NULL CHECK (sensitivity IN ('public', 'internal', 'secret')),
    created_at     TEXT NOT NULL,
    updated_at     TEXT NOT NULL,
    vector_model   TEXT,
    trigger_vector BLOB,
    UNIQUE (user_id, agent_id, name)
);

CREATE VIRTUAL TABLE IF NOT EXISTS procedures_fts USING fts5(
    name, trigger_text, steps, content = 'procedures', content_rowid = 'seq', tokenize = 'porter unicode61'
);
CREATE TRIGGER IF NOT EXISTS procedures_fts_insert AFTER INSERT ON procedures BEGIN
    INSERT INTO procedures_fts (rowid, name, trigger_text, steps) VALUES (new.seq, new.name, new.trigger_text, new.steps);
END;
CREATE TRIGGER IF NOT EXISTS procedures_fts_delete AFTER DELETE ON procedures BEGIN
    INSERT INTO procedures_fts (procedures_fts, rowid, name, trigger_text, steps)
        VALUES ('delete', old.seq, old.name, old.trigger_text, old.steps);
END;
CREATE TRIGGER IF NOT EXISTS procedures_fts_update AFTER UPDATE ON procedures BEGIN
    INSERT INTO procedures_fts (procedures_fts, rowid, name, trigger_text, steps)
        VALUES ('delete', old.seq, old.name, old.trigger_text, old.steps);
    INSERT INTO procedures_fts (rowid, name, trigger_text, steps) VALUES (new.seq, new.name, new.trigger_text, new.steps);
END;

CREATE TABLE IF NOT EXISTS agent_groups (
    seq        INTEGER PRIMARY KEY,
    id         TEXT NOT NULL UNIQUE,
    name       TEXT NOT NULL,
    kind       TEXT NOT NULL CHECK (kind IN ('household', 'team', 'org')),
    owner      TEXT NOT NULL,
    created_at TEXT NOT NULL,
    UNIQUE (owner, name)
);

CREATE TABLE IF NOT EXISTS group_members (
    group_id TEXT NOT NULL REFERENCES agent_groups(id) ON DELETE CASCADE,
    user_id  TEXT NOT NULL,
    agent_id TEXT NOT NULL,
    role     TEXT NOT NULL CHECK (role IN ('owner', 'member')),
    added_at TEXT NOT NULL,
    PRIMARY KEY (group_id, user_id, agent_id)
);
CREATE INDEX IF NOT EXISTS idx_group_members_agent ON group_members(user_id, agent_id);

CREATE TABLE IF NOT EXISTS shared_items (
    seq         INTEGER PRIMARY KEY,
    id          TEXT NOT NULL UNIQUE,
    group_id    TEXT NOT NULL REFERENCES agent_groups(id) ON DELETE CASCADE,
    kind        TEXT NOT NULL CHECK (kind IN ('fact', 'block')),
    item_id     TEXT NOT NULL,
    user_id     TEXT NOT NULL,
    agent_id    TEXT NOT NULL,
    sensitivity TEXT NOT NULL CHECK (sensitivity IN ('public', 'internal', 'secret')),
    shared_at   TEXT NOT NULL,
    UNIQUE (group_id, kind, item_id)
);
