"""Re-embedding in the background: every stored row without a vector of the live model gets one
while the daemon runs (``embeddings.reembed``).

Such rows appear when ``embeddings.model`` or ``embeddings.quantize`` changes (every row then holds
the old model's vector, which vector search leaves out) and when the embedder was down while
memories were written (they were stored without one). The worker walks them in id order, a batch at
a time, through the model's background lane (after every search query and every write that waits:
:mod:`..models.model_thread`), and stores each vector in one short write transaction, only if the
row still needs it and its text is still the text that was embedded. The vector index holds each
row as soon as that transaction commits.

It looks at start, then every ``check_interval_s`` (three probes of an index). A failed embedding or
write ends the pass until the next look. Progress is in /stats (``reembedding``) and in the log.
``scripts/backfill-embeddings.py`` does the same from outside the daemon.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sqlite3
import time
from dataclasses import dataclass

import numpy as np

from ..errors import EmbedderUnavailable
from ..models.embedders import Embedder
from ..store import embeddings as embedding_sql
from ..store import memories as memory_sql
from ..store.db import Database
from ..vectormath import to_blob
from .memories import MemoryService
from .memory_text import stored_embedding_text

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ReembedProgress:
    """What /stats shows of the worker."""

    enabled: bool
    running: bool  # a pass is under way
    done: int  # rows given a vector of the live model since the daemon started
    remaining: int  # rows the running pass has still to do (0 between passes)


class Reembedder:
    """The background worker (see the module's docstring).

    Args:
        db: the store.
        memories: writes each batch, so the vector index follows as for any other write.
        embedder: the live model.
        batch_size: rows per model call and per write transaction.
        check_interval_s: how long to wait after a pass (or a failed one) before looking again.
        log_every_s: how often a running pass logs its progress.
    """

    def __init__(
        self,
        db: Database,
        memories: MemoryService,
        embedder: Embedder,
        *,
        batch_size: int = 16,
        check_interval_s: float = 60.0,
        log_every_s: float = 30.0,
    ) -> None:
        self._db = db
        self._memories = memories
        self._embedder = embedder
        self._batch_size = batch_size
        self._check_interval_s = check_interval_s
        self._log_every_s = log_every_s
        self._task: asyncio.Task[None] | None = None
        self._running = False
        self._done = 0
        self._remaining = 0
        self._unembeddable: set[int] = set()  # rows the embedder refused alone, this process's lifetime

    @property
    def progress(self) -> ReembedProgress:
        return ReembedProgress(self._task is not None, self._running, self._done, self._remaining)

    async def start(self) -> None:
        self._task = asyncio.create_task(self._run(), name="reembed")

    async def stop(self) -> None:
        """Stop at once: a batch not yet written is simply done again by the next start."""
        if self._task is None:
            return
        self._task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._task
        self._task = None

    async def _run(self) -> None:
        paused = False  # said once, not at every look while the embedder stays down
        while True:
            try:
                await self.run_pass()
                paused = False
            except EmbedderUnavailable as exc:
                if not paused:
                    log.warning("re-embedding paused: the embedder failed", extra={"reason": str(exc)})
                paused = True
            except Exception:  # a full disk, a lost database: try again at the next look
                if not paused:
                    log.exception("re-embedding paused")
                paused = True
            await asyncio.sleep(self._check_interval_s)

    async def run_pass(self) -> int:
        """Embed every row that needs it now, in id order; the number given a vector. Nothing when
        the embedder is known to be down, or another daemon on the database is at it (PostgreSQL).

        Raises:
            EmbedderUnavailable: the model failed on whole batches and on their rows alone (what was
                written before stays written).
        """
        model = self._memories.model
        if model is None or not self._embedder.available():
            return 0
        if not await self._db.read(lambda conn: embedding_sql.any_needing_embedding(conn, model)):
            return 0
        async with self._db.exclusive("reembed") as held:
            if not held:
                return 0
            try:
                return await self._walk(model)
            finally:  # ended, failed or stopped: no pass is running
                self._running, self._remaining = False, 0

    async def _walk(self, model: str) -> int:
        total = await self._db.read(lambda conn: embedding_sql.count_needing_embedding(conn, model, None))
        others = await self._db.read(lambda conn: embedding_sql.other_models(conn, model))
        log.info(
            "re-embedding memories in the background",
            extra={"model": model, "rows": total, "other_models": others},
        )
        self._running, self._remaining = True, total
        started = last_log = time.monotonic()
        stored, after_id = 0, 0
        while (step := await self._embed_batch(model, after_id)) is not None:
            after_id, walked, written = step
            stored, self._done = stored + written, self._done + written
            self._remaining = max(0, self._remaining - walked)
            if time.monotonic() - last_log >= self._log_every_s:
                last_log = time.monotonic()
                log.info(
                    "re-embedding",
                    extra={
                        "done": stored,
                        "remaining": self._remaining,
                        "per_s": round(stored / max(last_log - started, 1e-9), 1),
                    },
                )
        log.info(
            "re-embedded memories",
            extra={"model": model, "rows": stored, "seconds": round(time.monotonic() - started, 1)},
        )
        return stored

    async def _embed_batch(self, model: str, after_id: int) -> tuple[int, int, int] | None:
        """Embed the next batch after ``after_id``: ``(its last id, rows walked, rows written)``,
        or None when nothing is left."""
        batch = await self._db.read(
            lambda conn: embedding_sql.needing_embedding(
                conn, model, user_id=None, after_id=after_id, limit=self._batch_size
            )
        )
        if not batch:
            return None
        ids = [memory_id for memory_id, _, _ in batch if memory_id not in self._unembeddable]
        texts = await self._db.read(lambda conn: _embedding_texts(conn, ids))
        vectors = await self._vectors(texts)
        if vectors:
            written = await self._memories.write_with_index(lambda conn: _store_vectors(conn, model, vectors))
        else:
            written = 0
        return batch[-1][0], len(batch), written

    async def _vectors(self, texts: dict[int, str]) -> dict[int, tuple[str, np.ndarray]]:
        """Each row's text and vector. A batch the embedder refuses is tried row by row: a row it
        refuses alone is left without a vector for the daemon's lifetime (logged by id) and the
        walk goes on; only when every row fails alone is the embedder taken to be down."""
        if not texts:
            return {}
        try:
            vectors = await self._embedder.embed_documents(list(texts.values()), background=True)
            return {mid: (text, vector) for (mid, text), vector in zip(texts.items(), vectors, strict=True)}
        except EmbedderUnavailable:
            if len(texts) == 1:
                raise
        found: dict[int, tuple[str, np.ndarray]] = {}
        failure: EmbedderUnavailable | None = None
        for memory_id, text in texts.items():
            try:
                [vector] = await self._embedder.embed_documents([text], background=True)
            except EmbedderUnavailable as exc:
                failure = exc
                self._unembeddable.add(memory_id)
                log.warning(
                    "a memory the embedder refuses is left without a vector", extra={"memory": memory_id}
                )
                continue
            found[memory_id] = (text, vector)
        if not found and failure is not None:
            self._unembeddable.difference_update(texts)  # the embedder, not these rows
            raise failure
        return found


async def warn_of_other_models(db: Database, model: str) -> None:
    """One warning at start when rows carry another model's vectors (``embeddings.model`` or
    ``embeddings.quantize`` changed): vector search leaves them out until they are re-embedded,
    by a daemon's worker or the backfill script (a process without the worker, the MCP stdio
    server, says so too)."""
    others = await db.read(lambda conn: embedding_sql.other_models(conn, model))
    if others:
        log.warning(
            "memories embedded by another model are left out of vector search until re-embedded"
            " (by the daemon, embeddings.reembed, or scripts/backfill-embeddings.py)",
            extra={"model": model, "other_models": others},
        )


def _embedding_texts(conn: sqlite3.Connection, memory_ids: list[int]) -> dict[int, str]:
    """Each row's text to embed, as it was first embedded (with its session context)."""
    records = memory_sql.get_many(conn, memory_ids)
    return {mid: stored_embedding_text(conn, records[mid]) for mid in memory_ids if mid in records}


def _store_vectors(
    conn: sqlite3.Connection, model: str, vectors: dict[int, tuple[str, np.ndarray]]
) -> tuple[int, list[int]]:
    """Write each vector whose row still needs one and still reads as the text embedded (an edit
    meanwhile embedded it anew, or leaves it to the next pass); ``(rows written, their ids)``."""
    written: list[int] = []
    records = memory_sql.get_many(conn, list(vectors))
    for memory_id, (text, vector) in vectors.items():
        record = records.get(memory_id)
        if record is None or record.embedding_model == model or stored_embedding_text(conn, record) != text:
            continue
        if embedding_sql.set_embedding(conn, memory_id, to_blob(vector), model, int(vector.shape[0])):
            written.append(memory_id)
    return len(written), written
