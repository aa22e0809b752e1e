"""The SQL of the stored vectors: writing one, walking them to build the index, finding what still
needs embedding, and the counts /stats reports.

The same SQL runs on SQLite and PostgreSQL (the dialect gives the two fragments that differ). The
vector is stored as a little-endian float32 BLOB on both; on PostgreSQL the ``embedding_vector``
column is generated from it, so writing the BLOB here writes the pgvector value too.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from ..records import PRIVATE_TO_ALL_AGENTS, Scope
from .connection import Connection, dialect_of


def set_embedding(conn: Connection, memory_id: int, blob: bytes, model: str, dim: int) -> bool:
    """Store a vector without touching ``updated_at`` (the memory itself did not change)."""
    cursor = conn.execute(
        "UPDATE memories SET embedding = ?, embedding_model = ?, embedding_dim = ? WHERE id = ?",
        (blob, model, dim, memory_id),
    )
    return cursor.rowcount > 0


def iter_embeddings(conn: Connection, model: str) -> Iterator[tuple[int, str, bytes, int, str, str, Scope]]:
    """``(id, user_id, blob, dim, layer, kind, scope)`` of every live row embedded by ``model``:
    the index's source
    (the channel of a shared row only: all the index keeps)."""
    for *row, agent_id, visibility, channel in conn.execute(
        "SELECT id, user_id, embedding, embedding_dim, layer, kind, agent_id, visibility,"
        " CASE WHEN visibility = 'shared' THEN source_channel END FROM memories"
        " WHERE embedding IS NOT NULL AND embedding_model = ? AND superseded_by IS NULL",
        (model,),
    ):
        yield (*row, Scope(agent_id, visibility, channel))  # type: ignore[misc]


def embedding_counts(conn: Connection, model: str) -> dict[str, int]:
    """Live rows embedded by ``model``, per user (to size the vector matrices at start-up)."""
    return dict(
        conn.execute(
            "SELECT user_id, count(*) FROM memories"
            " WHERE embedding IS NOT NULL AND embedding_model = ? AND superseded_by IS NULL GROUP BY user_id",
            (model,),
        ).fetchall()
    )


def other_models(conn: Connection, model: str) -> dict[str, int]:
    """Rows whose vector is recorded as another model's, per model name (superseded rows too):
    what vector search leaves out until they are re-embedded. Two index probes when there are
    none, as on most starts; otherwise one pass over the ``embedding_model`` index."""
    if not _any_of_other_models(conn, model):
        return {}
    rows = conn.execute(
        "SELECT embedding_model, count(*) FROM memories WHERE embedding_model IS NOT NULL"
        " AND embedding_model <> ? GROUP BY embedding_model",
        (model,),
    ).fetchall()
    return {str(name): int(count) for name, count in rows}


def _any_of_other_models(conn: Connection, model: str) -> bool:
    probe = "SELECT 1 FROM memories WHERE embedding_model {} ? LIMIT 1"
    return any(conn.execute(probe.format(order), (model,)).fetchone() for order in ("<", ">"))


def any_needing_embedding(conn: Connection, model: str) -> bool:
    """Whether some row has no vector or another model's (what :func:`needing_embedding` walks):
    three probes of the ``embedding_model`` index, cheap at any size."""
    unembedded = conn.execute("SELECT 1 FROM memories WHERE embedding_model IS NULL LIMIT 1").fetchone()
    return unembedded is not None or _any_of_other_models(conn, model)


def needing_embedding(
    conn: Connection,
    model: str,
    *,
    user_id: str | None,
    after_id: int,
    limit: int,
) -> list[tuple[int, str, str]]:
    """``(id, topic, fact)`` of rows with no vector or one from another model, by id."""
    other_model = dialect_of(conn).differs("embedding_model", "?")
    params: list[Any] = [model, after_id]
    user_clause = ""
    if user_id is not None:
        user_clause = " AND user_id = ?"
        params.append(user_id)
    rows = conn.execute(
        "SELECT id, topic, fact FROM memories"
        f" WHERE (embedding IS NULL OR {other_model} OR embedding_model IS NULL)"
        f" AND id > ?{user_clause} ORDER BY id LIMIT ?",
        (*params, limit),
    )
    return [(r[0], r[1], r[2]) for r in rows]


def count_needing_embedding(conn: Connection, model: str, user_id: str | None) -> int:
    """How many rows :func:`needing_embedding` would walk (of one user, or of all)."""
    other_model = dialect_of(conn).differs("embedding_model", "?")
    params: list[Any] = [model]
    user_clause = ""
    if user_id is not None:
        user_clause = " AND user_id = ?"
        params.append(user_id)
    return int(
        conn.execute(
            f"SELECT count(*) FROM memories WHERE (embedding IS NULL OR {other_model}){user_clause}",
            params,
        ).fetchone()[0]
    )


@dataclass(frozen=True)
class StoreCounts:
    total: int
    live: int
    superseded: int
    per_user: dict[str, int]
    per_layer: dict[str, int]  # live rows of every user
    embedded: int
    stale_embeddings: int
    unembedded: int


def counts(conn: Connection, model: str) -> StoreCounts:
    """Numbers for /stats in one pass over the table."""
    d = dialect_of(conn)
    conditions = (
        "superseded_by IS NULL",
        "embedding IS NOT NULL AND embedding_model = ?",
        f"embedding IS NOT NULL AND {d.differs('embedding_model', '?')}",
        "embedding IS NULL",
    )
    sums = ", ".join(f"coalesce(sum({d.as_int(condition)}), 0)" for condition in conditions)
    row = conn.execute(
        f"SELECT count(*), {sums} FROM memories",
        (model, model),
    ).fetchone()
    per_user = dict(
        conn.execute(
            "SELECT user_id, count(*) FROM memories WHERE superseded_by IS NULL GROUP BY user_id"
        ).fetchall()
    )
    per_layer = {"working": 0, "core": 0, "archive": 0}
    per_layer.update(
        conn.execute(
            "SELECT layer, count(*) FROM memories WHERE superseded_by IS NULL GROUP BY layer"
        ).fetchall()
    )
    total, live, embedded, stale, unembedded = (int(v) for v in row)
    return StoreCounts(
        total=total,
        live=live,
        superseded=total - live,
        per_user=per_user,
        per_layer=per_layer,
        embedded=embedded,
        stale_embeddings=stale,
        unembedded=unembedded,
    )


@dataclass(frozen=True)
class VectorRow:
    """What the vector index needs to know about one row."""

    memory_id: int
    user_id: str | None
    blob: bytes | None
    model: str | None
    dim: int | None
    superseded_by: int | None
    layer: str | None
    kind: str | None
    scope: Scope = PRIVATE_TO_ALL_AGENTS


def vector_rows(conn: Connection, memory_ids: Sequence[int]) -> list[VectorRow]:
    """The embedding columns of these rows; a deleted row comes back with everything None."""
    d = dialect_of(conn)
    found = {
        row[0]: VectorRow(*row, Scope(agent_id, visibility, channel))
        for *row, agent_id, visibility, channel in conn.execute(
            "SELECT id, user_id, embedding, embedding_model, embedding_dim, superseded_by, layer, kind,"
            " agent_id, visibility, CASE WHEN visibility = 'shared' THEN source_channel END"
            f" FROM memories WHERE {d.in_list('id')}",
            (d.list_param(memory_ids),),
        )
    }
    return [found.get(mid, VectorRow(mid, None, None, None, None, None, None, None)) for mid in memory_ids]
