"""The log of workspace imports (store/imports.py) on both backends: one running import per
workspace, an end that never overwrites an interruption, and on PostgreSQL only the imports of a
daemon that is gone are marked interrupted."""

from __future__ import annotations

from typing import Any

import pytest

from memory_cortex.store import imports as imports_sql


def test_an_import_is_logged_followed_and_closed(any_conn: Any) -> None:
    run_id = imports_sql.start(any_conn, "ivy", None, 0)
    assert imports_sql.running_for(any_conn, "ivy", None) == run_id
    assert imports_sql.running_for(any_conn, "ivy", "work") is None  # another agent's workspace
    imports_sql.record_progress(any_conn, run_id, 10, 40)
    run = imports_sql.by_id(any_conn, run_id)
    assert run is not None and (run.status, run.done, run.total, run.result) == ("running", 10, 40, None)
    imports_sql.record_progress(any_conn, run_id, 40, 40)
    imports_sql.finish(any_conn, run_id, status="done", result={"added": 40})
    run = imports_sql.by_id(any_conn, run_id)
    assert run is not None and (run.status, run.result) == ("done", {"added": 40}) and run.finished_at
    assert imports_sql.running_for(any_conn, "ivy", None) is None
    imports_sql.record_progress(any_conn, run_id, 1, 1)  # an ended import keeps its numbers
    assert imports_sql.by_id(any_conn, run_id).done == 40  # type: ignore[union-attr]


def test_an_interrupted_import_is_never_closed_as_done_afterwards(any_conn: Any) -> None:
    run_id = imports_sql.start(any_conn, "ivy", None, 0)
    assert imports_sql.interrupt_abandoned(any_conn, 0) == 1
    imports_sql.finish(any_conn, run_id, status="done", result={"added": 1})
    run = imports_sql.by_id(any_conn, run_id)
    assert run is not None and run.status == "interrupted" and run.result is None
    assert run.error == imports_sql.INTERRUPTED


def test_only_the_imports_of_a_daemon_that_is_gone_are_interrupted_on_postgres(postgres_url: str) -> None:
    import psycopg

    from memory_cortex.store.dialect import INSTANCE_LOCKS
    from memory_cortex.store.postgres.connection import PgConnection, configure
    from memory_cortex.store.postgres.db import apply_migrations

    raw = psycopg.connect(postgres_url, autocommit=True)
    configure(raw)
    apply_migrations(raw)
    conn = PgConnection(raw)
    alive = psycopg.connect(postgres_url, autocommit=True)  # daemon 51 lives: it holds its lock
    alive.execute("SELECT pg_advisory_lock(%s, %s)", (INSTANCE_LOCKS, 51))
    try:
        living = imports_sql.start(conn, "ivy", None, 51)
        dead = imports_sql.start(conn, "kim", None, 52)
        mine = imports_sql.start(conn, "lea", None, 7)
        for run_id in (living, dead, mine):
            imports_sql.interrupt_if_abandoned(conn, run_id, 7)  # daemon 7 reads each
        status = {run_id: imports_sql.by_id(conn, run_id).status for run_id in (living, dead, mine)}  # type: ignore[union-attr]
        assert status == {living: "running", dead: "interrupted", mine: "running"}
    finally:
        alive.close()
        raw.close()


@pytest.mark.parametrize("agent", [None, "work"])
def test_the_running_import_is_found_per_user_and_agent(any_conn: Any, agent: str | None) -> None:
    run_id = imports_sql.start(any_conn, "ivy", agent, 0)
    assert imports_sql.running_for(any_conn, "ivy", agent) == run_id
    assert imports_sql.running_for(any_conn, "kim", agent) is None
