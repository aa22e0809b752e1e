"""The memories an ingest job wrote, found from the job's side: a session's turns by message
digest (and the scopes they were stored with), what a job stored, and the reach of a job whose body
is gone. Plain SQL for both backends, as ``memories.py``."""

from __future__ import annotations

from collections.abc import Sequence

from ..records import MemoryRecord, Scope
from .connection import Connection, dialect_of
from .memories import RECORD_COLUMNS


def turns_by_digest(
    conn: Connection, user_id: str, session_id: str | None, digests: Sequence[str]
) -> dict[str, list[int]]:
    """The session's live turns of each message digest (every part of a long message), oldest first."""
    found: dict[str, list[int]] = {}
    for digest, memory_id, _ in _turns_of(conn, user_id, session_id, digests):
        found.setdefault(digest, []).append(memory_id)
    return found


def turn_scopes_by_digest(
    conn: Connection, user_id: str, session_id: str | None, digests: Sequence[str]
) -> dict[str, set[Scope]]:
    """The scopes the session's live turns of each message digest were stored with (a message said
    again in another reach of the same session id has one turn in each)."""
    found: dict[str, set[Scope]] = {}
    for digest, _, scope in _turns_of(conn, user_id, session_id, digests):
        found.setdefault(digest, set()).add(scope)
    return found


def _turns_of(
    conn: Connection, user_id: str, session_id: str | None, digests: Sequence[str]
) -> list[tuple[str, int, Scope]]:
    """(digest, id, scope) of the session's turns of ``digests``, oldest first."""
    if not digests:
        return []
    d = dialect_of(conn)
    session = "source_session IS NULL" if session_id is None else "source_session = ?"
    digest = d.json_text("metadata", "digest")
    rows = conn.execute(
        f"SELECT {digest}, id, agent_id, visibility, source_channel FROM memories WHERE user_id = ?"
        f" AND {session} AND kind = 'turn' AND {d.in_list(digest)} ORDER BY id",
        (user_id, *([] if session_id is None else [session_id]), d.list_param(digests)),
    )
    return [(row[0], int(row[1]), Scope(row[2], row[3], row[4])) for row in rows]


def stored_by_job(conn: Connection, user_id: str, session_id: str | None, job_id: int) -> list[MemoryRecord]:
    """The facts an extraction job stored (superseded or not), in the order it stored them (the
    turns it kept are the conversation itself, listed with the session's memories).

    Found through the session index (the job's user and session), then the job id in the metadata
    (compared as text: the one type a JSON value has on both backends).
    """
    d = dialect_of(conn)
    session = "source_session IS NULL" if session_id is None else "source_session = ?"
    rows = conn.execute(
        f"SELECT {RECORD_COLUMNS} FROM memories WHERE user_id = ? AND {session} AND {d.json_text('metadata', 'ingest_job')} = ?"
        " AND kind = 'fact' ORDER BY id",
        (user_id, *([] if session_id is None else [session_id]), str(job_id)),
    )
    return [MemoryRecord.from_row(row) for row in rows]


def job_scopes(conn: Connection, user_id: str, session_id: str | None, job_id: int) -> set[Scope]:
    """The scopes of every memory (turn or fact) an ingest job stored: its conversation's reach,
    known after its body is gone."""
    d = dialect_of(conn)
    session = "source_session IS NULL" if session_id is None else "source_session = ?"
    rows = conn.execute(
        f"SELECT DISTINCT agent_id, visibility, source_channel FROM memories WHERE user_id = ? AND {session}"
        f" AND {d.json_text('metadata', 'ingest_job')} = ?",
        (user_id, *([] if session_id is None else [session_id]), str(job_id)),
    )
    return {Scope(row[0], row[1], row[2]) for row in rows}
