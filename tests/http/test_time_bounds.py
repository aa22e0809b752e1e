"""Every request answers within its documented bound (issue 25), through the real server:
``/recall`` within ``recall.timeout_s`` in all, ``/context`` within its budget, any other endpoint
within ``server.request_timeout_s`` (503 ``timeout`` past it), and the OpenAPI document states each
bound."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from aiohttp.test_utils import TestClient

from memory_cortex.app import create_app
from memory_cortex.config import Config
from memory_cortex.keys import CONFIG, MEMORY_SERVICE, RECALL_SERVICE, STATS_SERVICE
from tests.conftest import make_config
from tests.fakes import ScriptedLLM
from tests.helpers import slowed, store
from tests.http.test_metrics import scrape, value

# What answering takes beyond the bound itself (building the reply, a busy test machine).
MARGIN_S = 0.5


async def timed_post(client: TestClient, path: str, body: dict[str, Any]) -> tuple[float, Any]:
    began = time.monotonic()
    response = await client.post(path, json=body)
    assert response.status == 200, await response.text()
    return time.monotonic() - began, await response.json()


async def test_recall_answers_degraded_within_its_timeout_in_all(
    aiohttp_client: Any, tmp_path: Any, minilm: Any
) -> None:
    """The search's time counts: a slow search leaves the LLM only the rest of recall.timeout_s."""
    config = make_config(tmp_path, recall={"timeout_s": 1.0, "synthesis": "on"})
    client = await aiohttp_client(create_app(config, embedder=minilm, llm=ScriptedLLM(mode="slow")))
    await store(client, {"user_id": "ada", "fact": "Ada keeps bees on the roof."})
    slowed(client.app[RECALL_SERVICE]._search, "search", 0.6)
    took, answer = await timed_post(client, "/recall", {"query": "What does Ada keep?", "user_id": "ada"})
    assert answer["degraded"] is True and "bees" in answer["response"] and answer["memories_used"] == 1
    assert 0.6 <= took < 1.0 + MARGIN_S, took  # the LLM got 0.4 s, not a fresh 1.0 s


async def test_recall_whose_search_outlasts_the_timeout_still_answers_in_time(
    aiohttp_client: Any, tmp_path: Any, minilm: Any
) -> None:
    config = make_config(tmp_path, recall={"timeout_s": 0.5, "synthesis": "on"})
    client = await aiohttp_client(create_app(config, embedder=minilm, llm=ScriptedLLM()))
    await store(client, {"user_id": "ada", "fact": "Ada keeps bees on the roof."})
    slowed(client.app[RECALL_SERVICE]._search, "search", 5.0)
    took, answer = await timed_post(client, "/recall", {"query": "What does Ada keep?", "user_id": "ada"})
    assert took < 0.5 + MARGIN_S, took
    assert answer["degraded"] is True and answer["memories_used"] == 0
    assert "could not be searched in time" in answer["response"]


async def test_context_answers_an_empty_degraded_block_within_its_budget(
    aiohttp_client: Any, tmp_path: Any, minilm: Any
) -> None:
    config = make_config(tmp_path, recall={"context_timeout_ms": 800})
    client = await aiohttp_client(create_app(config, embedder=minilm, llm=None))
    await store(client, {"user_id": "ada", "fact": "Ada keeps bees on the roof."})
    query = {"query": "What does Ada keep?", "user_id": "ada"}
    _, block = await timed_post(client, "/context", query)
    assert "bees" in block["context"] and block["degraded"] is False
    slowed(client.app[RECALL_SERVICE]._search, "search", 5.0)
    # The caller's budget, when it is the smaller.
    took, block = await timed_post(client, "/context", {**query, "budget_ms": 200})
    assert took < 0.2 + MARGIN_S, took
    assert block == {"context": "", "facts": 0, "degraded": True, "profile": 0}
    # The configured one otherwise (a larger budget does not raise it).
    took, block = await timed_post(client, "/context", {**query, "budget_ms": 10_000})
    assert 0.8 <= took < 0.8 + MARGIN_S and block["degraded"] is True, took
    # Each answer given up at its budget is counted, so an operator sees prompts going out bare.
    samples = await scrape(client)
    assert value(samples, "memory_cortex_contexts_degraded_total") == 2
    assert value(samples, "memory_cortex_context_seconds_count") == 3


async def test_any_other_endpoint_is_cut_at_the_request_timeout(
    aiohttp_client: Any, tmp_path: Any, minilm: Any
) -> None:
    config = make_config(tmp_path, server={"request_timeout_s": 0.3})
    client = await aiohttp_client(create_app(config, embedder=minilm, llm=None))
    slowed(client.app[STATS_SERVICE], "stats", 5.0)
    began = time.monotonic()
    response = await client.get("/stats")
    assert time.monotonic() - began < 0.3 + MARGIN_S
    assert response.status == 503
    error = (await response.json())["error"]
    assert error["code"] == "timeout" and "0.3 s" in error["message"]
    assert (await client.get("/health")).status == 200  # the daemon goes on


async def test_a_write_past_the_bound_is_answered_503_and_still_applied(
    aiohttp_client: Any, tmp_path: Any, minilm: Any
) -> None:
    """Cancelling a write between its commit and what follows would lose that step: it goes on."""
    config = make_config(tmp_path, server={"request_timeout_s": 0.3})
    client = await aiohttp_client(create_app(config, embedder=minilm, llm=None))
    slowed(client.app[MEMORY_SERVICE], "create", 1.0)
    response = await client.post("/memories", json={"user_id": "ada", "fact": "Ada keeps bees on the roof."})
    assert response.status == 503
    error = (await response.json())["error"]
    assert error["code"] == "timeout" and "may still be applied" in error["message"]
    deadline = time.monotonic() + 10
    while not (await (await client.get("/memories", params={"user_id": "ada"})).json())["memories"]:
        assert time.monotonic() < deadline, "the write cut off by its bound was never applied"
        await asyncio.sleep(0.05)


async def test_the_openapi_document_states_each_bound(
    aiohttp_client: Any, config: Config, minilm: Any
) -> None:
    client = await aiohttp_client(create_app(config, embedder=minilm, llm=None))
    document = await (await client.get("/openapi.json")).json()
    served: Config = client.app[CONFIG]
    for path, operations in document["paths"].items():
        for method, operation in operations.items():
            if path == "/mcp":
                assert "x-time-bound-s" not in operation
                continue
            assert operation["description"].startswith("Answers within "), (method, path)
            expected = {
                "/recall": served.recall.timeout_s,
                "/context": served.recall.context_timeout_ms / 1000,
            }.get(path, served.server.request_timeout_s)
            assert operation["x-time-bound-s"] == expected, (method, path)
