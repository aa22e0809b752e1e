"""The SQL behind the dashboard's overview: memories, facts and extraction jobs counted per UTC day.

Days are the first ten characters of the stored timestamps (``2026-03-04``): the store writes UTC
ISO 8601, so a day is a UTC day. What was created before ``since`` is counted as one baseline (the
running totals start from it), the window day by day.

Memories are counted for one requester (``audience``: its agent, a private or a group session);
they are read from the indexes of migration 012 (the live rows' counts from a covering index alone,
a window's rows by created_at), so that an overview costs little at 100k memories. Extraction jobs
are the whole daemon's (every user), counted per day here rather than in Python on the event loop.

The same SQL runs on SQLite and PostgreSQL; where they differ (summing a condition, SQLite's index
hint, the order of text) it asks the connection's dialect. Rows that share a day come back sorted
in Python, so that both backends give the same lists.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..records import Audience
from .connection import Connection, dialect_of

# A summary is a fact the lifecycle wrote about other memories (a session's or a month's).
SUMMARY_CATEGORIES = ("session_summary", "history_summary")
# Constants of this module (never request text), written into the SQL as a list of literals.
_SUMMARY_SQL = ", ".join(f"'{category}'" for category in SUMMARY_CATEGORIES)
# fact / turn / summary, from the kind column and the summary categories.
_KIND_SQL = f"CASE WHEN category IN ({_SUMMARY_SQL}) THEN 'summary' ELSE kind END"
# The live rows of a user, and those the requester may see (memories_user_live_created).
_LIVE_SQL = "FROM memories WHERE user_id = ? AND superseded_by IS NULL"


def live_before(
    conn: Connection,
    user_id: str,
    since: str,
    audience: Audience,
    layers: Sequence[str],
    kinds: Sequence[str],
) -> tuple[dict[str, int], dict[str, int]]:
    """Live (not superseded) memories created before ``since``: how many in each of ``layers``
    (the layer each is in now) and of each of ``kinds`` (fact / turn / summary).

    Sums, not GROUP BY: a group would sort every row of the user; a sum per name reads the
    covering index once, in its order."""
    d = dialect_of(conn)
    scope, scope_params = audience.sql()
    layer_sum = f"sum({d.as_int('layer = ?')})"
    kind_sum = f"sum({d.as_int(f'{_KIND_SQL} = ?')})"
    sums = ", ".join([layer_sum] * len(layers) + [kind_sum] * len(kinds))
    row = conn.execute(
        f"SELECT {sums} {_LIVE_SQL} AND created_at < ?{scope}",
        (*layers, *kinds, user_id, since, *scope_params),
    ).fetchone()
    counts = [int(count or 0) for count in row]
    return dict(zip(layers, counts, strict=False)), dict(zip(kinds, counts[len(layers) :], strict=False))


def live_since_by_day(
    conn: Connection, user_id: str, since: str, audience: Audience
) -> list[tuple[str, str, str, int]]:
    """Live memories created since ``since`` by day, their layer now and their kind:
    ``(day, layer, kind, count)``."""
    scope, scope_params = audience.sql()
    rows = conn.execute(
        f"SELECT substr(created_at, 1, 10) AS day, layer, {_KIND_SQL} AS shown_kind, count(*)"
        f" {_LIVE_SQL} AND created_at >= ?{scope} GROUP BY day, layer, shown_kind ORDER BY day",
        (user_id, since, *scope_params),
    )
    return sorted((row[0], row[1], row[2], int(row[3])) for row in rows)


def facts_by_day_and_method(
    conn: Connection, user_id: str, since: str, audience: Audience
) -> list[tuple[str, str, int]]:
    """Facts created since ``since`` (superseded ones too: they were extracted) by day and by how
    they were made: the extractor the ingest job used (``llm``, ``rules``, ``llm+rules``),
    ``summary`` (the lifecycle), or ``direct`` (written through ``POST /memories``)."""
    scope, scope_params = audience.sql()
    extractor = dialect_of(conn).json_text("metadata", "extractor")
    rows = conn.execute(
        "SELECT substr(created_at, 1, 10) AS day,"
        f" CASE WHEN category IN ({_SUMMARY_SQL}) THEN 'summary'"
        f"      ELSE coalesce({extractor}, 'direct') END AS method,"
        f" count(*) FROM memories WHERE user_id = ? AND created_at >= ? AND kind = 'fact'{scope}"
        " GROUP BY day, method ORDER BY day",
        (user_id, since, *scope_params),
    )
    return sorted((row[0], row[1], int(row[2])) for row in rows)


def live_facts_by(
    conn: Connection, user_id: str, column: str, limit: int, audience: Audience
) -> list[tuple[str, int]]:
    """Live facts counted by ``category`` or ``topic``, the largest first."""
    if column not in ("category", "topic"):
        raise ValueError(f"not a column to count by: {column!r}")
    d = dialect_of(conn)
    scope, scope_params = audience.sql()
    # GROUP BY +column: not in the order of the (user, category/topic) index, which saves a sort of
    # a few groups but costs a table lookup per row; the covering index reads no row at all.
    rows = conn.execute(
        f"SELECT {column}, count(*) AS n {_LIVE_SQL} AND kind = 'fact'{scope}"
        f" GROUP BY {d.no_index(column)} ORDER BY n DESC, {d.bytewise(column)} LIMIT ?",
        (user_id, *scope_params, limit),
    )
    return [(row[0], int(row[1])) for row in rows]


def job_days(conn: Connection, since: str) -> list[tuple[str, int, int, int, int]]:
    """Extraction jobs (all users) per day since ``since``: ``(day, received, done, failed,
    finished)``; done and failed count the jobs received that day, finished those that ended then."""
    d = dialect_of(conn)
    done, failed = d.as_int("status = 'done'"), d.as_int("status = 'failed'")
    rows = conn.execute(
        "SELECT day, sum(received), sum(done), sum(failed), sum(finished) FROM ("
        f"  SELECT substr(received_at, 1, 10) AS day, 1 AS received, {done} AS done,"
        f"   {failed} AS failed, 0 AS finished FROM ingest_jobs WHERE received_at >= ?"
        "  UNION ALL"
        "  SELECT substr(finished_at, 1, 10), 0, 0, 0, 1 FROM ingest_jobs WHERE finished_at >= ?"
        ") AS jobs GROUP BY day ORDER BY day",
        (since, since),
    )
    return [(row[0], int(row[1]), int(row[2]), int(row[3]), int(row[4])) for row in rows]


def extraction_percentiles_by_day(
    conn: Connection, since: str, percents: tuple[int, int]
) -> list[tuple[str, float, float]]:
    """Per day since ``since``: two nearest-rank percentiles (``percents``, e.g. 50 and 95) of the
    durations (ms) of the jobs done that day: ``(day, first, second)``."""
    # Nearest rank: the ceil(p/100 * n)-th smallest, (p * n + 99) / 100 in integers (never 0 for n >= 1).
    rows = conn.execute(
        "SELECT day, max(CASE WHEN position = (? * n + 99) / 100 THEN duration_ms END),"
        " max(CASE WHEN position = (? * n + 99) / 100 THEN duration_ms END) FROM ("
        "  SELECT substr(finished_at, 1, 10) AS day, duration_ms,"
        "   row_number() OVER (PARTITION BY substr(finished_at, 1, 10) ORDER BY duration_ms) AS position,"
        "   count(*) OVER (PARTITION BY substr(finished_at, 1, 10)) AS n"
        "  FROM ingest_jobs WHERE status = 'done' AND duration_ms IS NOT NULL AND finished_at >= ?"
        ") AS done_jobs GROUP BY day ORDER BY day",
        (*percents, since),
    )
    return [(row[0], float(row[1]), float(row[2])) for row in rows]


def jobs_waiting_at(conn: Connection, moment: str) -> int:
    """Jobs received before ``moment`` and not finished by then (every job finishes after it was
    received: received before it, less finished before it)."""
    row = conn.execute(
        "SELECT (SELECT count(*) FROM ingest_jobs WHERE received_at < ?)"
        " - (SELECT count(*) FROM ingest_jobs WHERE finished_at < ?)",
        (moment, moment),
    ).fetchone()
    return int(row[0])


def jobs_waiting_now(conn: Connection) -> int:
    """Jobs pending or running now (all users)."""
    row = conn.execute("SELECT count(*) FROM ingest_jobs WHERE status IN ('pending', 'running')").fetchone()
    return int(row[0])
