"""What a write leaves in the in-memory vector index: the entries of the rows it touched, read
back inside the write transaction (each row's vector, or none when it is hidden, superseded or of
another model), and applied to the index after COMMIT. (Writes made by other processes reach the
index through index_sync.)"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..records import PRIVATE_TO_ALL_AGENTS, Scope
from ..store import embeddings as embedding_sql
from ..store.vectors import VectorIndex
from ..vectormath import from_blob


@dataclass(frozen=True)
class IndexEntry:
    """What the after-commit hook needs to mirror one row into the vector index."""

    memory_id: int
    user_id: str | None = None
    vector: np.ndarray | None = None  # None → remove from the index
    layer: str = "core"
    kind: str = "fact"
    scope: Scope = PRIVATE_TO_ALL_AGENTS


def index_entries(
    conn: sqlite3.Connection, index: VectorIndex | None, memory_ids: list[int]
) -> list[IndexEntry]:
    """Read back what the index must hold for these rows, inside the write transaction."""
    if index is None:
        return []
    entries = []
    for row in embedding_sql.vector_rows(conn, memory_ids):
        live = (
            row.blob is not None
            and row.model == index.model
            and (index.dim is None or row.dim == index.dim)
            and row.superseded_by is None
        )
        vector = from_blob(row.blob) if live and row.blob is not None else None
        entries.append(
            IndexEntry(row.memory_id, row.user_id, vector, row.layer or "core", row.kind or "fact", row.scope)
        )
    return entries


def apply_index_entries(index: VectorIndex, entries: Sequence[IndexEntry]) -> None:
    """Mirror ``entries`` into ``index``: upsert a row's vector, or remove the row without one."""
    for entry in entries:
        if entry.vector is None or entry.user_id is None:
            index.remove(entry.memory_id)
        else:
            index.upsert(entry.memory_id, entry.user_id, entry.vector, entry.layer, entry.kind, entry.scope)
