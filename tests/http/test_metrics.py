"""GET /metrics (Prometheus text, parsed by prometheus-client's own parser) and the hardware and
scheduler parts of GET /stats, through the real server."""

from __future__ import annotations

import time
from typing import Any

from aiohttp.test_utils import TestClient
from prometheus_client.parser import text_string_to_metric_families

from memory_cortex import __version__
from memory_cortex.app import create_app
from tests.conftest import make_config
from tests.fakes import ScriptedLLM
from tests.helpers import LhmServer, eventually, search, store

MB = 1024 * 1024
RADEON = {"id": "/gpu-amd/0", "gpu": "AMD Radeon RX 7900 XTX", "vendor": "amd"}


async def scrape(client: TestClient) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """Every sample of GET /metrics as {(name, sorted labels): value}."""
    response = await client.get("/metrics")
    assert response.status == 200
    assert response.headers["Content-Type"] == "text/plain; version=0.0.4; charset=utf-8"
    samples = {}
    for family in text_string_to_metric_families(await response.text()):
        for sample in family.samples:
            samples[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return samples


def value(samples: dict[Any, float], name: str, **labels: str) -> float:
    return samples[(name, tuple(sorted(labels.items())))]


def names(samples: dict[Any, float]) -> set[str]:
    return {name for name, _ in samples}


async def test_metrics_parse_and_name_memories_searches_ingest_and_extraction(client: TestClient) -> None:
    samples = await scrape(client)
    assert {
        "memory_cortex_memories",
        "memory_cortex_memories_unembedded",
        "memory_cortex_search_seconds_bucket",
        "memory_cortex_search_seconds_count",
        "memory_cortex_searches_without_vector_total",
        "memory_cortex_ingest_jobs",
        "memory_cortex_extraction_seconds_count",
        "memory_cortex_extraction_deferrals_total",
        "memory_cortex_extraction_held",
        "memory_cortex_hardware_stale",
        "process_resident_memory_bytes",
    } <= names(samples)
    assert value(samples, "memory_cortex_hardware_stale") == 1  # monitoring is off in tests
    assert not any(name.startswith("memory_cortex_gpu_") for name in names(samples))


async def test_the_running_release_is_in_metrics_and_health(client: TestClient) -> None:
    samples = await scrape(client)
    [build] = [key for key in samples if key[0] == "memory_cortex_build_info"]
    assert dict(build[1])["version"] == __version__ and samples[build] == 1
    health = await (await client.get("/health")).json()
    assert health["version"] == __version__


async def test_search_and_memory_counts_move(client: TestClient) -> None:
    before = await scrape(client)
    assert value(before, "memory_cortex_search_seconds_count", mode="hybrid") == 0
    await store(client, {"fact": "Ada keeps bees on the roof.", "user_id": "m"})
    await search(client, "bees", "m")
    await search(client, "bees", "m", mode="fts")
    after = await scrape(client)
    assert value(after, "memory_cortex_search_seconds_count", mode="hybrid") == 1
    assert value(after, "memory_cortex_search_seconds_count", mode="fts") == 1
    assert value(after, "memory_cortex_search_seconds_bucket", mode="hybrid", le="+Inf") == 1
    assert value(after, "memory_cortex_memories", state="live") == 1
    assert value(after, "memory_cortex_ingest_jobs", status="pending") == 0


async def test_stats_with_monitoring_off(client: TestClient) -> None:
    stats = await (await client.get("/stats")).json()
    hardware, scheduler = stats["hardware"], stats["scheduler"]
    assert hardware["enabled"] is False and hardware["source"] == "none"
    assert hardware["stale"] is True and hardware["stale_reason"] == "hardware monitoring is disabled"
    assert hardware["gpu"] is None and hardware["gpus"] == [] and hardware["age_s"] is None
    assert scheduler == {
        "busy_reason": None,
        "holding_job": None,
        "holding_since": None,
        "deferred_jobs": 0,
        "ran_anyway": 0,
        "deferred_seconds": 0.0,
        "recent": [],
    }


async def test_gpu_from_a_loopback_lhm_in_stats_and_metrics(
    aiohttp_client: Any, tmp_path: Any, minilm: Any, lhm_server: LhmServer
) -> None:
    config = make_config(tmp_path, hardware=lhm_server.hardware_config(interval_s=0.05, timeout_s=1))
    client = await aiohttp_client(create_app(config, embedder=minilm, llm=None))

    async def fresh() -> bool:
        return (await (await client.get("/stats")).json())["hardware"]["stale"] is False

    await eventually(fresh)
    hardware = (await (await client.get("/stats")).json())["hardware"]
    assert hardware["source"] == "lhm" and hardware["endpoint"] == lhm_server.url
    assert hardware["gpu"] == {
        "name": "AMD Radeon RX 7900 XTX",
        "vendor": "amd",
        "hardware_id": "/gpu-amd/0",
        "load_percent": 97.0,
        "vram_used_mb": 18234.0,
        "vram_free_mb": 6262.0,
        "vram_total_mb": 24496.0,
        "core_temp_c": 58.0,
        "hotspot_temp_c": 78.0,
        "power_w": 212.4,
    }
    assert len(hardware["gpus"]) == 2 and hardware["age_s"] < 5 and hardware["host"]["process_rss_mb"] > 0
    samples = await scrape(client)
    assert value(samples, "memory_cortex_gpu_load_percent", **RADEON) == 97.0
    assert value(samples, "memory_cortex_gpu_vram_used_bytes", **RADEON) == 18234 * MB
    assert value(samples, "memory_cortex_gpu_vram_total_bytes", **RADEON) == 24496 * MB
    assert value(samples, "memory_cortex_gpu_power_watts", **RADEON) == 212.4
    assert value(samples, "memory_cortex_gpu_temperature_celsius", sensor="hotspot", **RADEON) == 78.0
    assert value(samples, "memory_cortex_hardware_stale") == 0

    lhm_server.mode = "500"

    async def stale() -> bool:
        return (await (await client.get("/stats")).json())["hardware"]["stale"] is True

    await eventually(stale)
    hardware = (await (await client.get("/stats")).json())["hardware"]
    assert hardware["stale_reason"] == "HTTP 500 from data.json" and hardware["consecutive_failures"] >= 1
    assert hardware["gpu"]["load_percent"] == 97.0  # last good numbers, shown as stale
    assert not any(name.startswith("memory_cortex_gpu_") for name in names(await scrape(client)))


async def test_extraction_waits_for_a_busy_gpu_and_stats_say_why(
    aiohttp_client: Any, tmp_path: Any, minilm: Any, lhm_server: LhmServer
) -> None:
    hardware = lhm_server.hardware_config(
        interval_s=0.05, timeout_s=1, busy_window_s=0.1, recheck_s=0.05, max_deferral_s=0.8
    )
    config = make_config(tmp_path, hardware=hardware, ingest={"debounce_s": 0})
    llm = ScriptedLLM()
    client = await aiohttp_client(create_app(config, embedder=minilm, llm=llm))

    async def busy() -> bool:
        return (await (await client.get("/stats")).json())["scheduler"]["busy_reason"] is not None

    await eventually(busy)
    messages = [{"role": "user", "content": "I moved to Lisbon last spring."}]
    posted = time.monotonic()
    response = await client.post("/ingest", json={"messages": messages, "user_id": "g", "debounce": False})
    assert response.status == 202

    async def held() -> bool:
        return (await (await client.get("/stats")).json())["scheduler"]["holding_job"] is not None

    await eventually(held)
    assert llm.calls == []  # the GPU is busy: nothing extracted yet

    async def done() -> bool:
        return (await (await client.get("/stats")).json())["ingest"]["done"] == 1

    await eventually(done)
    assert time.monotonic() - posted >= 0.8 and len(llm.calls) == 1
    scheduler = (await (await client.get("/stats")).json())["scheduler"]
    (deferral,) = scheduler["recent"]
    assert deferral["ran_anyway"] is True and deferral["waited_s"] >= 0.8
    assert deferral["reason"] == "AMD Radeon RX 7900 XTX: load 97% >= 70% for 0.1s"
    assert scheduler["deferred_jobs"] == 1 and scheduler["holding_job"] is None
    samples = await scrape(client)
    assert value(samples, "memory_cortex_extraction_deferrals_total") == 1
    assert value(samples, "memory_cortex_extraction_ran_anyway_total") == 1
    assert value(samples, "memory_cortex_extraction_seconds_count") == 1
    # Extraction latency excludes the deferral.
    assert value(samples, "memory_cortex_extraction_seconds_sum") < 0.8


async def test_shutdown_does_not_wait_for_a_held_job_which_runs_at_the_next_start(
    aiohttp_client: Any, tmp_path: Any, minilm: Any, lhm_server: LhmServer
) -> None:
    hardware = lhm_server.hardware_config(interval_s=0.05, busy_window_s=0, recheck_s=0.05)
    config = make_config(tmp_path, hardware=hardware)  # max_deferral_s: the default 600 s
    llm = ScriptedLLM()
    client = await aiohttp_client(create_app(config, embedder=minilm, llm=llm))

    async def busy() -> bool:
        return (await (await client.get("/stats")).json())["scheduler"]["busy_reason"] is not None

    await eventually(busy)
    messages = [{"role": "user", "content": "Remember that my bike is blue."}]
    await client.post("/ingest", json={"messages": messages, "user_id": "h", "debounce": False})

    async def held() -> bool:
        return (await (await client.get("/stats")).json())["scheduler"]["holding_job"] is not None

    await eventually(held)
    started = time.monotonic()
    await client.close()
    assert time.monotonic() - started < 2  # not server.shutdown_timeout_s (10 s)
    assert llm.calls == []

    idle = make_config(tmp_path)  # next start: monitoring off, so nothing holds the job
    again = await aiohttp_client(create_app(idle, embedder=minilm, llm=llm))

    async def done() -> bool:
        return (await (await again.get("/stats")).json())["ingest"]["done"] == 1

    await eventually(done)
    assert len(llm.calls) == 1


async def test_metrics_is_documented_as_prometheus_text(client: TestClient) -> None:
    document = await (await client.get("/openapi.json")).json()
    ok = document["paths"]["/metrics"]["get"]["responses"]["200"]
    assert ok["content"] == {"text/plain; version=0.0.4; charset=utf-8": {"schema": {"type": "string"}}}
