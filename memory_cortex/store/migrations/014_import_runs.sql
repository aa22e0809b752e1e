-- Imports through POST /import run in the background (issue 25): the request answers 202 and the
-- caller follows the run here (GET /import/runs/{id}). The files themselves are never kept: a run
-- cut off by a crash is marked 'interrupted', and sending the workspace again adds only what is
-- missing (an import skips the texts the user already has).
CREATE TABLE import_runs (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    user_id     TEXT    NOT NULL,
    agent_id    TEXT,
    status      TEXT    NOT NULL CHECK (status IN ('running', 'done', 'failed', 'interrupted')),
    started_at  TEXT    NOT NULL,
    finished_at TEXT,
    total       INTEGER NOT NULL DEFAULT 0,
    done        INTEGER NOT NULL DEFAULT 0,
    result      TEXT,
    error       TEXT,
    claimed_by  INTEGER NOT NULL DEFAULT 0
);
