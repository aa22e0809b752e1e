"""Copying a whole store from one backend to the other (``memory-cortex migrate-store``).

Rows keep their ids, so links between memories, the journal and every id a client holds stay
valid. Memories are copied in id order, in batches, each batch one transaction in the target: an
interrupted copy is resumed from the target's highest id. References between memories
(``superseded_by``, ``compressed_into``) may point forward (to a newer row), so they are written in
a second pass once every row exists. The small tables follow, each row at most once.

Both connections are the store's (``Connection``); only the id high-water mark differs by backend.
"""

from __future__ import annotations

import contextlib
import random
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from .connection import dialect_of
from .db import apply_migrations, connect

# Every column of ``memories`` in table order (a test compares it with both backends' schemas; an
# export line holds the same), and the ones copied with the row: all but the references below.
TABLE_COLUMNS = (
    "id",
    "user_id",
    "topic",
    "fact",
    "importance",
    "category",
    "source_session",
    "source_channel",
    "ref",
    "metadata",
    "created_at",
    "updated_at",
    "access_count",
    "last_accessed",
    "superseded_by",
    "embedding",
    "embedding_model",
    "embedding_dim",
    "embedding_context",
    "layer",
    "layer_since",
    "compressed_into",
    "occurred_at",
    "kind",
    "agent_id",
    "visibility",
    "subject_id",
    "attribute",
    "value",
    "valid_from",
    "valid_to",
)
# Written after every row and every entity exists (they may name a newer row, or an entity).
MEMORY_REFERENCES = ("superseded_by", "compressed_into", "subject_id")
MEMORY_COLUMNS = tuple(column for column in TABLE_COLUMNS if column not in MEMORY_REFERENCES)

# The other tables, in an order that satisfies their foreign keys, with their columns.
OTHER_TABLES: dict[str, tuple[str, ...]] = {
    "entities": ("id", "user_id", "name", "name_key", "kind", "created_at"),
    "relations": (
        "id",
        "user_id",
        "subject_id",
        "predicate",
        "object_id",
        "confidence",
        "source_memory_id",
        "agent_id",
        "visibility",
        "source_channel",
        "created_at",
        "ended_at",
    ),
    "lifecycle_runs": ("id", "trigger", "dry_run", "status", "started_at", "finished_at", "report"),
    "memory_links": ("kind", "from_id", "to_id", "run_id", "created_at"),
    "ingest_jobs": (
        "id",
        "session_key",
        "user_id",
        "session_id",
        "channel",
        "messages",
        "message_count",
        "status",
        "attempts",
        "last_error",
        "received_at",
        "due_at",
        "started_at",
        "finished_at",
        "duration_ms",
        "new_messages",
        "facts_stored",
        "method",
    ),
    "session_watermarks": (
        "session_key",
        "user_id",
        "session_id",
        "message_count",
        "history_hash",
        "message_hashes",
        "updated_at",
    ),
    "session_turns": ("session_key", "user_id", "message_hashes", "updated_at"),
    "import_runs": (
        "id",
        "user_id",
        "agent_id",
        "status",
        "started_at",
        "finished_at",
        "total",
        "done",
        "result",
        "error",
    ),
}
TABLES = ("memories", *OTHER_TABLES)

# Tables whose ids come from a counter that must never hand out an id again.
ID_TABLES = ("memories", "ingest_jobs", "lifecycle_runs", "import_runs", "entities", "relations")


class StoreAddressError(ValueError):
    """A store named on the command line is neither ``sqlite:PATH`` nor a ``postgresql://`` URL."""


def describe(address: str) -> str:
    """``address`` fit for a message: a PostgreSQL password replaced by ``***``."""
    if address.startswith(("postgresql://", "postgres://")):
        from .postgres.db import redacted_url

        return redacted_url(address)
    return address


@contextlib.contextmanager
def opened(address: str, *, create: bool) -> Iterator[Any]:
    """A store connection for a whole-store copy: ``sqlite:PATH`` or ``postgresql://…``.

    ``create``: the target; it is created (SQLite) and migrated to the current schema. A source
    must exist and is only read (SQLite: a read-only connection).
    """
    if address.startswith(("postgresql://", "postgres://")):
        import psycopg

        from .postgres.connection import PgConnection, configure
        from .postgres.db import apply_migrations as apply_postgres_migrations

        with psycopg.connect(address, connect_timeout=10, autocommit=True) as raw:
            configure(raw)
            apply_postgres_migrations(raw)  # a source must be at the current schema too
            if not create:
                # One snapshot for the whole read, as SQLite's read transaction gives.
                raw.autocommit = False
                raw.read_only = True
                raw.isolation_level = psycopg.IsolationLevel.REPEATABLE_READ
            yield PgConnection(raw)
        return
    if not address.startswith("sqlite:"):
        raise StoreAddressError(f"not a store address: {describe(address)!r} (sqlite:PATH or postgresql://…)")
    path = Path(address.removeprefix("sqlite:")).expanduser()
    if not create and not path.is_file():
        raise StoreAddressError(f"no SQLite database at {path}")
    if create:
        path.parent.mkdir(parents=True, exist_ok=True)
    conn = connect(path, read_only=not create, busy_timeout_ms=5000)
    try:
        if create:
            apply_migrations(conn)
        yield conn
    finally:
        conn.close()


@contextlib.contextmanager
def transaction(conn: Any) -> Iterator[None]:
    """One transaction on either backend: committed at the end of the block, rolled back on error."""
    if dialect_of(conn).name == "postgres":
        with conn.raw.transaction():
            yield
        return
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


def counts(conn: Any) -> dict[str, int]:
    """Rows per table."""
    return {table: int(conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0]) for table in TABLES}


def max_memory_id(conn: Any) -> int:
    return int(conn.execute("SELECT coalesce(max(id), 0) FROM memories").fetchone()[0])


def memory_batch(conn: Any, after_id: int, limit: int) -> list[tuple[Any, ...]]:
    """The next ``limit`` memories after ``after_id``, as tuples in :data:`MEMORY_COLUMNS` order."""
    rows = conn.execute(
        f"SELECT {', '.join(MEMORY_COLUMNS)} FROM memories WHERE id > ? ORDER BY id LIMIT ?",
        (after_id, limit),
    ).fetchall()
    return [_plain(row) for row in rows]


def insert_memories(conn: Any, rows: Sequence[tuple[Any, ...]]) -> None:
    """Insert rows read by :func:`memory_batch` (their references come later: :func:`copy_references`)."""
    marks = ", ".join("?" for _ in MEMORY_COLUMNS)
    conn.executemany(f"INSERT INTO memories ({', '.join(MEMORY_COLUMNS)}) VALUES ({marks})", rows)


def same_memory(source: Any, target: Any, memory_id: int) -> bool:
    """Whether both stores hold the same row under ``memory_id`` (a resumed copy, not a stranger)."""
    sql = "SELECT user_id, fact, created_at FROM memories WHERE id = ?"
    mine, theirs = source.execute(sql, (memory_id,)).fetchone(), target.execute(sql, (memory_id,)).fetchone()
    return mine is not None and theirs is not None and tuple(mine) == tuple(theirs)


def copy_references(source: Any, target: Any, after_id: int, limit: int) -> tuple[int, int]:
    """Copy the references (:data:`MEMORY_REFERENCES`) of the next ``limit`` rows that have one
    (the entities must be copied first); returns (rows updated, last id seen: 0 when none were left)."""
    rows = source.execute(
        f"SELECT id, {', '.join(MEMORY_REFERENCES)} FROM memories WHERE id > ?"
        f" AND ({' OR '.join(f'{column} IS NOT NULL' for column in MEMORY_REFERENCES)}) ORDER BY id LIMIT ?",
        (after_id, limit),
    ).fetchall()
    if not rows:
        return 0, 0
    target.executemany(
        f"UPDATE memories SET {', '.join(f'{column} = ?' for column in MEMORY_REFERENCES)} WHERE id = ?",
        [(*row[1:], row[0]) for row in rows],
    )
    return len(rows), int(rows[-1][0])


def copy_table(source: Any, target: Any, table: str) -> int:
    """Copy every row of a small table that the target lacks (re-running copies nothing twice)."""
    columns = OTHER_TABLES[table]
    rows = [_plain(row) for row in source.execute(f"SELECT {', '.join(columns)} FROM {table}").fetchall()]
    if not rows:
        return 0
    marks = ", ".join("?" for _ in columns)
    result = target.executemany(
        f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({marks}) ON CONFLICT DO NOTHING", rows
    )
    return max(int(result.rowcount), 0)


def id_high_water(conn: Any, table: str) -> int:
    """The highest id the table's counter has handed out (deleted rows included)."""
    assert table in ID_TABLES
    if dialect_of(conn).name == "sqlite":
        row = conn.execute("SELECT seq FROM sqlite_sequence WHERE name = ?", (table,)).fetchone()
        counter = int(row[0]) if row is not None else 0
    else:
        row = conn.execute(f"SELECT last_value, is_called FROM {_sequence(conn, table)}").fetchone()
        counter = int(row[0]) if row[1] else 0
    return max(counter, int(conn.execute(f"SELECT coalesce(max(id), 0) FROM {table}").fetchone()[0]))


def set_id_high_water(conn: Any, table: str, value: int) -> None:
    """Move the table's counter to at least ``value``: the next id is above it."""
    assert table in ID_TABLES
    if value <= 0:
        return
    if dialect_of(conn).name == "sqlite":
        # Tables without AUTOINCREMENT have no counter: max(rowid) + 1 is theirs.
        if conn.execute("SELECT 1 FROM sqlite_sequence WHERE name = ?", (table,)).fetchone() is None:
            if table == "memories":
                conn.execute("INSERT INTO sqlite_sequence (name, seq) VALUES (?, ?)", (table, value))
            return
        conn.execute("UPDATE sqlite_sequence SET seq = max(seq, ?) WHERE name = ?", (value, table))
        return
    conn.execute(
        f"SELECT setval('{_sequence(conn, table)}', ?, true)", (max(value, id_high_water(conn, table)),)
    )


def refresh_statistics(conn: Any) -> None:
    """Let the planner see the copied rows at once. Why: PostgreSQL's keyword search asks the
    planner how common each word is (``postgres.search``); until autovacuum analyses the table,
    a freshly filled store would have no word statistics."""
    conn.execute("ANALYZE memories")


def _sequence(conn: Any, table: str) -> str:
    row = conn.execute("SELECT pg_get_serial_sequence(?, 'id')", (table,)).fetchone()
    return str(row[0])


def sample_ids(conn: Any, count: int, seed: int = 0) -> list[int]:
    """Up to ``count`` ids spread over the memories (for spot checks of the copy)."""
    ids = [int(row[0]) for row in conn.execute("SELECT id FROM memories ORDER BY id").fetchall()]
    return sorted(random.Random(seed).sample(ids, min(count, len(ids))))


def sample_rows(conn: Any, ids: Sequence[int]) -> dict[int, tuple[Any, ...]]:
    """``id → (user_id, fact, embedding)`` of these memories."""
    found = {}
    for memory_id in ids:
        row = conn.execute(
            "SELECT user_id, fact, embedding FROM memories WHERE id = ?", (memory_id,)
        ).fetchone()
        if row is not None:
            found[memory_id] = (row[0], row[1], None if row[2] is None else bytes(row[2]))
    return found


def vectors_missing(conn: Any) -> int:
    """PostgreSQL: rows whose BLOB did not become a pgvector value (0 when the copy is sound)."""
    if dialect_of(conn).name != "postgres":
        return 0
    return int(
        conn.execute(
            "SELECT count(*) FROM memories WHERE embedding IS NOT NULL AND embedding_vector IS NULL"
        ).fetchone()[0]
    )


def _plain(row: Any) -> tuple[Any, ...]:
    """A row as a tuple of plain values (PostgreSQL's bytea may arrive as a memoryview)."""
    return tuple(bytes(value) if isinstance(value, memoryview) else value for value in row)
