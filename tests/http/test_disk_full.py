"""Issue 34: a full disk. A write the database refuses for lack of space is answered 507
``disk_full`` (no traceback, no 500), reads keep working, ``/health``, ``/stats`` and ``/metrics`` say
so, an extraction job waits in the journal untried instead of failing, and once space is freed
writes and the waiting job go through. Through the real server on both backends: on SQLite the
writer's ``max_page_count`` makes SQLite itself answer SQLITE_FULL ("database or disk is full"); on
PostgreSQL a trigger makes the server answer SQLSTATE 53100 (``disk_full``), as a full disk does."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from aiohttp.test_utils import TestClient

from memory_cortex.app import create_app
from memory_cortex.keys import DATABASE
from memory_cortex.services import ingest as ingest_module
from tests.conftest import make_config
from tests.helpers import Disk, search, store

JSON = {"Content-Type": "application/json"}
async def start(aiohttp_client: Any, tmp_path: Any, minilm: Any, **ingest: Any) -> tuple[TestClient, Disk]:
    config = make_config(tmp_path, ingest={"debounce_s": 0, **ingest})
    client = await aiohttp_client(create_app(config, embedder=minilm, llm=None))
    return client, Disk(client.app)


def long_fact(word: str) -> str:
    """A fact far longer than a page: it needs new pages, whatever room the old ones have."""
    return f"Sam's notes on {word}: " + " ".join(f"{word}{i}" for i in range(1500))


async def metric(client: TestClient, name: str) -> float | None:
    text = await (await client.get("/metrics")).text()
    for line in text.splitlines():
        if line.startswith(name + " "):
            return float(line.split()[1])
    return None


async def test_a_write_refused_for_space_is_507_disk_full_and_reads_go_on(
    aiohttp_client: Any, tmp_path: Any, minilm: Any, caplog: pytest.LogCaptureFixture
) -> None:
    client, disk = await start(aiohttp_client, tmp_path, minilm)
    await store(client, {"fact": "Sam keeps bees on the roof.", "user_id": "sam"})
    assert (await (await client.get("/health")).json())["disk_full"] is False
    await disk.fill()

    caplog.set_level(logging.WARNING)
    refused = await client.post("/memories", json={"fact": long_fact("hive"), "user_id": "sam"})
    assert refused.status == 507, await refused.text()
    error = (await refused.json())["error"]
    assert error["code"] == "disk_full" and "full" in error["message"]
    ingest = await client.post(
        "/ingest",
        json={"messages": [{"role": "user", "content": long_fact("pollen")}], "session_id": "s1", "user_id": "sam"},
    )
    assert ingest.status == 507 and (await ingest.json())["error"]["code"] == "disk_full"

    health = await (await client.get("/health")).json()
    assert health["disk_full"] is True and health["status"] == "degraded"
    stats = await (await client.get("/stats")).json()
    assert stats["storage"]["full"] is True and stats["storage"]["refused_writes"] >= 2
    assert stats["storage"]["full_since"] is not None
    assert await metric(client, "memory_cortex_store_full") == 1
    assert (await metric(client, "memory_cortex_store_writes_refused_total") or 0) >= 2
    # Reads need no room.
    hits = await search(client, "bees", "sam")
    assert [hit["fact"] for hit in hits["results"]][:1] == ["Sam keeps bees on the roof."]
    assert (await client.post("/context", json={"query": "bees", "user_id": "sam"})).status == 200

    # Told once, as a warning; no traceback, no "unhandled error".
    full_logs = [r for r in caplog.records if r.getMessage().startswith("database full")]
    assert len(full_logs) == 1 and full_logs[0].levelno == logging.WARNING
    assert not [r for r in caplog.records if r.exc_info is not None or r.levelno >= logging.ERROR]

    await disk.free()
    stored = await client.post("/memories", json={"fact": long_fact("hive"), "user_id": "sam"})
    assert stored.status == 201, await stored.text()
    health = await (await client.get("/health")).json()
    assert health["disk_full"] is False and health["status"] == "ok"
    stats = await (await client.get("/stats")).json()
    assert stats["storage"]["full"] is False and stats["storage"]["full_since"] is None
    assert await metric(client, "memory_cortex_store_full") == 0
    assert [r for r in caplog.records if r.getMessage() == "database writable again"]


async def test_free_space_beside_a_sqlite_file_is_reported(aiohttp_client: Any, tmp_path: Any, minilm: Any) -> None:
    client, _ = await start(aiohttp_client, tmp_path, minilm)
    storage = (await (await client.get("/stats")).json())["storage"]
    if client.app[DATABASE].shared:  # PostgreSQL: the disk is the server's
        assert storage["free_bytes"] is None and await metric(client, "memory_cortex_store_free_bytes") is None
    else:
        assert storage["free_bytes"] > 0
        assert (await metric(client, "memory_cortex_store_free_bytes") or 0) > 0


async def test_a_job_that_meets_a_full_disk_waits_untried_and_runs_once_there_is_room(
    aiohttp_client: Any, tmp_path: Any, minilm: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(ingest_module, "STORAGE_FULL_PAUSE_S", 0.5)
    client, disk = await start(aiohttp_client, tmp_path, minilm, debounce_s=1.0)
    messages = [
        {"role": "user", "content": "Remember that my locker code word is walnut."},
        {"role": "assistant", "content": long_fact("walnut")},
    ]
    accepted = await client.post("/ingest", json={"messages": messages, "session_id": "s1", "user_id": "sam"})
    assert accepted.status == 202, await accepted.text()
    await disk.fill()  # before the debounce is over: the job meets a full disk

    stats = await stats_when(client, lambda stats: stats["ingest"]["last_error"] is not None, timeout=20)
    assert "full" in stats["ingest"]["last_error"]
    await asyncio.sleep(1.5)  # several rounds of the worker on the full disk
    # Still in the journal, not failed: back in the queue, or (when even that could not be
    # written) still claimed by the worker until there is room.
    job = await job_state(client, "s1", lambda job: True, timeout=0)
    assert job["status"] in ("pending", "running") and job["attempts"] <= 1, job
    assert (await (await client.get("/stats")).json())["ingest"]["failed"] == 0

    await disk.free()
    await client.post("/ingest", json={"messages": messages, "session_id": "s2", "user_id": "sam"})  # wakes it
    job = await job_state(client, "s1", lambda job: job["status"] == "done", timeout=30)
    assert job["status"] == "done" and job["attempts"] == 1, job  # the try that met the full disk is not counted
    hits = await search(client, "locker code word", "sam")
    assert any("walnut" in hit["fact"] for hit in hits["results"]), hits


async def once(fetch: Callable[[], Awaitable[dict[str, Any]]], done: Any, *, timeout: float) -> dict[str, Any]:
    """What ``fetch`` answers once ``done`` holds of it (or its answer at ``timeout``)."""
    deadline = time.monotonic() + timeout
    while True:
        answer = await fetch()
        if done(answer) or time.monotonic() > deadline:
            return answer
        await asyncio.sleep(0.05)


async def stats_when(client: TestClient, done: Any, *, timeout: float) -> dict[str, Any]:
    async def stats() -> dict[str, Any]:
        return dict(await (await client.get("/stats")).json())

    return await once(stats, done, timeout=timeout)


async def job_state(client: TestClient, session_id: str, done: Any, *, timeout: float) -> dict[str, Any]:
    """The job of ``session_id`` once ``done(job)`` holds (or as it is at ``timeout``)."""

    async def job() -> dict[str, Any]:
        jobs = (await (await client.get("/ingest/jobs")).json())["jobs"]
        [found] = [job for job in jobs if job["session_id"] == session_id]
        return dict(found)

    return await once(job, done, timeout=timeout)
