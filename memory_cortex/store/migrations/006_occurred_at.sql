-- The time a memory is about, when it is not when it was stored: a conversation turn replayed
-- later, a fact dated by its session (issue 11). NULL: the memory is about its created_at.
-- Stored like every timestamp here: ISO 8601 UTC with milliseconds and a Z.
ALTER TABLE memories ADD COLUMN occurred_at TEXT;
-- One user's memories by the time they are about: time-aware search reads the newest one (the
-- anchor of relative dates) and the rows inside a date range from this index.
CREATE INDEX memories_by_time ON memories (user_id, coalesce(occurred_at, created_at));
