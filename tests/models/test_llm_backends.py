"""The two LLM backends: OpenAI-compatible against a loopback server, llama.cpp with the real Gemma GGUF."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer

from memory_cortex.config import LLMConfig
from memory_cortex.models.facts import FACT_LIST, fact_list_schema
from memory_cortex.models.llama_cpp_backend import LlamaCppLLM, packaged_gemma_path, prepare_messages
from memory_cortex.models.llm import ChatMessage, LLMUnavailable, create_llm, with_no_think
from memory_cortex.models.openai_backend import OpenAILLM

FACTS_JSON = (
    '[{"topic": "coffee habit", "fact": "Drinks black coffee.", "importance": 5, "category": "preference"}]'
)
CONVERSATION = [
    ChatMessage("system", "Extract durable facts about the user."),
    ChatMessage("user", "I live in Lisbon and drink my coffee black."),
]


class FakeChatServer:
    """An OpenAI-compatible chat server on loopback that records requests and misbehaves on demand.

    ``script`` lists the modes of the next requests, one per request; after it runs out ``mode`` is used.
    """

    def __init__(self) -> None:
        self.mode = "ok"
        self.script: list[str] = []
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.release_slow = asyncio.Event()
        app = web.Application()
        app.router.add_post("/v1/chat/completions", self.chat)
        app.router.add_get("/v1/models", self.models)
        self.server = TestServer(app)

    @property
    def url(self) -> str:
        return str(self.server.make_url("")).rstrip("/")

    async def models(self, request: web.Request) -> web.Response:
        self.headers.append(dict(request.headers))
        return web.json_response({"object": "list", "data": [{"id": "qwen3-8b", "object": "model"}]})

    async def chat(self, request: web.Request) -> web.Response:
        self.requests.append(await request.json())
        self.headers.append(dict(request.headers))
        mode = self.script.pop(0) if self.script else self.mode
        if mode == "500":
            return web.Response(status=500, text="boom")
        if mode == "429":
            return web.Response(status=429, text="busy", headers={"Retry-After": "0"})
        if mode == "400":
            return web.json_response({"error": {"message": "context size exceeded"}}, status=400)
        if mode == "html":
            return web.Response(text="<html>Bad Gateway</html>", content_type="text/html")
        if mode == "no_choices":
            return web.json_response({"object": "chat.completion", "choices": []})
        if mode == "null_content":
            return web.json_response({"choices": [{"message": {"role": "assistant", "content": None}}]})
        if mode == "slow":
            await asyncio.wait_for(self.release_slow.wait(), 10)
        content = (
            "<think>\nThe user mentions coffee.\n</think>\n\n" + FACTS_JSON if mode == "think" else FACTS_JSON
        )
        return web.json_response(
            {
                "object": "chat.completion",
                "model": "qwen3-8b",
                "choices": [
                    {
                        "index": 0,
                        "finish_reason": "stop",
                        "message": {"role": "assistant", "content": content},
                    }
                ],
            }
        )


@pytest.fixture
async def chat_server() -> AsyncIterator[FakeChatServer]:
    fake = FakeChatServer()
    await fake.server.start_server()
    yield fake
    fake.release_slow.set()
    await fake.server.close()


def openai_config(url: str, **extra: Any) -> LLMConfig:
    settings: dict[str, Any] = {"backend": "openai", "model": "qwen3-8b", "url": url, "retry_backoff_s": 0.01}
    return LLMConfig(**{**settings, **extra})


@pytest.fixture
async def openai_llm(chat_server: FakeChatServer) -> AsyncIterator[OpenAILLM]:
    llm = OpenAILLM(openai_config(chat_server.url))
    await llm.start()
    yield llm
    await llm.close()


# --- OpenAI-compatible backend -------------------------------------------------------------------


async def test_openai_request_carries_schema_model_and_no_think(chat_server: FakeChatServer) -> None:
    llm = OpenAILLM(openai_config(chat_server.url, api_key="sekret"))
    await llm.start()
    reply = await llm.chat(CONVERSATION, json_schema=fact_list_schema(), max_tokens=300, temperature=0.1)
    await llm.close()

    assert FACT_LIST.validate_json(reply)[0].topic == "coffee habit"
    body = chat_server.requests[0]
    assert body["model"] == "qwen3-8b"
    assert body["stream"] is False and body["max_tokens"] == 300 and body["temperature"] == 0.1
    assert body["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "facts", "schema": fact_list_schema(), "strict": True},
    }
    assert body["chat_template_kwargs"] == {"enable_thinking": False}
    assert body["messages"] == [
        {"role": "system", "content": "Extract durable facts about the user."},
        {"role": "user", "content": "I live in Lisbon and drink my coffee black. /no_think"},
    ]
    assert all(headers["Authorization"] == "Bearer sekret" for headers in chat_server.headers)


async def test_openai_plain_request_has_no_extras(chat_server: FakeChatServer) -> None:
    llm = OpenAILLM(openai_config(chat_server.url, disable_thinking=False))
    await llm.start()
    await llm.chat(CONVERSATION)
    await llm.close()
    body = chat_server.requests[0]
    assert "response_format" not in body and "chat_template_kwargs" not in body
    assert body["messages"][-1]["content"] == "I live in Lisbon and drink my coffee black."
    assert "Authorization" not in chat_server.headers[-1]


async def test_openai_think_block_is_stripped(chat_server: FakeChatServer, openai_llm: OpenAILLM) -> None:
    chat_server.mode = "think"
    assert await openai_llm.chat(CONVERSATION) == FACTS_JSON
    health = openai_llm.health()
    assert health.ok and health.last_error is None and health.last_latency_s is not None


@pytest.mark.parametrize("mode", ["html", "no_choices", "null_content"])
async def test_openai_garbage_reply_is_unavailable_without_retry(
    chat_server: FakeChatServer, openai_llm: OpenAILLM, mode: str
) -> None:
    chat_server.mode = mode
    with pytest.raises(LLMUnavailable):
        await openai_llm.chat(CONVERSATION)
    assert len(chat_server.requests) == 1
    assert not openai_llm.health().ok and openai_llm.health().last_error


@pytest.mark.parametrize("status", ["500", "429"])
async def test_openai_retries_a_server_error_then_succeeds(
    chat_server: FakeChatServer, openai_llm: OpenAILLM, status: str
) -> None:
    chat_server.script = [status, status]
    assert await openai_llm.chat(CONVERSATION) == FACTS_JSON
    assert len(chat_server.requests) == 3  # config.retries = 2
    assert openai_llm.health().ok


async def test_openai_gives_up_after_the_configured_retries(
    chat_server: FakeChatServer, openai_llm: OpenAILLM
) -> None:
    chat_server.mode = "500"
    with pytest.raises(LLMUnavailable, match="HTTP 500"):
        await openai_llm.chat(CONVERSATION)
    assert len(chat_server.requests) == 3
    assert "HTTP 500" in (openai_llm.health().last_error or "")


async def test_openai_client_error_is_not_retried(chat_server: FakeChatServer, openai_llm: OpenAILLM) -> None:
    chat_server.mode = "400"
    with pytest.raises(LLMUnavailable, match="context size exceeded"):
        await openai_llm.chat(CONVERSATION)
    assert len(chat_server.requests) == 1


async def test_openai_slow_reply_times_out_within_the_budget_without_retry(
    chat_server: FakeChatServer, openai_llm: OpenAILLM
) -> None:
    chat_server.mode = "slow"
    started = time.monotonic()
    with pytest.raises(LLMUnavailable, match="no reply within"):
        await openai_llm.chat(CONVERSATION, timeout=0.3)
    assert time.monotonic() - started < 1.0
    assert len(chat_server.requests) == 1  # a long generation is not started over


async def test_openai_back_off_never_outlives_the_call_timeout(chat_server: FakeChatServer) -> None:
    llm = OpenAILLM(openai_config(chat_server.url, retries=5, retry_backoff_s=10.0))
    await llm.start()
    chat_server.mode = "500"
    started = time.monotonic()
    with pytest.raises(LLMUnavailable, match="HTTP 500"):
        await llm.chat(CONVERSATION, timeout=0.5)
    assert time.monotonic() - started < 0.5
    assert len(chat_server.requests) == 1
    await llm.close()


async def test_openai_refused_connection_is_retried_then_unavailable(chat_server: FakeChatServer) -> None:
    llm = OpenAILLM(openai_config(chat_server.url))
    await llm.start()
    assert llm.health().ok
    await chat_server.server.close()  # nothing listens on the port any more
    with pytest.raises(LLMUnavailable, match=r"ConnectError.*after 3 attempts"):
        await llm.chat(CONVERSATION, timeout=5)
    assert not llm.health().ok
    await llm.close()


async def test_openai_server_down_at_start_up_is_only_a_warning(chat_server: FakeChatServer) -> None:
    url = chat_server.url
    await chat_server.server.close()
    llm = OpenAILLM(openai_config(url))
    await llm.start()
    health = llm.health()
    assert not health.ok and "not reachable" in (health.last_error or "")
    with pytest.raises(LLMUnavailable):
        await llm.chat(CONVERSATION, timeout=2)
    await llm.close()


async def test_openai_chat_before_start_is_unavailable() -> None:
    with pytest.raises(LLMUnavailable, match="not started"):
        await OpenAILLM(openai_config("http://127.0.0.1:9")).chat(CONVERSATION)


def test_create_llm_picks_the_backend_named_in_the_config() -> None:
    assert isinstance(create_llm(LLMConfig(backend="openai")), OpenAILLM)
    assert isinstance(create_llm(LLMConfig(backend="llama_cpp")), LlamaCppLLM)
    assert create_llm(LLMConfig(backend="rules")) is None


# --- llama.cpp backend: message preparation and model file ---------------------------------------


def test_no_think_goes_on_the_last_user_message_once() -> None:
    messages = [ChatMessage("user", "a"), ChatMessage("assistant", "b"), ChatMessage("user", "c")]
    patched = with_no_think(messages)
    assert [m.content for m in patched] == ["a", "b", "c /no_think"]
    assert with_no_think(patched) == patched
    assert with_no_think([ChatMessage("system", "s")]) == [ChatMessage("system", "s")]


def test_gemma_gets_the_system_prompt_inside_the_first_user_message() -> None:
    messages = [*CONVERSATION, ChatMessage("assistant", "ok"), ChatMessage("user", "more")]
    assert prepare_messages(messages, chat_format="gemma", disable_thinking=True) == [
        {
            "role": "user",
            "content": "Extract durable facts about the user.\n\nI live in Lisbon and drink my coffee black.",
        },
        {"role": "assistant", "content": "ok"},
        {"role": "user", "content": "more /no_think"},
    ]
    # Formats with a system role keep it.
    kept = prepare_messages(CONVERSATION, chat_format="chatml", disable_thinking=False)
    assert kept[0] == {"role": "system", "content": "Extract durable facts about the user."}


def test_gemma_system_prompt_alone_becomes_a_user_message() -> None:
    only_system = [ChatMessage("system", "Say hi.")]
    assert prepare_messages(only_system, chat_format="gemma", disable_thinking=False) == [
        {"role": "user", "content": "Say hi."}
    ]


def test_packaged_gguf_is_assembled_once_then_trusted(tmp_path: Path) -> None:
    path = packaged_gemma_path(tmp_path)
    assert path == tmp_path / "gemma-3-270m-q4_k_m.gguf"
    size, written = path.stat().st_size, path.stat().st_mtime_ns
    assert packaged_gemma_path(tmp_path).stat().st_mtime_ns == written  # trusted by size, not rewritten
    path.write_bytes(b"torn download")
    assert packaged_gemma_path(tmp_path).stat().st_size == size  # a torn file is assembled again
    assert [p.name for p in tmp_path.iterdir()] == [path.name]  # no partial file left behind


async def test_missing_gguf_is_a_clear_error(tmp_path: Path) -> None:
    llm = LlamaCppLLM(LLMConfig(model_path=tmp_path / "nope.gguf"))
    with pytest.raises(LLMUnavailable, match="not found"):
        await llm.start()
    assert not llm.health().ok
    await llm.close()


async def test_llama_chat_before_start_is_unavailable() -> None:
    with pytest.raises(LLMUnavailable, match="not loaded"):
        await LlamaCppLLM(LLMConfig()).chat(CONVERSATION)


# --- llama.cpp backend: the real Gemma 3 270M ------------------------------------------------------


@pytest.mark.slow
async def test_gemma_extracts_facts_as_schema_valid_json(gemma: LlamaCppLLM) -> None:
    messages = [
        ChatMessage(
            "system",
            "You extract durable facts about the user from a conversation. Answer with a JSON array of "
            "objects with topic, fact, importance (1-10) and category; an empty array if there is nothing.",
        ),
        ChatMessage(
            "user",
            "Conversation:\nuser: I moved to Lisbon last year and I drink my coffee black every morning.\n"
            "assistant: Noted, black coffee it is.\nuser: Also, I'm allergic to peanuts.",
        ),
    ]
    started = time.perf_counter()
    reply = await gemma.chat(messages, json_schema=fact_list_schema(), max_tokens=512, timeout=120)
    elapsed = time.perf_counter() - started
    print(f"\ngemma extraction in {elapsed:.2f}s: {reply}")
    facts = FACT_LIST.validate_python(json.loads(reply))  # [] is a valid answer for this tiny model
    print(f"gemma facts: {facts}")
    assert gemma.health().ok and gemma.health().last_latency_s is not None


@pytest.mark.slow
async def test_gemma_timeout_stops_the_generation_so_the_next_call_runs(gemma: LlamaCppLLM) -> None:
    story = [ChatMessage("user", "Write a very long story about a lighthouse keeper, chapter by chapter.")]
    started = time.perf_counter()
    with pytest.raises(LLMUnavailable, match="no reply within"):
        await gemma.chat(story, max_tokens=1500, timeout=0.5)
    assert time.perf_counter() - started < 1.5
    # Had the timed-out call run on to 1500 tokens, this one would wait behind it for a minute.
    started = time.perf_counter()
    await gemma.chat([ChatMessage("user", "Say hi.")], max_tokens=4, timeout=10)
    print(f"\ncall after a timed-out one answered in {time.perf_counter() - started:.2f}s")
    assert gemma.health().ok


@pytest.mark.slow
async def test_gemma_prompt_longer_than_the_context_is_unavailable(gemma: LlamaCppLLM) -> None:
    too_long = [ChatMessage("user", "coffee " * 3000)]  # n_ctx is 2048
    with pytest.raises(LLMUnavailable, match="exceed context window"):
        await gemma.chat(too_long, max_tokens=4, timeout=30)
    await gemma.chat([ChatMessage("user", "Say hi.")], max_tokens=4, timeout=10)  # the model is fine
    assert gemma.health().ok
