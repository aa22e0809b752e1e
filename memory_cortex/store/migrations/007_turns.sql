-- The transcript turns of each user (rows stored with session context): search asks whether a
-- user has any before it embeds a query's speaker-perspective form (issue 11). A partial index:
-- empty, and free, in a store of standalone facts.
CREATE INDEX memories_user_turns ON memories (user_id) WHERE embedding_context > 0;
