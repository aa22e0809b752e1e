"""Stage 3, ``decay``: a core memory whose strength ``base(category) × access_factor × exp(−λ·days)``
falls below ``archive_threshold`` moves to the archive, unless it is protected
(:func:`~memory_cortex.services.protection.protected_because`: high importance, an identity
category, a health or safety topic).

``days`` counts from when the memory entered core (``layer_since``, set on every write) or its last
read, whichever is later; never from ``created_at``, which a client may back-date. The report says
why: ``reasons[id]`` gives the formula's numbers for each memory it archives, and "protected: …" for
each one below the threshold that it keeps (``ids["protected"]``)."""

from __future__ import annotations

import sqlite3
from datetime import datetime

from ...store import lifecycle as lifecycle_sql
from ...store.lifecycle import LifecycleRow
from .clock import parse_time
from .engine import Move, RunContext, StageTools
from .report import StageReport
from .scoring import decay_strength, explain_decay


async def run(tools: StageTools, context: RunContext, report: StageReport, began: float) -> None:
    archive: list[Move] = []
    protected: list[int] = []
    reasons: dict[int, str] = {}
    for user_id in context.users:
        rows = await tools.rows(user_id, "core", context.pending)
        if not rows:
            continue
        most_read = max(row.access_count for row in rows)
        for row in rows:
            days = _days_in_core(row, context.now)
            strength = decay_strength(row.category, row.access_count, most_read, days, tools.config)
            if strength >= tools.config.archive_threshold:
                continue
            because = explain_decay(row, days, most_read, strength, tools.config)
            reasons[row.id] = because
            if because.startswith("protected"):
                protected.append(row.id)
            else:
                archive.append(Move(row.id, (row.access_count, row.last_accessed)))
    # Why, for each memory the report names (as many as its ids: report_max_ids per kind).
    named = [*tools.cap(m.memory_id for m in archive), *tools.cap(protected)]
    report.reasons = {str(memory_id): reasons[memory_id] for memory_id in named}
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
            tools.fill(report, began, archived=done, skipped=len(archive) - len(done), protected=protected)
            tools.save_report(conn, context)
            return done, done

        archived = await tools.memories.write_with_index(work)
    tools.fill(report, began, archived=archived, skipped=len(archive) - len(archived), protected=protected)
    if context.dry_run:
        await tools.record_planned(context)


def _days_in_core(row: LifecycleRow, now: datetime) -> float:
    """Days since the later of the last read and the moment it entered core (a memory just
    written, promoted or restored starts fresh); ``created_at`` only for a row that predates
    ``layer_since`` being set everywhere (migration 011 fills those)."""
    entered = parse_time(row.layer_since) or parse_time(row.created_at)
    last_read = parse_time(row.last_accessed)
    moments = [m for m in (entered, last_read) if m is not None]
    since = max(moments) if moments else now
    return (now - since).total_seconds() / 86400
