-- mnemonite SQLite schema, version 13: a message's text can be rewritten in place (`mnemonite scan --mask`
-- masks the secrets an older memory holds), so its full-text row follows an update as the other tiers' do.
-- PostgreSQL's full text is a generated column: it follows by itself.
CREATE TRIGGER IF NOT EXISTS session_messages_fts_update AFTER UPDATE OF content ON session_messages BEGIN
    INSERT INTO session_messages_fts (session_messages_fts, rowid, content) VALUES ('delete', old.seq, old.content);
    INSERT INTO session_messages_fts (rowid, content) VALUES (new.seq, new.content);
END;
