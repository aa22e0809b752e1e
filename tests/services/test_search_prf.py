"""Vector pseudo-relevance feedback: the query moves toward its best results before the second pass."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from memory_cortex.config import SearchConfig
from memory_cortex.records import NewMemory
from memory_cortex.services.search import SearchService
from memory_cortex.store import memories as memory_sql
from memory_cortex.store.db import Database, connect
from memory_cortex.store.vectors import VectorIndex
from memory_cortex.vectormath import normalize, to_blob
from tests.services.fixed_store import MODEL, FixedEmbedder

VECTORS = {
    "alpha": [1.0, 0.2, 0.0],  # the two best results point the same way off the query's axis…
    "beta": [0.9, 0.45, 0.0],
    "gamma": [0.3, 1.0, 0.0],  # …as this one does, which the query alone ranks last
    "delta": [0.6, -0.8, 0.0],  # closer to the query alone, but on the other side
}


@pytest.fixture
def store(tmp_path: Path) -> Iterator[tuple[Database, VectorIndex]]:
    db = Database(tmp_path / "prf.db", busy_timeout_ms=1000)
    db.open()
    index = VectorIndex(MODEL, 3)
    conn = connect(db.path, read_only=False, busy_timeout_ms=1000)
    with conn:
        for fact, vector in VECTORS.items():
            blob = to_blob(normalize(np.array(vector))[0])
            memory_id = memory_sql.insert(
                conn,
                NewMemory(user_id="u", fact=fact, embedding=blob, embedding_model=MODEL, embedding_dim=3),
            )
            index.upsert(memory_id, "u", np.array(vector, dtype=np.float32))
    conn.close()
    yield db, index
    db.close()


async def order(store: tuple[Database, VectorIndex], prf_docs: int) -> list[str]:
    db, index = store
    # These ranks are about feedback, not the relevance floor (synthetic vectors have low cosines).
    config = SearchConfig(prf_docs=prf_docs, prf_weight=2.0, min_similarity=0)
    service = SearchService(db, index, FixedEmbedder(), config, 5.0)  # type: ignore[arg-type]
    result = await service.search("zzz", "u", 4, mode="vector")
    return [hit.memory.fact for hit in result.hits]


async def test_feedback_from_the_best_results_reorders_the_rest(store: tuple[Database, VectorIndex]) -> None:
    assert await order(store, prf_docs=0) == ["alpha", "beta", "delta", "gamma"]
    assert await order(store, prf_docs=2) == ["alpha", "beta", "gamma", "delta"]


def test_vectors_of_returns_the_indexed_rows_only() -> None:
    index = VectorIndex("m", 2)
    index.upsert(1, "u", np.array([3.0, 4.0]))
    assert np.allclose(index.vectors_of("u", [1, 99]), [[0.6, 0.8]])
    assert index.vectors_of("nobody", [1]).shape == (0, 2)
