-- The dashboard at 100k memories (issue 23). The overview counted every live row of a user through
-- memories_user_live, one table lookup per row, then sorted them all to group them (~300 ms a
-- request, every minute); the list by date sorted every row of the user for each page.
--
-- A user's live rows in created_at order, with every column the overview counts by or filters on
-- (the requester's scope included): its counts read this index alone, never the rows (their text
-- and embeddings), and a page of the list by date reads it in order.
CREATE INDEX memories_user_live_created ON memories (
    user_id, superseded_by, created_at, id, layer, kind, category, topic, agent_id, visibility, source_channel
);
-- Every row of a user, superseded ones too, by created_at: the facts made per day in the overview's
-- window, and the list by date with superseded rows shown.
CREATE INDEX memories_user_created ON memories (user_id, created_at, id);
