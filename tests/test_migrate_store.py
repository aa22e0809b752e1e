"""``memory-cortex migrate-store``: SQLite → PostgreSQL → SQLite on real databases, every id and
byte kept, resumed after an interruption, a stranger's target refused, no password printed."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from memory_cortex.__main__ import main
from memory_cortex.records import NewMemory
from memory_cortex.services.store_migration import StoreMigrationRefused, migrate_store
from memory_cortex.store import memories as memory_sql
from memory_cortex.store import transfer
from memory_cortex.store.db import apply_migrations, connect

DIM = 8


def filled_sqlite(path: Path, memories: int = 25) -> None:
    """A store with what a daemon leaves: vectors, a supersession pointing forward, a summary link,
    a lifecycle run, journal rows and watermarks, and a deleted newest id."""
    conn = connect(path, read_only=False, busy_timeout_ms=1000)
    apply_migrations(conn)
    vectors = np.random.default_rng(7).standard_normal((memories, DIM)).astype("<f4")
    ids = [
        memory_sql.insert(
            conn,
            NewMemory(
                user_id="alice" if i % 3 else "bob",
                fact=f"Fact number {i}: Zoë likes tea ☕",
                topic="habits",
                metadata={"n": i},
                embedding=vectors[i].tobytes() if i % 5 else None,
                embedding_model="m" if i % 5 else None,
                embedding_dim=DIM if i % 5 else None,
                layer=("core", "working", "archive")[i % 3],
            ),
        )
        for i in range(memories)
    ]
    conn.execute("UPDATE memories SET superseded_by = ? WHERE id = ?", (ids[-2], ids[0]))  # points forward
    conn.execute("UPDATE memories SET compressed_into = ? WHERE id = ?", (ids[-3], ids[1]))
    run_id = conn.execute(
        "INSERT INTO lifecycle_runs (trigger, status, report) VALUES ('manual', 'done', '{\"merged\": 1}') RETURNING id"
    ).fetchone()[0]
    conn.execute(
        "INSERT INTO memory_links (kind, from_id, to_id, run_id) VALUES ('summarised', ?, ?, ?)",
        (ids[1], ids[-3], run_id),
    )
    conn.execute(
        "INSERT INTO ingest_jobs (session_key, user_id, session_id, messages, message_count, due_at)"
        " VALUES ('alice|s1', 'alice', 's1', '{\"messages\": []}', 0, 1.5)"
    )
    conn.execute(
        "INSERT INTO session_watermarks (session_key, user_id, session_id, message_count, history_hash,"
        " message_hashes) VALUES ('alice|s1', 'alice', 's1', 2, 'h', '[\"a\", \"b\"]')"
    )
    conn.execute(
        "INSERT INTO session_turns (session_key, user_id, message_hashes) VALUES ('alice|s1', 'alice', '[]')"
    )
    conn.execute(
        "INSERT INTO import_runs (user_id, status, started_at, finished_at, total, done, result)"
        " VALUES ('alice', 'done', '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:05.000Z', 3, 3, '{\"added\": 3}')"
    )
    conn.execute("DELETE FROM memories WHERE id = ?", (ids[-1],))  # its id is never handed out again
    conn.close()


def rows(conn: Any, table: str, order: str) -> list[tuple[Any, ...]]:
    columns = (
        transfer.MEMORY_COLUMNS + transfer.MEMORY_REFERENCES
        if table == "memories"
        else transfer.OTHER_TABLES[table]
    )
    return [
        tuple(bytes(v) if isinstance(v, memoryview) else v for v in row)
        for row in conn.execute(f"SELECT {', '.join(columns)} FROM {table} ORDER BY {order}").fetchall()
    ]


ORDER = {
    "memories": "id",
    "lifecycle_runs": "id",
    "memory_links": "from_id, to_id",
    "ingest_jobs": "id",
    "session_watermarks": "session_key",
    "session_turns": "session_key",
    "import_runs": "id",
}


def test_a_store_goes_to_postgres_and_back_with_every_row_and_id(
    tmp_path: Path, postgres_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    source = tmp_path / "source.db"
    filled_sqlite(source)
    assert (
        main(["migrate-store", "--from", f"sqlite:{source}", "--to", postgres_url, "--batch-size", "7"]) == 0
    )
    assert "verified" in capsys.readouterr().out
    back = tmp_path / "back.db"
    assert main(["migrate-store", "--from", postgres_url, "--to", f"sqlite:{back}"]) == 0
    with (
        transfer.opened(f"sqlite:{source}", create=False) as first,
        transfer.opened(postgres_url, create=False) as middle,
        transfer.opened(f"sqlite:{back}", create=False) as last,
    ):
        for table, order in ORDER.items():
            assert rows(first, table, order) == rows(middle, table, order) == rows(last, table, order), table
        # The vectors reached pgvector exactly.
        blob, text = middle.execute(
            "SELECT embedding, embedding_vector::text FROM memories WHERE embedding IS NOT NULL ORDER BY id LIMIT 1"
        ).fetchone()
        assert np.allclose(
            np.frombuffer(bytes(blob), dtype="<f4"), [float(x) for x in text.strip("[]").split(",")], atol=0
        )
        # The deleted newest id stays spent on every backend.
        spent = transfer.id_high_water(first, "memories")
        assert transfer.id_high_water(middle, "memories") == transfer.id_high_water(last, "memories") == spent
    with transfer.opened(postgres_url, create=True) as target:
        new_id = memory_sql.insert(target, NewMemory(user_id="alice", fact="after the move"))
    assert new_id == spent + 1
    fresh = sqlite3.connect(back)
    new_id = memory_sql.insert(fresh, NewMemory(user_id="alice", fact="after the move back"))
    fresh.commit()
    assert new_id == spent + 1


class _StopAfter:
    """A progress bar that interrupts the copy after ``batches`` batches (as Ctrl-C would)."""

    def __init__(self, batches: int) -> None:
        self.total: Any = None
        self._left = batches

    def update(self, n: float = 1) -> None:
        self._left -= 1
        if self._left <= 0:
            raise KeyboardInterrupt


def test_an_interrupted_copy_resumes_where_it_stopped(tmp_path: Path, postgres_url: str) -> None:
    source = tmp_path / "source.db"
    filled_sqlite(source, memories=30)
    with (
        transfer.opened(f"sqlite:{source}", create=False) as src,
        transfer.opened(postgres_url, create=True) as dst,
    ):
        with pytest.raises(KeyboardInterrupt):
            migrate_store(src, dst, batch=10, progress=_StopAfter(2))
        assert transfer.counts(dst)["memories"] == 20  # two whole batches committed, nothing else
        report = migrate_store(src, dst, batch=10)
        assert report.resumed_after > 0 and report.memories_copied == 29 - 20
        assert report.verified, report


def test_a_target_holding_other_memories_is_refused_untouched(tmp_path: Path, postgres_url: str) -> None:
    source = tmp_path / "source.db"
    filled_sqlite(source)
    with transfer.opened(postgres_url, create=True) as dst:
        memory_sql.insert(dst, NewMemory(user_id="carol", fact="Carol's own memory"))
    with (
        transfer.opened(f"sqlite:{source}", create=False) as src,
        transfer.opened(postgres_url, create=True) as dst,
    ):
        with pytest.raises(StoreMigrationRefused):
            migrate_store(src, dst)
        assert transfer.counts(dst)["memories"] == 1


def test_errors_are_one_line_and_never_show_a_password(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = tmp_path / "source.db"
    filled_sqlite(source)
    url = "postgresql://cortex:hunter2-secret@127.0.0.1:1/cortex?connect_timeout=2"
    assert main(["migrate-store", "--from", f"sqlite:{source}", "--to", url]) == 1
    err = capsys.readouterr().err
    assert "hunter2-secret" not in err
    assert err.startswith("memory-cortex migrate-store:") and err.count("\n") == 1
    assert (
        main(
            [
                "migrate-store",
                "--from",
                f"sqlite:{tmp_path / 'missing.db'}",
                "--to",
                f"sqlite:{tmp_path / 'x.db'}",
            ]
        )
        == 1
    )
    assert "no SQLite database" in capsys.readouterr().err
    assert main(["migrate-store", "--from", "mysql://x", "--to", f"sqlite:{tmp_path / 'x.db'}"]) == 1
    assert "sqlite:PATH or postgresql://" in capsys.readouterr().err
