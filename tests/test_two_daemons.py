"""Two real daemons on one PostgreSQL under concurrent load, one killed with SIGKILL mid-load.

What must hold (issue 24): every write either daemon acknowledged is in the store afterwards; every
conversation either accepted is extracted, and no journal job is extracted twice, although the
killed daemon's claimed and pending jobs are taken over by the survivor.
"""

from __future__ import annotations

import json
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

import psycopg
import pytest

from memory_cortex.models.embedders import SentenceTransformerEmbedder
from tests.processes import Daemon, Outcome, embedding_server, send

SESSIONS_PER_WRITER = 12
MEMORIES_PER_WRITER = 15


def settings(url: str, embed_url: str) -> dict[str, str]:
    return {
        "MEMORY_CORTEX_DATABASE__BACKEND": "postgres",
        "MEMORY_CORTEX_DATABASE__URL": url,
        "MEMORY_CORTEX_LOGGING__FORMAT": "json",
        "MEMORY_CORTEX_LLM__BACKEND": "rules",
        "MEMORY_CORTEX_HARDWARE__ENABLED": "false",
        "MEMORY_CORTEX_INGEST__DEBOUNCE_S": "0.5",
        "MEMORY_CORTEX_EMBEDDINGS__BACKEND": "http",
        "MEMORY_CORTEX_EMBEDDINGS__URL": embed_url,
        "MEMORY_CORTEX_EMBEDDINGS__QUERY_TIMEOUT_S": "20",
    }


class Writer(threading.Thread):
    """Posts conversations and memories to one daemon, recording what was acknowledged."""

    def __init__(self, name: str, port: int) -> None:
        super().__init__(name=name, daemon=True)
        self.port = port
        self.acked_sessions: list[str] = []
        self.acked_memories: dict[int, str] = {}
        self.outcomes: Counter[str] = Counter()

    def run(self) -> None:
        for i in range(max(SESSIONS_PER_WRITER, MEMORIES_PER_WRITER)):
            if i < SESSIONS_PER_WRITER:
                session = f"{self.name}-s{i}"
                messages = [
                    {"role": "user", "content": f"Remember that I like {self.name} tea number {i}."},
                    {"role": "assistant", "content": "Noted."},
                ]
                reply = send(self.port, "POST", "/ingest", {"messages": messages, "session_id": session})
                self.outcomes[f"ingest {reply.outcome.value}"] += 1
                if reply.outcome is Outcome.ACKED:
                    self.acked_sessions.append(session)
            if i < MEMORIES_PER_WRITER:
                fact = f"{self.name} memory {i}: the blue kettle is in cupboard {i}."
                reply = send(self.port, "POST", "/memories?dedup=false", {"fact": fact})
                self.outcomes[f"memory {reply.outcome.value}"] += 1
                if reply.outcome is Outcome.ACKED:
                    self.acked_memories[int(reply.body["id"])] = fact
            time.sleep(0.05)


def jobs_done_in(log: Path) -> Counter[int]:
    """How many times each journal job was extracted by the daemon that wrote ``log``."""
    done: Counter[int] = Counter()
    for line in log.read_text(errors="replace").splitlines():
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if isinstance(record, dict) and record.get("message") == "ingest job done":
            done[int(record["job"])] += 1
    return done


def wait_until(predicate: Any, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.3)
    raise AssertionError(f"timed out waiting for {what}")


@pytest.mark.slow
def test_two_daemons_share_one_store_and_the_survivor_finishes_the_killed_ones_work(
    tmp_path: Path, postgres_url: str, minilm: SentenceTransformerEmbedder
) -> None:
    with embedding_server(minilm) as embed_url:
        first, second = (
            Daemon(tmp_path / "a.db", tmp_path / "a.log"),
            Daemon(tmp_path / "b.db", tmp_path / "b.log"),
        )
        try:
            for daemon in (first, second):
                daemon.spawn(settings(postgres_url, embed_url))
            for daemon in (first, second):
                daemon.wait_ready()
            writers = [Writer("alpha", first.port), Writer("beta", second.port), Writer("gamma", first.port)]
            for writer in writers:
                writer.start()
            # Mid-load: the first daemon dies with jobs claimed, pending and answered.
            on_first = [w for w in writers if w.port == first.port]
            wait_until(lambda: sum(len(w.acked_sessions) for w in on_first) >= 6, 60, "ingest traffic")
            first.kill()
            for writer in writers:
                writer.join(timeout=120)
            with psycopg.connect(postgres_url) as conn:

                def settled() -> bool:
                    row = conn.execute(
                        "SELECT count(*) FILTER (WHERE status IN ('pending', 'running')) FROM ingest_jobs"
                    ).fetchone()
                    conn.commit()
                    return row is not None and row[0] == 0

                # The survivor looks for a stopped daemon's jobs every 10 s.
                wait_until(settled, 90, "the survivor to finish every job")
                stored = dict(conn.execute("SELECT id, fact FROM memories WHERE kind = 'fact'").fetchall())
                jobs = conn.execute("SELECT session_id, status FROM ingest_jobs").fetchall()
        finally:
            first.kill()
            second.kill()

    acked_memories = {i: f for w in writers for i, f in w.acked_memories.items()}
    acked_sessions = {s for w in writers for s in w.acked_sessions}
    outcomes = sum((w.outcomes for w in writers), Counter())
    # The run did what it claims: acknowledged writes on both daemons, and some cut off by the kill.
    assert len(acked_memories) >= 12 and len(acked_sessions) >= 12, outcomes
    assert any(w.port == first.port and w.acked_sessions for w in writers)
    # No acknowledged write is lost.
    missing = {i: f for i, f in acked_memories.items() if stored.get(i) != f}
    assert not missing, missing
    journaled = {session for session, _ in jobs}
    assert acked_sessions <= journaled, acked_sessions - journaled
    assert all(status == "done" for _, status in jobs), jobs
    # No job extracted twice, across both daemons.
    done = jobs_done_in(first.log) + jobs_done_in(second.log)
    twice = {job: n for job, n in done.items() if n > 1}
    assert not twice, twice
    # And the survivor did extract what the dead daemon had taken or been sent.
    assert jobs_done_in(second.log), second.log_tail()
    print(f"\n{dict(outcomes)}; jobs extracted: {sum(done.values())}")
