-- mnemonite SQLite schema, version 6: a purge may remove episodes (what a user said), and names the facts
-- derived from them (purged with them, or kept).
ALTER TABLE purges ADD COLUMN episode_ids TEXT;
ALTER TABLE purges ADD COLUMN derived_fact_ids TEXT;
