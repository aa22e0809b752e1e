-- The ingest journal (every accepted /ingest, durable before the 202) and per-session watermarks.
CREATE TABLE ingest_jobs (
    id            INTEGER PRIMARY KEY,
    session_key   TEXT    NOT NULL,
    user_id       TEXT    NOT NULL,
    session_id    TEXT,
    channel       TEXT,
    messages      TEXT    NOT NULL CHECK (json_valid(messages)),
    message_count INTEGER NOT NULL,
    status        TEXT    NOT NULL DEFAULT 'pending'
                  CHECK (status IN ('pending', 'running', 'done', 'failed')),
    attempts      INTEGER NOT NULL DEFAULT 0,
    last_error    TEXT,
    received_at   TEXT    NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now')),
    due_at        REAL    NOT NULL,          -- unix time when the debounce timer fires
    started_at    TEXT,
    finished_at   TEXT,
    duration_ms   INTEGER,
    new_messages  INTEGER,
    facts_stored  INTEGER,
    method        TEXT                       -- llm, rules, llm+rules
);

-- At most one pending job per session: a re-post replaces it (and restarts its timer).
CREATE UNIQUE INDEX ingest_jobs_one_pending ON ingest_jobs (session_key) WHERE status = 'pending';
CREATE INDEX ingest_jobs_status_due ON ingest_jobs (status, due_at);

CREATE TABLE session_watermarks (
    session_key    TEXT PRIMARY KEY,
    user_id        TEXT    NOT NULL,
    session_id     TEXT,
    message_count  INTEGER NOT NULL,
    history_hash   TEXT    NOT NULL,         -- hash of the whole extracted history
    message_hashes TEXT    NOT NULL CHECK (json_valid(message_hashes)),
    updated_at     TEXT    NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now'))
);
