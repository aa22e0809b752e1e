"""The Markdown mirror end to end: export to real folders, import through the real app (real SQLite,
the real MiniLM embedder), round trips, atomic writes, and the files the mirror may touch."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from aiohttp.test_utils import TestClient

from memory_cortex.app import create_app
from memory_cortex.keys import CONFIG, MARKDOWN_WORKSPACES
from memory_cortex.services import mirror_files
from memory_cortex.services.markdown import user_folder
from memory_cortex.services.mirror import ImportSummary
from memory_cortex.services.mirror_files import find_workspaces, read_workspace
from tests.conftest import make_config
from tests.helpers import store

JSON = {"Content-Type": "application/json"}  # every write declares JSON, body or not (http/guard.py)

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "openclaw_workspace"


async def start(aiohttp_client: Any, folder: Path, minilm: Any) -> TestClient:
    return await aiohttp_client(create_app(make_config(folder), embedder=minilm, llm=None))


def rows(client: TestClient) -> list[sqlite3.Row]:
    """Every column of every memory, read from the database file itself."""
    conn = sqlite3.connect(client.app[CONFIG].database.path)
    conn.row_factory = sqlite3.Row
    try:
        return conn.execute("SELECT * FROM memories ORDER BY id").fetchall()
    finally:
        conn.close()


def by_fact(client: TestClient) -> dict[str, sqlite3.Row]:
    return {row["fact"]: row for row in rows(client)}


async def import_folder(client: TestClient, folder: Path, user: str | None = None) -> list[ImportSummary]:
    markdown = client.app[MARKDOWN_WORKSPACES]
    return [
        await markdown.import_files(user_id, read_workspace(path))
        for user_id, path in find_workspaces(folder, user, "default")
    ]


# -- import ---------------------------------------------------------------------------------
async def test_the_openclaw_fixture_imports_with_categories_layers_dates_and_provenance(
    aiohttp_client: Any, tmp_path: Path, minilm: Any
) -> None:
    client = await start(aiohttp_client, tmp_path / "db", minilm)

    [summary] = await import_folder(client, FIXTURE, "sam")

    assert summary.files == [
        "MEMORY.md",
        "memory/2026-01-05.md",
        "memory/2026-01-06.md",
        "memory/2026-01-07-ryokan-booking.md",
        "memory/2026-01-09.md",
    ]
    assert summary.ignored_files == ["memory/README.md"]
    # 35 bullets and paragraphs: one repeated word for word (skipped), one near-duplicate of a
    # MEMORY.md line (merged into it), 33 new.
    assert (summary.memories, summary.added, summary.merged, summary.skipped) == (35, 33, 1, 1)
    stored = by_fact(client)
    assert len(stored) == 33
    assert {row["user_id"] for row in stored.values()} == {"sam"}

    name = stored["Name: Sam Rivera; goes by Sam. Pronouns: they/them."]
    assert (name["category"], name["layer"], name["importance"]) == ("identity", "core", 8)
    assert (name["source_channel"], name["ref"]) == ("markdown", "MEMORY.md:5")
    assert '"file": "MEMORY.md"' in name["metadata"] and '"heading": "About Me"' in name["metadata"]

    flights = stored["Flights LIS→KIX booked for 2026-04-03, back 2026-04-17."]
    assert (flights["category"], flights["topic"], flights["layer"]) == (
        "project_state",
        "Kyoto trip",
        "core",
    )
    assert stored[
        'Favourite phrase so far: 「すみません、駅はどこですか？」 ("Excuse me, where is the station?")'
    ]
    paragraph = stored[
        "Sam asked me to keep a running list of Japanese phrases for the trip and to quiz them\n"
        "on Sundays. Current focus: ordering food, asking for directions, and train announcements."
    ]
    assert paragraph["category"] == "fact"

    reminder = stored["Reminder set: renew the Cartão de Cidadão before 2026-02-15."]
    assert (reminder["layer"], reminder["created_at"]) == ("working", "2026-01-05T09:12:00.000Z")
    assert reminder["ref"] == "memory/2026-01-05.md:5"
    planning = stored["Sam wants to visit Fushimi Inari at sunrise to avoid the crowds."]
    assert (planning["topic"], planning["created_at"]) == ("Kyoto planning", "2026-01-05T18:40:00.000Z")
    booking = stored["Sam decided to skip Osaka entirely and add a day trip to Nara instead."]
    assert booking["created_at"] == "2026-01-07T00:00:00.000Z"
    # Said word for word in MEMORY.md and in a log: one memory, from MEMORY.md, dated by the log.
    ana = stored["Ana Rivera — Sam's sister, lives in Porto, birthday 12 May."]
    assert (ana["layer"], ana["created_at"]) == ("core", "2026-01-09T00:00:00.000Z")
    # The log's near-duplicate of a MEMORY.md line was merged into it: one memory, still core,
    # with the newer wording; the older wording is remembered for the next import.
    miso = stored["Miso is Sam's cat: orange, 6 years old, allergic to chicken."]
    assert miso["layer"] == "core" and miso["category"] == "relationship"
    assert "Miso is Sam's cat (orange, 6 years old, allergic to chicken)." in miso["metadata"]
    assert all(row["embedding"] is not None for row in stored.values())


async def test_importing_the_same_workspace_again_adds_and_changes_nothing(
    aiohttp_client: Any, tmp_path: Path, minilm: Any
) -> None:
    client = await start(aiohttp_client, tmp_path / "db", minilm)
    await import_folder(client, FIXTURE, "sam")
    before = [tuple(row) for row in rows(client)]

    [again] = await import_folder(client, FIXTURE, "sam")

    assert (again.added, again.merged, again.skipped) == (0, 0, 35)
    assert [tuple(row) for row in rows(client)] == before


async def test_a_near_duplicate_of_a_stored_memory_is_merged_and_a_curated_one_promotes_it(
    aiohttp_client: Any, tmp_path: Path, minilm: Any
) -> None:
    client = await start(aiohttp_client, tmp_path / "db", minilm)
    [older] = await store(
        client,
        {
            "user_id": "sam",
            "fact": "Miso is Sam's cat, orange, 6 years old, allergic to chicken",
            "layer": "working",
        },
    )
    memory_md = (FIXTURE / "MEMORY.md").read_text(encoding="utf-8")

    summary = await client.app[MARKDOWN_WORKSPACES].import_files("sam", {"MEMORY.md": memory_md})

    assert summary.merged == 1 and summary.added == summary.memories - 1
    merged = by_fact(client)["Miso is Sam's cat (orange, 6 years old, allergic to chicken)."]
    assert merged["id"] == older["id"] and merged["layer"] == "core" and merged["access_count"] == 1


async def test_imported_corrections_hide_nothing(aiohttp_client: Any, tmp_path: Path, minilm: Any) -> None:
    client = await start(aiohttp_client, tmp_path / "db", minilm)
    [fact] = await store(client, {"user_id": "sam", "fact": "Sam's sister lives in Porto."})

    await client.app[MARKDOWN_WORKSPACES].import_files(
        "sam", {"MEMORY.md": "## Corrections\n- Sam's sister lives in Porto, not Coimbra.\n"}
    )

    stored = by_fact(client)
    assert stored["Sam's sister lives in Porto."]["superseded_by"] is None
    assert stored["Sam's sister lives in Porto, not Coimbra."]["category"] == "correction"
    assert fact["id"] in {row["id"] for row in stored.values()}


# -- export and the round trip --------------------------------------------------------------
SOURCE_MEMORIES: list[dict[str, Any]] = [
    {"user_id": "sam", "fact": "Sam is an ICU nurse in Lisbon.", "category": "identity"},
    {
        "user_id": "sam",
        "fact": "Sam prefers short answers.",
        "category": "preference",
        "created_at": "2025-06-01T08:00:00Z",
    },
    {"user_id": "sam", "fact": "Trains only inside Japan.", "category": "decision"},
    {"user_id": "sam", "fact": "Ana is Sam's sister.", "category": "relationship"},
    {"user_id": "sam", "fact": "Sam lives in Lisbon, not Porto.", "category": "correction"},
    {"user_id": "sam", "fact": "Sam's cat Miso is allergic to chicken.", "category": "pet"},
    {
        "user_id": "sam",
        "fact": "In 2025 Sam moved to Lisbon,\nchanged hospitals\n\nand started Japanese (2025-03-01)",
        "category": "history_summary",
    },
    {
        "user_id": "sam",
        "fact": "日本語の勉強は毎週土曜日。",
        "category": "fact",
        "created_at": "2026-01-03T22:00:00Z",
    },
    {
        "user_id": "sam",
        "fact": "Booked a ryokan in Gion (2026-04-08)",
        "layer": "working",
        "created_at": "2026-01-07T21:04:00Z",
    },
    {
        "user_id": "sam",
        "fact": "Compared rail passes.",
        "layer": "working",
        "created_at": "2026-01-05T09:12:00Z",
    },
    {
        "user_id": "sam",
        "fact": "Look up shojin ryori in Kyoto.",
        "layer": "working",
        "category": "todo",
        "created_at": "2026-01-05T23:59:00Z",
    },
    {"user_id": "telegram:42", "fact": "Ben knits scarves.", "category": "fact"},
    {
        "user_id": "telegram:42",
        "fact": "Ben's deadline is Friday.",
        "layer": "working",
        "created_at": "2026-01-02T10:00:00Z",
    },
    {"user_id": "sam", "fact": "Sam's old flat in Porto had a balcony.", "layer": "archive"},
]


def mirrored(client: TestClient) -> set[tuple[str, str, str, str, str]]:
    """What the mirror must carry of each live core or working memory."""
    return {
        # The mirror writes each fact on one line (an agent reads it into its prompt).
        (row["user_id"], " ".join(row["fact"].split()), row["category"], row["layer"], row["created_at"][:10])
        for row in rows(client)
        if row["superseded_by"] is None and row["layer"] in ("core", "working")
    }


async def test_export_then_import_into_an_empty_store_round_trips_every_fact(
    aiohttp_client: Any, tmp_path: Path, minilm: Any
) -> None:
    source = await start(aiohttp_client, tmp_path / "source", minilm)
    stored = await store(source, *SOURCE_MEMORIES, dedup=False)
    hidden = await store(source, {"user_id": "sam", "fact": "Sam lives in Porto."}, dedup=False)
    await source.patch(f"/memories/{hidden[0]['id']}", json={"superseded_by": stored[4]["id"]})
    mirror_dir = tmp_path / "mirror"

    summary = await source.app[MARKDOWN_WORKSPACES].export(mirror_dir)

    ben = user_folder("telegram:42")
    assert ben.startswith("telegram%3A42~")
    assert summary.users == 2 and not summary.conflicts
    assert sorted(summary.written) == [
        "sam/MEMORY.md",
        "sam/memory/2026-01-05.md",
        "sam/memory/2026-01-07.md",
        f"{ben}/MEMORY.md",
        f"{ben}/memory/2026-01-02.md",
    ]
    memory_md = (mirror_dir / "sam" / "MEMORY.md").read_text(encoding="utf-8")
    assert "balcony" not in memory_md and "Sam lives in Porto." not in memory_md

    target = await start(aiohttp_client, tmp_path / "target", minilm)
    imported = await import_folder(target, mirror_dir)

    assert sorted(s.user_id for s in imported) == ["sam", "telegram:42"]
    assert sum(s.added for s in imported) == len(mirrored(source)) == 13
    assert mirrored(target) == mirrored(source)


async def test_export_writes_only_changed_files_atomically_and_keeps_the_bytes_stable(
    aiohttp_client: Any, tmp_path: Path, minilm: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    client = await start(aiohttp_client, tmp_path / "db", minilm)
    await store(client, *SOURCE_MEMORIES, dedup=False)
    markdown = client.app[MARKDOWN_WORKSPACES]
    folder = tmp_path / "mirror"
    await markdown.export(folder, user_id="sam")
    snapshot = {path: path.read_bytes() for path in folder.rglob("*.md")}
    for path in snapshot:
        os.utime(path, (1_000_000_000, 1_000_000_000))

    again = await markdown.export(folder, user_id="sam")

    assert again.written == [] and again.unchanged == len(snapshot) == 3
    assert {path: path.read_bytes() for path in folder.rglob("*.md")} == snapshot
    assert {path.stat().st_mtime for path in snapshot} == {1_000_000_000}

    await store(
        client,
        {
            "user_id": "sam",
            "fact": "Sam runs on Sundays.",
            "layer": "working",
            "created_at": "2026-01-05T07:00:00Z",
        },
    )
    changed = await markdown.export(folder, user_id="sam")

    assert changed.written == ["memory/2026-01-05.md"]
    assert (folder / "MEMORY.md").stat().st_mtime == 1_000_000_000

    # A write that fails half-way leaves the old file whole and no temporary file behind.
    await store(client, {"user_id": "sam", "fact": "Sam swims on Mondays.", "category": "fact"})
    before = (folder / "MEMORY.md").read_bytes()

    def broken_fsync(descriptor: int) -> None:
        raise OSError(28, "No space left on device")

    with monkeypatch.context() as patched, pytest.raises(OSError, match="No space left"):
        patched.setattr(mirror_files.os, "fsync", broken_fsync)
        await markdown.export(folder, user_id="sam")

    assert (folder / "MEMORY.md").read_bytes() == before
    assert sorted(p.name for p in folder.rglob("*") if p.is_file()) == [
        "2026-01-05.md",
        "2026-01-07.md",
        "MEMORY.md",
    ]


async def test_day_files_without_memories_are_removed_only_when_the_mirror_wrote_them(
    aiohttp_client: Any, tmp_path: Path, minilm: Any
) -> None:
    client = await start(aiohttp_client, tmp_path / "db", minilm)
    [note] = await store(
        client,
        {
            "user_id": "sam",
            "fact": "Sam has a dentist appointment.",
            "layer": "working",
            "created_at": "2026-01-05T09:00:00Z",
        },
    )
    folder = tmp_path / "mirror"
    markdown = client.app[MARKDOWN_WORKSPACES]
    await markdown.export(folder, user_id="sam")
    own_log = folder / "memory" / "2025-12-31.md"
    own_log.write_text("# 2025-12-31\n\n- Written by the agent itself.\n", encoding="utf-8")

    await client.delete(f"/memories/{note['id']}", headers=JSON)
    summary = await markdown.export(folder, user_id="sam")

    assert summary.removed == ["memory/2026-01-05.md"]
    assert not (folder / "memory" / "2026-01-05.md").exists()
    assert own_log.read_text(encoding="utf-8").endswith("Written by the agent itself.\n")


async def test_a_hand_written_memory_md_is_never_overwritten_without_force(
    aiohttp_client: Any, tmp_path: Path, minilm: Any
) -> None:
    client = await start(aiohttp_client, tmp_path / "db", minilm)
    await store(client, {"user_id": "sam", "fact": "Sam is a nurse.", "category": "identity"})
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    (workspace / "MEMORY.md").write_text("# My own notes\n", encoding="utf-8")
    markdown = client.app[MARKDOWN_WORKSPACES]

    refused = await markdown.export(workspace, user_id="sam")

    assert refused.conflicts == ["MEMORY.md"] and refused.written == []
    assert (workspace / "MEMORY.md").read_text(encoding="utf-8") == "# My own notes\n"

    forced = await markdown.export(workspace, user_id="sam", force=True)

    assert forced.written == ["MEMORY.md"]
    assert "- Sam is a nurse. (" in (workspace / "MEMORY.md").read_text(encoding="utf-8")


async def test_a_user_with_nothing_left_to_mirror_loses_the_folder_the_mirror_made(
    aiohttp_client: Any, tmp_path: Path, minilm: Any
) -> None:
    client = await start(aiohttp_client, tmp_path / "db", minilm)
    [gone] = await store(client, {"user_id": "ben", "fact": "Ben knits scarves."})
    await store(client, {"user_id": "sam", "fact": "Sam is a nurse."})
    folder = tmp_path / "mirror"
    markdown = client.app[MARKDOWN_WORKSPACES]
    await markdown.export(folder)
    (folder / "notes").mkdir()  # not a mirror folder: never touched
    (folder / "notes" / "MEMORY.md").write_text("mine\n", encoding="utf-8")

    await client.patch(f"/memories/{gone['id']}", json={"layer": "archive"})
    summary = await markdown.export(folder)

    assert summary.removed == ["ben/MEMORY.md"]
    assert sorted(p.name for p in folder.iterdir()) == ["notes", "sam"]
    assert (folder / "notes" / "MEMORY.md").read_text(encoding="utf-8") == "mine\n"


def test_links_leaving_the_workspace_are_not_read(tmp_path: Path) -> None:
    """A MEMORY.md or daily log that links to ~/.ssh or /etc is skipped; a link inside stays."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "id_rsa.md").write_text("- the private key\n", encoding="utf-8")
    workspace = tmp_path / "workspace"
    (workspace / "memory").mkdir(parents=True)
    (workspace / "notes.md").write_text("- Sam keeps bees.\n", encoding="utf-8")
    (workspace / "MEMORY.md").symlink_to(workspace / "notes.md")
    (workspace / "memory" / "2026-01-05.md").symlink_to(outside / "id_rsa.md")
    (workspace / "memory" / "2026-01-06.md").write_text("- Sam bought a hive.\n", encoding="utf-8")

    files = read_workspace(workspace)

    assert files == {"MEMORY.md": "- Sam keeps bees.\n", "memory/2026-01-06.md": "- Sam bought a hive.\n"}


def test_a_memory_folder_that_links_outside_is_not_read(tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "2026-01-05.md").write_text("- not the workspace's\n", encoding="utf-8")
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    (workspace / "MEMORY.md").write_text("- Sam keeps bees.\n", encoding="utf-8")
    (workspace / "memory").symlink_to(outside, target_is_directory=True)

    assert read_workspace(workspace) == {"MEMORY.md": "- Sam keeps bees.\n"}
