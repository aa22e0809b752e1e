-- How many earlier memories of the same source session were embedded together with each memory
-- (0 = the memory alone). Recorded so an update, the backfill script and an import re-embed a
-- row exactly the way it was first embedded.
ALTER TABLE memories ADD COLUMN embedding_context INTEGER NOT NULL DEFAULT 0;
-- The earlier memories of a session, newest first (the context lookup above).
CREATE INDEX memories_by_session ON memories (user_id, source_session, id);
