"""The SQL of the stored vectors on SQLite and on PostgreSQL: a float32 BLOB comes back byte for byte
(on PostgreSQL its pgvector column holds the same values), and what needs embedding, the index's
rows and the counts of /stats are the same plain Python values on both."""

from __future__ import annotations

import numpy as np

from memory_cortex.records import PRIVATE_TO_ALL_AGENTS, Scope
from memory_cortex.store import embeddings as embedding_sql
from memory_cortex.store.connection import Connection, dialect_of
from memory_cortex.store.embeddings import StoreCounts, VectorRow
from memory_cortex.vectormath import to_blob
from tests.store.rows import add_memory

# Values a float32 conversion gets wrong first: a subnormal, the smallest normal, the largest
# finite, a negative zero, a value with every mantissa bit set, and ordinary ones.
AWKWARD = np.array(
    [1e-45, -1.17549435e-38, 3.4028235e38, -0.0, 1.9999999, 0.1, -0.333333, 1234.5678], dtype=np.float32
)


def _stored_vector(conn: Connection, memory_id: int) -> np.ndarray:
    """PostgreSQL's ``embedding_vector`` of a row, as float32 (its text form, parsed)."""
    text = conn.execute("SELECT embedding_vector::text FROM memories WHERE id = ?", (memory_id,)).fetchone()[
        0
    ]
    assert text is not None
    return np.array([float(value) for value in text.strip("[]").split(",")], dtype=np.float32)


def test_a_blob_written_through_the_store_comes_back_byte_identical(any_conn: Connection) -> None:
    memory_id = add_memory(any_conn, fact="Ann keeps bees.", updated_at="2026-01-01T00:00:00.000Z")
    blob = to_blob(AWKWARD)
    assert embedding_sql.set_embedding(any_conn, memory_id, blob, "m", len(AWKWARD)) is True
    [row] = embedding_sql.vector_rows(any_conn, [memory_id])
    assert isinstance(row.blob, bytes) and row.blob == blob
    assert (row.model, row.dim) == ("m", len(AWKWARD))
    [walked] = embedding_sql.iter_embeddings(any_conn, "m")
    assert walked[2] == blob
    # The memory itself did not change.
    updated = any_conn.execute("SELECT updated_at FROM memories WHERE id = ?", (memory_id,)).fetchone()[0]
    assert updated == "2026-01-01T00:00:00.000Z"
    if dialect_of(any_conn).name == "postgres":
        assert _stored_vector(any_conn, memory_id).tobytes() == blob


def test_a_new_vector_replaces_the_old_one_in_the_generated_column_too(any_conn: Connection) -> None:
    memory_id = add_memory(any_conn, embedding=to_blob(np.ones(3)), embedding_model="old", embedding_dim=3)
    vector = np.array([0.5, -2.0, 3.25, 7.0], dtype=np.float32)
    assert embedding_sql.set_embedding(any_conn, memory_id, to_blob(vector), "new", 4)
    assert embedding_sql.vector_rows(any_conn, [memory_id])[0].blob == to_blob(vector)
    if dialect_of(any_conn).name == "postgres":
        assert _stored_vector(any_conn, memory_id).tolist() == [0.5, -2.0, 3.25, 7.0]


def test_set_embedding_says_whether_the_row_exists(any_conn: Connection) -> None:
    assert embedding_sql.set_embedding(any_conn, 12345, to_blob(np.ones(2)), "m", 2) is False


def test_the_index_walks_the_live_rows_of_its_model_with_their_scope(any_conn: Connection) -> None:
    blob = to_blob(np.arange(4))
    embedded = {"embedding": blob, "embedding_model": "m", "embedding_dim": 4}
    private = add_memory(any_conn, layer="working", source_channel="dm", **embedded)
    shared = add_memory(
        any_conn, user_id="v", kind="turn", agent_id="a", visibility="shared", source_channel="c", **embedded
    )
    superseded = add_memory(any_conn, **embedded)
    any_conn.execute("UPDATE memories SET superseded_by = ? WHERE id = ?", (private, superseded))
    add_memory(any_conn, embedding=blob, embedding_model="other", embedding_dim=4)
    add_memory(any_conn)
    walked = sorted(embedding_sql.iter_embeddings(any_conn, "m"))
    assert walked == [
        (private, "u", blob, 4, "working", "fact", PRIVATE_TO_ALL_AGENTS),  # a private row's channel: dropped
        (shared, "v", blob, 4, "core", "turn", Scope("a", "shared", "c")),
    ]
    assert embedding_sql.embedding_counts(any_conn, "m") == {"u": 1, "v": 1}
    assert embedding_sql.embedding_counts(any_conn, "none") == {}


def test_what_needs_embedding_is_walked_by_id_and_counted(any_conn: Connection) -> None:
    blob = to_blob(np.ones(2))
    current = add_memory(any_conn, embedding=blob, embedding_model="m", embedding_dim=2)
    bare = add_memory(any_conn, topic="t", fact="Bare.")
    stale = add_memory(any_conn, fact="Stale.", embedding=blob, embedding_model="old", embedding_dim=2)
    no_model = add_memory(any_conn, fact="No model.", embedding=blob)
    other_user = add_memory(any_conn, user_id="v", fact="Other user.")
    expected = [
        (bare, "t", "Bare."),
        (stale, "", "Stale."),
        (no_model, "", "No model."),
        (other_user, "", "Other user."),
    ]
    assert embedding_sql.needing_embedding(any_conn, "m", user_id=None, after_id=0, limit=100) == expected
    assert (
        embedding_sql.needing_embedding(any_conn, "m", user_id=None, after_id=bare, limit=2) == expected[1:3]
    )
    assert embedding_sql.needing_embedding(any_conn, "m", user_id="v", after_id=0, limit=100) == expected[3:]
    assert current not in [
        row[0] for row in embedding_sql.needing_embedding(any_conn, "m", user_id="u", after_id=0, limit=9)
    ]
    assert embedding_sql.count_needing_embedding(any_conn, "m", None) == 4
    assert embedding_sql.count_needing_embedding(any_conn, "m", "u") == 3
    assert embedding_sql.count_needing_embedding(any_conn, "m", "nobody") == 0


def test_the_counts_of_stats_are_plain_ints(any_conn: Connection) -> None:
    assert embedding_sql.counts(any_conn, "m") == StoreCounts(
        total=0,
        live=0,
        superseded=0,
        per_user={},
        per_layer={"working": 0, "core": 0, "archive": 0},
        embedded=0,
        stale_embeddings=0,
        unembedded=0,
    )
    blob = to_blob(np.ones(2))
    newer = add_memory(any_conn, embedding=blob, embedding_model="m", embedding_dim=2, layer="working")
    older = add_memory(any_conn, embedding=blob, embedding_model="old", embedding_dim=2)
    any_conn.execute("UPDATE memories SET superseded_by = ? WHERE id = ?", (newer, older))
    add_memory(any_conn, user_id="v", layer="archive")
    add_memory(any_conn, user_id="v")
    counts = embedding_sql.counts(any_conn, "m")
    assert counts == StoreCounts(
        total=4,
        live=3,
        superseded=1,
        per_user={"u": 1, "v": 2},
        per_layer={"working": 1, "core": 1, "archive": 1},
        embedded=1,
        stale_embeddings=1,
        unembedded=2,
    )
    assert all(
        type(value) is int for value in (counts.total, counts.live, counts.embedded, counts.unembedded)
    )
    assert all(type(value) is int for value in [*counts.per_user.values(), *counts.per_layer.values()])


def test_vector_rows_come_in_the_order_asked_and_a_missing_row_is_all_none(any_conn: Connection) -> None:
    blob = to_blob(np.ones(2))
    first = add_memory(any_conn, embedding=blob, embedding_model="m", embedding_dim=2, visibility="shared")
    second = add_memory(any_conn, agent_id="a", source_channel="c")
    any_conn.execute("UPDATE memories SET superseded_by = ? WHERE id = ?", (first, second))
    rows = embedding_sql.vector_rows(any_conn, [second, 999, first])
    assert rows == [
        VectorRow(second, "u", None, None, None, first, "core", "fact", Scope("a", "private", None)),
        VectorRow(999, None, None, None, None, None, None, None),
        VectorRow(first, "u", blob, "m", 2, None, "core", "fact", Scope(None, "shared", None)),
    ]
    assert embedding_sql.vector_rows(any_conn, []) == []


def test_other_models_counts_the_live_rows_vector_search_leaves_out(any_conn: Connection) -> None:
    """What the daemon warns about at start after embeddings.model or embeddings.quantize changed."""
    assert embedding_sql.other_models(any_conn, "m+int8") == {}  # an empty store
    vector = dict(embedding=to_blob(np.ones(3)), embedding_dim=3)
    add_memory(any_conn, embedding_model="m+int8", **vector)
    assert embedding_sql.other_models(any_conn, "m+int8") == {}
    for _ in range(2):
        add_memory(any_conn, embedding_model="m", **vector)
    add_memory(any_conn, embedding_model="z", **vector)
    gone = add_memory(any_conn, embedding_model="z", **vector)
    any_conn.execute("UPDATE memories SET superseded_by = ? WHERE id = ?", (gone - 1, gone))
    add_memory(any_conn)  # no vector at all: unembedded, not another model's
    assert embedding_sql.other_models(any_conn, "m+int8") == {"m": 2, "z": 2}  # superseded ones too
    assert embedding_sql.other_models(any_conn, "m") == {"m+int8": 1, "z": 2}
