"""``export`` and ``import`` (with ``--merge`` and ``--reembed``) on a real PostgreSQL, end to end through
the CLI with a config whose ``database.backend`` is postgres: the same files and the same answers as on
SQLite. ``backup`` refuses PostgreSQL in one line. The URL carries a password, which never shows."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import psycopg
import pytest
import yaml

from memory_cortex.__main__ import main
from memory_cortex.records import NewMemory
from memory_cortex.store import memories as memory_sql
from memory_cortex.store import transfer
from tests.test_portability import MODEL, build_source, replaced

PASSWORD = "hunter2-Secret"  # the test server trusts local clients: it is sent and never checked


@pytest.fixture
def url(postgres_url: str) -> str:
    """The test database's URL with a password in it."""
    parts = urlsplit(postgres_url)
    user = parts.netloc.rsplit("@", 1)[0].split(":", 1)[0]
    host = parts.netloc.rsplit("@", 1)[1]
    return parts._replace(netloc=f"{user}:{PASSWORD}@{host}").geturl()


@pytest.fixture
def run(tmp_path: Path, url: str, capsys: pytest.CaptureFixture[str]) -> Iterator[Any]:
    """``run(*argv, backend=...)`` → (exit status, stdout, stderr) of the CLI in this process, with
    a config of that backend (postgres: the test database; sqlite: ``source.db``). No output of any
    run may hold the password."""
    configs = {
        "postgres": _config(tmp_path / "postgres.yaml", {"backend": "postgres", "url": url}),
        "sqlite": _config(tmp_path / "sqlite.yaml", {"path": str(tmp_path / "source.db")}),
    }

    def cli(*argv: str, backend: str = "postgres") -> tuple[int, str, str]:
        status = main([*argv, "--config", str(configs[backend])])
        out, err = capsys.readouterr()
        assert PASSWORD not in out and PASSWORD not in err
        return status, out, err

    yield cli


def _config(path: Path, database: dict[str, str]) -> Path:
    path.write_text(
        yaml.safe_dump(
            {
                "database": database,
                "embeddings": {"quantize": "none"},  # the model of build_source's vectors
                "llm": {"backend": "rules"},
                "hardware": {"enabled": False},
            }
        ),
        encoding="utf-8",
    )
    return path


def verb_lines(err: str, verb: str) -> list[str]:
    """The verb's own stderr lines (progress bars aside)."""
    return [line for line in err.splitlines() if line.startswith(f"memory-cortex {verb}:")]


def pg_rows(url: str, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    with psycopg.connect(url) as conn:
        return [tuple(row) for row in conn.execute(sql, params).fetchall()]


def fill_postgres(url: str, *facts: tuple[str, str]) -> list[int]:
    """Store ``(user_id, fact)`` memories the way the daemon does; their ids."""
    with transfer.opened(url, create=True) as conn:
        return [memory_sql.insert(conn, NewMemory(user_id=user, fact=fact)) for user, fact in facts]


def export_source(tmp_path: Path, run: Any, *options: str) -> Path:
    """The standard source store (tests/test_portability.py), exported from SQLite."""
    build_source(tmp_path / "source.db")
    path = tmp_path / "source.jsonl"
    status, _, err = run("export", str(path), *options, backend="sqlite")
    assert status == 0, err
    return path


def without_time(text: str) -> list[Any]:
    header, *lines = text.splitlines()
    return [{k: v for k, v in json.loads(header).items() if k != "exported_at"}, *lines]


# -- round trips ----------------------------------------------------------------------------
def test_sqlite_to_postgres_and_out_again_gives_the_same_lines(tmp_path: Path, run: Any, url: str) -> None:
    exported = export_source(tmp_path, run)
    redacted = transfer.describe(url)

    status, out, err = run("import", str(exported))

    assert status == 0, err
    assert out.splitlines() == [
        f"import: 6 added (same ids), 0 skipped as already stored, 0 re-embedded -> {redacted}",
        "import: 2 memories have no all-MiniLM-L6-v2 embedding yet (search finds them by text);"
        " the daemon embeds them in the background (embeddings.reembed), or run"
        " scripts/backfill-embeddings.py, or import with --reembed",
    ]
    again = tmp_path / "again.jsonl"
    status, out, err = run("export", str(again))
    assert status == 0, err
    assert out == f"export: 6 memories with embeddings -> {again}\n"
    assert without_time(again.read_text(encoding="utf-8")) == without_time(
        exported.read_text(encoding="utf-8")
    )
    # Every vector reached pgvector, and the id sequence moved past the kept ids.
    assert pg_rows(
        url, "SELECT count(*) FROM memories WHERE embedding IS NOT NULL AND embedding_vector IS NULL"
    ) == [(0,)]
    (largest,) = pg_rows(url, "SELECT max(id) FROM memories")[0]
    assert fill_postgres(url, ("zoe", "Zoe plays the cello.")) == [largest + 1]


def test_export_of_one_user_from_postgres_to_stdout(tmp_path: Path, run: Any) -> None:
    assert run("import", str(export_source(tmp_path, run)))[0] == 0

    status, out, err = run("export", "-", "--user", "ana", "--no-embeddings")

    assert status == 0, err
    header, *lines = (json.loads(line) for line in out.splitlines())
    assert (header["count"], header["user_id"], header["embeddings"]) == (3, "ana", False)
    assert {line["user_id"] for line in lines} == {"ana"} and len(lines) == 3
    assert all(line["embedding"] is None and line["embedding_model"] is None for line in lines)
    assert verb_lines(err, "export") == []
    assert "export: 3 memories of user 'ana' without embeddings -> stdout" in err


def test_merge_into_postgres_skips_stored_facts_and_remaps_superseded_by(
    tmp_path: Path, run: Any, url: str
) -> None:
    exported = export_source(tmp_path, run)
    zoe, kept = fill_postgres(url, ("zoe", "Zoe plays the cello."), ("ana", "Ana moved to Lisbon."))

    status, out, err = run("import", str(exported), "--merge")

    assert status == 0, err
    assert out.startswith("import: 5 added (new ids), 1 skipped as already stored, 0 re-embedded -> ")
    rows = {
        fact: (memory_id, superseded_by)
        for memory_id, fact, superseded_by in pg_rows(url, "SELECT id, fact, superseded_by FROM memories")
    }
    assert len(rows) == 7 and rows["Zoe plays the cello."][0] == zoe
    assert rows["Ana moved to Lisbon."] == (kept, None)
    # The superseded row points at the stored memory its successor duplicated.
    assert rows["Ana lives in Porto."][1] == kept
    assert min(memory_id for memory_id, _ in rows.values() if memory_id not in (zoe, kept)) > kept

    status, out, err = run("import", str(exported), "--merge")
    assert status == 0, err
    assert out.startswith("import: 0 added (new ids), 6 skipped as already stored")
    assert pg_rows(url, "SELECT count(*) FROM memories") == [(7,)]


def test_import_reembeds_into_pgvector(tmp_path: Path, run: Any, url: str) -> None:
    exported = export_source(tmp_path, run, "--no-embeddings", "--user", "ben")

    status, out, err = run("import", str(exported), "--reembed")

    assert status == 0, err
    assert out.splitlines() == [
        f"import: 2 added (same ids), 0 skipped as already stored, 2 re-embedded -> {transfer.describe(url)}"
    ]
    assert pg_rows(
        url,
        "SELECT DISTINCT embedding_model, embedding_dim, length(embedding),"
        " embedding_vector IS NOT NULL, vector_dims(embedding_vector) FROM memories",
    ) == [(MODEL, 384, 384 * 4, True, 384)]


# -- refusals: one line, nothing written ----------------------------------------------------
def test_a_truncated_file_imports_nothing(tmp_path: Path, run: Any, url: str) -> None:
    exported = export_source(tmp_path, run)
    truncated = tmp_path / "truncated.jsonl"
    truncated.write_text("\n".join(exported.read_text(encoding="utf-8").splitlines()[:-2]) + "\n")

    status, out, err = run("import", str(truncated))

    assert status == 1 and out == ""
    assert verb_lines(err, "import") == [
        "memory-cortex import: error: the file holds 4 memories but its header announces 6:"
        " truncated or edited? Nothing was imported"
    ]
    assert pg_rows(url, "SELECT count(*) FROM memories") == [(0,)]


def test_a_row_postgres_cannot_store_is_named_by_its_line_and_imports_nothing(
    tmp_path: Path, run: Any, url: str
) -> None:
    lines = export_source(tmp_path, run).read_text(encoding="utf-8").splitlines()
    bad = tmp_path / "nul.jsonl"
    bad.write_text("\n".join(replaced(lines, 4, fact="a NUL \u0000 inside")) + "\n", encoding="utf-8")

    status, _, err = run("import", str(bad))

    assert status == 1
    (line,) = verb_lines(err, "import")
    assert line.startswith("memory-cortex import: error: line 5: the database refused the row: ")
    assert "Traceback" not in err
    assert pg_rows(url, "SELECT count(*) FROM memories") == [(0,)]


def test_import_into_a_non_empty_postgres_is_refused_without_merge(
    tmp_path: Path, run: Any, url: str
) -> None:
    exported = export_source(tmp_path, run)
    fill_postgres(url, ("zoe", "Zoe plays the cello."))

    status, out, err = run("import", str(exported))

    assert status == 1 and out == ""
    assert verb_lines(err, "import") == [
        f"memory-cortex import: error: {transfer.describe(url)} already holds 1 memories; import into an"
        " empty database, or merge into this one (--merge: new ids, rows with a stored (user_id, fact) skipped)"
    ]
    assert pg_rows(url, "SELECT count(*) FROM memories") == [(1,)]


def test_backup_of_postgres_is_refused_in_one_line_and_writes_nothing(
    tmp_path: Path, run: Any, url: str
) -> None:
    target = tmp_path / "copy.db"

    status, out, err = run("backup", str(target))

    assert status == 1 and out == ""
    assert err == (
        "memory-cortex backup: error: database.backend is postgres: back it up with pg_dump, or copy it"
        f" into a SQLite file with memory-cortex migrate-store --from {transfer.describe(url)} --to sqlite:PATH\n"
    )
    assert ":***@" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["postgres.yaml", "sqlite.yaml"]


def test_an_unreachable_server_is_one_line_without_the_password(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    down = f"postgresql://cortex:{PASSWORD}@127.0.0.1:1/cortex?connect_timeout=2"
    config = str(_config(tmp_path / "down.yaml", {"backend": "postgres", "url": down}))
    empty_export = tmp_path / "empty.jsonl"
    empty_export.write_text(
        '{"format": "memory-cortex-export", "version": 1, "count": 0, "exported_at": "x",'
        ' "memory_cortex": "0", "user_id": null, "embeddings": true, "columns": []}\n'
    )

    for verb, argv in (("export", [str(tmp_path / "out.jsonl")]), ("import", [str(empty_export)])):
        assert main([verb, *argv, "--config", config]) == 1
        out, err = capsys.readouterr()
        assert PASSWORD not in out + err and "Traceback" not in err
        (line,) = verb_lines(err, verb)
        assert line.startswith(f"memory-cortex {verb}: database error: ")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["down.yaml", "empty.jsonl"]  # no export file
