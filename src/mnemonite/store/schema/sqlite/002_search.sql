-- mnemonite SQLite schema, version 2: full text (FTS5, kept in sync in the writing transaction), sources, vectors.
CREATE VIRTUAL TABLE IF NOT EXISTS episodes_fts USING fts5(
    content, content = 'episodes', content_rowid = 'seq', tokenize = 'porter unicode61'
);
-- New episodes are added to episodes_fts by put_many, for the whole batch in its transaction.
DROP TRIGGER IF EXISTS episodes_fts_insert;
CREATE TRIGGER IF NOT EXISTS episodes_fts_delete AFTER DELETE ON episodes BEGIN
    INSERT INTO episodes_fts (episodes_fts, rowid, content) VALUES ('delete', old.seq, old.content);
END;
CREATE TRIGGER IF NOT EXISTS episodes_fts_update AFTER UPDATE OF content ON episodes BEGIN
    INSERT INTO episodes_fts (episodes_fts, rowid, content) VALUES ('delete', old.seq, old.content);
    INSERT INTO episodes_fts (rowid, content) VALUES (new.seq, new.content);
END;

-- The distinct sources (speakers, tools) of each scope: search boosts the ones a query names.
-- Filled by put_many once per batch (not a per-row trigger: that halves ingest throughput).
CREATE TABLE IF NOT EXISTS episode_sources (
    scope_key   TEXT NOT NULL,
    source_node TEXT NOT NULL,
    PRIMARY KEY (scope_key, source_node)
) WITHOUT ROWID;
INSERT OR IGNORE INTO episode_sources (scope_key, source_node)
    SELECT DISTINCT scope_key, source_node FROM episodes WHERE source_node != '';

CREATE VIRTUAL TABLE IF NOT EXISTS facts_fts USING fts5(
    text, content = 'facts', content_rowid = 'seq', tokenize = 'porter unicode61'
);
CREATE TRIGGER IF NOT EXISTS facts_fts_insert AFTER INSERT ON facts BEGIN
    INSERT INTO facts_fts (rowid, text) VALUES (new.seq, new.text);
END;
CREATE TRIGGER IF NOT EXISTS facts_fts_delete AFTER DELETE ON facts BEGIN
    INSERT INTO facts_fts (facts_fts, rowid, text) VALUES ('delete', old.seq, old.text);
END;
CREATE TRIGGER IF NOT EXISTS facts_fts_update AFTER UPDATE OF text ON facts BEGIN
    INSERT INTO facts_fts (facts_fts, rowid, text) VALUES ('delete', old.seq, old.text);
    INSERT INTO facts_fts (rowid, text) VALUES (new.seq, new.text);
END;

-- Rows stored before this version get their full-text entries now.
INSERT INTO episodes_fts (episodes_fts) VALUES ('rebuild');
INSERT INTO facts_fts (facts_fts) VALUES ('rebuild');

-- One vector per (record, model): vectors of different models are never compared.
CREATE TABLE IF NOT EXISTS vectors (
    kind   TEXT    NOT NULL CHECK (kind IN ('episode', 'fact')),
    model  TEXT    NOT NULL,
    seq    INTEGER NOT NULL,
    vector BLOB    NOT NULL,          -- float32, L2-normalised
    PRIMARY KEY (kind, model, seq)
) WITHOUT ROWID;

-- Records are immutable text, so "everything up to last_seq is embedded" is the whole index state.
CREATE TABLE IF NOT EXISTS index_state (
    kind     TEXT    NOT NULL,
    model    TEXT    NOT NULL,
    last_seq INTEGER NOT NULL,
    PRIMARY KEY (kind, model)
);

-- Embedders this memory knows: 'active' writes, 'readable' is still searched (multi-active).
CREATE TABLE IF NOT EXISTS embedders (
    model         TEXT    PRIMARY KEY,
    dimensions    INTEGER NOT NULL,
    role          TEXT    NOT NULL CHECK (role IN ('active', 'readable')),
    registered_at TEXT    NOT NULL
);
