"""Rows written straight into ``memories`` for the store tests that run on both backends.

Why plain SQL and not ``store.memories.insert``: these tests are about other store modules, and
this way their rows carry exactly the columns a test names (timestamps, layer, scope) on either
backend, whatever the daemon's own insert does.
"""

from __future__ import annotations

from typing import Any

from memory_cortex.store.connection import Connection

# The columns a test may set, with the value each gets otherwise (the rest take the table's default).
DEFAULTS: dict[str, Any] = {
    "user_id": "u",
    "topic": "",
    "fact": "A fact.",
    "category": "fact",
    "kind": "fact",
    "layer": "core",
    "layer_since": None,
    "metadata": "{}",
    "created_at": "2026-03-01T12:00:00.000Z",
    "updated_at": "2026-03-01T12:00:00.000Z",
    "superseded_by": None,
    "agent_id": None,
    "visibility": "private",
    "source_channel": None,
    "embedding": None,
    "embedding_model": None,
    "embedding_dim": None,
}


def add_memory(conn: Connection, **values: Any) -> int:
    """Insert one memory (``values`` over :data:`DEFAULTS`); its id."""
    unknown = set(values) - set(DEFAULTS)
    if unknown:
        raise TypeError(f"not a column of this helper: {sorted(unknown)}")
    row = {**DEFAULTS, **values}
    columns = ", ".join(row)
    marks = ", ".join("?" for _ in row)
    return int(
        conn.execute(
            f"INSERT INTO memories ({columns}) VALUES ({marks}) RETURNING id", tuple(row.values())
        ).fetchone()[0]
    )
