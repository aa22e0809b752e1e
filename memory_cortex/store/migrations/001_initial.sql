-- Memories, their two full-text indexes and the triggers that keep them in step.
CREATE TABLE memories (
    id              INTEGER PRIMARY KEY,
    user_id         TEXT    NOT NULL,
    topic           TEXT    NOT NULL DEFAULT '',
    fact            TEXT    NOT NULL,
    importance      INTEGER NOT NULL DEFAULT 5 CHECK (importance BETWEEN 1 AND 10),
    category        TEXT    NOT NULL DEFAULT 'fact',
    source_session  TEXT,
    source_channel  TEXT,
    ref             TEXT,
    metadata        TEXT    NOT NULL DEFAULT '{}' CHECK (json_valid(metadata)),
    created_at      TEXT    NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now')),
    updated_at      TEXT    NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now')),
    access_count    INTEGER NOT NULL DEFAULT 0,
    last_accessed   TEXT,
    superseded_by   INTEGER REFERENCES memories(id) ON DELETE SET NULL,
    embedding       BLOB,
    embedding_model TEXT,
    embedding_dim   INTEGER
);

CREATE INDEX memories_user_live ON memories (user_id, superseded_by, id);
CREATE INDEX memories_user_topic ON memories (user_id, topic);
CREATE INDEX memories_embedding_model ON memories (embedding_model);

-- Words: porter stemming over unicode61 with diacritics folded ("cafés" finds "cafe").
CREATE VIRTUAL TABLE memories_fts USING fts5(
    topic, fact,
    content = 'memories', content_rowid = 'id',
    tokenize = 'porter unicode61 remove_diacritics 2'
);

-- Substrings and scripts without spaces (Chinese, Japanese): every three characters.
CREATE VIRTUAL TABLE memories_trigram USING fts5(
    topic, fact,
    content = 'memories', content_rowid = 'id',
    tokenize = 'trigram'
);

CREATE TRIGGER memories_ai AFTER INSERT ON memories BEGIN
    INSERT INTO memories_fts (rowid, topic, fact) VALUES (new.id, new.topic, new.fact);
    INSERT INTO memories_trigram (rowid, topic, fact) VALUES (new.id, new.topic, new.fact);
END;

CREATE TRIGGER memories_ad AFTER DELETE ON memories BEGIN
    INSERT INTO memories_fts (memories_fts, rowid, topic, fact) VALUES ('delete', old.id, old.topic, old.fact);
    INSERT INTO memories_trigram (memories_trigram, rowid, topic, fact) VALUES ('delete', old.id, old.topic, old.fact);
END;

-- Only text changes touch the indexes: access-count bumps and embedding writes stay cheap.
CREATE TRIGGER memories_au AFTER UPDATE OF topic, fact ON memories BEGIN
    INSERT INTO memories_fts (memories_fts, rowid, topic, fact) VALUES ('delete', old.id, old.topic, old.fact);
    INSERT INTO memories_trigram (memories_trigram, rowid, topic, fact) VALUES ('delete', old.id, old.topic, old.fact);
    INSERT INTO memories_fts (rowid, topic, fact) VALUES (new.id, new.topic, new.fact);
    INSERT INTO memories_trigram (rowid, topic, fact) VALUES (new.id, new.topic, new.fact);
END;
