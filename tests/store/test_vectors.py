"""The in-memory vector index agrees with brute force through inserts, moves and deletes."""

from __future__ import annotations

import numpy as np
import pytest

from middleware.store.vectors import VectorIndex, from_blob, normalize, to_blob


def brute_force(vectors: dict[int, np.ndarray], query: np.ndarray, k: int) -> list[int]:
    q = normalize(query)[0]
    scored = sorted(vectors, key=lambda mid: -float(normalize(vectors[mid])[0] @ q))
    return scored[:k]


def test_blob_round_trip_is_little_endian_float32() -> None:
    vector = np.array([1.5, -2.0, 0.25], dtype=np.float32)
    blob = to_blob(vector)
    assert blob == np.array([1.5, -2.0, 0.25], dtype="<f4").tobytes()
    assert np.array_equal(from_blob(blob, 3), vector)
    with pytest.raises(ValueError):
        from_blob(blob, 4)


def test_search_matches_brute_force_after_many_changes() -> None:
    rng = np.random.default_rng(7)
    index = VectorIndex("m", 16)
    live: dict[int, np.ndarray] = {}
    for memory_id in range(1, 400):  # grows past the initial capacity several times
        vector = rng.normal(size=16).astype(np.float32)
        index.upsert(memory_id, "u", vector)
        live[memory_id] = vector
    for memory_id in range(1, 400, 3):
        index.remove(memory_id)
        del live[memory_id]
    for memory_id in range(2, 400, 5):
        if memory_id in live:
            live[memory_id] = rng.normal(size=16).astype(np.float32)
            index.upsert(memory_id, "u", live[memory_id])
    assert len(index) == len(live)
    for _ in range(20):
        query = rng.normal(size=16).astype(np.float32)
        assert [hit.memory_id for hit in index.search("u", query, 10)] == brute_force(live, query, 10)


def test_users_are_separate_and_a_moved_row_follows_its_user() -> None:
    index = VectorIndex("m", 2)
    index.upsert(1, "a", np.array([1.0, 0.0]))
    index.upsert(2, "b", np.array([1.0, 0.0]))
    assert [h.memory_id for h in index.search("a", np.array([1.0, 0.0]), 5)] == [1]
    index.upsert(1, "b", np.array([0.0, 1.0]))
    assert index.search("a", np.array([1.0, 0.0]), 5) == []
    assert {h.memory_id for h in index.search("b", np.array([1.0, 0.0]), 5)} == {1, 2}
    assert index.count_by_user() == {"a": 0, "b": 2}


def test_cosines_of_given_rows_and_wrong_dimension() -> None:
    index = VectorIndex("m")
    index.upsert(1, "a", np.array([3.0, 4.0]))
    assert index.dim == 2
    assert index.cosines("a", np.array([3.0, 4.0]), [1, 99]) == pytest.approx({1: 1.0})
    with pytest.raises(ValueError):
        index.upsert(2, "a", np.array([1.0, 2.0, 3.0]))


def test_bulk_load_equals_row_by_row() -> None:
    rng = np.random.default_rng(3)
    rows = [(i, f"u{i % 3}", rng.normal(size=8).astype(np.float32)) for i in range(1, 100)]
    bulk, single = VectorIndex("m"), VectorIndex("m")
    counts = {"u0": 33, "u1": 1}  # u1 is undercounted on purpose, u2 missing: the matrices grow
    assert bulk.load(counts, [(mid, user, to_blob(vector)) for mid, user, vector in rows]) == len(rows)
    for memory_id, user_id, vector in rows:
        single.upsert(memory_id, user_id, vector)
    query = rng.normal(size=8).astype(np.float32)
    for user in ("u0", "u1", "u2"):
        assert bulk.search(user, query, 7) == single.search(user, query, 7)
    bulk.remove(4)
    bulk.upsert(500, "u1", query)  # grows past the loaded size
    assert bulk.search("u1", query, 1)[0].memory_id == 500
    with pytest.raises(RuntimeError):
        bulk.load({}, [])
