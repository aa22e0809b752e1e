"""kill -9 between the 202 and the debounce timer loses nothing: the journal brings the job back."""

from __future__ import annotations

import signal
import time
from pathlib import Path

import pytest

from tests.processes import call, free_port, start_daemon


@pytest.mark.slow
def test_ingest_survives_sigkill_before_the_timer_fires(tmp_path: Path) -> None:
    db, log = tmp_path / "crash.db", tmp_path / "crash.log"
    port = free_port()
    env = {"MEMORY_CORTEX_LLM__BACKEND": "rules", "MEMORY_CORTEX_INGEST__DEBOUNCE_S": "3"}
    process = start_daemon(db, port, log, env)
    try:
        messages = [
            {"role": "user", "content": "Remember that my bike is a green Bianchi from 1987."},
            {"role": "assistant", "content": "Got it."},
        ]
        accepted = call(port, "POST", "/ingest", {"messages": messages, "session_id": "k", "user_id": "kim"})
        assert accepted["status"] == "queued"
    finally:
        process.send_signal(signal.SIGKILL)  # no shutdown, no flush: only what was committed survives
        process.wait(timeout=10)
    assert call_fails(port)

    process = start_daemon(db, port, log, env)
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            body = call(port, "POST", "/hybrid-search", {"query": "what bike do I ride", "user_id": "kim"})
            if body["count"]:
                break
            time.sleep(0.2)
        assert any("Bianchi" in result["fact"] for result in body["results"])
        # The turns are stored (and found) before the job's extraction ends: wait for its end.
        while (jobs := call(port, "GET", "/ingest/jobs")["jobs"]) and jobs[0]["status"] == "running":
            assert time.monotonic() < deadline, jobs
            time.sleep(0.1)
        assert [job["status"] for job in jobs] == ["done"]
        # Both messages came back as verbatim turns too, each once.
        turns = call(port, "GET", "/memories?user_id=kim&kinds=turn")["memories"]
        assert sorted(turn["fact"] for turn in turns) == [
            "Assistant: Got it.",
            "User: Remember that my bike is a green Bianchi from 1987.",
        ]
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=30)


def call_fails(port: int) -> bool:
    try:
        call(port, "GET", "/health")
    except OSError:
        return True
    return False
