"""A small store whose vectors the test chooses (3-d, model ``fixed-3d``): search tests that need
exact geometry build one from :class:`Row` values."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from memory_cortex.models.embedders import EmbedderHealth
from memory_cortex.records import NewMemory
from memory_cortex.store import memories as memory_sql
from memory_cortex.store.db import Database, connect
from memory_cortex.store.vectors import VectorIndex
from memory_cortex.vectormath import normalize, to_blob

MODEL = "fixed-3d"
# The one query vector of FixedEmbedder: the x axis.
QUERY = np.array([1.0, 0.0, 0.0], dtype=np.float32)


@dataclass(frozen=True)
class Row:
    fact: str
    vector: tuple[float, float, float]
    session: str | None = None  # a turn of this session (stored with session context)
    user: str = "u"
    fact_of_session: bool = False  # source_session set, but extracted: no session context
    superseded: bool = False


def open_store(path: Path, rows: list[Row]) -> tuple[Database, VectorIndex]:
    """A real SQLite store at ``path`` holding ``rows``, and the vector index over the live ones."""
    db = Database(path, busy_timeout_ms=1000)
    db.open()
    index = VectorIndex(MODEL, 3)
    conn = connect(db.path, read_only=False, busy_timeout_ms=1000)
    with conn:
        for row in rows:
            unit = normalize(np.array(row.vector))[0]
            memory_id = memory_sql.insert(
                conn,
                NewMemory(
                    user_id=row.user,
                    fact=row.fact,
                    source_session=row.session,
                    embedding_context=2 if row.session and not row.fact_of_session else 0,
                    embedding=to_blob(unit),
                    embedding_model=MODEL,
                    embedding_dim=3,
                ),
            )
            if row.superseded:
                memory_sql.update(conn, memory_id, {"superseded_by": memory_id})
            else:
                index.upsert(memory_id, row.user, unit)
    conn.close()
    return db, index


class FixedEmbedder:
    """Every query is the x axis: the test controls all geometry."""

    backend = "fixed"
    model = MODEL
    dim = 3

    async def start(self) -> None: ...

    async def close(self) -> None: ...

    async def embed_documents(self, texts: Sequence[str], *, background: bool = False) -> np.ndarray:
        raise NotImplementedError

    async def embed_query(self, text: str, *, timeout: float | None = None) -> np.ndarray:
        return QUERY

    def available(self) -> bool:
        return True

    def health(self) -> EmbedderHealth:
        return EmbedderHealth(backend=self.backend, model=MODEL, ok=True, dim=3)
