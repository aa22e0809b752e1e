"""The LLM reranker through the real server: it reorders the fused list when the LLM answers in
time, returns the fused order untouched when it does not (within the budget), rests after a
failure, and never brings in another user's memories."""

from __future__ import annotations

import time
from typing import Any

from aiohttp.test_utils import TestClient

from memory_cortex.app import create_app
from memory_cortex.keys import SEARCH_SERVICE
from tests.conftest import make_config
from tests.fakes import ScriptedLLM
from tests.helpers import search, store

FACTS = [
    {"user_id": "ann", "fact": "Ann's cat Miso sleeps on the piano."},
    {"user_id": "ann", "fact": "Ann adopted her cat from a shelter in Porto."},
    {"user_id": "ann", "fact": "Ann's cat is afraid of the vacuum cleaner."},
    {"user_id": "ann", "fact": "Ann works night shifts at the hospital."},
    {"user_id": "bob", "fact": "Bob's cat is called Pixel."},
]


async def start(aiohttp_client: Any, tmp_path: Any, minilm: Any, llm: Any, **rerank: Any) -> TestClient:
    config = make_config(tmp_path, rerank={"enabled": True, "candidates": 4, "budget_ms": 300, **rerank})
    return await aiohttp_client(create_app(config, embedder=minilm, llm=llm))


async def test_the_llm_order_is_returned_when_it_answers_in_time(
    aiohttp_client: Any, tmp_path: Any, minilm: Any
) -> None:
    llm = ScriptedLLM()
    client = await start(aiohttp_client, tmp_path, minilm, llm)
    await store(client, *FACTS)
    service = client.app[SEARCH_SERVICE]
    fused = [hit.memory.id for hit in (await service.search("Ann's cat", "ann", 4, rerank=False)).hits]
    assert len(fused) == 4
    # The LLM lists the 3rd candidate, then the 1st (a repeat and a number out of range are ignored).
    llm.answer = '{"ranking": [3, 1, 3, 99]}'
    found = await search(client, "Ann's cat", "ann", limit=3)
    assert [hit["id"] for hit in found["results"]] == [fused[2], fused[0], fused[1]]
    scores = [hit["score"] for hit in found["results"]]
    assert scores == sorted(scores, reverse=True) and scores[0] == 1.0
    assert all(hit["user_id"] == "ann" for hit in found["results"])
    prompt = llm.calls[-1][-1].content
    assert prompt.startswith("Question: Ann's cat") and "[4]" in prompt and "[5]" not in prompt
    assert "Pixel" not in prompt  # another user's memory is never shown to the LLM
    debug = await (
        await client.post("/search/debug", json={"query": "Ann's cat", "user_id": "ann", "limit": 3})
    ).json()
    assert debug["rerank"] == "reranked" and [hit["id"] for hit in debug["fused"]] == [
        fused[2],
        fused[0],
        fused[1],
    ]
    assert debug["timings_ms"]["hybrid"]["rerank"] >= 0


async def test_a_slow_llm_costs_the_budget_and_no_more_then_rests(
    aiohttp_client: Any, tmp_path: Any, minilm: Any
) -> None:
    llm = ScriptedLLM()
    client = await start(aiohttp_client, tmp_path, minilm, llm, budget_ms=200, cooldown_s=60)
    await store(client, *FACTS)
    service = client.app[SEARCH_SERVICE]
    plain = await service.search("Ann's cat", "ann", 3, rerank=False)
    llm.mode = "slow"  # sleeps 30 s
    started = time.perf_counter()
    result = await service.search("Ann's cat", "ann", 3)
    elapsed = time.perf_counter() - started
    assert result.rerank == "timeout"
    assert elapsed < 5  # the budget (0.2 s) plus the search, never the LLM's 30 s
    assert [hit.memory.id for hit in result.hits] == [hit.memory.id for hit in plain.hits]
    assert result.timings_ms["rerank"] >= 200
    calls = len(llm.calls)
    again = await service.search("Ann's cat", "ann", 3)
    assert again.rerank == "cooling_down" and len(llm.calls) == calls  # not asked again while resting
    assert [hit.memory.id for hit in again.hits] == [hit.memory.id for hit in plain.hits]


async def test_down_or_nonsense_answers_keep_the_fused_order(
    aiohttp_client: Any, tmp_path: Any, minilm: Any
) -> None:
    llm = ScriptedLLM()
    client = await start(aiohttp_client, tmp_path, minilm, llm, cooldown_s=0)
    await store(client, *FACTS)
    service = client.app[SEARCH_SERVICE]
    plain = [hit.memory.id for hit in (await service.search("cat", "ann", 3, rerank=False)).hits]
    for mode, answer, status in (
        ("down", None, "unavailable"),
        ("ok", "I think 2 is best", "invalid"),
        ("ok", '{"order": [2]}', "invalid"),
    ):
        llm.mode, llm.answer = mode, answer
        result = await service.search("cat", "ann", 3)
        assert result.rerank == status, (mode, answer)
        assert [hit.memory.id for hit in result.hits] == plain


async def test_without_an_llm_searches_run_unreranked(
    aiohttp_client: Any, tmp_path: Any, minilm: Any
) -> None:
    client = await start(aiohttp_client, tmp_path, minilm, None)
    await store(client, *FACTS)
    result = await (await client.post("/search/debug", json={"query": "cat", "user_id": "ann"})).json()
    assert result["rerank"] == "unavailable" and result["fused"]
    found = await search(client, "cat", "bob")
    assert [hit["fact"] for hit in found["results"]] == ["Bob's cat is called Pixel."]
