"""The Database: migrations, pragmas, the single writer and read-only readers."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from memory_cortex.records import NewMemory
from memory_cortex.store import embeddings as embedding_sql
from memory_cortex.store import memories as memory_sql
from memory_cortex.store import retrieval as retrieval_sql
from memory_cortex.store.db import Database, apply_migrations, list_migrations


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


async def test_what_the_writer_deletes_is_overwritten_not_left_in_free_pages(db: Database) -> None:
    """secure_delete on the writer: a deleted row's bytes leave the file's pages (the B-tree's; FTS5
    drops a deleted document's words from its index at its next merge)."""
    secret_ish = "Sam told the story of the lighthouse keeper named Oberon Quill."

    def insert(conn: sqlite3.Connection) -> int:
        return memory_sql.insert(conn, NewMemory(user_id="sam", fact=secret_ish))

    memory_id = await db.write(insert)
    assert await db.write(lambda conn: conn.execute("PRAGMA secure_delete").fetchone()[0]) == 1
    await db.write(lambda conn: conn.execute("DELETE FROM memories WHERE id = ?", (memory_id,)))
    for index in ("memories_fts", "memories_trigram"):
        await db.write(
            lambda conn, index=index: conn.execute(f"INSERT INTO {index} ({index}) VALUES ('optimize')")
        )
    checkpointer = sqlite3.connect(db.path)  # the WAL's old frames still hold the row until then
    try:
        assert checkpointer.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0] == 0
    finally:
        checkpointer.close()
    assert b"Oberon Quill" not in db.path.read_bytes()


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
    assert await db.read(lambda conn: embedding_sql.counts(conn, "m").total) == 0


async def test_readers_cannot_write(db: Database) -> None:
    with pytest.raises(sqlite3.OperationalError, match="readonly"):
        await db.read(lambda conn: memory_sql.insert(conn, NewMemory(user_id="u", fact="x")))


async def test_fts_follows_inserts_updates_and_deletes(db: Database) -> None:
    from memory_cortex.store.fts import build_query

    memory_id = await db.write(
        lambda conn: memory_sql.insert(conn, NewMemory(user_id="u", fact="alpha bravo"))
    )

    async def hits(text: str) -> list[int]:
        return list(
            await db.read(lambda conn: retrieval_sql.fts_candidates(conn, "u", build_query(text), 10))
        )

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
    from memory_cortex.errors import StoreUnavailable

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


def test_the_id_rebuild_keeps_every_row_link_vector_and_index(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Migration 008 (AUTOINCREMENT by a table rebuild) on a store written by the migrations before it."""
    from memory_cortex.store import db as db_module

    all_migrations = list_migrations()
    before = [m for m in all_migrations if m[0] < 8]
    path = tmp_path / "old.db"
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA foreign_keys = ON")
    monkeypatch.setattr(db_module, "list_migrations", lambda: before)
    apply_migrations(conn)
    ids = [
        conn.execute(
            "INSERT INTO memories (user_id, fact, embedding, embedding_model, embedding_dim, layer)"
            " VALUES ('u', ?, ?, 'm', 2, 'working')",
            (f"Fact number {i} about Lisbon.", bytes([i]) * 8),
        ).lastrowid
        for i in range(1, 6)
    ]
    conn.execute("UPDATE memories SET superseded_by = ? WHERE id = ?", (ids[1], ids[0]))
    conn.execute("INSERT INTO memory_links (kind, from_id, to_id) VALUES ('merged', ?, ?)", (ids[2], ids[3]))
    conn.execute("DELETE FROM memories WHERE id = ?", (ids[4],))  # the newest row: its id was free again
    cursor = conn.execute("SELECT * FROM memories ORDER BY id")
    rows_before, columns = cursor.fetchall(), ", ".join(d[0] for d in cursor.description)

    monkeypatch.setattr(db_module, "list_migrations", lambda: [m for m in all_migrations if m[0] <= 8])
    assert apply_migrations(conn)[0] == "008_ids_never_reused"
    assert conn.execute("PRAGMA foreign_keys").fetchone()[0] == 1  # switched back on
    assert conn.execute(f"SELECT {columns} FROM memories ORDER BY id").fetchall() == rows_before
    assert conn.execute("SELECT kind, from_id, to_id FROM memory_links").fetchall() == [
        ("merged", ids[2], ids[3])
    ]
    hits = conn.execute(
        "SELECT rowid FROM memories_fts WHERE memories_fts MATCH 'lisbon' ORDER BY rowid"
    ).fetchall()
    assert [h[0] for h in hits] == ids[:4]
    indexes = {
        row[0]
        for row in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'memories'"
        )
    }
    assert {"memories_user_live", "memories_by_time", "memories_user_turns", "memories_user_layer"} <= indexes
    assert (
        "AUTOINCREMENT" in conn.execute("SELECT sql FROM sqlite_master WHERE name = 'memories'").fetchone()[0]
    )
    # The migrations after 008 (what the current code writes with), then the rebuilt table at work.
    monkeypatch.setattr(db_module, "list_migrations", lambda: all_migrations)
    apply_migrations(conn)
    # The deleted newest id stays deleted: the next memory gets a new one, and deleting it frees nothing.
    newest = memory_sql.insert(conn, NewMemory(user_id="u", fact="After the rebuild."))
    conn.execute("DELETE FROM memories WHERE id = ?", (newest,))
    again = memory_sql.insert(conn, NewMemory(user_id="u", fact="And once more."))
    assert again > newest > ids[3]
    # Triggers work on the rebuilt table: deletes and edits reach both FTS indexes.
    conn.execute("UPDATE memories SET fact = 'Now about Porto.' WHERE id = ?", (ids[0],))
    assert conn.execute(
        "SELECT rowid FROM memories_trigram WHERE memories_trigram MATCH 'Porto'"
    ).fetchall() == [(ids[0],)]
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    conn.execute("INSERT INTO memories_fts (memories_fts) VALUES ('integrity-check')")
    # Deleting a memory still cascades into its links (the keys are on again).
    conn.execute("DELETE FROM memories WHERE id = ?", (ids[2],))
    assert conn.execute("SELECT count(*) FROM memory_links").fetchone()[0] == 0


def test_the_database_is_private_whatever_the_umask(tmp_path: Path) -> None:
    import os
    import stat

    previous = os.umask(0o022)
    try:
        database = Database(tmp_path / "new" / "folder" / "m.db")
        database.open()
        database.close()
    finally:
        os.umask(previous)
    mode = lambda p: stat.S_IMODE(p.stat().st_mode)  # noqa: E731
    assert mode(tmp_path / "new") == 0o700 and mode(tmp_path / "new" / "folder") == 0o700
    for name in ("m.db", "m.db-wal", "m.db-shm"):
        path = tmp_path / "new" / "folder" / name
        if path.exists():
            assert mode(path) == 0o600, name
    assert mode(tmp_path / "new" / "folder" / "m.db") == 0o600


def test_an_older_world_readable_database_is_made_private(tmp_path: Path) -> None:
    import os
    import stat

    path = tmp_path / "m.db"
    database = Database(path)
    database.open()
    database.close()
    os.chmod(path, 0o644)
    os.chmod(tmp_path, 0o755)
    database = Database(path)
    database.open()
    database.close()
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(tmp_path.stat().st_mode) == 0o755  # a folder it did not create is left alone
