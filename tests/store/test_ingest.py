"""store/ingest.py on both backends (a real SQLite file, a real PostgreSQL database): the journal's
jobs from enqueue to done or failed, the queue's views, the session watermarks and turn hashes, and
on PostgreSQL two daemons claiming from one queue at once."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import pytest

from memory_cortex.records import Scope
from memory_cortex.store import ingest as ingest_sql

TIMESTAMP = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")


def enqueue(conn: Any, session: str = "s1", *, due_at: float = 100.0, channel: str | None = None,
            body: dict[str, Any] | None = None, count: int = 1) -> int:  # fmt: skip
    """Journal a request of ``count`` messages for ``session`` (user ``u``)."""
    payload = (
        body
        if body is not None
        else {"messages": [{"role": "user", "content": f"m{i}"} for i in range(count)]}
    )
    return ingest_sql.enqueue(
        conn,
        session_key=f"u:{session}",
        user_id="u",
        session_id=session,
        channel=channel,
        payload=json.dumps(payload),
        message_count=count,
        due_at=due_at,
    )


def status_of(conn: Any, job_id: int) -> str:
    job = ingest_sql.get_job(conn, job_id)
    assert job is not None
    return job.status


def test_a_repost_replaces_the_pending_job_and_restarts_its_timer(any_conn: Any) -> None:
    first = enqueue(any_conn, due_at=100.0, channel="telegram", count=1)
    again = enqueue(any_conn, due_at=150.5, channel=None, count=3)
    assert again == first  # one pending job per session
    job = ingest_sql.get_job(any_conn, first)
    assert job is not None
    assert (job.message_count, job.due_at, job.channel, len(job.messages)) == (3, 150.5, "telegram", 3)
    assert TIMESTAMP.match(job.received_at)
    enqueue(any_conn, channel="slack")
    assert ingest_sql.get_job(any_conn, first).channel == "slack"  # type: ignore[union-attr]
    assert ingest_sql.pending_count(any_conn) == 1
    assert enqueue(any_conn, "s2") != first  # another session: its own job


def test_a_repost_while_the_job_runs_queues_a_new_one(any_conn: Any) -> None:
    first = enqueue(any_conn, due_at=10.0)
    assert ingest_sql.claim_due(any_conn, 10.0) is not None
    second = enqueue(any_conn, due_at=20.0)
    assert second != first
    assert (status_of(any_conn, first), status_of(any_conn, second)) == ("running", "pending")


def test_jobs_are_claimed_by_due_time_then_id_and_never_before_due(any_conn: Any) -> None:
    assert ingest_sql.next_due_at(any_conn) is None
    assert ingest_sql.claim_due(any_conn, 1e12) is None
    late = enqueue(any_conn, "late", due_at=300.0)
    early_b = enqueue(any_conn, "b", due_at=200.0)
    early_c = enqueue(any_conn, "c", due_at=200.0)
    assert ingest_sql.next_due_at(any_conn) == 200.0
    assert ingest_sql.claim_due(any_conn, 199.9) is None
    claimed = ingest_sql.claim_due(any_conn, 250.0)
    assert claimed is not None and claimed.id == early_b
    assert (claimed.status, claimed.attempts, claimed.session_key) == ("running", 1, "u:b")
    assert claimed.started_at is not None and TIMESTAMP.match(claimed.started_at)
    assert [m["content"] for m in claimed.messages] == ["m0"]
    assert ingest_sql.claim_due(any_conn, 250.0).id == early_c  # type: ignore[union-attr]
    assert ingest_sql.claim_due(any_conn, 250.0) is None
    assert ingest_sql.next_due_at(any_conn) == 300.0
    assert ingest_sql.claim_due(any_conn, 300.0).id == late  # type: ignore[union-attr]
    assert ingest_sql.next_due_at(any_conn) is None


def test_a_claimed_job_carries_the_bodys_time_agent_and_scope(any_conn: Any) -> None:
    body = {
        "messages": [{"role": "user", "content": "hi"}],
        "occurred_at": "2025-03-01T10:00:00+02:00",
        "agent_id": "bot",
        "session_kind": "group",
    }
    enqueue(any_conn, "g", body=body, channel="room")
    job = ingest_sql.claim_due(any_conn, 1e12)
    assert job is not None
    assert (job.occurred_at, job.agent_id, job.session_kind) == ("2025-03-01T08:00:00.000Z", "bot", "group")
    assert job.scope == Scope("bot", "shared", "room")
    enqueue(any_conn, "p")
    private = ingest_sql.claim_due(any_conn, 1e12)
    assert private is not None
    assert (private.occurred_at, private.agent_id, private.scope) == (
        None,
        None,
        Scope(None, "private", None),
    )


def test_requeue_after_a_crash_reruns_jobs_unless_a_newer_one_waits(any_conn: Any) -> None:
    lone = enqueue(any_conn, "lone", due_at=500.0)
    stale = enqueue(any_conn, "busy", due_at=50.0)
    assert ingest_sql.claim_due(any_conn, 500.0).id == stale  # type: ignore[union-attr]
    assert ingest_sql.claim_due(any_conn, 500.0).id == lone  # type: ignore[union-attr]
    newer = enqueue(any_conn, "busy", due_at=900.0)
    assert ingest_sql.requeue_running(any_conn, 400.0) == 1
    superseded = ingest_sql.get_job(any_conn, stale)
    assert superseded is not None and superseded.status == "done" and superseded.facts_stored == 0
    assert superseded.last_error == "superseded by a newer request after restart"
    assert superseded.finished_at is not None and TIMESTAMP.match(superseded.finished_at)
    requeued = ingest_sql.get_job(any_conn, lone)
    assert requeued is not None and (requeued.status, requeued.due_at) == ("pending", 400.0)  # min(due, now)
    assert status_of(any_conn, newer) == "pending"
    assert ingest_sql.claim_due(any_conn, 400.0).id == lone  # type: ignore[union-attr]
    assert ingest_sql.requeue_running(any_conn, 9999.0) == 1
    assert ingest_sql.get_job(any_conn, lone).due_at == 400.0  # type: ignore[union-attr]
    assert ingest_sql.requeue_running(any_conn, 1.0) == 0  # nothing running


def test_a_finished_job_drops_its_messages_and_keeps_its_numbers(any_conn: Any) -> None:
    job_id = enqueue(any_conn, count=2)
    ingest_sql.claim_due(any_conn, 1e12)
    ingest_sql.finish(any_conn, job_id, duration_ms=1234, new_messages=2, facts_stored=3, method="llm+rules")
    job = ingest_sql.get_job(any_conn, job_id)
    assert job is not None
    assert (job.status, job.messages, job.duration_ms, job.new_messages, job.facts_stored, job.method) == (
        "done",
        [],
        1234,
        2,
        3,
        "llm+rules",
    )
    assert job.last_error is None and job.finished_at is not None and TIMESTAMP.match(job.finished_at)
    assert ingest_sql.last_finished(any_conn) == {
        "id": job_id,
        "duration_ms": 1234,
        "finished_at": job.finished_at,
        "facts_stored": 3,
        "method": "llm+rules",
    }


def test_a_failure_retries_fails_for_good_or_yields_to_a_newer_job(any_conn: Any) -> None:
    job_id = enqueue(any_conn, "a")
    ingest_sql.claim_due(any_conn, 1e12)
    ingest_sql.fail(any_conn, job_id, "x" * 3000, retry_at=777.0)
    job = ingest_sql.get_job(any_conn, job_id)
    assert job is not None and (job.status, job.due_at, job.last_error) == ("pending", 777.0, "x" * 2000)
    ingest_sql.claim_due(any_conn, 1e12)
    ingest_sql.fail(any_conn, job_id, "gave up", retry_at=None)
    job = ingest_sql.get_job(any_conn, job_id)
    assert job is not None and (job.status, job.last_error, job.attempts) == ("failed", "gave up", 2)
    assert job.finished_at is not None

    other = enqueue(any_conn, "b")
    ingest_sql.claim_due(any_conn, 1e12)
    newer = enqueue(any_conn, "b")
    ingest_sql.fail(any_conn, other, "boom", retry_at=10.0)
    assert (status_of(any_conn, other), status_of(any_conn, newer)) == ("done", "pending")


def test_a_job_released_for_a_full_disk_waits_untried_or_yields_to_a_newer_job(any_conn: Any) -> None:
    job_id = enqueue(any_conn, "a")
    ingest_sql.claim_due(any_conn, 1e12, claimed_by=3)
    with pytest.raises(ingest_sql.JobNoLongerClaimed):  # only under its own claim
        ingest_sql.release(any_conn, job_id, due_at=50.0, reason="disk full", claimed_by=4)
    ingest_sql.release(any_conn, job_id, due_at=50.0, reason="disk full", claimed_by=3)
    job = ingest_sql.get_job(any_conn, job_id)
    assert job is not None
    assert (job.status, job.attempts, job.due_at, job.last_error) == ("pending", 0, 50.0, "disk full")
    assert len(job.messages) == 1  # its body is kept for the next try

    other = enqueue(any_conn, "b", due_at=10.0)
    assert ingest_sql.claim_due(any_conn, 1e12).id == other  # type: ignore[union-attr]
    newer = enqueue(any_conn, "b")
    ingest_sql.release(any_conn, other, due_at=50.0, reason="disk full")
    assert (status_of(any_conn, other), status_of(any_conn, newer)) == ("done", "pending")


def test_a_failed_job_is_retried_only_without_a_pending_one(any_conn: Any) -> None:
    job_id = enqueue(any_conn, "a")
    assert not ingest_sql.retry_failed(any_conn, job_id, 5.0)  # pending, not failed
    ingest_sql.claim_due(any_conn, 1e12)
    ingest_sql.fail(any_conn, job_id, "no", retry_at=None)
    newer = enqueue(any_conn, "a")
    assert not ingest_sql.retry_failed(any_conn, job_id, 5.0)  # the session has a pending job
    ingest_sql.claim_due(any_conn, 1e12)
    ingest_sql.finish(any_conn, newer, duration_ms=1, new_messages=0, facts_stored=0, method="rules")
    assert ingest_sql.retry_failed(any_conn, job_id, 5.0)
    job = ingest_sql.get_job(any_conn, job_id)
    assert job is not None and (job.status, job.attempts, job.due_at) == ("pending", 0, 5.0)
    assert not ingest_sql.retry_failed(any_conn, 999_999, 5.0)


def test_the_queue_views_count_list_and_find_jobs(any_conn: Any) -> None:
    assert ingest_sql.queue_counts(any_conn) == {"pending": 0, "running": 0, "done": 0, "failed": 0}
    assert ingest_sql.last_finished(any_conn) is None
    assert ingest_sql.get_job(any_conn, 1) is None
    ids = [enqueue(any_conn, f"s{i}", due_at=float(i)) for i in range(4)]
    ingest_sql.claim_due(any_conn, 0.0)
    ingest_sql.finish(any_conn, ids[0], duration_ms=5, new_messages=1, facts_stored=1, method="llm")
    ingest_sql.claim_due(any_conn, 1.0)
    ingest_sql.fail(any_conn, ids[1], "bad", retry_at=None)
    ingest_sql.claim_due(any_conn, 2.0)
    assert ingest_sql.queue_counts(any_conn) == {"pending": 1, "running": 1, "done": 1, "failed": 1}
    assert ingest_sql.pending_count(any_conn) == 1
    assert [job.id for job in ingest_sql.recent_jobs(any_conn, status=None, limit=10)] == ids[::-1]
    assert [job.id for job in ingest_sql.recent_jobs(any_conn, status=None, limit=2)] == ids[:1:-1]
    assert [job.id for job in ingest_sql.recent_jobs(any_conn, status="failed", limit=10)] == [ids[1]]
    assert ingest_sql.recent_jobs(any_conn, status="done", limit=10)[0].method == "llm"


def test_watermarks_are_saved_replaced_and_read(any_conn: Any) -> None:
    assert ingest_sql.get_watermark(any_conn, "u:s1") is None
    ingest_sql.save_watermark(any_conn, session_key="u:s1", user_id="u", session_id="s1", hashes=["a", "b"],
                              history_hash="h1")  # fmt: skip
    assert ingest_sql.get_watermark(any_conn, "u:s1") == ingest_sql.Watermark("u:s1", 2, "h1", ["a", "b"])
    ingest_sql.save_watermark(any_conn, session_key="u:s1", user_id="u", session_id=None, hashes=["a", "b", "ç"],
                              history_hash="h2")  # fmt: skip
    assert ingest_sql.get_watermark(any_conn, "u:s1") == ingest_sql.Watermark(
        "u:s1", 3, "h2", ["a", "b", "ç"]
    )
    updated = any_conn.execute("SELECT updated_at FROM session_watermarks").fetchone()[0]
    assert TIMESTAMP.match(updated)


def test_turn_hashes_are_saved_replaced_and_read(any_conn: Any) -> None:
    assert ingest_sql.stored_turn_hashes(any_conn, "u:s1") == []
    ingest_sql.save_turn_hashes(any_conn, session_key="u:s1", user_id="u", hashes=["x"])
    ingest_sql.save_turn_hashes(any_conn, session_key="u:s1", user_id="u", hashes=["x", "y"])
    ingest_sql.save_turn_hashes(any_conn, session_key="u:s2", user_id="u", hashes=[])
    assert ingest_sql.stored_turn_hashes(any_conn, "u:s1") == ["x", "y"]
    assert ingest_sql.stored_turn_hashes(any_conn, "u:s2") == []


# -- two daemons, one PostgreSQL queue ---------------------------------------------------------
@pytest.fixture
def two_daemons(postgres_url: str) -> Iterator[tuple[Any, Any]]:
    """Two connections to one migrated PostgreSQL database, each running its own transactions (as
    two daemons' writers do), and a lock timeout so that a claim that waits fails instead."""
    import psycopg

    from memory_cortex.store.postgres.connection import PgConnection, configure
    from memory_cortex.store.postgres.db import apply_migrations

    with psycopg.connect(postgres_url, autocommit=True) as setup:
        configure(setup)
        apply_migrations(setup)
    raws = [psycopg.connect(postgres_url) for _ in range(2)]
    for raw in raws:
        configure(raw)
        raw.execute("SET lock_timeout = '2s'")
        raw.commit()
    yield PgConnection(raws[0]), PgConnection(raws[1])
    for raw in raws:
        raw.rollback()
        raw.close()


def test_two_open_transactions_never_claim_the_same_job_on_postgres(two_daemons: tuple[Any, Any]) -> None:
    first_daemon, second_daemon = two_daemons
    ids = [enqueue(first_daemon, f"s{i}", due_at=float(i)) for i in range(2)]
    first_daemon.raw.commit()

    mine = ingest_sql.claim_due(first_daemon, 10.0)  # its transaction stays open: the row is locked
    theirs = ingest_sql.claim_due(second_daemon, 10.0)  # skips the locked job, does not wait for it
    assert mine is not None and theirs is not None
    assert (mine.id, theirs.id) == (ids[0], ids[1])
    assert ingest_sql.claim_due(second_daemon, 10.0) is None  # the only other job is held
    first_daemon.raw.commit()
    second_daemon.raw.commit()
    assert ingest_sql.queue_counts(first_daemon)["running"] == 2
    assert ingest_sql.claim_due(second_daemon, 10.0) is None  # committed claims are not pending
    second_daemon.raw.commit()


def test_a_claim_rolled_back_leaves_the_job_for_the_other_daemon_on_postgres(
    two_daemons: tuple[Any, Any],
) -> None:
    first_daemon, second_daemon = two_daemons
    job_id = enqueue(first_daemon, due_at=1.0)
    first_daemon.raw.commit()
    assert ingest_sql.claim_due(first_daemon, 10.0).id == job_id  # type: ignore[union-attr]
    assert ingest_sql.claim_due(second_daemon, 10.0) is None  # held, never handed out twice
    second_daemon.raw.rollback()
    first_daemon.raw.rollback()  # the first daemon died before its commit
    again = ingest_sql.claim_due(second_daemon, 10.0)
    assert again is not None and (again.id, again.attempts) == (job_id, 1)
    second_daemon.raw.commit()


def test_only_jobs_of_a_daemon_that_is_gone_are_requeued_on_postgres(
    two_daemons: tuple[Any, Any], postgres_url: str
) -> None:
    """Each daemon holds its instance lock while it runs (store/postgres/db.py): a job it claimed
    stays running while it lives, and goes back to the queue once its session is gone."""
    import psycopg

    from memory_cortex.store.dialect import INSTANCE_LOCKS

    first_daemon, second_daemon = two_daemons
    alive = psycopg.connect(postgres_url, autocommit=True)  # the claiming daemon's instance lock
    alive.execute("SELECT pg_advisory_lock(%s, %s)", (INSTANCE_LOCKS, 41))
    running = enqueue(first_daemon, "s1", due_at=1.0)
    orphan = enqueue(first_daemon, "s2", due_at=2.0)
    unowned = enqueue(first_daemon, "s3", due_at=3.0)
    first_daemon.raw.commit()
    assert ingest_sql.claim_due(first_daemon, 10.0, claimed_by=41).id == running  # type: ignore[union-attr]
    assert ingest_sql.claim_due(first_daemon, 10.0, claimed_by=42).id == orphan  # type: ignore[union-attr]
    assert ingest_sql.claim_due(first_daemon, 10.0).id == unowned  # type: ignore[union-attr]
    first_daemon.raw.commit()

    # Daemon 7 looks: 41 lives, 42 holds no lock (it died), 0 was claimed by no daemon.
    assert ingest_sql.requeue_running(second_daemon, 50.0, me=7) == 2
    second_daemon.raw.commit()
    assert (status_of(second_daemon, running), status_of(second_daemon, orphan)) == ("running", "pending")
    assert status_of(second_daemon, unowned) == "pending"
    # Asked between two of its jobs, a daemon's own running claim is one whose end was never
    # written (the server was away): it runs again too.
    assert ingest_sql.claim_due(second_daemon, 60.0, claimed_by=7) is not None
    second_daemon.raw.commit()
    assert ingest_sql.requeue_running(second_daemon, 70.0, me=7) == 1
    second_daemon.raw.commit()

    alive.close()  # daemon 41 dies: its session, and its lock, are gone
    wait_for_lock_release(postgres_url, 41)  # the server ends the session just after the client
    assert ingest_sql.requeue_running(second_daemon, 80.0, me=7) == 1
    second_daemon.raw.commit()
    assert status_of(second_daemon, running) == "pending"


def test_a_session_with_a_running_job_has_its_next_job_wait(any_conn: Any) -> None:
    """Two jobs of one conversation never run at once: they would read the same watermark."""
    first = enqueue(any_conn, "s1", due_at=1.0)
    assert ingest_sql.claim_due(any_conn, 10.0).id == first  # type: ignore[union-attr]
    second = enqueue(any_conn, "s1", due_at=2.0)  # a new message while the first runs
    other = enqueue(any_conn, "s2", due_at=3.0)
    assert ingest_sql.claim_due(any_conn, 10.0).id == other  # type: ignore[union-attr]
    assert ingest_sql.claim_due(any_conn, 10.0) is None  # s1's next job waits for its first
    ingest_sql.finish(any_conn, first, duration_ms=1, new_messages=1, facts_stored=0, method="rules")
    assert ingest_sql.claim_due(any_conn, 10.0).id == second  # type: ignore[union-attr]


def test_a_finish_under_a_lost_claim_changes_nothing(any_conn: Any) -> None:
    """A job another daemon took over is finished by that daemon only: the first one's finish
    raises (its transaction, facts and all, rolls back) and its failure is not recorded."""
    job_id = enqueue(any_conn, due_at=1.0)
    assert ingest_sql.claim_due(any_conn, 10.0, claimed_by=5) is not None
    with pytest.raises(ingest_sql.JobNoLongerClaimed):
        ingest_sql.finish(
            any_conn, job_id, duration_ms=1, new_messages=1, facts_stored=0, method="rules", claimed_by=6
        )
    ingest_sql.fail(any_conn, job_id, "boom", retry_at=None, claimed_by=6)
    job = ingest_sql.get_job(any_conn, job_id)
    assert job is not None and (job.status, job.last_error, job.claimed_by) == ("running", None, 5)


def test_a_sessions_next_job_waits_for_the_claim_before_it_on_postgres(two_daemons: tuple[Any, Any]) -> None:
    """The next job of a session can only be journaled once the claim of the one before has
    committed (one pending job per session: a unique index), and then it waits for that one."""
    first_daemon, second_daemon = two_daemons
    enqueue(first_daemon, "s1", due_at=1.0)
    first_daemon.raw.commit()
    assert ingest_sql.claim_due(first_daemon, 10.0, claimed_by=1) is not None  # still uncommitted
    first_daemon.raw.commit()
    enqueue(second_daemon, "s1", due_at=2.0)  # the session's next message, journaled elsewhere
    second_daemon.raw.commit()
    assert ingest_sql.claim_due(second_daemon, 10.0, claimed_by=2) is None  # s1 is running
    second_daemon.raw.commit()


def wait_for_lock_release(url: str, daemon_id: int, timeout: float = 10.0) -> None:
    """Until no session holds the instance lock of ``daemon_id`` (a closed client's server process
    ends a moment after the client does, and its locks with it)."""
    import time

    import psycopg

    from memory_cortex.store.dialect import INSTANCE_LOCKS

    deadline = time.monotonic() + timeout
    with psycopg.connect(url, autocommit=True) as watcher:
        while time.monotonic() < deadline:
            held = watcher.execute(
                "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND classid = %s AND objid = %s",
                (INSTANCE_LOCKS, daemon_id),
            ).fetchone()
            if held is not None and held[0] == 0:
                return
            time.sleep(0.05)
    raise AssertionError(f"the lock of daemon {daemon_id} is still held after {timeout} s")
