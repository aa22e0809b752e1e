"""Stage 6, ``maintain``: FTS5 ``optimize`` and a check of the vector index against the store
(anything missing, extra or in the wrong layer is repaired and counted)."""

from __future__ import annotations

import logging
import sqlite3

from ...store import lifecycle as lifecycle_sql
from ...vectormath import from_blob
from .engine import RunContext, StageTools
from .report import StageReport

log = logging.getLogger(__name__)


async def run(tools: StageTools, context: RunContext, report: StageReport, began: float) -> None:
    if not context.dry_run:

        def optimize(conn: sqlite3.Connection) -> None:
            lifecycle_sql.optimize_fts(conn)
            tools.save_report(conn, context)

        await tools.db.write(optimize)
    missing, extra, moved = await tools.db.on_writer(
        lambda conn: _check_index(tools, conn, fix=not context.dry_run)
    )
    tools.fill(report, began, index_missing=missing, index_extra=extra, index_moved=moved)
    report.counts["fts_optimized"] = 0 if context.dry_run else len(lifecycle_sql.FTS_TABLES)
    if context.dry_run:
        await tools.record_planned(context)
    else:
        await tools.db.write(lambda conn: tools.save_report(conn, context))


def _check_index(tools: StageTools, conn: sqlite3.Connection, *, fix: bool) -> tuple[int, int, int]:
    """Compare the vector index with the store's live rows (on the writer thread, so no write
    lands in between) and, with ``fix``, repair it: ``(missing, extra, moved)`` rows."""
    index = tools.index
    if index is None or index.in_database:  # PostgreSQL's index is the table's: nothing can drift
        return 0, 0, 0
    indexed = index.layers_by_id()
    wanted = {
        mid: (user_id, layer, kind, scope)
        for mid, user_id, layer, kind, dim, scope in lifecycle_sql.live_index_entries(conn, index.model)
        if index.dim is None or dim == index.dim
    }
    missing = [mid for mid in wanted if mid not in indexed]
    extra = [mid for mid in indexed if mid not in wanted]
    moved = [mid for mid, where in wanted.items() if mid in indexed and indexed[mid] != where]
    if fix and (missing or extra or moved):
        log.warning(
            "vector index repaired",
            extra={"missing": len(missing), "extra": len(extra), "moved": len(moved)},
        )
        for mid in extra:
            index.remove(mid)
        blobs = lifecycle_sql.vectors_by_id(conn, [*missing, *moved], index.model, index.dim)
        for mid, blob in blobs.items():
            user_id, layer, kind, scope = wanted[mid]
            index.upsert(mid, user_id, from_blob(blob), layer, kind, scope)
    return len(missing), len(extra), len(moved)
