"""All SQL about the ingest journal and session watermarks, on SQLite and PostgreSQL alike.

The SQL is shared; the few fragments that differ (the clock, ``min``, the row lock of a claim) come
from the connection's dialect (``store/dialect.py``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from ..records import Scope, stored_timestamp
from .connection import Connection, dialect_of


@dataclass(frozen=True)
class IngestJob:
    id: int
    session_key: str
    user_id: str
    session_id: str | None
    channel: str | None
    messages: list[dict[str, Any]]
    message_count: int
    status: str
    attempts: int
    last_error: str | None
    received_at: str
    due_at: float
    started_at: str | None
    finished_at: str | None
    duration_ms: int | None
    new_messages: int | None
    facts_stored: int | None
    method: str | None
    occurred_at: str | None = None  # the body's occurred_at, stored format (None: now)
    agent_id: str | None = None  # the body's agent_id (None: every agent)
    session_kind: str = "private"  # the body's session_kind
    user_names: tuple[str, ...] = ()  # the body's user_names: the speakers who are the owner
    claimed_by: int = 0  # the daemon working on it (PostgreSQL: several share the journal)

    @property
    def scope(self) -> Scope:
        """The scope of every memory this conversation leaves: private to the user, or shared in
        its group (the channel, else the session, names the group: never every group at once)."""
        if self.session_kind != "group":
            return Scope(self.agent_id, "private", self.channel)
        return Scope(self.agent_id, "shared", self.channel or self.session_id or "")

    @classmethod
    def from_row(cls, row: Any) -> IngestJob:
        data = dict(row)
        stored = json.loads(data["messages"])
        # The column holds the /ingest body as received ({"messages": [...], ...}) or, once the
        # job is done, an empty list.
        data["messages"] = stored.get("messages", []) if isinstance(stored, dict) else stored
        data["occurred_at"] = _occurred_at(stored)
        body = stored if isinstance(stored, dict) else {}
        # Validated by the handler before the body was journaled; a job done has no body left.
        data["agent_id"] = body.get("agent_id") or None if isinstance(body.get("agent_id"), str) else None
        data["session_kind"] = "group" if body.get("session_kind") == "group" else "private"
        names = body.get("user_names")
        data["user_names"] = tuple(n for n in names if isinstance(n, str)) if isinstance(names, list) else ()
        return cls(**data)


def _occurred_at(body: Any) -> str | None:
    """The ``occurred_at`` of a journaled body (validated by the handler before it was journaled)."""
    value = body.get("occurred_at") if isinstance(body, dict) else None
    if not isinstance(value, str):
        return None
    try:
        return stored_timestamp(datetime.fromisoformat(value.replace("Z", "+00:00")))
    except ValueError:
        return None


@dataclass(frozen=True)
class Watermark:
    session_key: str
    message_count: int
    history_hash: str
    message_hashes: list[str]


def enqueue(
    conn: Connection,
    *,
    session_key: str,
    user_id: str,
    session_id: str | None,
    channel: str | None,
    payload: str,
    message_count: int,
    due_at: float,
) -> int:
    """Journal a request: replace the session's pending job (restarting its timer) or add one."""
    # The existing row's channel is named by its table: PostgreSQL finds a bare name ambiguous.
    row = conn.execute(
        "INSERT INTO ingest_jobs (session_key, user_id, session_id, channel, messages, message_count, due_at)"
        " VALUES (?, ?, ?, ?, ?, ?, ?)"
        " ON CONFLICT (session_key) WHERE status = 'pending' DO UPDATE SET"
        "  messages = excluded.messages, message_count = excluded.message_count,"
        "  channel = coalesce(excluded.channel, ingest_jobs.channel), due_at = excluded.due_at,"
        f"  received_at = {dialect_of(conn).now}"
        " RETURNING id",
        (
            session_key,
            user_id,
            session_id,
            channel,
            payload,
            message_count,
            due_at,
        ),
    ).fetchone()
    return int(row[0])


def next_due_at(conn: Connection) -> float | None:
    row = conn.execute("SELECT min(due_at) FROM ingest_jobs WHERE status = 'pending'").fetchone()
    return None if row[0] is None else float(row[0])


def claim_due(conn: Connection, now: float, claimed_by: int = 0) -> IngestJob | None:
    """Mark the oldest due pending job running, claimed by the daemon ``claimed_by``, and return it
    (inside the caller's transaction). A job whose session has one running waits for it
    (:meth:`Dialect.session_free`).

    On PostgreSQL several daemons claim at once: the pick locks the job and skips jobs another
    transaction holds (``FOR UPDATE SKIP LOCKED``), so no job is claimed twice. Nor are two jobs of
    one session claimed at once: a session has at most one pending job (a unique index), and its
    next one can only be journaled once the claim of the one before has committed, as running.
    """
    d = dialect_of(conn)
    row = conn.execute(
        "UPDATE ingest_jobs SET status = 'running', attempts = attempts + 1, claimed_by = ?,"
        f" started_at = {d.now}"
        " WHERE id = (SELECT id FROM ingest_jobs WHERE status = 'pending' AND due_at <= ?"
        f"             AND {d.session_free('ingest_jobs')}"
        f"             ORDER BY due_at, id LIMIT 1{d.skip_locked})"
        " RETURNING *",
        (claimed_by, now),
    ).fetchone()
    return IngestJob.from_row(row) if row else None


def requeue_running(conn: Connection, now: float, me: int = 0) -> int:
    """After a crash, jobs left 'running' run again (their facts were never committed).

    Only jobs whose daemon is gone (:meth:`Dialect.claim_abandoned`; ``me``: the asking daemon's
    id): on PostgreSQL another daemon may be running one right now.

    A session may meanwhile have a newer pending job; then the older one is superseded by it (the
    newer one carries the whole history anyway) and is closed as done without work.
    """
    d = dialect_of(conn)
    abandoned = d.claim_abandoned("claimed_by", me)
    conn.execute(
        f"UPDATE ingest_jobs SET status = 'done', finished_at = {d.now},"
        " last_error = 'superseded by a newer request after restart', facts_stored = 0"
        f" WHERE status = 'running' AND {abandoned} AND session_key IN"
        "  (SELECT session_key FROM ingest_jobs WHERE status = 'pending')"
    )
    return conn.execute(
        f"UPDATE ingest_jobs SET status = 'pending', due_at = {d.least('due_at', '?')}"
        f" WHERE status = 'running' AND {abandoned}",
        (now,),
    ).rowcount


class JobNoLongerClaimed(Exception):
    """The job is no longer running under this claim: another daemon took it over (this one was
    thought gone). Raised inside the transaction that would have finished it, so its facts roll
    back with it and the job's new owner does the work once."""


def finish(
    conn: Connection,
    job_id: int,
    *,
    duration_ms: int,
    new_messages: int,
    facts_stored: int,
    method: str,
    claimed_by: int = 0,
) -> None:
    """Close a job claimed by ``claimed_by``; its message copy is dropped (the watermark keeps what
    matters). Raises :class:`JobNoLongerClaimed` when the claim is no longer this one."""
    cursor = conn.execute(
        f"UPDATE ingest_jobs SET status = 'done', finished_at = {dialect_of(conn).now}, duration_ms = ?,"
        " new_messages = ?, facts_stored = ?, method = ?, last_error = NULL, messages = '[]'"
        " WHERE id = ? AND status = 'running' AND claimed_by = ?",
        (duration_ms, new_messages, facts_stored, method, job_id, claimed_by),
    )
    if cursor.rowcount == 0:
        raise JobNoLongerClaimed(job_id)


def finish_step(conn: Connection, job_id: int, *, due_at: float, claimed_by: int = 0) -> None:
    """A step of a long job is done: the job goes back to the queue at ``due_at`` (behind the jobs
    due before it), its body kept, its tries counted afresh. When the session got a newer pending
    job meanwhile, that one carries the full history: this one is closed instead (the unique
    pending index allows only one). Raises :class:`JobNoLongerClaimed` when the claim is no longer
    this one."""
    _requeue(conn, job_id, due_at=due_at, claimed_by=claimed_by, attempts="0", error=None)


def release(conn: Connection, job_id: int, *, due_at: float, reason: str, claimed_by: int = 0) -> None:
    """A job whose work the store could not take (a full disk: ``reason``) goes back to the queue at
    ``due_at`` as if it had not been tried (its try is not counted); closed instead when a newer
    pending job of its session carries the full history. Raises :class:`JobNoLongerClaimed` as
    :func:`finish_step`."""
    attempts = dialect_of(conn).greatest("attempts - 1", "0")
    _requeue(conn, job_id, due_at=due_at, claimed_by=claimed_by, attempts=attempts, error=reason)


def _requeue(
    conn: Connection, job_id: int, *, due_at: float, claimed_by: int, attempts: str, error: str | None
) -> None:
    """Back to pending at ``due_at`` with ``attempts`` (an SQL expression) and ``error`` as its last
    error, or closed when a newer post of the session waits."""
    if _newer_pending(conn, job_id):
        cursor = conn.execute(
            f"UPDATE ingest_jobs SET status = 'done', finished_at = {dialect_of(conn).now}, last_error = NULL,"
            " messages = '[]' WHERE id = ? AND status = 'running' AND claimed_by = ?",
            (job_id, claimed_by),
        )
    else:
        cursor = conn.execute(
            f"UPDATE ingest_jobs SET status = 'pending', due_at = ?, attempts = {attempts}, last_error = ?"
            " WHERE id = ? AND status = 'running' AND claimed_by = ?",
            (due_at, error, job_id, claimed_by),
        )
    if cursor.rowcount == 0:
        raise JobNoLongerClaimed(job_id)


def fail(conn: Connection, job_id: int, error: str, *, retry_at: float | None, claimed_by: int = 0) -> None:
    """Record a failure: back to pending at ``retry_at``, or failed for good when None.

    When the session got a newer pending job meanwhile, that one carries the full history: this
    one is closed instead of being retried (the unique pending index allows only one). Nothing is
    recorded when the job is no longer running under ``claimed_by`` (another daemon took it over).
    """
    claim = conn.execute(
        "SELECT 1 FROM ingest_jobs WHERE id = ? AND status = 'running' AND claimed_by = ?",
        (job_id, claimed_by),
    ).fetchone()
    if claim is None:
        return
    if retry_at is not None and not _newer_pending(conn, job_id):
        conn.execute(
            "UPDATE ingest_jobs SET status = 'pending', last_error = ?, due_at = ? WHERE id = ?",
            (error[:2000], retry_at, job_id),
        )
    else:
        status = "failed" if retry_at is None else "done"
        conn.execute(
            f"UPDATE ingest_jobs SET status = ?, last_error = ?, finished_at = {dialect_of(conn).now} WHERE id = ?",
            (status, error[:2000], job_id),
        )


def _newer_pending(conn: Connection, job_id: int) -> bool:
    """Whether the session of a running job has a pending one: a newer post, with the full history."""
    return (
        conn.execute(
            "SELECT 1 FROM ingest_jobs WHERE status = 'pending' AND session_key ="
            " (SELECT session_key FROM ingest_jobs WHERE id = ?)",
            (job_id,),
        ).fetchone()
        is not None
    )


def retry_failed(conn: Connection, job_id: int, now: float) -> bool:
    """Put a failed job back in the queue (the dashboard's retry button)."""
    return (
        conn.execute(
            "UPDATE ingest_jobs SET status = 'pending', attempts = 0, due_at = ? WHERE id = ? AND status = 'failed'"
            " AND NOT EXISTS (SELECT 1 FROM ingest_jobs p WHERE p.status = 'pending'"
            "   AND p.session_key = ingest_jobs.session_key)",
            (now, job_id),
        ).rowcount
        > 0
    )


def get_watermark(conn: Connection, session_key: str) -> Watermark | None:
    row = conn.execute(
        "SELECT session_key, message_count, history_hash, message_hashes FROM session_watermarks"
        " WHERE session_key = ?",
        (session_key,),
    ).fetchone()
    if row is None:
        return None
    return Watermark(row[0], row[1], row[2], json.loads(row[3]))


def save_watermark(
    conn: Connection,
    *,
    session_key: str,
    user_id: str,
    session_id: str | None,
    hashes: list[str],
    history_hash: str,
) -> None:
    conn.execute(
        "INSERT INTO session_watermarks (session_key, user_id, session_id, message_count, history_hash,"
        " message_hashes) VALUES (?, ?, ?, ?, ?, ?)"
        " ON CONFLICT (session_key) DO UPDATE SET message_count = excluded.message_count,"
        " history_hash = excluded.history_hash, message_hashes = excluded.message_hashes,"
        f" updated_at = {dialect_of(conn).now}",
        (session_key, user_id, session_id, len(hashes), history_hash, json.dumps(hashes)),
    )


def stored_turn_hashes(conn: Connection, session_key: str) -> list[str]:
    """The hashes of the session's messages already stored as turns, oldest first ([]: none yet)."""
    row = conn.execute(
        "SELECT message_hashes FROM session_turns WHERE session_key = ?", (session_key,)
    ).fetchone()
    return [] if row is None else list(json.loads(row[0]))


def save_turn_hashes(conn: Connection, *, session_key: str, user_id: str, hashes: list[str]) -> None:
    conn.execute(
        "INSERT INTO session_turns (session_key, user_id, message_hashes) VALUES (?, ?, ?)"
        " ON CONFLICT (session_key) DO UPDATE SET message_hashes = excluded.message_hashes,"
        f" updated_at = {dialect_of(conn).now}",
        (session_key, user_id, json.dumps(hashes)),
    )


def pending_count(conn: Connection) -> int:
    """Jobs waiting (index-only: the done rows, which pile up, are not scanned)."""
    return int(conn.execute("SELECT count(*) FROM ingest_jobs WHERE status = 'pending'").fetchone()[0])


def queue_counts(conn: Connection) -> dict[str, int]:
    counts = {"pending": 0, "running": 0, "done": 0, "failed": 0}
    counts.update(dict(conn.execute("SELECT status, count(*) FROM ingest_jobs GROUP BY status").fetchall()))
    return counts


def recent_jobs(conn: Connection, *, status: str | None, limit: int) -> list[IngestJob]:
    clause, params = ("WHERE status = ?", [status]) if status else ("", [])
    rows = conn.execute(f"SELECT * FROM ingest_jobs {clause} ORDER BY id DESC LIMIT ?", (*params, limit))
    return [IngestJob.from_row(row) for row in rows]


def get_job(conn: Connection, job_id: int) -> IngestJob | None:
    row = conn.execute("SELECT * FROM ingest_jobs WHERE id = ?", (job_id,)).fetchone()
    return IngestJob.from_row(row) if row else None


def last_finished(conn: Connection) -> dict[str, Any] | None:
    row = conn.execute(
        "SELECT id, duration_ms, finished_at, facts_stored, method FROM ingest_jobs"
        " WHERE status = 'done' AND duration_ms IS NOT NULL ORDER BY finished_at DESC LIMIT 1"
    ).fetchone()
    return dict(row) if row else None
