"""Stage 3, ``decay``: a core memory whose strength ``base(category) × access_factor × exp(−λ·days)``
falls below ``archive_threshold`` moves to the archive."""

from __future__ import annotations

import sqlite3
from datetime import datetime

from ...store import lifecycle as lifecycle_sql
from ...store.lifecycle import LifecycleRow
from .clock import parse_time
from .engine import Move, RunContext, StageTools
from .report import StageReport
from .scoring import decay_strength


async def run(tools: StageTools, context: RunContext, report: StageReport, began: float) -> None:
    archive: list[Move] = []
    for user_id in context.users:
        rows = await tools.rows(user_id, "core", context.pending)
        if not rows:
            continue
        most_read = max(row.access_count for row in rows)
        for row in rows:
            if _strength(tools, row, most_read, context.now) < tools.config.archive_threshold:
                archive.append(Move(row.id, (row.access_count, row.last_accessed)))
    if context.dry_run:
        for move in archive:
            context.pending.moved[move.memory_id] = ("archive", context.now_iso)
        archived = [m.memory_id for m in archive]
    else:

        def work(conn: sqlite3.Connection) -> tuple[list[int], list[int]]:
            done = [
                m.memory_id
                for m in archive
                if lifecycle_sql.move_layer(
                    conn,
                    m.memory_id,
                    from_layer="core",
                    to_layer="archive",
                    since=context.now_iso,
                    unread=m.unread,
                )
            ]
            tools.fill(report, began, archived=done, skipped=len(archive) - len(done))
            tools.save_report(conn, context)
            return done, done

        archived = await tools.memories.write_with_index(work)
    tools.fill(report, began, archived=archived, skipped=len(archive) - len(archived))
    if context.dry_run:
        await tools.record_planned(context)


def _strength(tools: StageTools, row: LifecycleRow, most_read: int, now: datetime) -> float:
    """Decay strength at ``now``; the clock runs from the later of the last read and the day it
    entered core (a memory just promoted or restored starts fresh)."""
    entered = parse_time(row.layer_since) or parse_time(row.created_at)
    last_read = parse_time(row.last_accessed)
    moments = [m for m in (entered, last_read) if m is not None]
    since = max(moments) if moments else now
    days = (now - since).total_seconds() / 86400
    return decay_strength(row.category, row.access_count, most_read, days, tools.config)
