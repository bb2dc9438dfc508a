-- mnemonite PostgreSQL schema, version 3: consolidation rules and their progress.
CREATE TABLE IF NOT EXISTS rules (
    id            TEXT    PRIMARY KEY,
    body          TEXT    NOT NULL,
    registered_at TEXT    COLLATE "C" NOT NULL,
    last_run_at   TEXT    COLLATE "C",
    checkpoint    BIGINT  NOT NULL DEFAULT 0,
    runs          INTEGER NOT NULL DEFAULT 0
);
