"""The time a memory is about (migration 006): occurred_at, else created_at, and its index."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from memory_cortex.records import NewMemory
from memory_cortex.store import memories as memory_sql
from memory_cortex.store import retrieval as retrieval_sql
from memory_cortex.store.db import apply_migrations


@pytest.fixture
def conn(tmp_path: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(tmp_path / "times.db", isolation_level=None)
    conn.row_factory = sqlite3.Row
    apply_migrations(conn)
    return conn


def add(conn: sqlite3.Connection, user: str, created: str, occurred: str | None = None, **extra: str) -> int:
    return memory_sql.insert(
        conn,
        NewMemory(user_id=user, fact=f"{user} {created}", created_at=created, occurred_at=occurred, **extra),
    )


def test_a_memory_is_about_its_occurred_at_else_its_created_at(conn: sqlite3.Connection) -> None:
    plain = add(conn, "u", "2024-02-01T10:00:00.000Z")
    dated = add(conn, "u", "2024-02-01T10:00:00.000Z", "2023-05-08T13:56:00.000Z")
    records = memory_sql.get_many(conn, [plain, dated])
    assert records[plain].about_time == "2024-02-01T10:00:00.000Z"
    assert records[dated].about_time == "2023-05-08T13:56:00.000Z"
    assert retrieval_sql.about_times(conn, [plain, dated, 999]) == {
        plain: "2024-02-01T10:00:00.000Z",
        dated: "2023-05-08T13:56:00.000Z",
    }


def test_newest_about_time_is_per_user_and_skips_superseded_rows(conn: sqlite3.Connection) -> None:
    assert retrieval_sql.newest_about_time(conn, "u") is None
    add(conn, "u", "2023-01-01T00:00:00.000Z")
    newest = add(conn, "u", "2023-01-02T00:00:00.000Z", "2023-09-10T00:00:00.000Z")
    add(conn, "other", "2025-01-01T00:00:00.000Z")
    assert retrieval_sql.newest_about_time(conn, "u") == "2023-09-10T00:00:00.000Z"
    replacement = add(conn, "u", "2023-01-03T00:00:00.000Z")
    memory_sql.update(conn, newest, {"superseded_by": replacement})
    assert retrieval_sql.newest_about_time(conn, "u") == "2023-01-03T00:00:00.000Z"


def test_in_time_range_is_half_open_per_user_and_per_layer(conn: sqlite3.Connection) -> None:
    first = add(conn, "u", "2023-05-01T00:00:00.000Z")
    last = add(conn, "u", "2023-05-31T23:59:59.999Z")
    add(conn, "u", "2023-06-01T00:00:00.000Z")  # the end is excluded
    add(conn, "other", "2023-05-10T00:00:00.000Z")
    archived = add(conn, "u", "2023-05-15T00:00:00.000Z", layer="archive")
    may = ("2023-05-01T00:00:00.000Z", "2023-06-01T00:00:00.000Z")
    assert retrieval_sql.in_time_range(conn, "u", *may, 10) == [last, archived, first]  # newest first
    assert retrieval_sql.in_time_range(conn, "u", *may, 10, layers=("core", "working")) == [last, first]
    assert retrieval_sql.in_time_range(conn, "u", *may, 1) == [last]


def test_the_time_index_serves_the_range_and_the_newest_time(conn: sqlite3.Connection) -> None:
    plans = [
        " ".join(row[3] for row in conn.execute(f"EXPLAIN QUERY PLAN {sql}", params))
        for sql, params in (
            (
                f"SELECT id FROM memories WHERE user_id = ? AND {retrieval_sql.ABOUT_TIME_SQL} >= ?"
                f" AND {retrieval_sql.ABOUT_TIME_SQL} < ?",
                ("u", "a", "b"),
            ),
            (
                f"SELECT {retrieval_sql.ABOUT_TIME_SQL} FROM memories WHERE user_id = ?"
                f" ORDER BY {retrieval_sql.ABOUT_TIME_SQL} DESC LIMIT 1",
                ("u",),
            ),
        )
    ]
    assert all("memories_by_time" in plan for plan in plans), plans
