"""The connection-level SQL of export and import on SQLite and on PostgreSQL: every column comes out as
the same Python values, rows go back in with their ids, timestamps and vectors, the id sequence is
moved past kept ids, and the duplicate lookup and the write transaction behave alike."""

from __future__ import annotations

import json
import random
import string
from typing import Any

import numpy as np
import pytest

from memory_cortex.store import portability as portability_sql
from memory_cortex.store.connection import Connection, dialect_of
from memory_cortex.store.portability import EXPORT_COLUMNS
from memory_cortex.vectormath import to_blob
from tests.store.rows import add_memory

BLOB = to_blob(np.array([0.25, -1.5, 3e-41, 65504.0], dtype=np.float32))


def _exported(**values: Any) -> dict[str, Any]:
    """A row as an import hands it to :func:`insert_exact` (metadata a dict, embedding bytes)."""
    row: dict[str, Any] = {
        "id": 7,
        "user_id": "ana",
        "topic": "commute",
        "fact": "Ana rides a green Bianchi.",
        "importance": 7,
        "category": "habit",
        "source_session": "s-1",
        "source_channel": "telegram",
        "ref": "msg:1",
        "metadata": {"tags": ["bike", "café"], "n": None},
        "created_at": "2024-03-01T08:00:00.000Z",
        "updated_at": "2024-03-02T08:00:00.000Z",
        "access_count": 3,
        "last_accessed": "2024-03-03T08:00:00.000Z",
        "superseded_by": None,
        "embedding": BLOB,
        "embedding_model": "m",
        "embedding_dim": 4,
        "embedding_context": 2,
        "layer": "archive",
        "layer_since": "2024-03-04T08:00:00.000Z",
        "compressed_into": None,
        "occurred_at": "2024-02-01T00:00:00.000Z",
        "kind": "fact",
        "agent_id": "a",
        "visibility": "shared",
        "attribute": "bike",
        "value": "green Bianchi",
        "valid_from": "2024-02-01T09:30:00.000Z",
        "valid_to": None,
        "subject": "Marta",
        "subject_kind": "person",
    }
    row.update(values)
    return row


def _as_stored(row: dict[str, Any]) -> dict[str, Any]:
    """What the export gives back for an imported ``row``: metadata as its JSON text."""
    return {**row, "metadata": json.dumps(row["metadata"], ensure_ascii=False)}


def test_the_export_covers_every_stored_column(any_conn: Connection) -> None:
    """A column added to the schema cannot be left out of exports (generated columns are derived)."""
    if dialect_of(any_conn).name == "sqlite":
        columns = tuple(row[1] for row in any_conn.execute("PRAGMA table_info(memories)"))
    else:
        columns = tuple(
            row[0]
            for row in any_conn.execute(
                "SELECT column_name FROM information_schema.columns WHERE table_name = 'memories'"
                " AND is_generated = 'NEVER' ORDER BY ordinal_position"
            )
        )
    # The entity a fact is about is exported by name (an id means nothing in another store).
    named = tuple(
        "subject_id" if column == "subject" else column
        for column in EXPORT_COLUMNS
        if column != "subject_kind"
    )
    assert sorted(columns) == sorted(named)


def test_an_imported_row_keeps_every_value_and_exports_the_same(any_conn: Connection) -> None:
    row = _exported()
    with portability_sql.write_transaction(any_conn):
        assert portability_sql.insert_exact(any_conn, row, keep_id=True) == 7
    [exported] = portability_sql.iter_export_rows(any_conn, None, with_embeddings=True)
    assert list(exported) == list(EXPORT_COLUMNS)
    assert exported == _as_stored(row)
    assert type(exported["embedding"]) is bytes
    [bare] = portability_sql.iter_export_rows(any_conn, None, with_embeddings=False)
    assert (bare["embedding"], bare["embedding_model"], bare["embedding_dim"]) == (None, None, None)
    assert bare == {**exported, "embedding": None, "embedding_model": None, "embedding_dim": None}
    if dialect_of(any_conn).name == "postgres":
        text = any_conn.execute("SELECT embedding_vector::text FROM memories WHERE id = 7").fetchone()[0]
        values = np.array([float(value) for value in text.strip("[]").split(",")], dtype=np.float32)
        assert values.tobytes() == BLOB


def test_links_and_a_missing_layer_since_are_filled_in(any_conn: Connection) -> None:
    with portability_sql.write_transaction(any_conn):
        older = portability_sql.insert_exact(
            any_conn, _exported(id=1, superseded_by=2, compressed_into=3), keep_id=True
        )
        newer = portability_sql.insert_exact(
            any_conn, _exported(id=2, fact="Newer.", layer_since=None), keep_id=True
        )
        summary = portability_sql.insert_exact(any_conn, _exported(id=3, fact="Summary."), keep_id=True)
        stored = {
            row["id"]: row for row in portability_sql.iter_export_rows(any_conn, None, with_embeddings=False)
        }
        assert (stored[1]["superseded_by"], stored[1]["compressed_into"]) == (None, None)  # set afterwards
        portability_sql.set_superseded_by(any_conn, older, newer)
        portability_sql.set_compressed_into(any_conn, older, summary)
    stored = {
        row["id"]: row for row in portability_sql.iter_export_rows(any_conn, None, with_embeddings=False)
    }
    assert (stored[1]["superseded_by"], stored[1]["compressed_into"]) == (2, 3)
    assert stored[1]["updated_at"] == "2024-03-02T08:00:00.000Z"  # links leave the row as exported
    now = any_conn.execute(f"SELECT {dialect_of(any_conn).now}").fetchone()[0]
    assert stored[2]["layer_since"][:10] == now[:10] and stored[2]["layer_since"].endswith("Z")
    assert stored[3]["layer_since"] == "2024-03-04T08:00:00.000Z"


def test_after_kept_ids_the_next_memory_gets_a_new_one(any_conn: Connection) -> None:
    """PostgreSQL's identity sequence does not see explicit ids: the import moves it past them."""
    with portability_sql.write_transaction(any_conn):
        for memory_id in (5, 40, 12):
            portability_sql.insert_exact(
                any_conn, _exported(id=memory_id, fact=f"Fact {memory_id}."), keep_id=True
            )
    assert add_memory(any_conn, fact="Written by the daemon.") == 41
    with portability_sql.write_transaction(any_conn):
        assert portability_sql.insert_exact(any_conn, _exported(fact="Merged."), keep_id=False) == 42
    assert portability_sql.memory_count(any_conn) == 5


def test_the_export_streams_every_row_by_id_in_pages(
    any_conn: Connection, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(portability_sql, "_EXPORT_PAGE_ROWS", 3)  # PostgreSQL pages: several, one partial
    ids = [add_memory(any_conn, user_id="ab"[i % 2], fact=f"Fact {i}.") for i in range(8)]
    assert [
        row["id"] for row in portability_sql.iter_export_rows(any_conn, None, with_embeddings=False)
    ] == ids
    assert [
        row["id"] for row in portability_sql.iter_export_rows(any_conn, "b", with_embeddings=False)
    ] == ids[1::2]
    assert list(portability_sql.iter_export_rows(any_conn, "nobody", with_embeddings=True)) == []
    assert portability_sql.export_count(any_conn, None) == 8
    assert portability_sql.export_count(any_conn, "a") == 4
    assert portability_sql.export_count(any_conn, "nobody") == 0


def test_an_exception_rolls_the_whole_import_back(any_conn: Connection) -> None:
    with pytest.raises(RuntimeError), portability_sql.write_transaction(any_conn):
        portability_sql.insert_exact(any_conn, _exported(), keep_id=True)
        raise RuntimeError("interrupted")
    assert portability_sql.memory_count(any_conn) == 0
    assert not any_conn.in_transaction  # type: ignore[attr-defined]
    with pytest.raises(Exception), portability_sql.write_transaction(any_conn):  # noqa: B017 - each backend its own
        portability_sql.insert_exact(any_conn, _exported(), keep_id=True)
        portability_sql.insert_exact(any_conn, _exported(fact="Same id."), keep_id=True)
    assert portability_sql.memory_count(any_conn) == 0
    assert not any_conn.in_transaction  # type: ignore[attr-defined]


def test_the_write_transaction_holds_the_write_lock_of_memories(any_conn: Connection) -> None:
    with portability_sql.write_transaction(any_conn):
        assert any_conn.in_transaction  # type: ignore[attr-defined]
        if dialect_of(any_conn).name == "postgres":
            modes = {
                row[0]
                for row in any_conn.execute(
                    "SELECT mode FROM pg_locks WHERE relation = 'memories'::regclass AND pid = pg_backend_pid()"
                )
            }
            assert "ShareRowExclusiveLock" in modes
    assert not any_conn.in_transaction  # type: ignore[attr-defined]


def test_the_duplicate_lookup_is_a_snapshot_of_the_oldest_ids(any_conn: Connection) -> None:
    first = add_memory(any_conn, fact="Twice.")
    add_memory(any_conn, fact="Twice.")
    other_user = add_memory(any_conn, user_id="v", fact="Twice.")
    # Longer than a B-tree key may be on PostgreSQL, and incompressible.
    long_fact = "".join(random.Random(1).choices(string.ascii_letters, k=12_000))
    long_id = add_memory(any_conn, fact=long_fact)
    with portability_sql.write_transaction(any_conn):
        portability_sql.start_duplicate_lookup(any_conn)
        added = portability_sql.insert_exact(
            any_conn, _exported(user_id="u", fact="Arrived now."), keep_id=False
        )
        assert portability_sql.existing_memory_id(any_conn, "u", "Twice.") == first
        assert portability_sql.existing_memory_id(any_conn, "v", "Twice.") == other_user
        assert portability_sql.existing_memory_id(any_conn, "u", long_fact) == long_id
        assert portability_sql.existing_memory_id(any_conn, "u", "twice.") is None
        assert (
            portability_sql.existing_memory_id(any_conn, "u", "Arrived now.") is None
        )  # not in the snapshot
        portability_sql.stop_duplicate_lookup(any_conn)
        portability_sql.start_duplicate_lookup(any_conn)  # a second start sees the new row
        assert portability_sql.existing_memory_id(any_conn, "u", "Arrived now.") == added
        portability_sql.stop_duplicate_lookup(any_conn)
    with pytest.raises(Exception):  # noqa: B017 - sqlite3 and psycopg each say it their way
        portability_sql.existing_memory_id(any_conn, "u", "Twice.")


def test_an_export_imports_into_an_empty_store_as_it_was(any_conn: Connection) -> None:
    """Out, wiped, back in through the import's functions: the same rows, and the links restored."""
    since = "2026-03-02T00:00:00.000Z"
    a = add_memory(
        any_conn, fact="Old.", embedding=BLOB, embedding_model="m", embedding_dim=4, layer_since=since
    )
    b = add_memory(any_conn, fact="New.", metadata=json.dumps({"extractor": "llm"}), layer_since=since)
    any_conn.execute("UPDATE memories SET superseded_by = ?, compressed_into = ? WHERE id = ?", (b, b, a))
    before = list(portability_sql.iter_export_rows(any_conn, None, with_embeddings=True))
    any_conn.execute("UPDATE memories SET superseded_by = NULL, compressed_into = NULL")
    any_conn.execute("DELETE FROM memories")
    with portability_sql.write_transaction(any_conn):
        assert portability_sql.memory_count(any_conn) == 0
        for row in before:
            portability_sql.insert_exact(
                any_conn, {**row, "metadata": json.loads(row["metadata"])}, keep_id=True
            )
        portability_sql.set_superseded_by(any_conn, a, b)
        portability_sql.set_compressed_into(any_conn, a, b)
    assert list(portability_sql.iter_export_rows(any_conn, None, with_embeddings=True)) == before


def test_an_import_keeping_ids_never_hands_out_a_spent_id_again(any_conn: Connection) -> None:
    """Ids 1-5 were handed out and deleted; importing id 2 must not move the counter back (the
    next memory gets 6, as SQLite's AUTOINCREMENT gives)."""
    for n in range(5):
        add_memory(any_conn, fact=f"spent {n}")
    any_conn.execute("DELETE FROM memories")
    portability_sql.insert_exact(any_conn, _exported(id=2), keep_id=True)
    assert add_memory(any_conn, fact="after the import") == 6
