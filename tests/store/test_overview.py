"""The dashboard's overview and its list by date at scale: their reads of ``memories`` come out of an
index (the rows of the window, or a covering index), never every row of the user into a sort; and
the extraction jobs are counted per day in SQL, with the same numbers as before."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from memory_cortex.records import MemoryFilter, NewMemory
from memory_cortex.services.overview import SearchTimeline, build_overview
from memory_cortex.store import memories as memory_sql
from memory_cortex.store.db import Database

NOW = datetime(2026, 3, 10, 15, 0, tzinfo=UTC)


@pytest.fixture
async def db(tmp_path: Path) -> AsyncIterator[Database]:
    database = Database(tmp_path / "m.db", read_connections=1)  # one reader: its statements traced
    database.open()
    yield database
    database.close()


def _at(days_ago: int, hour: int = 12) -> str:
    return f"{(NOW - timedelta(days=days_ago)).date().isoformat()}T{hour:02d}:00:00.000Z"


async def _plans(db: Database, statements: list[str]) -> dict[str, str]:
    """Each traced statement that reads ``memories`` → its query plan, one line."""

    def explain(conn: sqlite3.Connection) -> dict[str, str]:
        conn.set_trace_callback(None)
        return {
            sql: " / ".join(row[3] for row in conn.execute(f"EXPLAIN QUERY PLAN {sql}"))
            for sql in statements
            if "FROM memories" in sql
        }

    return await db.read(explain)


async def _traced(db: Database) -> list[str]:
    statements: list[str] = []
    await db.read(lambda conn: conn.set_trace_callback(statements.append))
    return statements


async def test_the_overview_reads_memories_from_an_index_not_every_row_into_a_sort(db: Database) -> None:
    await db.write(
        lambda conn: [
            memory_sql.insert(conn, NewMemory(user_id="u", fact=f"Fact {i}.", created_at=_at(i * 3)))
            for i in range(20)
        ]
    )
    statements = await _traced(db)
    await build_overview(db, SearchTimeline(), "u", 30, now=NOW.timestamp())
    plans = await _plans(db, statements)
    assert plans
    for sql, plan in plans.items():
        # Every live row of the user is counted from the covering index; a window's rows by created_at.
        assert "COVERING INDEX" in plan or "created_at>" in plan, (sql, plan)
        assert "SCAN memories" not in plan, (sql, plan)


async def test_a_page_by_date_is_read_in_index_order(db: Database) -> None:
    await db.write(
        lambda conn: [
            memory_sql.insert(conn, NewMemory(user_id="u", fact=f"Fact {i}.", created_at=_at(i)))
            for i in range(5)
        ]
    )
    statements = await _traced(db)
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
            await db.read(
                lambda conn, where=where, before_id=before_id: memory_sql.list_memories(
                    conn, where, limit=2, before_id=before_id
                )
            )
    plans = await _plans(db, statements)
    assert len(plans) == 6
    for sql, plan in plans.items():
        assert "TEMP B-TREE" not in plan, (sql, plan)


async def test_extraction_jobs_are_counted_per_day_with_the_backlog_at_each_days_end(db: Database) -> None:
    def add_jobs(conn: sqlite3.Connection) -> None:
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

    await db.write(add_jobs)
    started = time.perf_counter()
    overview = await build_overview(db, SearchTimeline(), "u", 7, now=NOW.timestamp())
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
