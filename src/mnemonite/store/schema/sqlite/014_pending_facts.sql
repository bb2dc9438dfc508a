-- mnemonite SQLite schema, version 14: the pending facts of a scope, found without reading its other facts (a
-- search marks the current facts that a pending candidate update may replace; pending facts are few).
CREATE INDEX IF NOT EXISTS idx_facts_status ON facts(status, scope_key);
