"""The three embedding backends: the real MiniLM, and the two HTTP ones against loopback servers."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import numpy as np
import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer

from memory_cortex.config import EmbeddingsConfig
from memory_cortex.errors import EmbedderUnavailable
from memory_cortex.models.embedders import HttpEmbedder, OpenAIEmbedder, SentenceTransformerEmbedder
from tests.helpers import eventually


def fake_vector(text: str, dim: int = 8) -> list[float]:
    rng = np.random.default_rng(abs(hash(text)) % 2**32)
    return rng.normal(size=dim).tolist()


async def test_minilm_gives_normalised_384d_vectors(minilm: SentenceTransformerEmbedder) -> None:
    vectors = await minilm.embed_documents(["coffee in the morning", "espresso at dawn", "tax law"])
    assert vectors.shape == (3, 384) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert vectors[0] @ vectors[1] > vectors[0] @ vectors[2]
    assert minilm.health().ok and minilm.health().dim == 384


async def test_missing_model_folder_is_a_clear_error(tmp_path: Any) -> None:
    embedder = SentenceTransformerEmbedder(EmbeddingsConfig(model_path=tmp_path / "nope"))
    with pytest.raises(EmbedderUnavailable, match="not found"):
        await embedder.start()
    await embedder.close()


class FakeEmbeddingService:
    """A loopback server speaking both the seed's /embed and OpenAI's /v1/embeddings."""

    def __init__(self) -> None:
        self.mode = "ok"
        self.requests: list[Any] = []
        app = web.Application()
        app.router.add_post("/embed", self.embed)
        app.router.add_post("/v1/embeddings", self.openai)
        self.server = TestServer(app)

    async def misbehave(self) -> web.Response | None:
        if self.mode == "500":
            return web.Response(status=500, text="boom")
        if self.mode == "garbage":
            return web.Response(text="<html>not json", content_type="text/html")
        if self.mode == "slow":
            await asyncio.sleep(2)
        return None

    async def embed(self, request: web.Request) -> web.Response:
        body = await request.json()
        self.requests.append(body)
        bad = await self.misbehave()
        if bad is not None:
            return bad
        if self.mode == "wrong_shape":
            return web.json_response({"vector": [1, 2]})
        return web.json_response({"embedding": fake_vector(body["text"])})

    async def openai(self, request: web.Request) -> web.Response:
        body = await request.json()
        self.requests.append(body)
        bad = await self.misbehave()
        if bad is not None:
            return bad
        if self.mode == "wrong_shape":
            return web.json_response({"data": [{"embedding": [1.0]}]})
        data = [
            {"index": i, "embedding": fake_vector(t)} for i, t in reversed(list(enumerate(body["input"])))
        ]
        return web.json_response({"object": "list", "data": data, "model": body["model"]})


@pytest.fixture
async def service() -> Any:
    fake = FakeEmbeddingService()
    await fake.server.start_server()
    yield fake
    await fake.server.close()


def config_for(service: FakeEmbeddingService, backend: str, **extra: Any) -> EmbeddingsConfig:
    url = str(service.server.make_url("")).rstrip("/")
    return EmbeddingsConfig(backend=backend, model="nomic-embed-text", url=url, timeout_s=1.0, **extra)


@pytest.mark.parametrize("backend_class", [HttpEmbedder, OpenAIEmbedder])
async def test_remote_backend_embeds_batches_in_order(
    service: FakeEmbeddingService, backend_class: Any
) -> None:
    backend = "http" if backend_class is HttpEmbedder else "openai"
    embedder = backend_class(config_for(service, backend, batch_size=2, document_prefix="search_document: "))
    await embedder.start()
    texts = ["one", "two", "three"]
    vectors = await embedder.embed_documents(texts)
    expected = np.array([fake_vector("search_document: " + t) for t in texts], dtype=np.float32)
    expected /= np.linalg.norm(expected, axis=1, keepdims=True)
    assert np.allclose(vectors, expected, atol=1e-6)
    assert embedder.health().ok and embedder.health().dim == 8
    await embedder.close()


@pytest.mark.parametrize("backend_class", [HttpEmbedder, OpenAIEmbedder])
@pytest.mark.parametrize("mode", ["500", "garbage", "slow", "wrong_shape"])
async def test_every_upstream_failure_is_mapped(
    service: FakeEmbeddingService, backend_class: Any, mode: str
) -> None:
    backend = "http" if backend_class is HttpEmbedder else "openai"
    embedder = backend_class(config_for(service, backend, retry_after_s=60))
    await embedder.start()
    assert embedder.available()
    service.mode = mode
    with pytest.raises(EmbedderUnavailable):
        await embedder.embed_query("hello", timeout=0.3)
    health = embedder.health()
    assert not health.ok and health.last_error
    assert not embedder.available()  # searches skip it instead of paying the timeout again
    service.mode = "ok"
    await embedder.embed_documents(["back"])  # writes still try, and recovery is noticed
    assert embedder.health().ok and embedder.available()
    await embedder.close()


async def test_unreachable_service_does_not_stop_start_up() -> None:
    embedder = HttpEmbedder(EmbeddingsConfig(backend="http", url="http://127.0.0.1:9", timeout_s=0.5))
    await embedder.start()
    assert not embedder.health().ok
    with pytest.raises(EmbedderUnavailable):
        await embedder.embed_query("x")
    await embedder.close()


async def test_concurrent_queries_share_model_calls_and_get_their_own_vectors(
    minilm: SentenceTransformerEmbedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Twenty searches at once cost a few model calls, not twenty queued ones (each 'alone' answer)."""
    queries = [f"what did the user say about topic number {i}?" for i in range(20)]
    alone = [await minilm.embed_query(q) for q in queries]
    calls: list[int] = []
    encode = minilm._encode

    def counting(texts: list[str]) -> np.ndarray:
        calls.append(len(texts))
        return encode(texts)

    monkeypatch.setattr(minilm, "_encode", counting)
    together = await asyncio.gather(*(minilm.embed_query(q, timeout=30) for q in queries))
    assert sum(calls) == 20 and len(calls) <= 3, calls
    assert max(calls) <= minilm.config.query_batch_max  # a batch stays short enough to end in time
    for single, batched in zip(alone, together, strict=True):
        assert np.allclose(single, batched, atol=1e-5)


async def test_a_query_does_not_wait_behind_a_large_document_batch(
    minilm: SentenceTransformerEmbedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Documents go to the model in small chunks, so a query slips in between two of them."""
    order: list[str] = []
    encode = minilm._encode

    def recording(texts: list[str]) -> np.ndarray:
        order.append("query" if texts == ["the query"] else f"docs:{len(texts)}")
        return encode(texts)

    monkeypatch.setattr(minilm, "_encode", recording)
    documents = asyncio.ensure_future(minilm.embed_documents([f"document {i}" for i in range(40)]))
    await asyncio.sleep(0)  # the first chunk is with the model
    await minilm.embed_query("the query", timeout=30)
    await documents
    assert order.index("query") < len(order) - 1, order  # not last: it did not wait for all 40
    assert all(o == "query" or int(o.split(":")[1]) <= minilm.DOCUMENT_CHUNK for o in order)


async def test_a_query_that_gave_up_is_not_encoded(
    minilm: SentenceTransformerEmbedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A search that stopped waiting leaves the batch: the model only encodes queries still wanted."""
    encoded: list[str] = []
    encode = minilm._encode
    holding, release = threading.Event(), threading.Event()

    def slow_documents(texts: list[str]) -> np.ndarray:
        if texts == ["hold the model"]:
            holding.set()
            release.wait(10)  # the model is busy while the first query times out
        encoded.extend(texts)
        return encode(texts)

    monkeypatch.setattr(minilm, "_encode", slow_documents)
    busy = asyncio.ensure_future(minilm.embed_documents(["hold the model"]))
    await eventually(holding.is_set, what="the model thread holding the documents")
    # Each query is in the lane once its task has run to its first wait (one turn of the loop).
    first = asyncio.ensure_future(minilm.embed_query("first question", timeout=30))
    await asyncio.sleep(0)
    with pytest.raises(EmbedderUnavailable):
        await minilm.embed_query("abandoned question", timeout=0.05)
    patient = asyncio.ensure_future(minilm.embed_query("patient question", timeout=30))
    await asyncio.sleep(0)
    release.set()
    await busy
    assert (await first).shape == (await patient).shape == (384,)
    assert "patient question" in encoded and "abandoned question" not in encoded
