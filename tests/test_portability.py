"""Backups and portability: ``backup``, ``export`` and ``import`` on real SQLite files.

The service functions are tested directly; the CLI verbs end to end through ``python -m memory_cortex``;
the backup also against a real running daemon.
"""

from __future__ import annotations

import base64
import io
import json
import signal
import sqlite3
import subprocess
import threading
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from memory_cortex.records import NewMemory
from memory_cortex.services.portability import (
    EXPORT_FORMAT,
    ExportedMemory,
    ImportRejected,
    PortabilityError,
    TargetExists,
    backup_database,
    export_memories,
    import_memories,
    reembed_memories,
)
from memory_cortex.store import memories as memory_sql
from memory_cortex.store.db import apply_migrations, connect
from memory_cortex.store.portability import EXPORT_COLUMNS
from memory_cortex.vectormath import from_blob, to_blob
from tests import processes
from tests.processes import FLOAT_MODEL, call, free_port, start_daemon

MODEL = "all-MiniLM-L6-v2"


def cli(*args: str, **options: Any) -> subprocess.CompletedProcess[str]:
    """The CLI with the float model, that of :func:`build_source`'s vectors."""
    return processes.cli(*args, env=FLOAT_MODEL | options.pop("env", {}), **options)


# -- helpers --------------------------------------------------------------------------------
def open_db(path: Path) -> sqlite3.Connection:
    conn = connect(path, read_only=False, busy_timeout_ms=5000)
    apply_migrations(conn)
    return conn


def vector(seed: int, dim: int = 384) -> bytes:
    return to_blob(np.random.default_rng(seed).standard_normal(dim).astype(np.float32))


def add(conn: sqlite3.Connection, user_id: str, fact: str, **fields: Any) -> int:
    return memory_sql.insert(conn, NewMemory(user_id=user_id, fact=fact, **fields))


def build_source(path: Path) -> dict[str, int]:
    """A store with everything an export must carry: unicode, CJK, metadata, counters, timestamps,
    a superseded chain, a vector of another model, a row without a vector, and a deleted id."""
    conn = open_db(path)
    ids = {
        "ana": add(
            conn,
            "ana",
            "Ana rides a green Bianchi to work.",
            topic="commute",
            importance=7,
            category="habit",
            source_session="telegram-42",
            source_channel="telegram",
            ref="msg:981",
            metadata={"confidence": 0.9, "tags": ["bike", "café"], "nested": {"ok": True, "n": None}},
            created_at="2024-03-01T08:00:00.000Z",
            embedding=vector(1),
            embedding_model=MODEL,
            embedding_dim=384,
        ),
        "old": add(
            conn,
            "ana",
            "Ana lives in Porto.",
            topic="home",
            embedding=vector(2),
            embedding_model=MODEL,
            embedding_dim=384,
        ),
        "gone": add(
            conn, "ana", "to be deleted", embedding=vector(3), embedding_model=MODEL, embedding_dim=384
        ),
        "new": add(
            conn,
            "ana",
            "Ana moved to Lisbon.",
            topic="home",
            embedding=vector(4),
            embedding_model=MODEL,
            embedding_dim=384,
        ),
        "cjk": add(
            conn,
            "李",
            "李明喜欢在周末去北京的公园散步。 Emoji 🚲 and line\u2028separators\x85",
            topic="爱好",
            metadata={"语言": "中文"},
            embedding=vector(5),
            embedding_model=MODEL,
            embedding_dim=384,
        ),
        "foreign": add(
            conn,
            "ben",
            "Ben knits scarves.",
            embedding=to_blob(np.array([1.0, 0.5, -2.0])),
            embedding_model="old-model",
            embedding_dim=3,
        ),
        "bare": add(conn, "ben", "Ben's cat is called Miso.", importance=10, category="pet"),
    }
    memory_sql.delete(conn, ids.pop("gone"))  # a hole in the ids must survive too
    memory_sql.update(conn, ids["old"], {"superseded_by": ids["new"]})
    conn.execute(
        "UPDATE memories SET access_count = 3, last_accessed = '2024-05-05T10:00:00.123Z' WHERE id = ?",
        (ids["ana"],),
    )
    conn.close()
    return ids


def all_rows(path: Path) -> list[tuple[Any, ...]]:
    """Every column of every row, embedding bytes included."""
    conn = sqlite3.connect(path)
    try:
        return conn.execute("SELECT * FROM memories ORDER BY id").fetchall()
    finally:
        conn.close()


def fts_is_in_step(path: Path) -> bool:
    """FTS5's own check that both indexes match the memories table."""
    conn = sqlite3.connect(path)
    try:
        conn.execute("INSERT INTO memories_fts (memories_fts) VALUES ('integrity-check')")
        conn.execute("INSERT INTO memories_trigram (memories_trigram) VALUES ('integrity-check')")
        return True
    finally:
        conn.close()


def export_text(path: Path, **options: Any) -> str:
    out = io.StringIO()
    export_memories(f"sqlite:{path}", out, **options)
    return out.getvalue()


def count_memories(path: Path) -> int:
    conn = sqlite3.connect(path)
    try:
        return int(conn.execute("SELECT count(*) FROM memories").fetchone()[0])
    finally:
        conn.close()


# -- export and import ----------------------------------------------------------------------
def test_export_then_import_into_an_empty_database_is_identical(tmp_path: Path) -> None:
    source, target = tmp_path / "source.db", tmp_path / "target.db"
    ids = build_source(source)
    text = export_text(source)

    result = import_memories(f"sqlite:{target}", io.StringIO(text), model=MODEL)

    assert (result.added, result.skipped, result.kept_ids) == (6, 0, True)
    assert all_rows(target) == all_rows(source)
    assert fts_is_in_step(target)
    conn = sqlite3.connect(target)
    assert conn.execute("SELECT rowid FROM memories_fts WHERE memories_fts MATCH 'bianchi'").fetchall() == [
        (ids["ana"],)
    ]
    assert conn.execute(
        "SELECT rowid FROM memories_trigram WHERE memories_trigram MATCH '北京的'"
    ).fetchall() == [(ids["cjk"],)]
    conn.close()
    # The row of another model and the row without a vector are the ones left to embed.
    assert result.needing_embedding == [ids["foreign"], ids["bare"]]
    # And the copy exports to the very same lines (the header's time aside).
    assert export_text(target).splitlines()[1:] == text.splitlines()[1:]


def test_export_lines_carry_every_column_of_the_table(tmp_path: Path) -> None:
    source = tmp_path / "source.db"
    ids = build_source(source)
    conn = sqlite3.connect(source)
    table_columns = tuple(row[1] for row in conn.execute("PRAGMA table_info(memories)"))
    conn.close()
    # The entity a fact is about is exported by name and kind in place of its id (ids mean nothing
    # in another store).
    exported = (
        *tuple(column for column in table_columns if column != "subject_id"),
        "subject",
        "subject_kind",
    )
    assert exported == EXPORT_COLUMNS
    assert tuple(ExportedMemory.model_fields) == exported

    header, *lines = (json.loads(line) for line in export_text(source).splitlines())
    assert header["format"] == EXPORT_FORMAT and header["version"] == 1
    assert header["count"] == len(lines) == 6
    assert header["columns"] == list(exported)
    assert (header["user_id"], header["embeddings"]) == (None, True)
    ana = next(line for line in lines if line["id"] == ids["ana"])
    assert ana["metadata"] == {"confidence": 0.9, "tags": ["bike", "café"], "nested": {"ok": True, "n": None}}
    assert from_blob(base64.b64decode(ana["embedding"]), 384).tobytes() == vector(1)
    assert next(line for line in lines if line["id"] == ids["old"])["superseded_by"] == ids["new"]


def test_user_option_exports_one_user_and_it_imports_alone(tmp_path: Path) -> None:
    source, target = tmp_path / "source.db", tmp_path / "target.db"
    build_source(source)
    text = export_text(source, user_id="ana")
    header, *lines = (json.loads(line) for line in text.splitlines())
    assert header["user_id"] == "ana" and header["count"] == 3
    assert {line["user_id"] for line in lines} == {"ana"}

    import_memories(f"sqlite:{target}", io.StringIO(text), model=MODEL)
    assert all_rows(target) == [row for row in all_rows(source) if row[1] == "ana"]


def test_no_embeddings_export_nulls_the_vector_columns_and_import_lists_them_to_embed(tmp_path: Path) -> None:
    source, target = tmp_path / "source.db", tmp_path / "target.db"
    build_source(source)
    text = export_text(source, embeddings=False)
    header, *lines = (json.loads(line) for line in text.splitlines())
    assert header["embeddings"] is False
    assert all(
        (line["embedding"], line["embedding_model"], line["embedding_dim"]) == (None, None, None)
        for line in lines
    )

    result = import_memories(f"sqlite:{target}", io.StringIO(text), model=MODEL)
    assert len(result.needing_embedding) == result.added == 6


async def test_reembed_gives_imported_rows_a_vector_of_the_live_model(tmp_path: Path, minilm: Any) -> None:
    source, target = tmp_path / "source.db", tmp_path / "target.db"
    ids = build_source(source)
    result = import_memories(f"sqlite:{target}", io.StringIO(export_text(source, user_id="ben")), model=MODEL)
    assert result.needing_embedding == [ids["foreign"], ids["bare"]]

    stored = await reembed_memories(f"sqlite:{target}", result.needing_embedding, minilm, batch_size=1)

    assert stored == 2
    conn = sqlite3.connect(target)
    rows = conn.execute("SELECT embedding_model, embedding_dim, length(embedding) FROM memories").fetchall()
    conn.close()
    assert rows == [(MODEL, 384, 384 * 4)] * 2


def valid_lines(tmp_path: Path) -> list[str]:
    source = tmp_path / "lines.db"
    build_source(source)
    return export_text(source).splitlines()


def replaced(lines: list[str], index: int, **changes: Any) -> list[str]:
    row = json.loads(lines[index])
    for key, value in changes.items():
        if value is ...:
            del row[key]
        else:
            row[key] = value
    return [*lines[:index], json.dumps(row, ensure_ascii=False), *lines[index + 1 :]]


BAD_FILES = {
    "importance out of range": (
        lambda lines: replaced(lines, 3, importance=11),
        "line 4: field 'importance'",
    ),
    "missing field": (lambda lines: replaced(lines, 2, fact=...), "line 3: field 'fact': Field required"),
    "unknown field": (lambda lines: replaced(lines, 2, colour="red"), "line 3: field 'colour'"),
    "string for a number": (
        lambda lines: replaced(lines, 5, access_count="3"),
        "line 6: field 'access_count'",
    ),
    "metadata not an object": (lambda lines: replaced(lines, 1, metadata="{}"), "line 2: field 'metadata'"),
    "not JSON": (lambda lines: [*lines[:4], '{"id": 9, ', *lines[5:]], "line 5: Invalid JSON"),
    "bad base64": (
        lambda lines: replaced(lines, 1, embedding="@@@"),
        "line 2: embedding is not valid base64",
    ),
    "short vector": (
        lambda lines: replaced(lines, 1, embedding_dim=385),
        "line 2: embedding holds 1536 bytes; embedding_dim 385 needs 1540",
    ),
    "vector without its model": (
        lambda lines: replaced(lines, 1, embedding_model=None),
        "line 2: an embedding needs its embedding_model and embedding_dim",
    ),
    "duplicate id": (lambda lines: [*lines, lines[1]], "line 8: field 'id': memory 1 appears twice"),
    "dangling superseded_by": (
        lambda lines: replaced(lines, 6, superseded_by=99),
        "line 7: field 'superseded_by': memory 99 is not in the file",
    ),
    "truncated": (lambda lines: lines[:-2], "the file holds 4 memories but its header announces 6"),
    "not an export": (
        lambda lines: ['{"hello": "world"}', *lines[1:]],
        "line 1: field 'format': Field required",
    ),
    "newer version": (
        lambda lines: [lines[0].replace('"version":1', '"version":2'), *lines[1:]],
        "line 1: field 'version': export version 2 cannot be read",
    ),
    "empty file": (lambda lines: [], "the file is empty"),
}


@pytest.mark.parametrize("case", list(BAD_FILES))
def test_a_bad_file_names_the_line_and_field_and_imports_nothing(tmp_path: Path, case: str) -> None:
    corrupt, expected = BAD_FILES[case]
    target = tmp_path / "target.db"
    lines = corrupt(valid_lines(tmp_path))

    with pytest.raises(ImportRejected) as caught:
        import_memories(f"sqlite:{target}", io.StringIO("\n".join(lines) + "\n"), model=MODEL)

    assert expected in caught.value.message
    if target.exists():
        assert count_memories(target) == 0


def test_import_into_a_non_empty_database_is_refused_without_merge(tmp_path: Path) -> None:
    source, target = tmp_path / "source.db", tmp_path / "target.db"
    build_source(source)
    conn = open_db(target)
    add(conn, "zoe", "Zoe plays the cello.")
    conn.close()

    with pytest.raises(ImportRejected, match="already holds 1 memories"):
        import_memories(f"sqlite:{target}", io.StringIO(export_text(source)), model=MODEL)
    assert count_memories(target) == 1


def test_merge_gives_new_ids_remaps_superseded_by_and_skips_stored_facts(tmp_path: Path) -> None:
    source, target = tmp_path / "source.db", tmp_path / "target.db"
    build_source(source)
    conn = open_db(target)
    zoe = add(conn, "zoe", "Zoe plays the cello.")
    kept = add(
        conn, "ana", "Ana moved to Lisbon.", topic="stored earlier"
    )  # same (user, fact) as a source row
    conn.close()
    text = export_text(source)

    result = import_memories(f"sqlite:{target}", io.StringIO(text), model=MODEL, merge=True)

    assert (result.added, result.skipped, result.kept_ids) == (5, 1, False)
    conn = sqlite3.connect(target)
    conn.row_factory = sqlite3.Row
    rows = {row["fact"]: dict(row) for row in conn.execute("SELECT * FROM memories")}
    conn.close()
    assert len(rows) == 7 and rows["Zoe plays the cello."]["id"] == zoe
    assert (rows["Ana moved to Lisbon."]["id"], rows["Ana moved to Lisbon."]["topic"]) == (
        kept,
        "stored earlier",
    )
    # The superseded row now points at the stored memory that its successor duplicated.
    assert rows["Ana lives in Porto."]["superseded_by"] == kept
    assert (
        min(
            row["id"]
            for fact, row in rows.items()
            if fact not in ("Zoe plays the cello.", "Ana moved to Lisbon.")
        )
        > kept
    )
    # Values other than the id arrive as exported.
    source_ana = {row[3]: row for row in all_rows(source)}["Ana rides a green Bianchi to work."]
    assert tuple(rows["Ana rides a green Bianchi to work."].values())[1:] == source_ana[1:]
    assert fts_is_in_step(target)

    again = import_memories(f"sqlite:{target}", io.StringIO(text), model=MODEL, merge=True)
    assert (again.added, again.skipped) == (0, 6)
    assert count_memories(target) == 7


# -- backup ---------------------------------------------------------------------------------
def test_backup_while_a_writer_commits_is_consistent_and_has_every_committed_row(tmp_path: Path) -> None:
    source, copy = tmp_path / "live.db", tmp_path / "copy.db"
    open_db(source).close()
    committed = threading.Semaphore(0)
    stop = threading.Event()
    written: list[int] = []

    def writer() -> None:
        conn = open_db(source)
        try:
            while not stop.is_set():
                conn.execute("BEGIN IMMEDIATE")
                memory_id = add(
                    conn,
                    "w",
                    f"fact number {len(written)} " + "padding " * 50,
                    embedding=vector(len(written)),
                    embedding_model=MODEL,
                    embedding_dim=384,
                )
                conn.execute("COMMIT")
                written.append(memory_id)
                committed.release()
        finally:
            conn.close()

    thread = threading.Thread(target=writer)
    thread.start()
    try:
        for _ in range(300):
            assert committed.acquire(timeout=30)
        committed_before = len(written)
        result = backup_database(source, copy, force=False)
        for _ in range(100):  # the writer kept going during and after the copy
            assert committed.acquire(timeout=30)
    finally:
        stop.set()
        thread.join(timeout=30)

    assert copy.read_bytes()[18:20] == b"\x01\x01"  # rollback journal: one standalone file, no -wal
    assert not Path(f"{copy}-wal").exists()
    conn = sqlite3.connect(f"file:{copy}?mode=ro", uri=True)
    assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
    ids = [row[0] for row in conn.execute("SELECT id FROM memories ORDER BY id")]
    conn.close()
    assert len(ids) >= committed_before
    assert ids == written[: len(ids)]  # a prefix of the commits: one consistent snapshot
    assert result.memories == len(ids) and result.bytes == copy.stat().st_size
    assert fts_is_in_step(copy)


def test_backup_refuses_to_overwrite_an_existing_file_unless_forced(tmp_path: Path) -> None:
    source, copy = tmp_path / "live.db", tmp_path / "copy.db"
    build_source(source)
    copy.write_text("precious")

    with pytest.raises(TargetExists):
        backup_database(source, copy, force=False)
    assert copy.read_text() == "precious"

    backup_database(source, copy, force=True)
    assert all_rows(copy) == all_rows(source)
    assert copy.stat().st_mode & 0o777 == 0o600  # every memory is in it: the owner's only
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".partial")] == []


def test_backup_never_overwrites_a_database_in_use_even_when_forced(tmp_path: Path) -> None:
    source, copy = tmp_path / "live.db", tmp_path / "other.db"
    build_source(source)
    open_db(copy).close()
    Path(f"{copy}-wal").write_bytes(b"")  # as left beside a database that is open (or crashed)

    with pytest.raises(PortabilityError, match="looks like a database in use"):
        backup_database(source, copy, force=True)
    with pytest.raises(PortabilityError, match="is the database itself"):
        backup_database(source, source, force=True)


# -- the CLI --------------------------------------------------------------------------------
@pytest.mark.parametrize("verb", ["backup", "export", "import"])
def test_every_maintenance_verb_has_help(verb: str) -> None:
    result = cli(verb, "--help")
    assert result.returncode == 0, result.stderr
    assert "--db" in result.stdout and "--config" in result.stdout


def test_import_help_says_what_merge_and_reembed_do() -> None:
    text = cli("import", "--help").stdout
    assert "--merge" in text and "new ids" in text and "skipped" in text
    assert "--reembed" in text and "backfill-embeddings" in text and "ONE transaction" in text


def test_cli_backup_export_and_import_round_trip(tmp_path: Path) -> None:
    source = tmp_path / "source.db"
    build_source(source)

    backup = cli("--db", str(source), "backup", str(tmp_path / "copy.db"))
    assert backup.returncode == 0, backup.stderr
    assert backup.stdout.startswith("backup: 6 memories, ") and "integrity_check ok" in backup.stdout
    again = cli("backup", str(tmp_path / "copy.db"), "--db", str(source))
    assert again.returncode == 1 and "already exists (use --force" in again.stderr
    assert cli("backup", str(tmp_path / "copy.db"), "--db", str(source), "--force").returncode == 0

    exported = cli("export", str(tmp_path / "all.jsonl"), "--db", str(tmp_path / "copy.db"))
    assert exported.returncode == 0, exported.stderr
    assert "export: 6 memories with embeddings" in exported.stdout
    piped = cli("export", "-", "--user", "ana", "--db", str(source))
    assert piped.returncode == 0, piped.stderr
    assert json.loads(piped.stdout.splitlines()[0])["count"] == 3 and len(piped.stdout.splitlines()) == 4
    assert "export: 3 memories of user 'ana'" in piped.stderr

    imported = cli("import", str(tmp_path / "all.jsonl"), "--db", str(tmp_path / "restored.db"))
    assert imported.returncode == 0, imported.stderr
    assert "import: 6 added (same ids), 0 skipped as already stored, 0 re-embedded" in imported.stdout
    assert "2 memories have no all-MiniLM-L6-v2 embedding" in imported.stdout
    assert all_rows(tmp_path / "restored.db") == all_rows(source)

    refused = cli("import", "-", "--db", str(tmp_path / "restored.db"), stdin=piped.stdout)
    assert refused.returncode == 1 and "already holds 6 memories" in refused.stderr
    merged = cli("import", "-", "--merge", "--db", str(tmp_path / "restored.db"), stdin=piped.stdout)
    assert merged.returncode == 0, merged.stderr
    assert "import: 0 added (new ids), 3 skipped" in merged.stdout


def test_cli_import_of_a_bad_line_reports_it_and_imports_nothing(tmp_path: Path) -> None:
    lines = replaced(valid_lines(tmp_path), 2, importance=0)
    target = tmp_path / "target.db"

    result = cli("import", "-", "--db", str(target), stdin="\n".join(lines) + "\n")

    assert result.returncode == 1
    assert (
        "memory-cortex import: error: line 3: field 'importance': Input should be greater than or equal to 1"
        in result.stderr
    )
    assert "Traceback" not in result.stderr
    assert count_memories(target) == 0


@pytest.mark.slow
def test_cli_import_reembeds_rows_without_a_vector_of_the_live_model(tmp_path: Path) -> None:
    source, target = tmp_path / "source.db", tmp_path / "target.db"
    build_source(source)
    dump = cli("export", "-", "--no-embeddings", "--user", "ben", "--db", str(source))

    result = cli("import", "-", "--reembed", "--db", str(target), stdin=dump.stdout, timeout=300)

    assert result.returncode == 0, result.stderr
    assert "import: 2 added (same ids), 0 skipped as already stored, 2 re-embedded" in result.stdout
    conn = sqlite3.connect(target)
    assert conn.execute("SELECT DISTINCT embedding_model, embedding_dim FROM memories").fetchall() == [
        (MODEL, 384)
    ]
    conn.close()


@pytest.mark.slow
def test_backup_of_a_running_daemon_has_every_memory_it_acknowledged(tmp_path: Path) -> None:
    db, log, copy = tmp_path / "daemon.db", tmp_path / "daemon.log", tmp_path / "copy.db"
    port = free_port()
    process = start_daemon(db, port, log)
    try:
        memories = [{"user_id": "d", "fact": f"Dana's locker {n} holds item {n * 7}."} for n in range(20)]
        stored = call(port, "POST", "/memories?dedup=false", {"memories": memories})["memories"]
        result = cli("backup", str(copy), "--db", str(db))
        assert result.returncode == 0, result.stderr
        # The daemon is unaffected and still writes.
        call(port, "POST", "/memories", {"user_id": "d", "fact": "Dana's bike is blue."})
    finally:
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=30) == 0

    assert f"backup: {len(stored)} memories" in result.stdout
    conn = sqlite3.connect(f"file:{copy}?mode=ro", uri=True)
    assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
    assert conn.execute("PRAGMA journal_mode").fetchone() == ("delete",)
    facts = dict(conn.execute("SELECT id, fact FROM memories").fetchall())
    embedded = conn.execute("SELECT count(*) FROM memories WHERE embedding_model = ?", (MODEL,)).fetchone()[0]
    conn.close()
    assert facts == {memory["id"]: memory["fact"] for memory in stored}
    assert embedded == len(stored)
