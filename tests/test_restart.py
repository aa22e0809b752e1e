"""Restarts keep everything: in-process on the same file, and the real CLI daemon after SIGTERM."""

from __future__ import annotations

import json
import signal
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from memory_cortex.keys import VECTOR_INDEX
from memory_cortex.vectormath import from_blob
from tests.helpers import search, store
from tests.processes import call, free_port, start_daemon


async def test_restart_keeps_memories_and_rebuilds_the_vector_index(restartable: Any, config: Any) -> None:
    first = await restartable()
    stored = await store(
        first,
        {"user_id": "r", "fact": "Rosa's bike is a green Bianchi."},
        {"user_id": "r", "fact": "Rosa teaches chemistry."},
    )
    await first.patch(f"/memories/{stored[1]['id']}", json={"fact": "Rosa teaches physics."})
    second = await restartable()
    index = second.app[VECTOR_INDEX]
    assert len(index) == 2
    # The rebuilt matrix equals the BLOBs, row for row.
    import sqlite3

    conn = sqlite3.connect(config.database.path)
    for memory_id, user_id, blob in conn.execute("SELECT id, user_id, embedding FROM memories"):
        assert np.allclose(index.cosines(user_id, from_blob(blob), [memory_id])[memory_id], 1.0, atol=1e-5)
    conn.close()
    body = await search(second, "which bicycle brand?", "r", mode="vector", limit=1)
    assert body["results"][0]["id"] == stored[0]["id"]
    body = await search(second, "physics", "r")
    assert body["results"][0]["fact"] == "Rosa teaches physics."


@pytest.mark.slow
def test_cli_daemon_stops_cleanly_on_sigterm_and_restarts_with_its_data(tmp_path: Path) -> None:
    db, log = tmp_path / "daemon.db", tmp_path / "daemon.log"
    port = free_port()
    process = start_daemon(db, port, log)
    try:
        stored = call(port, "POST", "/memories", {"user_id": "s", "fact": "Sam's locker code is 4812."})
        assert stored["embedded"] is True
        # What the dashboard's filters send: text typed there travels in the query string.
        found = call(port, "GET", "/memories?user_id=s&q=4812&topic=lockerroom")
        assert found["count"] == 0  # the topic matches nothing
    finally:
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=30) == 0
    lines = [json.loads(line) for line in log.read_text().splitlines() if line.startswith("{")]
    assert any(line["message"] == "database closed" for line in lines)
    # No memory text in the log at INFO, nor the filters' query strings; the access log keeps the path.
    assert "4812" not in log.read_text() and "lockerroom" not in log.read_text()
    access = [line for line in lines if line.get("logger") == "memory_cortex.access"]
    assert {"method": "GET", "path": "/memories", "status": 200} in [
        {key: line[key] for key in ("method", "path", "status")} for line in access
    ]

    process = start_daemon(db, port, log)
    try:
        body = call(port, "POST", "/hybrid-search", {"query": "locker code", "user_id": "s"})
        assert body["results"][0]["id"] == stored["id"]
        assert call(port, "GET", "/stats")["total_memories"] == 1
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=30)
