-- A relation that ended without a fact of its own ending (issue 33): see the SQLite migration
-- 016_relation_ends.sql. ended_at: when the statement that ended it was said; NULL while it holds.
ALTER TABLE relations ADD COLUMN ended_at TEXT;
