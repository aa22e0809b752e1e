"""A lifecycle run killed with SIGKILL mid-way leaves a consistent store, and the next run completes
it: the end state equals that of one uninterrupted run on a copy of the same database.

The real daemon runs as a subprocess (``python -m memory_cortex serve``) on a database built here with
real MiniLM vectors: working memories to promote and to expire, near-duplicates to merge, stale core
memories to decay and old archive entries to summarise. Its LLM is a loopback OpenAI-compatible
server that this test controls, so a run can be held inside the compress stage (after promote,
merge and decay have committed) and killed there; kills at seeded random moments of runs follow.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
import shutil
import sqlite3
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from memory_cortex.models.embedders import SentenceTransformerEmbedder
from memory_cortex.records import NewMemory
from memory_cortex.services.memories import MemoryService
from memory_cortex.store.db import Database
from memory_cortex.store.vectors import VectorIndex
from tests.processes import Daemon, embedding_server, send

SEED = 20261123
RANDOM_KILLS = 3


class ChatServer:
    """An OpenAI-compatible ``/v1/chat/completions`` on loopback whose answers can be held.

    The summary it writes is derived from the prompt (its first memory line), so two runs asked
    the same thing write the same summary.
    """

    def __init__(self) -> None:
        self.hold = threading.Event()  # set: requests wait until released
        self.released = threading.Event()
        self.received = threading.Event()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                self._reply({"data": [{"id": "fake"}]})

            def do_POST(self) -> None:
                try:
                    body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                except (OSError, ValueError):
                    return
                server.received.set()
                if server.hold.is_set():
                    server.released.wait(timeout=120)
                first = body["messages"][-1]["content"].splitlines()[1]
                content = f"History: {first.split(': ', 1)[-1]}"
                self._reply({"choices": [{"message": {"content": content}, "finish_reason": "stop"}]})

            def _reply(self, payload: dict[str, Any]) -> None:
                data = json.dumps(payload).encode()
                with contextlib.suppress(ConnectionError):  # the daemon was killed while it waited
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    @contextlib.contextmanager
    def running(self) -> Iterator[ChatServer]:
        thread = threading.Thread(target=self.server.serve_forever, name="chat-server", daemon=True)
        thread.start()
        try:
            yield self
        finally:
            self.released.set()
            self.server.shutdown()
            self.server.server_close()
            thread.join(timeout=10)


def build_database(path: Path, embedder: SentenceTransformerEmbedder) -> None:
    """Memories for every stage, dated against the real clock (the daemon's), far from thresholds."""
    now = datetime.now(UTC)

    def ago(days: float) -> str:
        return (now - timedelta(days=days)).isoformat(timespec="milliseconds").replace("+00:00", "Z")

    rng = random.Random(SEED)
    places = ["Lisbon", "Porto", "Berlin", "Oslo", "Kyoto", "Lima", "Cairo", "Dublin"]
    items: list[tuple[NewMemory, int]] = []  # memory, reads
    for user in ("sam", "ann"):
        for i, place in enumerate(places):
            reads = 5 if i % 3 == 0 else 0
            items.append(
                (
                    NewMemory(
                        user,
                        f"{user} went to {place} for work.",
                        layer="working",
                        created_at=ago(3 if i % 2 else 0.2),
                    ),
                    reads,
                )
            )
            items.append((NewMemory(user, f"{user} lives near the {place} harbour.", created_at=ago(40)), 0))
            items.append(
                (NewMemory(user, f"{user} lives close to the {place} harbour.", created_at=ago(5)), 1)
            )
            items.append(
                (
                    NewMemory(
                        user,
                        f"Pay the {place} parking fine.",
                        category="todo",
                        created_at=ago(rng.choice((10, 60))),
                    ),
                    0,
                )
            )
            items.append(
                (NewMemory(user, f"{user} was born in {place}.", category="identity", created_at=ago(20)), 0)
            )
            for month in (200, 230):
                items.append(
                    (
                        NewMemory(
                            user,
                            f"{user} fixed a bike in {place} ({month}).",
                            layer="archive",
                            created_at=ago(month + i),
                        ),
                        0,
                    )
                )

    async def write() -> None:
        db = Database(path)
        await asyncio.to_thread(db.open)
        try:
            memories = MemoryService(db, VectorIndex(embedder.model, embedder.dim), embedder)
            outcomes = await memories.create([item for item, _ in items], dedup=False)
            # Each entered its layer when it was created (a write sets layer_since to now: issue 23).
            await db.write(lambda conn: conn.execute("UPDATE memories SET layer_since = created_at"))
            for outcome, (_, reads) in zip(outcomes, items, strict=True):
                if reads:
                    await db.write(
                        lambda conn, o=outcome, r=reads: conn.execute(
                            "UPDATE memories SET access_count = ?, last_accessed = ? WHERE id = ?",
                            (r, ago(1), o.record.id),
                        )
                    )
        finally:
            await asyncio.to_thread(db.close)

    asyncio.run(write())


def state(path: Path) -> dict[str, Any]:
    """What a run decides: layers, hidden rows, summaries, links (not when, not which run)."""
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        rows = {}
        for row in conn.execute(
            "SELECT id, user_id, fact, category, importance, access_count, layer, superseded_by,"
            " compressed_into, json_remove(metadata, '$.lifecycle_run') FROM memories ORDER BY id"
        ):
            rows[row[0]] = row[1:]
        links = sorted(conn.execute("SELECT kind, from_id, to_id FROM memory_links").fetchall())
        return {"rows": rows, "links": links}
    finally:
        conn.close()


def integrity(path: Path) -> str:
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return str(conn.execute("PRAGMA integrity_check").fetchone()[0])
    finally:
        conn.close()


def start_run(port: int) -> tuple[int, float]:
    """``POST /lifecycle/run``: the run's id and how long the daemon took to answer (202)."""
    began = time.monotonic()
    reply = send(port, "POST", "/lifecycle/run", timeout=30)
    answered_s = time.monotonic() - began
    assert reply.status == 202 and reply.body["status"] == "running", reply
    return int(reply.body["id"]), answered_s


def follow(port: int, run_id: int, timeout: float = 120) -> dict[str, Any]:
    """The run's report once it has ended, read from ``GET /lifecycle/runs/{id}``."""
    deadline = time.monotonic() + timeout
    while True:
        run = send(port, "GET", f"/lifecycle/runs/{run_id}").body
        if run["status"] != "running":
            return dict(run["report"])
        assert time.monotonic() < deadline, run
        time.sleep(0.1)


def run_to_end(port: int) -> dict[str, Any]:
    return follow(port, start_run(port)[0])


def run_until_settled(daemon: Daemon, settings: dict[str, str], most: int = 4) -> None:
    """Run until a run changes nothing (history summaries written by one run may merge in the next)."""
    daemon.spawn(settings)
    daemon.wait_ready()
    for _ in range(most):
        report = run_to_end(daemon.port)
        assert report["status"] == "done", report
        changed = sum(
            count
            for stage in report["stages"]
            for kind, count in stage["counts"].items()
            if kind in ("promoted", "expired", "merged", "archived", "summaries")
        )
        if not changed:
            break
    else:
        raise AssertionError(f"still changing after {most} runs")
    assert daemon.stop() == 0


@pytest.mark.slow
def test_a_run_killed_mid_way_is_completed_by_the_next_run(
    tmp_path: Path, minilm: SentenceTransformerEmbedder
) -> None:
    initial = tmp_path / "initial.db"
    build_database(initial, minilm)
    rows_at_start = len(state(initial)["rows"])
    chat = ChatServer()
    with embedding_server(minilm) as embed_url, chat.running():
        settings = {
            "MEMORY_CORTEX_LOGGING__FORMAT": "json",
            "MEMORY_CORTEX_HARDWARE__ENABLED": "false",
            "MEMORY_CORTEX_LIFECYCLE__ENABLED": "false",  # runs only when this test asks
            "MEMORY_CORTEX_EMBEDDINGS__BACKEND": "http",
            "MEMORY_CORTEX_EMBEDDINGS__URL": embed_url,
            "MEMORY_CORTEX_LLM__BACKEND": "openai",
            "MEMORY_CORTEX_LLM__URL": chat.url,
            "MEMORY_CORTEX_LLM__RETRIES": "0",
            "MEMORY_CORTEX_LIFECYCLE__SUMMARY_BATCH_SIZE": "5",
        }

        # The reference: one uninterrupted run on a copy.
        reference = tmp_path / "reference.db"
        shutil.copy(initial, reference)
        daemon = Daemon(reference, tmp_path / "reference.log")
        daemon.spawn(settings)
        daemon.wait_ready()
        started = time.monotonic()
        report = run_to_end(daemon.port)
        run_seconds = time.monotonic() - started
        assert report["status"] == "done", report
        stages = {s["name"]: s for s in report["stages"]}
        for name, kind in (
            ("promote", "promoted"),
            ("promote", "expired"),
            ("merge", "merged"),
            ("decay", "archived"),
            ("compress", "summaries"),
        ):
            assert stages[name]["counts"][kind] > 0, (name, kind, stages[name])
        assert daemon.stop() == 0
        after_one_run = state(reference)

        # Killed while the LLM writes the summaries: promote, merge, decay and sessions (none due) have
        # committed.
        crashed = tmp_path / "crashed.db"
        shutil.copy(initial, crashed)
        daemon = Daemon(crashed, tmp_path / "crashed.log")
        daemon.spawn(settings)
        daemon.wait_ready()
        chat.received.clear()
        chat.hold.set()
        run_id, answered_s = start_run(daemon.port)
        # The run goes on after its client got the 202 and closed the connection, until it waits for
        # the LLM inside compress: a run that cannot end answered at once.
        assert answered_s < 1.0
        assert chat.received.wait(timeout=60), daemon.log_tail()
        run = send(daemon.port, "GET", f"/lifecycle/runs/{run_id}").body
        assert (run["status"], run["stage"], run["stages_done"], run["stages_total"]) == (
            "running",
            "compress",
            4,
            6,
        )
        assert [s["name"] for s in run["report"]["stages"]] == ["promote", "merge", "decay", "sessions"]
        second = send(daemon.port, "POST", "/lifecycle/run")
        assert second.status == 409 and second.body["error"]["code"] == "lifecycle_busy", second
        assert second.body["error"]["run_id"] == run_id  # the run to follow instead
        daemon.kill()
        chat.hold.clear()
        chat.released.set()
        assert integrity(crashed) == "ok"
        midway = state(crashed)
        assert len(midway["rows"]) == rows_at_start  # no summary yet, nothing lost
        assert {kind for kind, _, _ in midway["links"]} == {"merged"}
        assert midway != after_one_run
        conn = sqlite3.connect(crashed)
        (status,) = conn.execute("SELECT status FROM lifecycle_runs ORDER BY id DESC LIMIT 1").fetchone()
        conn.close()
        assert status == "running"

        # The next run completes the work: the store is as after one uninterrupted run.
        daemon.spawn(settings)
        daemon.wait_ready()
        (run,) = send(daemon.port, "GET", "/lifecycle/log").body["runs"]
        assert run["status"] == "interrupted"
        assert [s["name"] for s in run["report"]["stages"]] == ["promote", "merge", "decay", "sessions"]
        killed = send(daemon.port, "GET", f"/lifecycle/runs/{run_id}").body
        assert (killed["status"], killed["stage"], killed["stages_done"]) == ("interrupted", None, 4)
        assert run_to_end(daemon.port)["status"] == "done"
        assert daemon.stop() == 0
        assert integrity(crashed) == "ok"
        assert state(crashed) == after_one_run

        # Kills at seeded random moments of runs from the start; then runs until nothing changes,
        # as on the reference: both settle in the same state.
        shutil.copy(initial, crashed)
        for suffix in ("-wal", "-shm"):
            Path(f"{crashed}{suffix}").unlink(missing_ok=True)
        rng = random.Random(SEED)
        for _ in range(RANDOM_KILLS):
            daemon.spawn(settings)
            daemon.wait_ready()
            start_run(daemon.port)
            time.sleep(rng.uniform(0.0, run_seconds))
            daemon.kill()
            assert integrity(crashed) == "ok"
            assert len(state(crashed)["rows"]) >= rows_at_start
        run_until_settled(daemon, settings)
        run_until_settled(Daemon(reference, tmp_path / "reference.log"), settings)
    assert integrity(crashed) == "ok"
    assert state(crashed) == state(reference)
