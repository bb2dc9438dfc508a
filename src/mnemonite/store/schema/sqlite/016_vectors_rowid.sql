-- mnemonite SQLite schema, version 16: vectors in an ordinary (rowid) table. A WITHOUT ROWID table keeps each row
-- in its key's B-tree, where a row over about a quarter of a page spills into an overflow page of its own: a
-- 384-dimension vector (1,536 bytes) took a 4 KiB page besides its share of a leaf, about 4.6 KiB per vector. In
-- a rowid table the row fits its leaf (about 1.6 KiB a vector) and the key is a small index beside it.
CREATE TABLE vectors_rowid (
    kind   TEXT    NOT NULL CHECK (kind IN ('episode', 'fact')),
    model  TEXT    NOT NULL,
    seq    INTEGER NOT NULL,
    vector BLOB    NOT NULL,          -- float32, L2-normalised
    PRIMARY KEY (kind, model, seq)
);
INSERT INTO vectors_rowid (kind, model, seq, vector) SELECT kind, model, seq, vector FROM vectors ORDER BY kind, model, seq;
DROP TABLE vectors;
ALTER TABLE vectors_rowid RENAME TO vectors;
