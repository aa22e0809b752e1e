"""The log of workspace imports (``POST /import`` runs them in the background; migration 014).

A row is the caller's handle on its import: how far it got (``done`` of ``total`` memories), then
its summary or its error. The files are never kept, so an import cut off by a crash cannot resume:
it is marked ``interrupted``, and sending the workspace again adds only what is still missing.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .connection import Connection, dialect_of

_COLUMNS = "id, user_id, agent_id, status, started_at, finished_at, total, done, result, error"


@dataclass(frozen=True)
class ImportRun:
    id: int
    user_id: str
    agent_id: str | None
    status: str  # running, done, failed, interrupted
    started_at: str
    finished_at: str | None
    total: int
    done: int
    result: dict[str, Any] | None  # the import's summary once done
    error: str | None

    @classmethod
    def from_row(cls, row: Sequence[Any]) -> ImportRun:
        result = json.loads(row[8]) if row[8] else None
        return cls(row[0], row[1], row[2], row[3], row[4], row[5], int(row[6]), int(row[7]), result, row[9])


def running_for(conn: Connection, user_id: str, agent_id: str | None) -> int | None:
    """The import of this user's workspace (of this agent) under way, if any."""
    row = conn.execute(
        "SELECT id FROM import_runs WHERE status = 'running' AND user_id = ?"
        " AND coalesce(agent_id, '') = coalesce(?, '') ORDER BY id LIMIT 1",
        (user_id, agent_id),
    ).fetchone()
    return None if row is None else int(row[0])


def start(conn: Connection, user_id: str, agent_id: str | None, claimed_by: int) -> int:
    """Log an import now starting, run by daemon ``claimed_by``; its id."""
    row = conn.execute(
        "INSERT INTO import_runs (user_id, agent_id, status, started_at, claimed_by)"
        f" VALUES (?, ?, 'running', {dialect_of(conn).now}, ?) RETURNING id",
        (user_id, agent_id, claimed_by),
    ).fetchone()
    return int(row[0])


def record_progress(conn: Connection, run_id: int, done: int, total: int) -> None:
    conn.execute(
        "UPDATE import_runs SET done = ?, total = ? WHERE id = ? AND status = 'running'",
        (done, total, run_id),
    )


def finish(
    conn: Connection,
    run_id: int,
    *,
    status: str,
    result: dict[str, Any] | None = None,
    error: str | None = None,
) -> None:
    """Close the run as ``status`` (done with its summary, or failed with the reason)."""
    conn.execute(
        f"UPDATE import_runs SET status = ?, finished_at = {dialect_of(conn).now}, result = ?, error = ?"
        " WHERE id = ? AND status = 'running'",  # one marked interrupted meanwhile stays so
        (status, None if result is None else json.dumps(result, ensure_ascii=False), error, run_id),
    )


def by_id(conn: Connection, run_id: int) -> ImportRun | None:
    row = conn.execute(f"SELECT {_COLUMNS} FROM import_runs WHERE id = ?", (run_id,)).fetchone()
    return None if row is None else ImportRun.from_row(row)


def interrupt_if_abandoned(conn: Connection, run_id: int, me: int) -> None:
    """Mark one running import interrupted when the daemon running it is gone (PostgreSQL: another
    daemon died while this one lives on). Never this daemon's own (its runs are live), and never
    on SQLite, where the one daemon marks its dead runs at start."""
    d = dialect_of(conn)
    if d.name == "sqlite":
        return
    conn.execute(
        f"UPDATE import_runs SET status = 'interrupted', finished_at = {d.now}, error = ?"
        f" WHERE id = ? AND status = 'running' AND claimed_by <> ? AND {d.claim_abandoned('claimed_by', -1)}",
        (INTERRUPTED, run_id, me),
    )


INTERRUPTED = "the daemon stopped while it ran; send the workspace again (what is stored is skipped)"


def interrupt_abandoned(conn: Connection, me: int) -> int:
    """Imports left running by a daemon that is gone (a crash, a kill -9): marked interrupted.

    On PostgreSQL another daemon may be running one right now: only rows whose daemon is gone are
    marked (:meth:`Dialect.claim_abandoned`)."""
    d = dialect_of(conn)
    return int(
        conn.execute(
            f"UPDATE import_runs SET status = 'interrupted', finished_at = {d.now}, error = ?"
            f" WHERE status = 'running' AND {d.claim_abandoned('claimed_by', me)}",
            (INTERRUPTED,),
        ).rowcount
    )
