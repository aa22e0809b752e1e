-- What the memory believes (issue 33): who a fact is about, which attribute of them it states, since
-- when it holds and until when, and the people, pets, places and plans the facts are about, with the
-- relations between them.
--
-- A fact about the owner keeps subject_id NULL, as every memory before this was about its user; a
-- fact about anyone or anything else names its entity. attribute/value: the structured reading of
-- the fact (home = Edinburgh), NULL where none applies. valid_from: when it was said (the message's
-- time); valid_to: when a later statement of the same subject and attribute replaced it (the row is
-- then superseded_by that statement, as a correction's older fact always was).
CREATE TABLE entities (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    user_id     TEXT    NOT NULL,
    name        TEXT    NOT NULL,
    name_key    TEXT    NOT NULL,
    kind        TEXT    NOT NULL DEFAULT 'person'
                CHECK (kind IN ('self', 'person', 'pet', 'place', 'plan', 'organisation', 'thing')),
    created_at  TEXT    NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now')),
    UNIQUE (user_id, name_key)
);

ALTER TABLE memories ADD COLUMN subject_id INTEGER REFERENCES entities(id) ON DELETE SET NULL;
ALTER TABLE memories ADD COLUMN attribute TEXT;
ALTER TABLE memories ADD COLUMN value TEXT;
ALTER TABLE memories ADD COLUMN valid_from TEXT;
ALTER TABLE memories ADD COLUMN valid_to TEXT;
-- The current row of a subject's attribute, found without reading the user's other rows.
CREATE INDEX memories_user_attribute ON memories (user_id, attribute, subject_id) WHERE attribute IS NOT NULL;
CREATE INDEX memories_subject ON memories (subject_id) WHERE subject_id IS NOT NULL;

-- Subject -predicate-> object between entities (Rosa -partner-> Marco), each with the memory it
-- was read from (deleted with it) or none (written through POST /relations), and the scope of that
-- memory or request: a relation is seen by whoever may see where it was said.
CREATE TABLE relations (
    id               INTEGER PRIMARY KEY AUTOINCREMENT,
    user_id          TEXT    NOT NULL,
    subject_id       INTEGER NOT NULL REFERENCES entities(id) ON DELETE CASCADE,
    predicate        TEXT    NOT NULL,
    object_id        INTEGER NOT NULL REFERENCES entities(id) ON DELETE CASCADE,
    confidence       REAL    NOT NULL DEFAULT 1.0 CHECK (confidence BETWEEN 0 AND 1),
    source_memory_id INTEGER REFERENCES memories(id) ON DELETE CASCADE,
    agent_id         TEXT,
    visibility       TEXT    NOT NULL DEFAULT 'private' CHECK (visibility IN ('private', 'shared')),
    source_channel   TEXT,
    created_at       TEXT    NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now'))
);
CREATE INDEX relations_subject ON relations (user_id, subject_id);
CREATE INDEX relations_object ON relations (user_id, object_id);
CREATE INDEX relations_source ON relations (source_memory_id) WHERE source_memory_id IS NOT NULL;
