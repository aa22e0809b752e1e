"""Writing, reading and editing memories, with their vectors kept in step.

Embedding happens before the write transaction (it is slow and may fail); the write itself is one
short transaction on the writer thread whose after-commit hook updates the in-memory index. If the
embedder is down, the memory is still stored (nothing accepted is lost) without a vector, counted
in /stats as ``unembedded`` until ``scripts/backfill-embeddings.py`` or a later edit embeds it.
"""

from __future__ import annotations

import dataclasses
import logging
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import EmbedderUnavailable, InvalidRequest, MemoryNotFound
from ..models.embedders import Embedder
from ..store import memories as memory_sql
from ..store.db import Database
from ..store.memories import MemoryRecord, NewMemory
from ..store.vectors import VectorIndex, from_blob, to_blob

log = logging.getLogger(__name__)


def embedding_text(topic: str, fact: str) -> str:
    """The text a memory is embedded as: its topic gives a short fact its context."""
    return f"{topic}: {fact}" if topic else fact


@dataclass(frozen=True)
class _IndexEntry:
    """What the after-commit hook needs to mirror one row into the vector index."""

    memory_id: int
    user_id: str | None = None
    vector: np.ndarray | None = None  # None → remove from the index


class MemoryService:
    """CRUD over memories for the HTTP layer and the CLI.

    Args:
        db: the store.
        index: the vector index of the live model (None when no embedder is configured).
        embedder: embeds on write; failures leave the row unembedded.
    """

    def __init__(self, db: Database, index: VectorIndex | None, embedder: Embedder | None) -> None:
        self._db = db
        self._index = index
        self._embedder = embedder

    @property
    def model(self) -> str | None:
        return self._index.model if self._index is not None else None

    # -- writes ----------------------------------------------------------------------------
    async def create(self, items: Sequence[NewMemory]) -> list[MemoryRecord]:
        """Insert memories (one transaction for the whole batch) and return them as stored."""
        vectors = await self._embed([embedding_text(m.topic, m.fact) for m in items])
        rows = [
            self._with_vector(item, None if vectors is None else vectors[i]) for i, item in enumerate(items)
        ]

        def work(conn: sqlite3.Connection) -> tuple[list[MemoryRecord], list[_IndexEntry]]:
            ids = [memory_sql.insert(conn, row) for row in rows]
            stored = memory_sql.get_many(conn, ids)
            return [stored[i] for i in ids], self._index_entries(conn, ids)

        records, _ = await self._db.write(work, after_commit=self._apply_index)
        return records

    async def update(
        self, memory_id: int, changes: dict[str, Any], *, user_id: str | None = None
    ) -> MemoryRecord:
        """Change some fields; a new topic or fact is re-embedded."""
        current = await self.get(memory_id, user_id=user_id)
        changes = dict(changes)
        if changes.get("superseded_by") == memory_id:
            raise InvalidRequest("a memory cannot supersede itself")
        new_topic = changes.get("topic", current.topic)
        new_fact = changes.get("fact", current.fact)
        text_changed = (new_topic, new_fact) != (current.topic, current.fact)
        if text_changed:
            vectors = await self._embed([embedding_text(new_topic, new_fact)])
            if vectors is not None and self.model is not None:
                changes.update(
                    embedding=to_blob(vectors[0]),
                    embedding_model=self.model,
                    embedding_dim=int(vectors.shape[1]),
                )
            else:
                changes.update(embedding=None, embedding_model=None, embedding_dim=None)

        def work(conn: sqlite3.Connection) -> tuple[MemoryRecord, list[_IndexEntry]]:
            if "superseded_by" in changes and changes["superseded_by"] is not None:
                target = memory_sql.get(conn, int(changes["superseded_by"]))
                if target is None or target.user_id != (changes.get("user_id") or current.user_id):
                    raise InvalidRequest("superseded_by must name another memory of the same user")
            if not memory_sql.update(conn, memory_id, changes):
                raise MemoryNotFound(memory_id)
            record = memory_sql.get(conn, memory_id)
            assert record is not None
            return record, self._index_entries(conn, [memory_id])

        record, _ = await self._db.write(work, after_commit=self._apply_index)
        return record

    async def delete(self, memory_id: int, *, user_id: str | None = None) -> None:
        """Remove a memory for good (its FTS rows go with it through the triggers)."""
        await self.get(memory_id, user_id=user_id)

        def work(conn: sqlite3.Connection) -> tuple[None, list[_IndexEntry]]:
            if not memory_sql.delete(conn, memory_id):
                raise MemoryNotFound(memory_id)
            return None, [_IndexEntry(memory_id)]

        await self._db.write(work, after_commit=self._apply_index)

    # -- reads -----------------------------------------------------------------------------
    async def get(self, memory_id: int, *, user_id: str | None = None) -> MemoryRecord:
        """One memory; with ``user_id`` it must belong to that user (else: not found)."""
        record = await self._db.read(lambda conn: memory_sql.get(conn, memory_id))
        if record is None or (user_id is not None and record.user_id != user_id):
            raise MemoryNotFound(memory_id)
        return record

    async def list_memories(
        self,
        *,
        user_id: str | None,
        topic: str | None,
        include_superseded: bool,
        limit: int,
        before_id: int | None,
    ) -> list[MemoryRecord]:
        return await self._db.read(
            lambda conn: memory_sql.list_memories(
                conn,
                user_id=user_id,
                topic=topic,
                include_superseded=include_superseded,
                limit=limit,
                before_id=before_id,
            )
        )

    async def counts(self) -> memory_sql.StoreCounts:
        return await self._db.read(lambda conn: memory_sql.counts(conn, self.model or ""))

    # -- helpers ---------------------------------------------------------------------------
    async def _embed(self, texts: list[str]) -> np.ndarray | None:
        if self._embedder is None or self._index is None or not texts:
            return None
        try:
            return await self._embedder.embed_documents(texts)
        except EmbedderUnavailable as exc:
            log.warning("storing without embedding", extra={"count": len(texts), "reason": str(exc)})
            return None

    def _with_vector(self, item: NewMemory, vector: np.ndarray | None) -> NewMemory:
        if vector is None or self.model is None:
            return dataclasses.replace(item, embedding=None, embedding_model=None, embedding_dim=None)
        return dataclasses.replace(
            item, embedding=to_blob(vector), embedding_model=self.model, embedding_dim=int(vector.shape[0])
        )

    def _index_entries(self, conn: sqlite3.Connection, memory_ids: list[int]) -> list[_IndexEntry]:
        """Read back what the index must hold for these rows, inside the write transaction."""
        if self._index is None:
            return []
        entries = []
        for row in memory_sql.vector_rows(conn, memory_ids):
            live = (
                row.blob is not None
                and row.model == self._index.model
                and (self._index.dim is None or row.dim == self._index.dim)
                and row.superseded_by is None
            )
            vector = from_blob(row.blob) if live and row.blob is not None else None
            entries.append(_IndexEntry(row.memory_id, row.user_id, vector))
        return entries

    def _apply_index(self, result: tuple[Any, list[_IndexEntry]]) -> None:
        if self._index is None:
            return
        for entry in result[1]:
            if entry.vector is None or entry.user_id is None:
                self._index.remove(entry.memory_id)
            else:
                self._index.upsert(entry.memory_id, entry.user_id, entry.vector)
