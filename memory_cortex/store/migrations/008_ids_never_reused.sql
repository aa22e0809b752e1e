-- foreign-keys: off
-- Memory ids are never reused (issue 19). Without AUTOINCREMENT, SQLite hands the id of the newest
-- row to the next insert once that row is deleted, so an id a client still holds (a dashboard tab,
-- an agent's forget call, an export) would name another memory. The table is rebuilt with
-- AUTOINCREMENT as SQLite documents it (lang_altertable.html, "other kinds of table schema
-- changes"): with foreign keys off (the runner reads the first line above, and checks the keys
-- before COMMIT) so that dropping the old table cascades into nothing; every row keeps its id,
-- vector and links, the two FTS indexes keep their rows (same rowids), and the indexes and triggers
-- are created again as they were. The sequence starts at the highest id present.
CREATE TABLE memories_rebuilt (
    id                INTEGER PRIMARY KEY AUTOINCREMENT,
    user_id           TEXT    NOT NULL,
    topic             TEXT    NOT NULL DEFAULT '',
    fact              TEXT    NOT NULL,
    importance        INTEGER NOT NULL DEFAULT 5 CHECK (importance BETWEEN 1 AND 10),
    category          TEXT    NOT NULL DEFAULT 'fact',
    source_session    TEXT,
    source_channel    TEXT,
    ref               TEXT,
    metadata          TEXT    NOT NULL DEFAULT '{}' CHECK (json_valid(metadata)),
    created_at        TEXT    NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now')),
    updated_at        TEXT    NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now')),
    access_count      INTEGER NOT NULL DEFAULT 0,
    last_accessed     TEXT,
    superseded_by     INTEGER REFERENCES memories(id) ON DELETE SET NULL,
    embedding         BLOB,
    embedding_model   TEXT,
    embedding_dim     INTEGER,
    embedding_context INTEGER NOT NULL DEFAULT 0,
    layer             TEXT    NOT NULL DEFAULT 'core' CHECK (layer IN ('working', 'core', 'archive')),
    layer_since       TEXT,
    compressed_into   INTEGER REFERENCES memories(id) ON DELETE SET NULL,
    occurred_at       TEXT
);

INSERT INTO memories_rebuilt (
    id, user_id, topic, fact, importance, category, source_session, source_channel, ref, metadata,
    created_at, updated_at, access_count, last_accessed, superseded_by, embedding, embedding_model,
    embedding_dim, embedding_context, layer, layer_since, compressed_into, occurred_at
)
SELECT
    id, user_id, topic, fact, importance, category, source_session, source_channel, ref, metadata,
    created_at, updated_at, access_count, last_accessed, superseded_by, embedding, embedding_model,
    embedding_dim, embedding_context, layer, layer_since, compressed_into, occurred_at
FROM memories;

DROP TABLE memories;
ALTER TABLE memories_rebuilt RENAME TO memories;

CREATE INDEX memories_user_live ON memories (user_id, superseded_by, id);
CREATE INDEX memories_user_topic ON memories (user_id, topic);
CREATE INDEX memories_embedding_model ON memories (embedding_model);
CREATE INDEX memories_by_session ON memories (user_id, source_session, id);
CREATE INDEX memories_user_layer ON memories (user_id, layer, superseded_by, id);
CREATE INDEX memories_user_category ON memories (user_id, category, superseded_by, id);
CREATE INDEX memories_by_time ON memories (user_id, coalesce(occurred_at, created_at));
CREATE INDEX memories_user_turns ON memories (user_id) WHERE embedding_context > 0;

CREATE TRIGGER memories_ai AFTER INSERT ON memories BEGIN
    INSERT INTO memories_fts (rowid, topic, fact) VALUES (new.id, new.topic, new.fact);
    INSERT INTO memories_trigram (rowid, topic, fact) VALUES (new.id, new.topic, new.fact);
END;

CREATE TRIGGER memories_ad AFTER DELETE ON memories BEGIN
    INSERT INTO memories_fts (memories_fts, rowid, topic, fact) VALUES ('delete', old.id, old.topic, old.fact);
    INSERT INTO memories_trigram (memories_trigram, rowid, topic, fact) VALUES ('delete', old.id, old.topic, old.fact);
END;

CREATE TRIGGER memories_au AFTER UPDATE OF topic, fact ON memories BEGIN
    INSERT INTO memories_fts (memories_fts, rowid, topic, fact) VALUES ('delete', old.id, old.topic, old.fact);
    INSERT INTO memories_trigram (memories_trigram, rowid, topic, fact) VALUES ('delete', old.id, old.topic, old.fact);
    INSERT INTO memories_fts (rowid, topic, fact) VALUES (new.id, new.topic, new.fact);
    INSERT INTO memories_trigram (rowid, topic, fact) VALUES (new.id, new.topic, new.fact);
END;
