-- mnemonite PostgreSQL schema, version 9 (SQLite's version 7): the working, session, procedural and shared tiers.
-- Every read names the user (and agent, session) by exact column values, never by a LIKE pattern.
CREATE TABLE IF NOT EXISTS blocks (
    seq         BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id          TEXT NOT NULL UNIQUE,
    user_id     TEXT COLLATE "C" NOT NULL,
    agent_id    TEXT COLLATE "C" NOT NULL,          -- the owner
    label       TEXT COLLATE "C" NOT NULL,
    value       TEXT NOT NULL,
    description TEXT NOT NULL,
    char_limit  INTEGER NOT NULL,
    token_limit INTEGER,
    read_only   INTEGER NOT NULL,
    sensitivity TEXT NOT NULL CHECK (sensitivity IN ('public', 'internal', 'secret')),
    created_at  TEXT COLLATE "C" NOT NULL,
    updated_at  TEXT COLLATE "C" NOT NULL,
    UNIQUE (user_id, agent_id, label)
);

-- Which agents of the user see a block; a label is unique among the blocks one agent sees.
CREATE TABLE IF NOT EXISTS block_agents (
    block_id    TEXT NOT NULL REFERENCES blocks(id) ON DELETE CASCADE,
    user_id     TEXT COLLATE "C" NOT NULL,
    agent_id    TEXT COLLATE "C" NOT NULL,
    label       TEXT COLLATE "C" NOT NULL,
    attached_at TEXT COLLATE "C" NOT NULL,
    PRIMARY KEY (block_id, agent_id),
    UNIQUE (user_id, agent_id, label)
);

CREATE TABLE IF NOT EXISTS session_messages (
    seq            BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id             TEXT NOT NULL UNIQUE,
    user_id        TEXT COLLATE "C" NOT NULL,
    session_id     TEXT COLLATE "C" NOT NULL,
    agent_id       TEXT COLLATE "C" NOT NULL,
    role           TEXT NOT NULL CHECK (role IN ('user', 'assistant', 'system', 'tool')),
    content        TEXT NOT NULL,
    important      INTEGER NOT NULL,
    metadata       TEXT NOT NULL,
    sensitivity    TEXT NOT NULL CHECK (sensitivity IN ('public', 'internal', 'secret')),
    timestamp      TEXT COLLATE "C" NOT NULL,
    compacted_into TEXT,
    content_tsv    tsvector GENERATED ALWAYS AS (to_tsvector('english', content)) STORED
);
CREATE INDEX IF NOT EXISTS idx_session_messages_fts ON session_messages USING GIN (content_tsv);
CREATE INDEX IF NOT EXISTS idx_session_messages_agent ON session_messages(user_id, agent_id, timestamp, seq);
CREATE INDEX IF NOT EXISTS idx_session_messages_session ON session_messages(user_id, session_id, timestamp, seq);

-- Everything that happened in a session, in order: the source of its export and replay.
CREATE TABLE IF NOT EXISTS session_events (
    seq         BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id          TEXT NOT NULL UNIQUE,
    user_id     TEXT COLLATE "C" NOT NULL,
    session_id  TEXT COLLATE "C" NOT NULL,
    agent_id    TEXT COLLATE "C" NOT NULL,
    kind        TEXT NOT NULL CHECK (kind IN ('message', 'tool_call', 'memory_read', 'memory_write')),
    name        TEXT COLLATE "C" NOT NULL,
    payload     TEXT NOT NULL,
    sensitivity TEXT NOT NULL CHECK (sensitivity IN ('public', 'internal', 'secret')),
    at          TEXT COLLATE "C" NOT NULL
);
CREATE INDEX IF NOT EXISTS idx_session_events_session ON session_events(user_id, session_id, seq);

CREATE TABLE IF NOT EXISTS procedures (
    seq            BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id             TEXT NOT NULL UNIQUE,
    user_id        TEXT COLLATE "C" NOT NULL,
    agent_id       TEXT COLLATE "C" NOT NULL,
    name           TEXT COLLATE "C" NOT NULL,
    steps          TEXT NOT NULL,
    trigger_text   TEXT NOT NULL,
    sensitivity    TEXT NOT NULL CHECK (sensitivity IN ('public', 'internal', 'secret')),
    created_at     TEXT COLLATE "C" NOT NULL,
    updated_at     TEXT COLLATE "C" NOT NULL,
    vector_model   TEXT,
    trigger_vector BYTEA,
    search_tsv     tsvector GENERATED ALWAYS AS (
        setweight(to_tsvector('english', name), 'A') || setweight(to_tsvector('english', trigger_text), 'A')
        || setweight(to_tsvector('english', steps), 'B')
    ) STORED,
    UNIQUE (user_id, agent_id, name)
);
CREATE INDEX IF NOT EXISTS idx_procedures_fts ON procedures USING GIN (search_tsv);

CREATE TABLE IF NOT EXISTS agent_groups (
    seq        BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id         TEXT NOT NULL UNIQUE,
    name       TEXT COLLATE "C" NOT NULL,
    kind       TEXT NOT NULL CHECK (kind IN ('household', 'team', 'org')),
    owner      TEXT COLLATE "C" NOT NULL,
    created_at TEXT COLLATE "C" NOT NULL,
    UNIQUE (owner, name)
);

CREATE TABLE IF NOT EXISTS group_members (
    group_id TEXT NOT NULL REFERENCES agent_groups(id) ON DELETE CASCADE,
    user_id  TEXT COLLATE "C" NOT NULL,
    agent_id TEXT COLLATE "C" NOT NULL,
    role     TEXT NOT NULL CHECK (role IN ('owner', 'member')),
    added_at TEXT COLLATE "C" NOT NULL,
    PRIMARY KEY (group_id, user_id, agent_id)
);
CREATE INDEX IF NOT EXISTS idx_group_members_agent ON group_members(user_id, agent_id);

CREATE TABLE IF NOT EXISTS shared_items (
    seq         BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id          TEXT NOT NULL UNIQUE,
    group_id    TEXT NOT NULL REFERENCES agent_groups(id) ON DELETE CASCADE,
    kind        TEXT NOT NULL CHECK (kind IN ('fact', 'block')),
    item_id     TEXT NOT NULL,
    user_id     TEXT COLLATE "C" NOT NULL,
    agent_id    TEXT COLLATE "C" NOT NULL,
    sensitivity TEXT NOT NULL CHECK (sensitivity IN ('public', 'internal', 'secret')),
    shared_at   TEXT COLLATE "C" NOT NULL,
    UNIQUE (group_id, kind, item_id)
);
