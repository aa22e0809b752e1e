"""The Database: migrations, pragmas, the single writer and read-only readers."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from middleware.store import memories as memory_sql
from middleware.store.db import Database, apply_migrations, list_migrations
from middleware.store.memories import NewMemory


@pytest.fixture
async def db(tmp_path: Path):  # type: ignore[no-untyped-def]
    database = Database(tmp_path / "sub" / "m.db")
    database.open()
    yield database
    database.close()


def test_migrations_are_recorded_and_idempotent(tmp_path: Path) -> None:
    conn = sqlite3.connect(tmp_path / "m.db", isolation_level=None)
    first = apply_migrations(conn)
    assert first == [name for _, name, _ in list_migrations()]
    assert apply_migrations(conn) == []
    versions = [row[0] for row in conn.execute("SELECT version FROM schema_migrations ORDER BY version")]
    assert versions == [v for v, _, _ in list_migrations()]


async def test_wal_and_synchronous_normal(db: Database) -> None:
    def pragmas(conn: sqlite3.Connection) -> tuple[str, int]:
        return conn.execute("PRAGMA journal_mode").fetchone()[0], conn.execute(
            "PRAGMA synchronous"
        ).fetchone()[0]

    assert await db.write(pragmas) == ("wal", 1)  # 1 = NORMAL


async def test_synchronous_full_is_set_on_the_writer_and_nothing_weaker_is_accepted(tmp_path: Path) -> None:
    database = Database(tmp_path / "full.db", synchronous="FULL")
    database.open()
    try:
        level = await database.write(lambda conn: conn.execute("PRAGMA synchronous").fetchone()[0])
        assert level == 2  # 2 = FULL: the WAL is fsynced at every commit
    finally:
        database.close()
    with pytest.raises(ValueError, match="synchronous"):
        Database(tmp_path / "bad.db", synchronous="OFF").open()


async def test_failed_write_rolls_back_everything(db: Database) -> None:
    def half_then_fail(conn: sqlite3.Connection) -> None:
        memory_sql.insert(conn, NewMemory(user_id="u", fact="first"))
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError):
        await db.write(half_then_fail)
    assert await db.read(lambda conn: memory_sql.counts(conn, "m").total) == 0


async def test_readers_cannot_write(db: Database) -> None:
    with pytest.raises(sqlite3.OperationalError, match="readonly"):
        await db.read(lambda conn: memory_sql.insert(conn, NewMemory(user_id="u", fact="x")))


async def test_fts_follows_inserts_updates_and_deletes(db: Database) -> None:
    from middleware.store.fts import build_query

    memory_id = await db.write(
        lambda conn: memory_sql.insert(conn, NewMemory(user_id="u", fact="alpha bravo"))
    )

    async def hits(text: str) -> list[int]:
        return list(await db.read(lambda conn: memory_sql.fts_candidates(conn, "u", build_query(text), 10)))

    assert await hits("bravo") == [memory_id]
    await db.write(lambda conn: memory_sql.update(conn, memory_id, {"fact": "charlie delta"}))
    assert await hits("bravo") == []
    assert await hits("delta") == [memory_id]
    # A change that is not text does not need the index, and keeps it right.
    await db.write(lambda conn: memory_sql.update(conn, memory_id, {"importance": 9}))
    assert await hits("delta") == [memory_id]
    await db.write(lambda conn: memory_sql.delete(conn, memory_id))
    assert await hits("delta") == []


async def test_closed_database_refuses_work(tmp_path: Path) -> None:
    from middleware.errors import StoreUnavailable

    database = Database(tmp_path / "m.db")
    with pytest.raises(StoreUnavailable):
        await database.read(lambda conn: None)


async def test_the_writer_leaves_checkpoints_to_the_checkpoint_thread(db: Database) -> None:
    for i in range(50):
        await db.write(
            lambda conn, i=i: memory_sql.insert(conn, NewMemory(user_id="u", fact="x" * 5000 + str(i)))
        )
    assert await db.write(lambda conn: conn.execute("PRAGMA wal_autocheckpoint").fetchone()[0]) == 0
    busy, frames, checkpointed = await db.checkpoint()
    assert busy == 0 and frames > 0 and checkpointed == frames
