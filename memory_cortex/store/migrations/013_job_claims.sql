-- Which daemon claimed a running ingest job (issue 24). On PostgreSQL several daemons share the
-- journal, and a job left 'running' is only run again once the daemon that claimed it is gone.
-- SQLite has one daemon per file: the column stays 0 there, the same schema on both backends.
ALTER TABLE ingest_jobs ADD COLUMN claimed_by INTEGER NOT NULL DEFAULT 0;
