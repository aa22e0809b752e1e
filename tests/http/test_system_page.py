"""What the dashboard's system page reads: the hardware ring buffer (/system/history), memory counts
per layer and search latency percentiles (/stats), and the effective config with secrets masked."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from aiohttp.test_utils import TestClient

from memory_cortex.app import create_app
from tests.conftest import make_config
from tests.helpers import LhmServer, search, store


async def _points(client: TestClient, timeout: float = 15.0, at_least: int = 3, **params: str) -> list[dict]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        response = await client.get("/system/history", params=params)
        assert response.status == 200, await response.text()
        points = (await response.json())["points"]
        if len(points) >= at_least:
            return points
        await asyncio.sleep(0.05)
    raise AssertionError(f"fewer than {at_least} chart points after {timeout}s")


async def test_history_keeps_the_polls_and_blanks_the_gpu_while_stale(
    aiohttp_client: Any, tmp_path: Any, minilm: Any, lhm_server: LhmServer
) -> None:
    hardware = lhm_server.hardware_config(interval_s=0.05, timeout_s=1, max_backoff_s=0.05)
    client = await aiohttp_client(
        create_app(make_config(tmp_path, hardware=hardware), embedder=minilm, llm=None)
    )
    points = await _points(client)
    first = points[0]
    assert (
        first["gpu_load_percent"],
        first["vram_used_mb"],
        first["vram_total_mb"],
        first["gpu_temp_c"],
    ) == (
        97.0,
        18234.0,
        24496.0,
        58.0,
    )
    assert first["cpu_percent"] is not None and first["process_rss_mb"] > 0
    times = [point["t"] for point in points]
    assert times == sorted(times) and all(t.endswith("Z") for t in times)

    lhm_server.mode = "500"
    count = len(points)
    stale = (await _points(client, at_least=count + 3))[-1]
    assert stale["gpu_load_percent"] is None and stale["vram_used_mb"] is None
    assert stale["cpu_percent"] is not None  # the host is still read


async def test_history_is_a_bounded_ring(
    aiohttp_client: Any, tmp_path: Any, minilm: Any, lhm_server: LhmServer
) -> None:
    # 0.0001 h at 0.05 s per poll: room for 8 points.
    hardware = lhm_server.hardware_config(interval_s=0.05, timeout_s=1, chart_hours=0.0001)
    client = await aiohttp_client(
        create_app(make_config(tmp_path, hardware=hardware), embedder=minilm, llm=None)
    )
    first = await _points(client, at_least=8)
    # Polls go on: wait until the oldest point has left the ring, then it still holds 8.
    deadline = time.monotonic() + 15
    while (points := await _points(client, at_least=1))[0] == first[0]:
        assert time.monotonic() < deadline, "the ring never moved on"
        await asyncio.sleep(0.05)
    assert len(points) <= 8  # bounded: the oldest left as new ones came
    assert (await client.get("/system/history", params={"minutes": "0"})).status == 400


async def test_stats_count_layers_and_time_searches(client: TestClient) -> None:
    before = await (await client.get("/stats")).json()
    assert before["per_layer"] == {"working": 0, "core": 0, "archive": 0}
    assert before["search_latency"] == {"samples": 0, "p50_ms": None, "p95_ms": None, "p99_ms": None}
    await store(
        client,
        {"fact": "Ann keeps bees.", "layer": "working"},
        {"fact": "Ann's sister is Ines."},
        {"fact": "Ann lived in Lisbon.", "layer": "archive"},
        {"fact": "Ann plays the cello.", "user_id": "bob"},
    )
    for query in ("bees", "sister", "cello"):
        await search(client, query)
    stats = await (await client.get("/stats")).json()
    assert stats["per_layer"] == {"working": 1, "core": 2, "archive": 1}
    latency = stats["search_latency"]
    assert latency["samples"] == 3
    assert 0 < latency["p50_ms"] <= latency["p95_ms"] <= latency["p99_ms"]


async def test_config_is_the_effective_one_with_secrets_masked(
    aiohttp_client: Any, tmp_path: Any, minilm: Any
) -> None:
    config = make_config(
        tmp_path,
        server={"api_token": "s3cret-token"},
        llm={"backend": "rules", "api_key": "sk-llm-key", "url": "http://bob:llm-url-pass@127.0.0.1:8301"},
        embeddings={
            "api_key": "sk-embed-key",
            "query_timeout_s": 10.0,
            "url": "http://127.0.0.1:8105?api_key=embed-url-key",
        },
        search={"fts_weight": 0.3, "vector_weight": 0.7},
    )
    client = await aiohttp_client(create_app(config, embedder=minilm, llm=None))
    assert (await client.get("/config")).status == 401
    response = await client.get("/config", headers={"Authorization": "Bearer s3cret-token"})
    text = await response.text()
    for secret in ("s3cret-token", "sk-llm-key", "sk-embed-key", "llm-url-pass", "embed-url-key"):
        assert secret not in text  # a password inside llm.url / embeddings.url too (issue 34)
    body = await response.json()
    assert (
        body["server"]["api_token"] == body["llm"]["api_key"] == body["embeddings"]["api_key"] == "**********"
    )
    assert body["llm"]["url"] == "http://bob:***@127.0.0.1:8301"
    assert body["search"]["fts_weight"] == 0.3 and body["database"]["path"] == str(tmp_path / "memories.db")
