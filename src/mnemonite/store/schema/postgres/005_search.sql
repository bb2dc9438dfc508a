-- mnemonite PostgreSQL schema, version 5: vectors (pgvector), the indexer's positions, the embedders.
-- Full text is the tsvector columns of versions 1 and 2. The vector extension is created by bootstrap.
-- One vector per (record, model): vectors of different models are never compared. Each registered
-- model gets HNSW indexes (cosine) of its own width, one per kind, partial on (kind, model).
CREATE TABLE IF NOT EXISTS vectors (
    kind      TEXT   NOT NULL CHECK (kind IN ('episode', 'fact')),
    model     TEXT   NOT NULL,
    seq       BIGINT NOT NULL,
    embedding vector NOT NULL,          -- L2-normalised
    PRIMARY KEY (kind, model, seq)
);

CREATE TABLE IF NOT EXISTS index_state (
    kind     TEXT   NOT NULL,
    model    TEXT   NOT NULL,
    last_seq BIGINT NOT NULL,
    PRIMARY KEY (kind, model)
);

CREATE TABLE IF NOT EXISTS embedders (
    model         TEXT    PRIMARY KEY,
    dimensions    INTEGER NOT NULL,
    role          TEXT    NOT NULL CHECK (role IN ('active', 'readable')),
    registered_at TEXT    NOT NULL
);
