-- Scopes beside the user (issue 22): the agent a memory belongs to (NULL: every agent of the user)
-- and whether it is private (said one-to-one, or written as private) or shared (said in a group
-- conversation, or written as shared). The channel it came from is source_channel. Every memory
-- stored before this was said or written for its user alone: private, every agent.
ALTER TABLE memories ADD COLUMN agent_id TEXT;
ALTER TABLE memories ADD COLUMN visibility TEXT NOT NULL DEFAULT 'private'
    CHECK (visibility IN ('private', 'shared'));
-- A group session reads the user's shared rows only: few, found without a scan of all of theirs.
CREATE INDEX memories_user_shared ON memories (user_id, source_channel) WHERE visibility = 'shared';
