-- The dashboard's memory table (issue 10) filters one user's live rows by category, newest first:
-- without this, a category with few or no rows scans every row of the user (~200 ms at 100k).
CREATE INDEX memories_user_category ON memories (user_id, category, superseded_by, id);
