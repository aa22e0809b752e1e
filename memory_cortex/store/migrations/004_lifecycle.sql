-- Memory lifecycle (issue 8): layers, merge/summary links, the log of lifecycle runs.
--
-- layer: 'working' (freshly extracted, expires after a TTL unless promoted), 'core' (promoted or
-- written explicitly) or 'archive' (decayed or expired; kept, searchable on request).
ALTER TABLE memories ADD COLUMN layer TEXT NOT NULL DEFAULT 'core'
    CHECK (layer IN ('working', 'core', 'archive'));
-- When the row entered its layer (NULL: at created_at). Decay and the working TTL count from here.
ALTER TABLE memories ADD COLUMN layer_since TEXT;
-- An archived row folded into a "history summary" memory: that summary's id (the row stays).
ALTER TABLE memories ADD COLUMN compressed_into INTEGER REFERENCES memories(id) ON DELETE SET NULL;

-- Existing rows: what the extraction worker wrote in the last 48 hours is working memory (the
-- first lifecycle run promotes or expires it); everything else was kept deliberately: core.
UPDATE memories SET layer = 'working'
WHERE json_extract(metadata, '$.ingest_job') IS NOT NULL
  AND created_at >= strftime('%Y-%m-%dT%H:%M:%fZ', 'now', '-48 hours');

CREATE INDEX memories_user_layer ON memories (user_id, layer, superseded_by, id);

-- One row per lifecycle run (or dry run): its stages' reports as JSON.
CREATE TABLE lifecycle_runs (
    id          INTEGER PRIMARY KEY,
    trigger     TEXT    NOT NULL,
    dry_run     INTEGER NOT NULL DEFAULT 0,
    status      TEXT    NOT NULL CHECK (status IN ('running', 'done', 'interrupted', 'failed')),
    started_at  TEXT    NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    finished_at TEXT,
    report      TEXT    NOT NULL DEFAULT '{}' CHECK (json_valid(report))
);

-- Which rows a lifecycle run folded into which: 'merged' (a near-duplicate hidden behind the row
-- it was merged into) and 'summarised' (an archived row behind its history summary).
CREATE TABLE memory_links (
    kind       TEXT    NOT NULL CHECK (kind IN ('merged', 'summarised')),
    from_id    INTEGER NOT NULL REFERENCES memories(id) ON DELETE CASCADE,
    to_id      INTEGER NOT NULL REFERENCES memories(id) ON DELETE CASCADE,
    run_id     INTEGER REFERENCES lifecycle_runs(id) ON DELETE SET NULL,
    created_at TEXT    NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    PRIMARY KEY (kind, from_id, to_id)
);
CREATE INDEX memory_links_to ON memory_links (to_id, kind);
