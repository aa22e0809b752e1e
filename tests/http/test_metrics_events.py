"""The series issue 23 asked for, through a real daemon on a loopback port: /context and /recall
timed, requests counted by route pattern and status, facts by extraction method, LLM errors by kind,
degraded recalls, FTS-only searches; and no ``_created`` series."""

from __future__ import annotations

import asyncio
import socket
import time
from typing import Any

from aiohttp.test_utils import TestClient

from memory_cortex.app import create_app
from tests.conftest import make_config
from tests.fakes import DeadEmbedder, ScriptedLLM
from tests.helpers import store
from tests.http.test_metrics import names, scrape, value


async def context(client: TestClient, query: str, user_id: str) -> dict[str, Any]:
    response = await client.post("/context", json={"query": query, "user_id": user_id})
    assert response.status == 200, await response.text()
    return await response.json()


async def recall(client: TestClient, query: str, user_id: str) -> dict[str, Any]:
    response = await client.post("/recall", json={"query": query, "user_id": user_id})
    assert response.status == 200, await response.text()
    return await response.json()


def dead_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def test_a_context_call_shows_its_latency_and_request_count_in_metrics(client: TestClient) -> None:
    await store(client, {"fact": "Ada keeps bees on the roof.", "user_id": "ada"})
    before = await scrape(client)
    assert value(before, "memory_cortex_context_seconds_count") == 0
    await context(client, "bees", "ada")
    after = await scrape(client)
    assert value(after, "memory_cortex_context_seconds_count") == 1
    assert value(after, "memory_cortex_context_seconds_bucket", le="+Inf") == 1
    assert (
        value(after, "memory_cortex_http_requests_total", method="POST", route="/context", status="200") == 1
    )
    assert (
        value(after, "memory_cortex_http_requests_total", method="POST", route="/memories", status="201") == 1
    )
    assert {
        "memory_cortex_recall_seconds_count",
        "memory_cortex_recalls_degraded_total",
        "memory_cortex_llm_errors_total",
        "memory_cortex_facts_stored_total",
        "memory_cortex_live_memories",
        "memory_cortex_database_bytes",
        "memory_cortex_build_info",
    } <= names(after)
    layers = {dict(key[1])["layer"]: v for key, v in after.items() if key[0] == "memory_cortex_live_memories"}
    assert set(layers) == {"working", "core", "archive"} and sum(layers.values()) == 1
    assert value(after, "memory_cortex_database_bytes") > 0


async def test_metrics_has_no_created_series(client: TestClient) -> None:
    await context(client, "anything", "u")
    text = await (await client.get("/metrics")).text()
    assert "memory_cortex_http_requests_total" in text
    assert not [line for line in text.splitlines() if "_created" in line]


async def test_requests_are_counted_by_route_pattern_and_status_never_by_raw_path(client: TestClient) -> None:
    assert (await client.get("/memories/987654")).status == 404
    assert (await client.get("/no/such/page-31337")).status == 404
    samples = await scrape(client)
    memory = {"method": "GET", "route": "/memories/{memory_id}", "status": "404"}
    assert value(samples, "memory_cortex_http_requests_total", **memory) == 1
    assert (
        value(samples, "memory_cortex_http_requests_total", method="GET", route="unmatched", status="404")
        == 1
    )
    labels = [dict(key[1]) for key in samples if key[0] == "memory_cortex_http_requests_total"]
    assert not any("987654" in v or "31337" in v for label in labels for v in label.values())


async def test_facts_stored_are_counted_by_extraction_method(client: TestClient) -> None:
    messages = [{"role": "user", "content": "Remember that my bike is blue."}]
    response = await client.post("/ingest", json={"messages": messages, "user_id": "f", "debounce": False})
    assert response.status == 202
    deadline = time.monotonic() + 10
    while (await (await client.get("/stats")).json())["ingest"]["done"] < 1:
        assert time.monotonic() < deadline, "extraction did not finish"
        await asyncio.sleep(0.05)
    samples = await scrape(client)
    assert value(samples, "memory_cortex_facts_stored_total", method="rules") >= 1
    assert value(samples, "memory_cortex_facts_stored_total", method="llm") == 0
    assert value(samples, "memory_cortex_extraction_seconds_count") == 1


async def test_a_recall_whose_llm_times_out_is_degraded_and_counted(
    aiohttp_client: Any, tmp_path: Any, minilm: Any
) -> None:
    config = make_config(tmp_path, recall={"timeout_s": 0.2, "synthesis": "on"})
    client = await aiohttp_client(create_app(config, embedder=minilm, llm=ScriptedLLM(mode="slow")))
    await store(client, {"fact": "Ada keeps bees on the roof.", "user_id": "ada"})
    answer = await recall(client, "What does Ada keep?", "ada")
    assert answer["degraded"] is True
    samples = await scrape(client)
    assert value(samples, "memory_cortex_recalls_degraded_total", reason="llm_failed") == 1
    assert value(samples, "memory_cortex_llm_errors_total", kind="timeout") == 1
    assert value(samples, "memory_cortex_recall_seconds_count", outcome="degraded") == 1
    assert (
        value(samples, "memory_cortex_http_requests_total", method="POST", route="/recall", status="200") == 1
    )


async def test_an_llm_at_a_dead_port_counts_connection_errors(
    aiohttp_client: Any, tmp_path: Any, minilm: Any
) -> None:
    llm = {"backend": "openai", "url": f"http://127.0.0.1:{dead_port()}", "retries": 0, "timeout_s": 2}
    config = make_config(tmp_path, llm=llm, recall={"synthesis": "on"})
    client = await aiohttp_client(create_app(config, embedder=minilm))
    await store(client, {"fact": "Ada keeps bees on the roof.", "user_id": "ada"})
    answer = await recall(client, "What does Ada keep?", "ada")
    assert (answer["degraded"], answer["answer_kind"]) == (True, "list")
    samples = await scrape(client)
    assert value(samples, "memory_cortex_llm_errors_total", kind="connection") == 1
    assert value(samples, "memory_cortex_recalls_degraded_total", reason="llm_failed") == 1


async def test_recall_without_an_llm_is_a_list_not_a_degraded_answer(client: TestClient) -> None:
    """Issue 35: without an LLM for answers the list is the answer, not a failure."""
    await store(client, {"fact": "Ada keeps bees on the roof.", "user_id": "ada"})
    answer = await recall(client, "What does Ada keep?", "ada")
    assert (answer["degraded"], answer["answer_kind"]) == (False, "list")
    assert answer["response"] == "- Ada keeps bees on the roof."
    samples = await scrape(client)
    assert value(samples, "memory_cortex_recall_seconds_count", outcome="listed") == 1
    assert value(samples, "memory_cortex_recalls_degraded_total", reason="llm_failed") == 0
    assert sum(v for (name, _), v in samples.items() if name == "memory_cortex_llm_errors_total") == 0


async def test_an_invalid_extraction_reply_counts_as_a_bad_reply(
    aiohttp_client: Any, tmp_path: Any, minilm: Any
) -> None:
    config = make_config(tmp_path, ingest={"debounce_s": 0})
    client = await aiohttp_client(create_app(config, embedder=minilm, llm=ScriptedLLM(mode="garbage")))
    messages = [{"role": "user", "content": "I moved to Lisbon last spring."}]
    response = await client.post("/ingest", json={"messages": messages, "user_id": "g", "debounce": False})
    assert response.status == 202
    deadline = time.monotonic() + 10
    while value(await scrape(client), "memory_cortex_llm_errors_total", kind="bad_reply") < 2:
        assert time.monotonic() < deadline, "the invalid replies were not counted"
        await asyncio.sleep(0.05)


async def test_context_answered_without_the_vector_side_counts_as_fts_only(
    aiohttp_client: Any, tmp_path: Any
) -> None:
    client = await aiohttp_client(create_app(make_config(tmp_path), embedder=DeadEmbedder("minilm", 384)))
    await store(client, {"fact": "Gus collects vintage typewriters.", "user_id": "gus"})
    before = value(await scrape(client), "memory_cortex_searches_without_vector_total")
    await context(client, "typewriters", "gus")
    after = await scrape(client)
    assert value(after, "memory_cortex_searches_without_vector_total") == before + 1
    assert value(after, "memory_cortex_context_seconds_count") == 1
