"""An import killed with SIGKILL mid-way (issue 25): the store stays consistent, the import is
marked interrupted at the next start, and sending the workspace again completes it without a
duplicate. The real daemon runs as a subprocess; its embedder is the real MiniLM behind a loopback
embedding server (so the daemon starts without loading a model of its own)."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path
from typing import Any

import pytest

from memory_cortex.models.embedders import SentenceTransformerEmbedder
from tests.processes import Daemon, embedding_server, send

MEMORIES = 600


def workspace() -> dict[str, str]:
    lines = "\n".join(f"- Planted bed {n} with variety {n * 13} of heirloom tomato." for n in range(MEMORIES))
    return {"memory/2026-03-01.md": lines}


def start_import(daemon: Daemon) -> int:
    reply = send(daemon.port, "POST", "/import", {"user_id": "ivy", "files": workspace()}, timeout=30)
    assert reply.status == 202 and reply.body["status"] == "running", reply
    return int(reply.body["id"])


def run_of(daemon: Daemon, import_id: int) -> dict[str, Any]:
    reply = send(daemon.port, "GET", f"/import/runs/{import_id}")
    assert reply.status == 200, reply
    return dict(reply.body)


def stored_facts(db: Path) -> list[str]:
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        return [row[0] for row in conn.execute("SELECT fact FROM memories WHERE user_id = 'ivy'")]
    finally:
        conn.close()


@pytest.mark.slow
def test_an_import_killed_mid_way_is_marked_interrupted_and_a_second_import_completes_it(
    tmp_path: Path, minilm: SentenceTransformerEmbedder
) -> None:
    db = tmp_path / "memories.db"
    with embedding_server(minilm) as embed_url:
        settings = {
            "MEMORY_CORTEX_LOGGING__FORMAT": "json",
            "MEMORY_CORTEX_HARDWARE__ENABLED": "false",
            "MEMORY_CORTEX_LIFECYCLE__ENABLED": "false",
            "MEMORY_CORTEX_EMBEDDINGS__BACKEND": "http",
            "MEMORY_CORTEX_EMBEDDINGS__URL": embed_url,
        }
        daemon = Daemon(db, tmp_path / "daemon.log")
        daemon.spawn(settings)
        daemon.wait_ready()
        import_id = start_import(daemon)
        deadline = time.monotonic() + 120
        while (run := run_of(daemon, import_id))["done"] < MEMORIES // 4:  # a part is written
            assert run["status"] == "running" and time.monotonic() < deadline, run
            time.sleep(0.1)
        daemon.kill()
        partial = stored_facts(db)
        assert 0 < len(partial) < MEMORIES, len(partial)

        daemon.spawn(settings)
        daemon.wait_ready()
        killed = run_of(daemon, import_id)
        assert killed["status"] == "interrupted" and "send the workspace again" in killed["error"], killed
        assert killed["result"] is None and killed["finished_at"]

        again = start_import(daemon)
        assert again != import_id
        deadline = time.monotonic() + 300
        while (run := run_of(daemon, again))["status"] == "running":
            assert time.monotonic() < deadline, run
            time.sleep(0.2)
        assert run["status"] == "done", run
        result = run["result"]
        assert result["memories"] == MEMORIES
        assert result["skipped"] >= len(partial)  # what the killed import wrote is not written again
        assert daemon.stop() == 0
    facts = stored_facts(db)
    assert len(facts) == len(set(facts))  # no text twice
    assert len(facts) == len(partial) + result["added"]  # only the second import's new rows added
    assert result["added"] + result["merged"] + result["skipped"] == MEMORIES
