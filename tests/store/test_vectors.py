"""The in-memory vector index agrees with brute force through inserts, moves and deletes."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memory_cortex.records import Audience, Scope
from memory_cortex.store.user_matrix import hamming_shortlist, sign_codes
from memory_cortex.store.vectors import VectorIndex
from memory_cortex.vectormath import from_blob, normalize, to_blob
from tests.store.scopes import AUDIENCES, SCOPES


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
    assert bulk.load(
        counts, [(mid, user, to_blob(vector), "core", "fact", Scope()) for mid, user, vector in rows]
    ) == len(rows)
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


def test_shortlist_codes_follow_every_change() -> None:
    """Past ``exact_max_rows`` the 1-bit codes exist and stay equal to a fresh coding of the rows."""
    rng = np.random.default_rng(3)
    index = VectorIndex("m", 32, exact_max_rows=50, shortlist=40)
    live: dict[int, np.ndarray] = {}
    for memory_id in range(1, 300):
        live[memory_id] = rng.normal(size=32).astype(np.float32)
        index.upsert(memory_id, "u", live[memory_id])
    for memory_id in range(1, 300, 4):
        index.remove(memory_id)
        del live[memory_id]
    for memory_id in list(live)[::7]:
        live[memory_id] = rng.normal(size=32).astype(np.float32)
        index.upsert(memory_id, "u", live[memory_id])
    user = index._users["u"]
    assert user.codes is not None
    assert np.array_equal(user.codes[:, : user.size], sign_codes(user.matrix[: user.size]).T)
    for _ in range(10):
        query = rng.normal(size=32).astype(np.float32)
        hits = index.search("u", query, 10)
        exact = {mid: float(normalize(vec)[0] @ normalize(query)[0]) for mid, vec in live.items()}
        # Cosines are exact even when a row came through the shortlist.
        assert all(abs(hit.cosine - exact[hit.memory_id]) < 1e-5 for hit in hits)
        assert [h.cosine for h in hits] == sorted((h.cosine for h in hits), reverse=True)


def test_a_shortlist_as_large_as_the_user_is_a_full_scan() -> None:
    rng = np.random.default_rng(5)
    vectors = {mid: rng.normal(size=24).astype(np.float32) for mid in range(1, 120)}
    index = VectorIndex("m", 24, exact_max_rows=10, shortlist=500)
    index.load(
        {"u": len(vectors)}, ((mid, "u", to_blob(v), "core", "fact", Scope()) for mid, v in vectors.items())
    )
    assert index._users["u"].codes is not None  # loaded past the threshold: coded at start-up
    query = rng.normal(size=24).astype(np.float32)
    assert [h.memory_id for h in index.search("u", query, 10)] == brute_force(vectors, query, 10)


async def test_the_shortlist_finds_the_true_neighbours_of_real_minilm_vectors(minilm: Any) -> None:
    """On real sentence embeddings, a shortlist of a fifth of the rows keeps nearly all of the top 10."""
    subjects = [
        "my sister",
        "the dog",
        "our neighbour",
        "my boss",
        "the kids",
        "grandma",
        "my partner",
        "Tom",
    ]
    verbs = ["loves", "hates", "is learning", "bought", "talked about", "is afraid of", "painted", "cooked"]
    things = [
        "sushi", "jazz records", "the mountains", "a red bicycle", "chess", "the piano", "tomato soup",
        "rainy weather", "old castles", "electric cars", "yoga", "horror films", "the ocean", "knitting",
    ]  # fmt: skip
    texts = [f"{s} {v} {t}" for s in subjects for v in verbs for t in things][:600]
    vectors = np.asarray(await minilm.embed_documents(texts))
    exact = VectorIndex("m", vectors.shape[1])
    coded = VectorIndex("m", vectors.shape[1], exact_max_rows=100, shortlist=len(texts) // 5)
    for memory_id, vector in enumerate(vectors, start=1):
        exact.upsert(memory_id, "u", vector)
        coded.upsert(memory_id, "u", vector)
    queries = ["who likes music", "food someone made", "someone scared of films", "sports and games"]
    query_vectors = np.asarray(await minilm.embed_documents(queries))
    found = [
        len({h.memory_id for h in exact.search("u", q, 10)} & {h.memory_id for h in coded.search("u", q, 10)})
        for q in query_vectors
    ]
    assert sum(found) / (10 * len(queries)) >= 0.9


def test_hamming_shortlist_takes_exactly_the_smallest_distances() -> None:
    """The histogram cut-off returns ``count`` positions, none farther than any position left out."""
    rng = np.random.default_rng(11)
    for count in (1, 7, 100, 999, 1000):
        distances = rng.integers(0, 40, size=1000).astype(np.uint16)
        picked = hamming_shortlist(distances, count)
        assert picked.shape[0] == count == np.unique(picked).shape[0]
        left_out = np.setdiff1d(np.arange(1000), picked)
        if left_out.shape[0]:
            assert distances[picked].max() <= distances[left_out].min()


@pytest.mark.parametrize("exact_max_rows", [None, 10])
def test_layers_filter_the_rows_searched(exact_max_rows: int | None) -> None:
    """Archived rows stay indexed but only come back when their layer is asked for (exact and shortlist)."""
    rng = np.random.default_rng(8)
    index = VectorIndex("m", 16, exact_max_rows=exact_max_rows, shortlist=20)
    vectors = {mid: rng.normal(size=16).astype(np.float32) for mid in range(1, 200)}
    layer_of = {
        mid: ("archive" if mid % 3 == 0 else "working" if mid % 3 == 1 else "core") for mid in vectors
    }
    for mid, vector in vectors.items():
        index.upsert(mid, "u", vector, layer_of[mid])
    query = rng.normal(size=16).astype(np.float32)
    live = {mid: v for mid, v in vectors.items() if layer_of[mid] != "archive"}
    hits = index.search("u", query, 10, layers=("working", "core"))
    assert all(layer_of[h.memory_id] != "archive" for h in hits) and len(hits) == 10
    if exact_max_rows is None:
        assert [h.memory_id for h in hits] == brute_force(live, query, 10)
    assert {layer_of[h.memory_id] for h in index.search("u", query, 50, layers=("archive",))} == {"archive"}
    index.set_layer(3, "core")
    assert 3 in {h.memory_id for h in index.search("u", vectors[3], 1, layers=("core",))}
    assert index.search("u", query, 5, layers=()) == []


# Ids as SQLite hands them out (dense from 1), plus a few far beyond (an import that kept its ids).
_IDS = st.one_of(st.integers(1, 300), st.sampled_from([10**6, 2**40, 2**62]))
_OPS = st.lists(
    st.tuples(st.sampled_from(["upsert", "remove", "layer"]), _IDS, st.sampled_from(["ann", "bob", "cy"]),
              st.integers(0, 2**31 - 1), st.sampled_from(["working", "core", "archive"])),
    max_size=120,
)  # fmt: skip


@settings(max_examples=150, deadline=None)
@given(_OPS)
def test_index_follows_a_model_through_any_changes(ops: list[tuple[str, int, str, int, str]]) -> None:
    """Upserts (owner changes included), removals and layer moves in any order leave the index
    holding exactly what a plain dict would: ids, owners, layers and vectors."""
    index = VectorIndex("m", 8, exact_max_rows=20, shortlist=10)
    model: dict[int, tuple[str, np.ndarray, str]] = {}
    for op, memory_id, user_id, seed, layer in ops:
        if op == "upsert":
            vector = normalize(np.random.default_rng(seed).standard_normal(8).astype(np.float32))[0]
            index.upsert(memory_id, user_id, vector, layer)
            model[memory_id] = (user_id, vector, layer)
        elif op == "remove":
            index.remove(memory_id)
            model.pop(memory_id, None)
        elif memory_id in model:
            index.set_layer(memory_id, layer)
            model[memory_id] = (*model[memory_id][:2], layer)
        else:
            index.set_layer(memory_id, layer)  # unknown id: nothing happens
    assert len(index) == len(model)
    assert index.layers_by_id() == {
        mid: (user, layer, "fact", Scope()) for mid, (user, _, layer) in model.items()
    }
    for user_id in ("ann", "bob", "cy"):
        mine = {mid: vector for mid, (user, vector, _) in model.items() if user == user_id}
        query = np.ones(8, dtype=np.float32)
        every_id = [*model, 999]
        cosines = index.cosines(user_id, query, every_id)
        assert set(cosines) == set(mine)  # another user's ids are never scored as this user's
        for mid, vector in mine.items():
            assert cosines[mid] == pytest.approx(float(vector @ normalize(query)[0]), abs=1e-5)
        stored = index.vectors_of(user_id, list(mine))
        assert np.allclose(stored, np.array(list(mine.values())).reshape(-1, 8), atol=1e-6)
        hits = index.search(user_id, query, k=500)
        assert sorted(hit.memory_id for hit in hits) == sorted(mine)
    for mid in model:
        assert index.contains(mid)
    assert not index.contains(999)


@pytest.mark.parametrize("exact_max_rows", [None, 8])
def test_kinds_filter_facts_and_turns_and_survive_a_layer_move(exact_max_rows: int | None) -> None:
    """Facts and turns share one matrix; a search for one kind never returns the other, in any
    layer, with or without the sign-code shortlist; a layer move keeps a row's kind."""
    rng = np.random.default_rng(7)
    index = VectorIndex("m", 8, exact_max_rows=exact_max_rows, shortlist=4)
    kinds = {mid: "turn" if mid % 3 else "fact" for mid in range(1, 41)}
    layers = {mid: ("working", "core", "archive")[mid % 3 - 1 if mid % 2 else 1] for mid in kinds}
    for mid, kind in kinds.items():
        index.upsert(mid, "u", rng.normal(size=8), layers[mid], kind)
    query = rng.normal(size=8)

    facts = [hit.memory_id for hit in index.search("u", query, 40, kinds=["fact"])]
    turns = [hit.memory_id for hit in index.search("u", query, 40, kinds=["turn"])]
    assert sorted(facts) == sorted(m for m, k in kinds.items() if k == "fact")
    assert sorted(turns) == sorted(m for m, k in kinds.items() if k == "turn")
    core_turns = {hit.memory_id for hit in index.search("u", query, 40, ["core"], ["turn"])}
    assert core_turns == {m for m in kinds if kinds[m] == "turn" and layers[m] == "core"}

    index.set_layer(3, "archive")  # a fact
    index.set_layer(4, "archive")  # a turn
    assert index.layers_by_id()[3] == ("u", "archive", "fact", Scope())
    assert index.layers_by_id()[4] == ("u", "archive", "turn", Scope())
    assert 4 in {hit.memory_id for hit in index.search("u", query, 40, ["archive"], ["turn"])}
    assert 4 not in {hit.memory_id for hit in index.search("u", query, 40, ["archive"], ["fact"])}


def test_an_audience_sees_only_rows_its_rule_admits_exact_and_through_the_shortlist() -> None:
    """The vector side of issue 22's rule: agent, private/shared, channel; the same answer whether
    the user's rows are scanned exactly or through the 1-bit shortlist."""
    rng = np.random.default_rng(5)
    rows = [(i, SCOPES[i % len(SCOPES)], rng.normal(size=16).astype(np.float32)) for i in range(1, 300)]
    for exact_max_rows in (None, 10):
        index = VectorIndex("m", exact_max_rows=exact_max_rows, shortlist=1000)
        for memory_id, scope, vector in rows:
            index.upsert(memory_id, "u", vector, scope=scope)
        query = rng.normal(size=16).astype(np.float32)
        for audience in AUDIENCES:
            found = {hit.memory_id for hit in index.search("u", query, 1000, audience=audience)}
            assert found == {mid for mid, scope, _ in rows if audience.admits(scope)}, audience
        # A row written again in another scope (what a PATCH does) leaves an audience at once.
        index.upsert(4, "u", rows[3][2], scope=Scope("home"))  # was shared everywhere
        found = {
            hit.memory_id for hit in index.search("u", query, 1000, audience=Audience(None, "group", "g1"))
        }
        assert 4 not in found


def test_alike_finds_only_rows_recalled_alike() -> None:
    index = VectorIndex("m")
    vector = np.array([1.0, 0.0, 0.0], dtype=np.float32)
    index.upsert(1, "u", vector, scope=Scope(None, "shared", "g1"))
    index.upsert(2, "u", vector, scope=Scope("work"))
    index.upsert(3, "u", vector, scope=Scope(None, "private", "telegram"))
    assert [hit.memory_id for hit in index.search("u", vector, 5, alike=Scope(None, "private", "cli"))] == [3]
    assert [hit.memory_id for hit in index.search("u", vector, 5, alike=Scope("work", "private"))] == [2]
    assert [hit.memory_id for hit in index.search("u", vector, 5, alike=Scope(None, "shared", "g1"))] == [1]
    assert index.search("u", vector, 5, alike=Scope(None, "shared", "g2")) == []
    assert index.search("u", vector, 5, alike=Scope("nobody")) == []
