"""The dashboard's overview and its list by date at scale, on SQLite and on PostgreSQL: their reads of
``memories`` come out of an index (the rows of the window, or a covering index), never every row of
the user into a sort; the extraction jobs are counted per day in SQL; and both backends give the
same numbers."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any, TypeVar

from memory_cortex.records import EVERYONE, Audience, MemoryFilter
from memory_cortex.services.overview import build_overview
from memory_cortex.services.search_timeline import SearchTimeline
from memory_cortex.store import memories as memory_sql
from memory_cortex.store import overview as overview_sql
from memory_cortex.store.connection import Connection, dialect_of
from tests.store.rows import add_memory

T = TypeVar("T")

NOW = datetime(2026, 3, 10, 15, 0, tzinfo=UTC)


def _at(days_ago: int, hour: int = 12) -> str:
    return f"{(NOW - timedelta(days=days_ago)).date().isoformat()}T{hour:02d}:00:00.000Z"


class _Recording:
    """A connection that remembers every statement it ran with its parameters (to explain them)."""

    def __init__(self, conn: Connection) -> None:
        self.conn = conn
        self.dialect = dialect_of(conn)
        self.statements: list[tuple[str, tuple[Any, ...]]] = []

    def execute(self, sql: str, parameters: Sequence[Any] = (), /) -> Any:
        self.statements.append((sql, tuple(parameters)))
        return self.conn.execute(sql, parameters)

    def executemany(self, sql: str, parameters: Any, /) -> Any:
        return self.conn.executemany(sql, parameters)


class _OnOneConnection:
    """What ``build_overview`` needs of a database (``read``), on the test's connection."""

    def __init__(self, conn: Any) -> None:
        self.conn = conn

    async def read(self, work: Callable[[Any], T]) -> T:
        return work(self.conn)


def _plans(conn: Connection, statements: list[tuple[str, tuple[Any, ...]]]) -> dict[str, str]:
    """Each statement that reads ``memories`` → its query plan, one line.

    PostgreSQL plans a table of a few rows with a sequential scan whatever its indexes, so it is
    asked with sequential scans priced out: a ``Seq Scan`` left in the plan means no index serves."""
    reading = [(sql, params) for sql, params in statements if "FROM memories" in sql]
    if dialect_of(conn).name == "sqlite":
        return {
            sql: " / ".join(row[3] for row in conn.execute(f"EXPLAIN QUERY PLAN {sql}", params))
            for sql, params in reading
        }
    conn.execute("SET enable_seqscan = off")
    try:
        return {
            sql: " / ".join(row[0].strip() for row in conn.execute(f"EXPLAIN {sql}", params))
            for sql, params in reading
        }
    finally:
        conn.execute("RESET enable_seqscan")


async def test_the_overview_reads_memories_from_an_index_not_every_row_into_a_sort(
    any_conn: Connection,
) -> None:
    for i in range(20):
        add_memory(any_conn, fact=f"Fact {i}.", created_at=_at(i * 3))
    recording = _Recording(any_conn)
    await build_overview(_OnOneConnection(recording), SearchTimeline(), "u", 30, now=NOW.timestamp())  # type: ignore[arg-type]
    plans = _plans(any_conn, recording.statements)
    assert plans
    for sql, plan in plans.items():
        if dialect_of(any_conn).name == "sqlite":
            # Every live row of the user is counted from the covering index; a window's rows by created_at.
            assert "COVERING INDEX" in plan or "created_at>" in plan, (sql, plan)
            assert "SCAN memories" not in plan, (sql, plan)
        else:
            assert "Seq Scan on memories" not in plan, (sql, plan)


async def test_a_page_by_date_is_read_in_index_order(any_conn: Connection) -> None:
    for i in range(5):
        add_memory(any_conn, fact=f"Fact {i}.", created_at=_at(i))
    recording = _Recording(any_conn)
    # The first page, then the next by the pair (created_at, id) and by the id alone (older clients).
    pages = ((None, None), (3, _at(2)), (3, None))
    for include_superseded in (False, True):
        for before_id, before_created_at in pages:
            where = MemoryFilter(
                user_id="u",
                order="created",
                include_superseded=include_superseded,
                before_created_at=before_created_at,
            )
            memory_sql.list_memories(recording, where, limit=2, before_id=before_id)  # type: ignore[arg-type]
    plans = _plans(any_conn, recording.statements)
    assert len(plans) == 6
    for sql, plan in plans.items():
        if dialect_of(any_conn).name == "sqlite":
            assert "TEMP B-TREE" not in plan, (sql, plan)
        else:
            assert "Seq Scan on memories" not in plan and "Sort" not in plan, (sql, plan)


def _add_jobs(conn: Connection) -> None:
    jobs = [  # received, finished, status, duration_ms
        (_at(2, 10), _at(1, 10), "done", 1000),
        (_at(1, 9), _at(1, 11), "failed", None),
        (_at(1, 12), None, "pending", None),
        (_at(10), _at(0, 9), "done", 3000),  # received before the window, finished today
        (_at(0, 8), _at(0, 8), "done", 5000),
    ]
    for number, (received, finished, status, duration) in enumerate(jobs):
        conn.execute(
            "INSERT INTO ingest_jobs (session_key, user_id, messages, message_count, status, received_at,"
            " due_at, finished_at, duration_ms) VALUES (?, 'u', '[]', 1, ?, ?, 0, ?, ?)",
            (f"session-{number}", status, received, finished, duration),
        )


async def test_extraction_jobs_are_counted_per_day_with_the_backlog_at_each_days_end(
    any_conn: Connection,
) -> None:
    _add_jobs(any_conn)
    started = time.perf_counter()
    overview = await build_overview(_OnOneConnection(any_conn), SearchTimeline(), "u", 7, now=NOW.timestamp())  # type: ignore[arg-type]
    assert time.perf_counter() - started < 5
    days = {day.day: day for day in overview.days}
    assert len(days) == 7
    before = days[_at(3)[:10]]
    assert (before.jobs_received, before.backlog, before.extraction_p50_ms) == (0, 1, None)  # the old one
    two_ago = days[_at(2)[:10]]
    assert (two_ago.jobs_received, two_ago.jobs_done, two_ago.jobs_failed, two_ago.backlog) == (1, 1, 0, 2)
    yesterday = days[_at(1)[:10]]
    assert (yesterday.jobs_received, yesterday.jobs_done, yesterday.jobs_failed, yesterday.backlog) == (
        2,
        0,
        1,
        2,
    )
    assert yesterday.extraction_p50_ms == yesterday.extraction_p95_ms == 1000.0
    today = days[_at(0)[:10]]
    assert (today.jobs_received, today.jobs_done, today.backlog) == (1, 1, 1)  # today: waiting now
    assert (today.extraction_p50_ms, today.extraction_p95_ms) == (3000.0, 5000.0)
    assert overview.backlog_now == 1


def test_the_job_queries_give_plain_python_numbers(any_conn: Connection) -> None:
    _add_jobs(any_conn)
    since = _at(6, 0)
    assert overview_sql.job_days(any_conn, since) == [
        (_at(2)[:10], 1, 1, 0, 0),
        (_at(1)[:10], 2, 0, 1, 2),
        (_at(0)[:10], 1, 1, 0, 2),
    ]
    assert overview_sql.extraction_percentiles_by_day(any_conn, since, (50, 95)) == [
        (_at(1)[:10], 1000.0, 1000.0),
        (_at(0)[:10], 3000.0, 5000.0),
    ]
    assert overview_sql.jobs_waiting_at(any_conn, since) == 1
    assert overview_sql.jobs_waiting_now(any_conn) == 1
    assert overview_sql.job_days(any_conn, _at(-1)) == []
    assert overview_sql.extraction_percentiles_by_day(any_conn, _at(-1), (50, 95)) == []


def _add_memories(conn: Connection) -> None:
    """Memories of ``u`` before and in a window from ``_at(3)``, of every kind, layer and method."""
    old = add_memory(conn, fact="Old.", created_at=_at(9), layer="archive", topic="b")
    add_memory(conn, fact="Newer.", created_at=_at(8), topic="b")
    conn.execute("UPDATE memories SET superseded_by = (SELECT max(id) FROM memories) WHERE id = ?", (old,))
    add_memory(conn, fact="A turn.", created_at=_at(8), kind="turn", layer="working")
    add_memory(
        conn, fact="By the LLM.", created_at=_at(2), metadata=json.dumps({"extractor": "llm"}), topic="C"
    )
    add_memory(
        conn, fact="By rules.", created_at=_at(2), metadata=json.dumps({"extractor": "rules"}), topic="C"
    )
    add_memory(conn, fact="Numbered.", created_at=_at(2, 9), metadata=json.dumps({"extractor": 7}), topic="b")
    add_memory(conn, fact="A summary.", created_at=_at(1), category="session_summary", layer="working")
    add_memory(conn, fact="Agent x's.", created_at=_at(1), agent_id="x", category="preference", topic="a")
    add_memory(
        conn,
        fact="Shared in #c.",
        created_at=_at(0),
        visibility="shared",
        source_channel="c",
        layer="archive",
    )
    add_memory(conn, fact="Another user's.", user_id="v", created_at=_at(1))


def test_memories_are_counted_alike_on_both_backends(any_conn: Connection) -> None:
    _add_memories(any_conn)
    since = _at(3, 0)
    layers, kinds = ("working", "core", "archive"), ("fact", "turn", "summary")
    assert overview_sql.live_before(any_conn, "u", since, EVERYONE, layers, kinds) == (
        {"working": 1, "core": 1, "archive": 0},
        {"fact": 1, "turn": 1, "summary": 0},
    )
    assert overview_sql.live_since_by_day(any_conn, "u", since, EVERYONE) == [
        (_at(2)[:10], "core", "fact", 3),
        (_at(1)[:10], "core", "fact", 1),
        (_at(1)[:10], "working", "summary", 1),
        (_at(0)[:10], "archive", "fact", 1),
    ]
    assert (
        overview_sql.facts_by_day_and_method(any_conn, "u", since, EVERYONE)
        == [
            (_at(2)[:10], "7", 1),  # a number in the metadata is read as text on both
            (_at(2)[:10], "llm", 1),
            (_at(2)[:10], "rules", 1),
            (_at(1)[:10], "direct", 1),
            (_at(1)[:10], "summary", 1),
            (_at(0)[:10], "direct", 1),
        ]
    )
    # Ties in code point order ("C" before "b"), whatever the PostgreSQL database's locale; the limit
    # cuts after the order.
    topics = overview_sql.live_facts_by(any_conn, "u", "topic", 10, EVERYONE)
    assert topics == [("", 2), ("C", 2), ("b", 2), ("a", 1)]
    assert overview_sql.live_facts_by(any_conn, "u", "topic", 2, EVERYONE) == topics[:2]
    assert overview_sql.live_facts_by(any_conn, "u", "category", 1, EVERYONE) == [("fact", 5)]


def test_the_audience_limits_what_is_counted(any_conn: Connection) -> None:
    _add_memories(any_conn)
    since = _at(3, 0)
    group = Audience(agent_id="y", session_kind="group", channel="c")
    assert overview_sql.live_before(any_conn, "u", since, group, ("core",), ("fact",)) == (
        {"core": 0},
        {"fact": 0},
    )
    assert overview_sql.live_since_by_day(any_conn, "u", since, group) == [
        (_at(0)[:10], "archive", "fact", 1)
    ]
    assert overview_sql.facts_by_day_and_method(any_conn, "u", since, group) == [(_at(0)[:10], "direct", 1)]
    agent = Audience(agent_id="y")
    assert ("preference", 1) not in overview_sql.live_facts_by(any_conn, "u", "category", 10, agent)
    assert ("preference", 1) in overview_sql.live_facts_by(
        any_conn, "u", "category", 10, Audience(agent_id="x")
    )
