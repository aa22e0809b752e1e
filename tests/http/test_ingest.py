"""/ingest end to end through the real server: journal, debounce, delta, worker, recall, context."""

from __future__ import annotations

import time
from typing import Any

import pytest
from aiohttp.test_utils import TestClient

from memory_cortex.app import create_app
from memory_cortex.services.recalled import RECALLED_LABEL
from tests.conftest import make_config
from tests.fakes import ScriptedLLM
from tests.helpers import search, store, wait_idle


def turn(i: int) -> list[dict[str, Any]]:
    return [
        {"role": "user", "content": f"I adopted a dog named Rex number {i}"},
        {"role": "assistant", "content": "How lovely!", "name": "bot"},
    ]


async def start(aiohttp_client: Any, tmp_path: Any, minilm: Any, llm: Any, **ingest: Any) -> TestClient:
    config = make_config(tmp_path, ingest={"debounce_s": 0.3, "retry_backoff_s": 0.05, **ingest})
    return await aiohttp_client(create_app(config, embedder=minilm, llm=llm))


async def test_ingest_answers_202_and_posts_coalesce_within_the_debounce(
    aiohttp_client: Any, tmp_path: Any, minilm: Any
) -> None:
    llm = ScriptedLLM()
    client = await start(aiohttp_client, tmp_path, minilm, llm)
    history: list[dict[str, Any]] = []
    for i in range(3):
        history += turn(i)
        response = await client.post(
            "/ingest", json={"messages": history, "session_id": "s1", "user_id": "u"}
        )
        assert response.status == 202
        body = await response.json()
        assert body == {"status": "queued", "session_id": "s1", "pending": 1}
    # Three posts, one pending job (each answer said pending: 1); once it ran, one extraction.
    await wait_idle(client)
    assert len(llm.calls) == 1  # three posts, one extraction
    assert len(llm.new_lines_per_call()[0]) == 3
    jobs = await (await client.get("/ingest/jobs")).json()
    assert [job["status"] for job in jobs["jobs"]] == ["done"]
    assert jobs["jobs"][0]["new_messages"] == 6 and jobs["jobs"][0]["facts_stored"] == 3


async def test_resent_history_extracts_only_the_new_tail(
    aiohttp_client: Any, tmp_path: Any, minilm: Any
) -> None:
    llm = ScriptedLLM()
    client = await start(aiohttp_client, tmp_path, minilm, llm, debounce_s=0)
    history = turn(1)
    await client.post(
        "/ingest", json={"messages": history, "session_id": "s", "user_id": "u", "debounce": False}
    )
    await wait_idle(client)
    history = history + turn(2)
    await client.post(
        "/ingest", json={"messages": history, "session_id": "s", "user_id": "u", "debounce": False}
    )
    await wait_idle(client)
    # The same history again: nothing new, so no LLM call at all.
    await client.post(
        "/ingest", json={"messages": history, "session_id": "s", "user_id": "u", "debounce": False}
    )
    await wait_idle(client)
    assert llm.new_lines_per_call() == [
        ["I adopted a dog named Rex number 1"],
        ["I adopted a dog named Rex number 2"],
    ]
    # The second call saw the first turn as context only.
    assert "EARLIER" in llm.calls[1][-1].content


async def test_compacted_history_is_not_re_extracted(aiohttp_client: Any, tmp_path: Any, minilm: Any) -> None:
    llm = ScriptedLLM()
    client = await start(aiohttp_client, tmp_path, minilm, llm, debounce_s=0)
    history = turn(1) + turn(2) + turn(3)
    await client.post(
        "/ingest", json={"messages": history, "session_id": "c", "user_id": "u", "debounce": False}
    )
    await wait_idle(client)
    compacted = [{"role": "compactionSummary", "content": "The user adopted dogs."}, *turn(3), *turn(4)]
    await client.post(
        "/ingest", json={"messages": compacted, "session_id": "c", "user_id": "u", "debounce": False}
    )
    await wait_idle(client)
    assert llm.new_lines_per_call()[1] == ["I adopted a dog named Rex number 4"]


async def test_sessions_are_per_user(aiohttp_client: Any, tmp_path: Any, minilm: Any) -> None:
    llm = ScriptedLLM()
    client = await start(aiohttp_client, tmp_path, minilm, llm, debounce_s=0)
    for user in ("a", "b"):
        await client.post(
            "/ingest", json={"messages": turn(1), "session_id": "same", "user_id": user, "debounce": False}
        )
    await wait_idle(client)
    assert len(llm.calls) == 2
    assert (await search(client, "dog Rex", "b"))["results"][0]["user_id"] == "b"


async def test_openclaw_style_body_with_missing_fields(
    aiohttp_client: Any, tmp_path: Any, minilm: Any
) -> None:
    client = await start(aiohttp_client, tmp_path, minilm, ScriptedLLM(), debounce_s=0)
    response = await client.post(
        "/ingest", json={"messages": [{"role": "user", "content": "I live in Porto", "name": "x"}]}
    )
    assert response.status == 202
    assert (await response.json())["session_id"] is None
    await wait_idle(client)
    body = await search(client, "Porto")
    assert body["results"][0]["user_id"] == "default"


async def test_llm_down_is_retried_with_back_off_then_rules_finish_the_job(
    aiohttp_client: Any, tmp_path: Any, minilm: Any
) -> None:
    llm = ScriptedLLM(mode="down")
    client = await start(aiohttp_client, tmp_path, minilm, llm, debounce_s=0, max_attempts=3)
    messages = [{"role": "user", "content": "Remember that my locker is number 48 on the blue floor."}]
    await client.post("/ingest", json={"messages": messages, "user_id": "u", "debounce": False})
    await wait_idle(client)
    assert len(llm.calls) == 3
    (job,) = (await (await client.get("/ingest/jobs")).json())["jobs"]
    assert job["status"] == "done" and job["method"] == "rules" and job["attempts"] == 3
    assert "48" in (await search(client, "locker number", "u"))["results"][0]["fact"]


async def test_bad_ingest_bodies_are_400(aiohttp_client: Any, tmp_path: Any, minilm: Any) -> None:
    client = await start(aiohttp_client, tmp_path, minilm, ScriptedLLM())
    for body in (
        {},
        {"messages": "x"},
        {"messages": [{"content": "no role"}]},
        {"messages": [], "debounce": "yes"},
    ):
        response = await client.post("/ingest", json=body)
        assert response.status == 400, body
        assert "error" in await response.json()


async def test_recall_synthesises_caches_and_degrades(
    aiohttp_client: Any, tmp_path: Any, minilm: Any
) -> None:
    llm = ScriptedLLM()
    client = await start(aiohttp_client, tmp_path, minilm, llm)
    await store(
        client,
        {"user_id": "r", "fact": "Rita's cat is called Miso."},
        {"user_id": "r", "fact": "Rita plays the cello."},
    )
    body = await (
        await client.post("/recall", json={"query": "What is Rita's cat called?", "user_id": "r"})
    ).json()
    assert body["degraded"] is False and body["cached"] is False and body["answer_kind"] == "synthesis"
    assert body["memories_searched"] == 2 and body["memories_used"] >= 1
    calls = len(llm.calls)
    again = await (
        await client.post("/recall", json={"query": "what is  rita's cat called?", "user_id": "r"})
    ).json()
    assert again["cached"] is True and len(llm.calls) == calls
    # A new memory changes the version: the cache is bypassed.
    await store(client, {"user_id": "r", "fact": "Rita moved to Oslo."})
    fresh = await (
        await client.post("/recall", json={"query": "What is Rita's cat called?", "user_id": "r"})
    ).json()
    assert fresh["cached"] is False
    llm.mode = "down"
    degraded = await (await client.post("/recall", json={"query": "Rita's pets", "user_id": "r"})).json()
    assert degraded["degraded"] is True and "- Rita's cat is called Miso." in degraded["response"]
    assert degraded["answer_kind"] == "list"


async def test_recall_times_out_into_the_degraded_answer(
    aiohttp_client: Any, tmp_path: Any, minilm: Any
) -> None:
    config = make_config(tmp_path, recall={"timeout_s": 0.3})
    client = await aiohttp_client(create_app(config, embedder=minilm, llm=ScriptedLLM(mode="slow")))
    await store(client, {"user_id": "t", "fact": "Tom climbs on Sundays."})
    started = time.monotonic()
    body = await (await client.post("/recall", json={"query": "Tom's hobbies", "user_id": "t"})).json()
    assert time.monotonic() - started < 3
    assert body["degraded"] is True and "Tom climbs" in body["response"]


async def test_context_block_puts_the_profile_first_and_respects_the_cap(
    aiohttp_client: Any, tmp_path: Any, minilm: Any
) -> None:
    client = await start(aiohttp_client, tmp_path, minilm, None)
    await store(
        client,
        {"user_id": "c", "topic": "food", "fact": "Cleo likes spicy vegetarian curry.", "importance": 4},
        {
            "user_id": "c",
            "topic": "diet",
            "fact": "Cleo is vegetarian.",
            "importance": 9,
            "category": "identity",
        },
    )
    body = await (
        await client.post("/context", json={"query": "what food does Cleo eat?", "user_id": "c"})
    ).json()
    # Who the user is comes first (the profile), then what answers the question.
    assert body["context"].splitlines() == [
        "## Long-Term Memories",
        RECALLED_LABEL,
        "- [diet] Cleo is vegetarian.",
        "- [food] Cleo likes spicy vegetarian curry.",
    ]
    assert body["profile"] == 1
    small = await (
        await client.post("/context", json={"query": "Cleo food", "user_id": "c", "max_tokens": 36})
    ).json()
    assert small["facts"] == 1 and len(small["context"]) <= 36 * 4
    none = await (await client.post("/context", json={"query": "zebra", "user_id": "nobody"})).json()
    assert none == {"context": "", "facts": 0, "degraded": False, "profile": 0}


@pytest.mark.slow
async def test_real_gemma_through_llama_cpp_extracts_end_to_end(
    aiohttp_client: Any, tmp_path: Any, minilm: Any, gemma: Any
) -> None:
    """The embedded default path: /ingest → worker → llama.cpp (Gemma) + rules → validated facts."""
    client = await start(aiohttp_client, tmp_path, minilm, gemma, debounce_s=0)
    messages = [
        {"role": "user", "content": "Remember that my daughter's name is Lena and she is seven."},
        {"role": "assistant", "content": "I will remember that."},
        {"role": "user", "content": "I prefer green tea over coffee."},
    ]
    await client.post(
        "/ingest", json={"messages": messages, "session_id": "g", "user_id": "gem", "debounce": False}
    )
    await wait_idle(client, timeout=120)
    (job,) = (await (await client.get("/ingest/jobs")).json())["jobs"]
    assert job["status"] == "done" and job["method"] in {"llm", "llm+rules", "rules"}
    stored = (await (await client.get("/memories", params={"user_id": "gem"})).json())["memories"]
    assert stored and all(1 <= m["importance"] <= 10 for m in stored)
    assert any("Lena" in m["fact"] for m in stored)


async def test_recall_answers_at_once_from_the_memories_when_synthesis_is_off(
    aiohttp_client: Any, tmp_path: Any, minilm: Any
) -> None:
    llm = ScriptedLLM(mode="slow")
    config = make_config(tmp_path, recall={"synthesis": "off"})
    client = await aiohttp_client(create_app(config, embedder=minilm, llm=llm))
    await store(client, {"user_id": "t", "fact": "Tom climbs on Sundays."})
    started = time.monotonic()
    body = await (await client.post("/recall", json={"query": "Tom's hobbies", "user_id": "t"})).json()
    assert time.monotonic() - started < 2 and llm.calls == []
    # Synthesis is off by choice: the list is the answer, not a failure.
    assert body["degraded"] is False and body["answer_kind"] == "list"
    assert "- Tom climbs on Sundays." in body["response"]


def test_auto_synthesis_leaves_out_only_the_packaged_gemma() -> None:
    from memory_cortex.config import LLMConfig, RecallConfig
    from memory_cortex.services.recall import synthesis_wanted

    auto = RecallConfig()
    assert synthesis_wanted(auto, LLMConfig(backend="llama_cpp")) is False  # the packaged base model
    assert synthesis_wanted(auto, LLMConfig(backend="llama_cpp", model_path="/models/qwen3-8b.gguf")) is True
    assert synthesis_wanted(auto, LLMConfig(backend="openai")) is True
    assert synthesis_wanted(RecallConfig(synthesis="on"), LLMConfig(backend="llama_cpp")) is True
    assert synthesis_wanted(RecallConfig(synthesis="off"), LLMConfig(backend="openai")) is False
