"""The SQL behind the dashboard's overview: memories, facts and extraction jobs counted per UTC day.

Days are the first ten characters of the stored timestamps (``2026-03-04``): the store writes UTC
ISO 8601, so a day is a UTC day. Everything before ``since`` is one bucket, ``""`` (the baseline
the running totals start from).
"""

from __future__ import annotations

import sqlite3

# A summary is a fact the lifecycle wrote about other memories (a session's or a month's).
SUMMARY_CATEGORIES = ("session_summary", "history_summary")

# fact / turn / summary, from the kind column and the summary categories.
_KIND_SQL = "CASE WHEN category IN ('session_summary', 'history_summary') THEN 'summary' ELSE kind END"
_DAY_SQL = "CASE WHEN created_at < ? THEN '' ELSE substr(created_at, 1, 10) END"


def live_by_day(conn: sqlite3.Connection, user_id: str, since: str) -> list[tuple[str, str, str, int]]:
    """Live (not superseded) memories by the day they were created, their layer now, and their
    kind: ``(day, layer, kind, count)``; day ``""`` counts those created before ``since``."""
    rows = conn.execute(
        f"SELECT {_DAY_SQL} AS day, layer, {_KIND_SQL} AS shown_kind, count(*) FROM memories"
        " WHERE user_id = ? AND superseded_by IS NULL GROUP BY day, layer, shown_kind ORDER BY day",
        (since, user_id),
    )
    return [(row[0], row[1], row[2], int(row[3])) for row in rows]


def facts_by_day_and_method(conn: sqlite3.Connection, user_id: str, since: str) -> list[tuple[str, str, int]]:
    """Facts created since ``since`` (superseded ones too: they were extracted) by day and by how
    they were made: the extractor the ingest job used (``llm``, ``rules``, ``llm+rules``),
    ``summary`` (the lifecycle), or ``direct`` (written through ``POST /memories``)."""
    rows = conn.execute(
        "SELECT substr(created_at, 1, 10) AS day,"
        " CASE WHEN category IN ('session_summary', 'history_summary') THEN 'summary'"
        "      ELSE coalesce(json_extract(metadata, '$.extractor'), 'direct') END AS method,"
        " count(*) FROM memories WHERE user_id = ? AND kind = 'fact' AND created_at >= ?"
        " GROUP BY day, method ORDER BY day",
        (user_id, since),
    )
    return [(row[0], row[1], int(row[2])) for row in rows]


def live_facts_by(conn: sqlite3.Connection, user_id: str, column: str, limit: int) -> list[tuple[str, int]]:
    """Live facts counted by ``category`` or ``topic``, the largest first."""
    if column not in ("category", "topic"):
        raise ValueError(f"not a column to count by: {column!r}")
    rows = conn.execute(
        f"SELECT {column}, count(*) AS n FROM memories WHERE user_id = ? AND superseded_by IS NULL"
        f" AND kind = 'fact' GROUP BY {column} ORDER BY n DESC, {column} LIMIT ?",
        (user_id, limit),
    )
    return [(row[0], int(row[1])) for row in rows]


def jobs_since(conn: sqlite3.Connection, since: str) -> list[tuple[str, str | None, str, int | None]]:
    """Every extraction job (all users) received since ``since`` or still open then:
    ``(received_at, finished_at, status, duration_ms)``."""
    rows = conn.execute(
        "SELECT received_at, finished_at, status, duration_ms FROM ingest_jobs"
        " WHERE received_at >= ? OR finished_at IS NULL OR finished_at >= ? ORDER BY id",
        (since, since),
    )
    return [(row[0], row[1], row[2], row[3]) for row in rows]
