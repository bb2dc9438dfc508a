-- mnemonite PostgreSQL schema, version 8: a purge may remove episodes (what a user said), and names the facts
-- derived from them (purged with them, or kept).
ALTER TABLE purges ADD COLUMN IF NOT EXISTS episode_ids TEXT;
ALTER TABLE purges ADD COLUMN IF NOT EXISTS derived_fact_ids TEXT;
