"""The daemon's own re-embedding (embeddings.reembed): rows of another model and rows stored while the
embedder was down get the live model's vector in the background, with real SQLite, the real model
and the real app on a loopback port."""

from __future__ import annotations

import logging
import sqlite3
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from memory_cortex.app import create_app
from memory_cortex.errors import EmbedderUnavailable
from memory_cortex.keys import REEMBEDDER, VECTOR_INDEX
from memory_cortex.services.reembed import _store_vectors
from memory_cortex.vectormath import from_blob
from tests.conftest import make_config
from tests.fakes import DeadEmbedder
from tests.helpers import eventually, search, store, store_connection, wait_idle

CONVERSATION = [
    {"role": "user", "content": "My sister Lena just adopted a grey whippet called Pixel."},
    {"role": "assistant", "content": "Lovely! Whippets are gentle dogs."},
    {"role": "user", "content": "She takes Pixel running along the river every morning."},
]


async def stats_of(client: Any) -> dict[str, Any]:
    return await (await client.get("/stats")).json()


async def test_rows_of_another_model_get_the_same_vectors_again_and_unembedded_rows_get_one(
    aiohttp_client: Any, tmp_path: Path, minilm: Any
) -> None:
    config = make_config(tmp_path, ingest={"debounce_s": 0})
    first = await aiohttp_client(create_app(config, embedder=minilm))
    await first.post("/ingest", json={"messages": CONVERSATION, "user_id": "u", "session_id": "s1"})
    await wait_idle(first)
    await first.close()
    with store_connection(config) as conn:
        embedded = {
            mid: from_blob(bytes(blob))
            for mid, blob in conn.execute("SELECT id, embedding FROM memories WHERE embedding IS NOT NULL")
        }
        # As after a change of embeddings.model: every vector is another model's now.
        conn.execute("UPDATE memories SET embedding_model = 'old-model'")
    assert len(embedded) >= 3  # the turns, with their session context, and what was extracted

    down = await aiohttp_client(create_app(config, embedder=DeadEmbedder(minilm.model, 384)))
    await store(down, {"user_id": "u", "fact": "Lena works night shifts at the Porto harbour."})
    await down.close()

    live = await aiohttp_client(create_app(config, embedder=minilm))
    stats = await eventually(lambda: _settled(live), what="every row re-embedded", timeout=60)
    assert stats["reembedding"] == {
        "enabled": True,
        "running": False,
        "done": len(embedded) + 1,
        "remaining": 0,
    }
    assert len(live.app[VECTOR_INDEX]) == stats["live_memories"]
    with store_connection(config) as conn:
        again = {
            mid: (from_blob(bytes(blob)), model)
            for mid, blob, model in conn.execute("SELECT id, embedding, embedding_model FROM memories")
        }
    assert {model for _, model in again.values()} == {minilm.model}
    for mid, vector in embedded.items():  # the same text, session context included: the same vector
        assert float(np.dot(vector, again[mid][0])) > 0.999, mid
    body = await search(live, "what hours does Lena work?", "u", mode="vector", limit=1)
    assert "night shifts" in body["results"][0]["fact"]


async def _settled(client: Any) -> dict[str, Any] | None:
    stats = await stats_of(client)
    done = stats["stale_embeddings"] == 0 and stats["unembedded"] == 0 and not stats["reembedding"]["running"]
    return stats if done else None


async def test_a_row_edited_while_it_was_embedded_keeps_the_edit_s_vector(
    aiohttp_client: Any, tmp_path: Path, minilm: Any
) -> None:
    """The vector is written only if the row still reads as the text embedded: an edit meanwhile
    wins (it embedded the new text itself)."""
    config = make_config(tmp_path, embeddings={"reembed": False})
    client = await aiohttp_client(create_app(config, embedder=minilm))
    [kept, edited] = await store(
        client,
        {"user_id": "u", "fact": "Ana grows tomatoes on her balcony."},
        {"user_id": "u", "fact": "Ana keeps bees."},
    )
    with store_connection(config) as conn:
        conn.execute("UPDATE memories SET embedding_model = 'old-model'")
        conn.execute(
            "UPDATE memories SET fact = 'Ana keeps three hives of bees.' WHERE id = ?", (edited["id"],)
        )
        conn.row_factory = sqlite3.Row
        vector = np.ones(384, dtype=np.float32) / np.sqrt(384)
        embedded = {
            kept["id"]: ("Ana grows tomatoes on her balcony.", vector),
            edited["id"]: ("Ana keeps bees.", vector),
        }
        written = _store_vectors(conn, minilm.model, embedded)
        models = dict(conn.execute("SELECT id, embedding_model FROM memories").fetchall())
    assert written == (1, [kept["id"]])
    assert models == {kept["id"]: minilm.model, edited["id"]: "old-model"}


async def test_with_reembed_off_the_daemon_warns_and_leaves_the_rows_as_they_are(
    aiohttp_client: Any, tmp_path: Path, minilm: Any, caplog: pytest.LogCaptureFixture
) -> None:
    config = make_config(tmp_path, embeddings={"reembed": False})
    client = await aiohttp_client(create_app(config, embedder=minilm))
    await store(client, {"user_id": "u", "fact": "Ana grows tomatoes."})
    await client.close()
    with store_connection(config) as conn:
        conn.execute("UPDATE memories SET embedding_model = 'old-model'")
    caplog.set_level(logging.WARNING, logger="memory_cortex")
    again = await aiohttp_client(create_app(config, embedder=minilm))
    assert any(r.getMessage().startswith("memories embedded by another model") for r in caplog.records)
    assert again.app[REEMBEDDER].progress.enabled is False
    assert await again.app[REEMBEDDER].run_pass() == 1  # what the worker would have done, asked by hand
    assert (await stats_of(again))["stale_embeddings"] == 0


class RefusingEmbedder:
    """The real model, refusing any batch with a text that says "refuse me" (as a remote server
    refuses an input longer than its context)."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner
        self.backend, self.model = inner.backend, inner.model
        self.calls = 0

    @property
    def dim(self) -> int | None:
        return self._inner.dim

    async def start(self) -> None: ...

    async def close(self) -> None: ...

    async def embed_documents(self, texts: Any, *, background: bool = False) -> Any:
        self.calls += 1
        if any("refuse me" in text for text in texts):
            raise EmbedderUnavailable("input too long")
        return await self._inner.embed_documents(texts, background=background)

    async def embed_query(self, text: str, *, timeout: float | None = None) -> Any:
        return await self._inner.embed_query(text, timeout=timeout)

    def available(self) -> bool:
        return True

    def health(self) -> Any:
        return self._inner.health()


async def test_a_row_the_embedder_refuses_is_skipped_and_the_rest_are_embedded(
    aiohttp_client: Any, tmp_path: Path, minilm: Any
) -> None:
    config = make_config(tmp_path, embeddings={"reembed": False})
    client = await aiohttp_client(create_app(config, embedder=minilm))
    await store(
        client,
        {"user_id": "u", "fact": "Ana grows tomatoes."},
        {"user_id": "u", "fact": "Ana says refuse me, a line too long for the server."},
        {"user_id": "u", "fact": "Ana keeps bees."},
    )
    await client.close()
    with store_connection(config) as conn:
        conn.execute("UPDATE memories SET embedding_model = 'old-model'")
    refusing = RefusingEmbedder(minilm)
    again = await aiohttp_client(create_app(config, embedder=refusing))
    assert await again.app[REEMBEDDER].run_pass() == 2  # the batch failed; its rows went one by one
    assert (await stats_of(again))["stale_embeddings"] == 1
    calls = refusing.calls
    assert await again.app[REEMBEDDER].run_pass() == 0  # the refused row is not asked again
    assert refusing.calls == calls
