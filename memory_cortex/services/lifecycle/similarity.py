"""Cosines between a user's memories, read from the stored vectors in blocks (never the whole user
at once): how close a working memory is to core (promotion's novelty) and the pages merge compares."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence

import numpy as np

from ...store import lifecycle as lifecycle_sql
from ...vectormath import normalize
from .engine import StageTools
from .report import Pending

# Rows per side of one block of the cosine products: a 4096 × 4096 float32 block is 64 MB.
BLOCK_ROWS = 4096


async def blocks(
    tools: StageTools, memory_ids: Sequence[int]
) -> AsyncIterator[tuple[np.ndarray, np.ndarray]]:
    """Ids and unit vectors of these rows (those with a vector of the live model), in blocks."""
    assert tools.index is not None
    model, dim = tools.index.model, tools.index.dim
    for start in range(0, len(memory_ids), BLOCK_ROWS):
        block = memory_ids[start : start + BLOCK_ROWS]
        blobs = await tools.db.read(
            lambda conn, ids=block: lifecycle_sql.vectors_by_id(conn, ids, model, dim)
        )
        if blobs:
            yield _matrix(sorted(blobs.items()))


async def core_pages(
    tools: StageTools, user_id: str, core: set[int], pending: Pending, after_id: int = 0
) -> AsyncIterator[tuple[np.ndarray, np.ndarray]]:
    """The user's core vectors with ids above ``after_id``, page by page (ids and unit vectors).

    Read from the BLOBs in keyset pages, each its own short read: no long read transaction, and
    no lock on the in-memory index, which searches hold. ``core``: the rows that count as core
    (in a dry run, rows an earlier stage would have moved in come as one extra page).
    """
    assert tools.index is not None
    model, dim = tools.index.model, tools.index.dim
    cursor = after_id
    while True:
        page = await tools.db.read(
            lambda conn, c=cursor: lifecycle_sql.core_vector_chunk(conn, user_id, model, dim, c, BLOCK_ROWS)
        )
        if not page:
            break
        cursor = page[-1][0]
        kept = [(mid, blob) for mid, blob in page if mid in core]
        if kept:
            yield _matrix(kept)
    moved_in = sorted(mid for mid in core if mid in pending.moved and mid > after_id)
    async for block in blocks(tools, moved_in):
        yield block


async def nearest_core(
    tools: StageTools, user_id: str, memory_ids: list[int], pending: Pending
) -> dict[int, float]:
    """The highest cosine of each row to the user's core memories (0 when there is none); rows
    without a vector are absent."""
    if tools.index is None or tools.index.dim is None:
        return {}
    core = {row.id for row in await tools.rows(user_id, "core", pending)}
    nearest: dict[int, float] = {}
    async for ids, vectors in blocks(tools, memory_ids):
        best = np.zeros(len(ids), dtype=np.float32)
        async for _, page in core_pages(tools, user_id, core, pending):
            best = np.maximum(best, await asyncio.to_thread(_column_max, vectors, page))
        nearest.update(zip(ids.tolist(), best.tolist(), strict=True))
    return nearest


def _matrix(page: Sequence[tuple[int, bytes]]) -> tuple[np.ndarray, np.ndarray]:
    """Ids and unit vectors of ``(id, blob)`` rows, as arrays."""
    ids = np.fromiter((mid for mid, _ in page), dtype=np.int64, count=len(page))
    vectors = np.frombuffer(b"".join(blob for _, blob in page), dtype="<f4").reshape(len(page), -1)
    return ids, normalize(vectors)


def _column_max(left: np.ndarray, right: np.ndarray) -> np.ndarray:
    """For each row of ``left``, its highest cosine to the rows of ``right``."""
    return np.asarray((left @ right.T).max(axis=1), dtype=np.float32)
