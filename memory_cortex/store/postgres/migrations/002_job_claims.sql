-- Which daemon claimed a running ingest job: its id among the daemons on this database (each holds
-- the advisory lock (INSTANCE_LOCKS, id) while it runs). A job left 'running' by a daemon whose lock
-- is free was interrupted and runs again; one whose daemon lives is still being worked on.
ALTER TABLE ingest_jobs ADD COLUMN claimed_by INTEGER NOT NULL DEFAULT 0;
