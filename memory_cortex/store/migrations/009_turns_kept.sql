-- Every ingested turn kept verbatim beside the extracted facts (issue 20). A memory is a 'fact'
-- (extracted, imported, written through the API) or a 'turn' (one message of a conversation posted
-- to /ingest, or a part of a long one), so searches and the lifecycle can tell them apart.
ALTER TABLE memories ADD COLUMN kind TEXT NOT NULL DEFAULT 'fact' CHECK (kind IN ('fact', 'turn'));
CREATE INDEX memories_user_kind ON memories (user_id, kind);

-- Which messages of a session are already stored as turns: the (role, text) hashes, oldest first,
-- as session_watermarks keeps them for extraction. Separate from that watermark because turns are
-- stored before extraction runs (a slow, failing or absent LLM never holds them back).
CREATE TABLE session_turns (
    session_key    TEXT PRIMARY KEY,
    user_id        TEXT    NOT NULL,
    message_hashes TEXT    NOT NULL CHECK (json_valid(message_hashes)),
    updated_at     TEXT    NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now'))
);
