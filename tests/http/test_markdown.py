"""``POST /import`` and the Markdown auto-sync, through the real server (real SQLite, real MiniLM)."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

from aiohttp.test_utils import TestClient

from memory_cortex.app import create_app
from memory_cortex.keys import DATABASE, MARKDOWN_SYNC, MEMORY_SERVICE
from memory_cortex.services.mirror_files import read_workspace
from tests.conftest import make_config
from tests.helpers import eventually, import_workspace, run_lifecycle, slowed, store

JSON = {"Content-Type": "application/json"}  # every write declares JSON, body or not (http/guard.py)

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "openclaw_workspace"


async def all_memories(client: TestClient, user_id: str) -> list[dict[str, Any]]:
    response = await client.get("/memories", params={"user_id": user_id, "limit": "1000"})
    assert response.status == 200
    return (await response.json())["memories"]


async def test_post_import_reads_the_workspace_content_and_a_second_post_adds_nothing(
    client: TestClient,
) -> None:
    files = read_workspace(FIXTURE)

    first = await import_workspace(client, {"user_id": "sam", "files": files})

    assert first == {
        "user_id": "sam",
        "files": [
            "MEMORY.md",
            "memory/2026-01-05.md",
            "memory/2026-01-06.md",
            "memory/2026-01-07-ryokan-booking.md",
            "memory/2026-01-09.md",
        ],
        "ignored_files": ["memory/README.md"],
        "memories": 35,
        "added": 33,
        "merged": 1,
        "skipped": 1,
        "too_long": 0,
        "secrets": 0,
    }
    stored = await all_memories(client, "sam")
    assert len(stored) == 33
    layers = {m["fact"]: (m["layer"], m["category"], m["created_at"]) for m in stored}
    assert layers["Drinks green tea, never coffee after 14:00."][:2] == ("core", "preference")
    assert layers["Sam's JLPT registration is confirmed: exam on 2026-07-05 in Lisbon."] == (
        "working",
        "fact",
        "2026-01-09T00:00:00.000Z",
    )
    found = await client.post(
        "/hybrid-search", json={"query": "what is the cat allergic to", "user_id": "sam"}
    )
    assert "Miso" in (await found.json())["results"][0]["fact"]

    second = await import_workspace(client, {"user_id": "sam", "files": files})

    assert (second["added"], second["merged"], second["skipped"]) == (0, 0, 35)
    # The same rows, unchanged (the search above counts reads on its own time: those fields aside).
    unchanged = ("id", "fact", "topic", "category", "layer", "importance", "created_at", "superseded_by")
    assert [{k: m[k] for k in unchanged} for m in await all_memories(client, "sam")] == [
        {k: m[k] for k in unchanged} for m in stored
    ]


async def test_the_mirrors_conversation_lines_come_back_as_turns(client: TestClient) -> None:
    """A mirror folder imported again (a restore, a move to another host) gives turns back as turns,
    said on their day, never as facts to promote or merge."""
    daily = (
        "# 2025-05-21\n\n## Facts\n\n- Tim's sister is getting married.\n\n"
        "## Conversation\n\n- Tim: I booked the flight to Lisbon.\n- Assistant: When is the wedding?\n"
    )
    body = await import_workspace(client, {"user_id": "tim", "files": {"memory/2025-05-21.md": daily}})
    assert body["added"] == 3
    stored = {m["fact"]: m for m in await all_memories(client, "tim")}
    said = stored["Tim: I booked the flight to Lisbon."]
    assert (said["kind"], said["layer"], said["occurred_at"]) == (
        "turn",
        "working",
        "2025-05-21T00:00:00.000Z",
    )
    assert stored["Assistant: When is the wedding?"]["kind"] == "turn"
    assert stored["Tim's sister is getting married."]["kind"] == "fact"


async def test_post_import_without_a_user_imports_for_the_default_user(client: TestClient) -> None:
    body = await import_workspace(client, {"files": {"MEMORY.md": "## Profile\n- Dana is a pilot.\n"}})

    assert body["user_id"] == "default" and body["added"] == 1
    [memory] = await all_memories(client, "default")
    assert (memory["category"], memory["layer"], memory["ref"]) == ("identity", "core", "MEMORY.md:2")


async def test_post_import_refuses_what_it_cannot_take_and_stores_nothing(client: TestClient) -> None:
    too_many = "\n".join(f"- Memory number {n}." for n in range(5001))
    cases = [
        {"files": {}},
        {"files": {"MEMORY.md": 42}},
        {"path": "/etc/passwd"},
        {"files": {"MEMORY.md": "- x"}, "workspace": "/home/sam/.openclaw/workspace"},
        {"files": {f"memory/2026-01-{n:04d}.md": "- x" for n in range(1001)}},
        {"files": {"MEMORY.md": too_many}},
    ]
    for body in cases:
        error = await import_workspace(client, body, status=400)
        assert error["error"]["code"] == "invalid_request", body
    assert "at most 5000 per request" in error["error"]["message"]
    assert await all_memories(client, "default") == []


async def test_post_import_lists_files_that_are_not_memory_files(client: TestClient) -> None:
    body = await import_workspace(
        client,
        {
            "user_id": "sam",
            "files": {
                "USER.md": "- Not read.",
                "memory/notes.md": "- Not a daily log.",
                "memory.md": "- Read.",
            },
        },
    )

    assert body["files"] == ["memory.md"] and body["ignored_files"] == ["USER.md", "memory/notes.md"]
    assert [m["fact"] for m in await all_memories(client, "sam")] == ["Read."]


# -- the auto-sync --------------------------------------------------------------------------
def markdown_files(folder: Path) -> list[Path]:
    return list(folder.rglob("*.md"))


def text_of(path: Path) -> str:
    return path.read_text(encoding="utf-8") if path.exists() else ""


async def test_the_mirror_follows_ingest_batches_and_imports(
    aiohttp_client: Any, tmp_path: Path, minilm: Any
) -> None:
    mirror = tmp_path / "mirror"
    config = make_config(
        tmp_path, markdown={"sync_dir": mirror, "sync_debounce_s": 0.05}, ingest={"debounce_s": 0}
    )
    client = await aiohttp_client(create_app(config, embedder=minilm, llm=None))
    message = {"role": "user", "content": "Remember that my sister Ana lives in Porto. I prefer green tea."}

    response = await client.post(
        "/ingest", json={"messages": [message], "user_id": "sam", "session_id": "s1", "debounce": False}
    )
    assert response.status == 202

    memory_md = mirror / "sam" / "MEMORY.md"
    await eventually(lambda: "The user prefers green tea." in text_of(memory_md))
    text = text_of(memory_md)
    assert "## Preferences\n\n- The user prefers green tea. (" in text
    assert "Ana (the user's sister) lives in Porto." in text  # about Ana, who is the user's sister

    await import_workspace(
        client, {"user_id": "sam", "files": {"memory/2026-01-05.md": "- Sam compared rail passes."}}
    )

    day = mirror / "sam" / "memory" / "2026-01-05.md"
    await eventually(lambda: "- Sam compared rail passes." in text_of(day))
    syncs = client.app[MARKDOWN_SYNC].syncs
    assert syncs >= 2 and client.app[MARKDOWN_SYNC].last_error is None


async def test_the_mirror_is_written_at_start_and_what_is_pending_is_written_on_stop(
    aiohttp_client: Any, tmp_path: Path, minilm: Any
) -> None:
    first = await aiohttp_client(create_app(make_config(tmp_path), embedder=minilm, llm=None))
    await store(first, {"user_id": "sam", "fact": "Sam is a nurse.", "category": "identity"})
    await first.close()
    mirror = tmp_path / "mirror"
    # A long debounce: only the start and the stop can write the mirror in this test.
    config = make_config(tmp_path, markdown={"sync_dir": mirror, "sync_debounce_s": 600})
    client = await aiohttp_client(create_app(config, embedder=minilm, llm=None))
    sync = client.app[MARKDOWN_SYNC]
    await eventually(lambda: sync.syncs == 1)
    assert "- Sam is a nurse. (" in text_of(mirror / "sam" / "MEMORY.md")
    await store(client, {"user_id": "sam", "fact": "Sam plays chess.", "category": "fact"})
    sync.request_sync()
    assert sync.pending and sync.syncs == 1  # the request waits out the debounce (600 s)

    await client.close()

    assert sync.syncs == 2
    assert "- Sam plays chess. (" in text_of(mirror / "sam" / "MEMORY.md")


async def test_without_a_sync_dir_nothing_is_written(client: TestClient, tmp_path: Path) -> None:
    await import_workspace(client, {"user_id": "sam", "files": {"MEMORY.md": "- Sam is a nurse."}})
    sync = client.app[MARKDOWN_SYNC]

    assert not sync.enabled and sync.syncs == 0
    assert markdown_files(tmp_path) == []


async def test_a_lifecycle_run_rewrites_the_mirror(aiohttp_client: Any, tmp_path: Path, minilm: Any) -> None:
    """A working memory the run archives (past its TTL) leaves its day file; a preview changes nothing."""
    mirror = tmp_path / "mirror"
    config = make_config(tmp_path, markdown={"sync_dir": mirror, "sync_debounce_s": 0.05})
    client = await aiohttp_client(create_app(config, embedder=minilm, llm=None))
    sync = client.app[MARKDOWN_SYNC]
    await store(
        client,
        {
            "user_id": "sam",
            "fact": "Sam compared rail passes.",
            "layer": "working",
            "created_at": "2026-01-05T10:00:00Z",
        },
    )
    # As if written on its date: the working TTL counts from when a memory entered its layer.
    await client.app[DATABASE].write(
        lambda conn: conn.execute("UPDATE memories SET layer_since = created_at")
    )
    sync.request_sync()
    day = mirror / "sam" / "memory" / "2026-01-05.md"
    await eventually(lambda: "rail passes" in text_of(day))
    before = sync.syncs

    preview = await client.get("/lifecycle/preview")
    assert preview.status == 200
    assert not sync.pending and sync.syncs == before  # a dry run asks for no rewrite

    assert (await run_lifecycle(client))["status"] == "done"
    await eventually(lambda: "rail passes" not in text_of(day))
    assert sync.syncs > before


async def test_an_import_answers_at_once_and_is_followed_to_its_end(client: TestClient) -> None:
    """Hundreds of memories take seconds to embed and deduplicate: the request answers 202 before,
    GET /import/runs/{id} shows how far the import got, then what it did; a second import of the
    same workspace meanwhile is refused, naming the first."""
    slowed(client.app[MEMORY_SERVICE], "create", 0.2)  # each batch of 32: at least 2.6 s in all
    daily = "\n".join(f"- Visited garden number {n} and noted plant {n * 7}." for n in range(400))
    body = {"user_id": "ivy", "files": {"memory/2026-02-01.md": daily}}
    began = time.monotonic()
    response = await client.post("/import", json=body)
    assert response.status == 202, await response.text()
    assert time.monotonic() - began < 1.0
    started = await response.json()
    assert (started["status"], started["user_id"], started["result"]) == ("running", "ivy", None)
    again = await client.post("/import", json=body)
    assert again.status == 409
    error = (await again.json())["error"]
    assert error["code"] == "import_busy" and error["run_id"] == started["id"]
    other = await import_workspace(
        client, {"user_id": "ivy", "agent_id": "work", "files": {"MEMORY.md": "- x y z"}}
    )
    assert other["added"] == 1  # another agent's workspace is another import
    seen: list[tuple[int, int]] = []
    deadline = time.monotonic() + 120
    while True:
        run = await (await client.get(response.headers["Location"])).json()
        if run["status"] != "running":
            break
        seen.append((run["done"], run["total"]))
        assert time.monotonic() < deadline, run
        await asyncio.sleep(0.1)
    assert run["status"] == "done" and run["error"] is None and run["finished_at"]
    assert run["done"] == run["total"] == 400 and run["result"]["added"] + run["result"]["merged"] == 400
    assert seen == sorted(seen)  # never going back
    assert any(0 < done < 400 for done, _ in seen), seen  # part-way progress was shown
    mine = [m for m in await all_memories(client, "ivy") if m["agent_id"] is None]
    assert len(mine) == run["result"]["added"]


async def test_an_unknown_import_is_404_and_a_bad_id_400(client: TestClient) -> None:
    missing = await client.get("/import/runs/12345")
    assert missing.status == 404 and (await missing.json())["error"]["code"] == "import_not_found"
    bad = await client.get("/import/runs/x")
    assert bad.status == 400 and (await bad.json())["error"]["code"] == "invalid_request"
