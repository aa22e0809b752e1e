"""``python -m memory_cortex export-md`` / ``import-md`` end to end, as a user runs them (subprocesses,
real SQLite files, the real MiniLM model loaded by the CLI itself)."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest

from tests.processes import cli

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "openclaw_workspace"


@pytest.mark.parametrize("verb", ["export-md", "import-md"])
def test_the_markdown_verbs_have_help(verb: str) -> None:
    result = cli(verb, "--help")

    assert result.returncode == 0, result.stderr
    assert "--db" in result.stdout and "--config" in result.stdout and "--user" in result.stdout
    assert "MEMORY.md" in result.stdout and "YYYY-MM-DD" in result.stdout


def test_export_md_without_a_database_says_so(tmp_path: Path) -> None:
    result = cli("export-md", str(tmp_path / "mirror"), "--db", str(tmp_path / "none.db"))

    assert result.returncode == 1
    assert "memory-cortex export-md: error: no database at" in result.stderr
    assert not (tmp_path / "none.db").exists() and not (tmp_path / "mirror").exists()


def test_import_md_of_a_folder_without_workspaces_says_so(tmp_path: Path) -> None:
    result = cli("import-md", str(tmp_path), "--db", str(tmp_path / "x.db"))

    assert result.returncode == 1
    assert "holds no MEMORY.md or memory/ folder" in result.stderr and "Traceback" not in result.stderr


@pytest.mark.slow
def test_import_md_twice_then_export_md_from_the_command_line(tmp_path: Path) -> None:
    db = tmp_path / "cortex.db"

    first = cli("import-md", str(FIXTURE), "--user", "sam", "--db", str(db), timeout=300)

    assert first.returncode == 0, first.stderr
    assert first.stdout.startswith(
        "import-md: sam: 33 added, 1 merged, 1 skipped (5 files; ignored: memory/README.md) <- "
    )
    assert "importing sam" in first.stderr and "35/35" in first.stderr  # the progress bar

    again = cli("import-md", str(FIXTURE), "--user", "sam", "--db", str(db), timeout=300)

    assert again.returncode == 0, again.stderr
    assert "import-md: sam: 0 added, 0 merged, 35 skipped" in again.stdout
    conn = sqlite3.connect(db)
    assert conn.execute("SELECT count(*), count(embedding) FROM memories").fetchone() == (33, 33)
    conn.close()

    mirror = tmp_path / "mirror"
    exported = cli("export-md", str(mirror), "--db", str(db))

    assert exported.returncode == 0, exported.stderr
    assert exported.stdout == f"export-md: 1 users, 5 files written, 0 unchanged, 0 removed -> {mirror}\n"
    assert sorted(p.relative_to(mirror).as_posix() for p in mirror.rglob("*.md")) == [
        "sam/MEMORY.md",
        "sam/memory/2026-01-05.md",
        "sam/memory/2026-01-06.md",
        "sam/memory/2026-01-07.md",
        "sam/memory/2026-01-09.md",
    ]
    unchanged = cli("export-md", str(mirror), "--db", str(db))
    assert "0 files written, 5 unchanged" in unchanged.stdout

    # The mirror imports back into an empty database as the same memories (user from its header).
    restored = tmp_path / "restored.db"
    back = cli("import-md", str(mirror / "sam"), "--db", str(restored), timeout=300)
    assert back.returncode == 0, back.stderr
    assert back.stdout.startswith("import-md: sam: 33 added, 0 merged, 0 skipped (5 files) <- ")

    def memories(path: Path) -> set[tuple[str, str, str, str]]:
        conn = sqlite3.connect(path)
        try:
            rows = conn.execute("SELECT fact, category, layer, substr(created_at, 1, 10) FROM memories")
            # The mirror writes each fact on one line (an agent reads it into its prompt).
            return {(" ".join(fact.split()), *rest) for fact, *rest in rows}
        finally:
            conn.close()

    # Every text, category and layer, and every date (those MEMORY.md gave none are "now" both times).
    assert memories(restored) == memories(db) and len(memories(db)) == 33


@pytest.mark.slow
def test_export_md_leaves_a_hand_written_memory_md_alone_unless_forced(tmp_path: Path) -> None:
    db = tmp_path / "cortex.db"
    workspace = tmp_path / "workspace"
    shutil.copytree(FIXTURE, workspace)
    imported = cli("import-md", str(workspace), "--db", str(db), timeout=300)
    assert imported.returncode == 0, imported.stderr
    assert imported.stdout.startswith("import-md: default: 33 added")  # no --user, no header

    refused = cli("export-md", str(workspace), "--user", "default", "--db", str(db))

    assert refused.returncode == 1
    # MEMORY.md and three daily logs of the same names; the slugged log is not in the way.
    assert "4 files in the way were not written by memory-cortex" in refused.stderr
    assert "MEMORY.md" in refused.stderr and "--force" in refused.stderr
    assert (workspace / "MEMORY.md").read_bytes() == (FIXTURE / "MEMORY.md").read_bytes()

    forced = cli("export-md", str(workspace), "--user", "default", "--force", "--db", str(db))

    assert forced.returncode == 0, forced.stderr
    assert (workspace / "MEMORY.md").read_text(encoding="utf-8").startswith("# Long-term memory\n")
    assert (workspace / "memory" / "README.md").exists()  # not a memory file: never touched
