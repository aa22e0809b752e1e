"""Stage 1, ``promote``: a working memory whose promotion score reaches ``promote_threshold`` moves
to core; one that does not and has outlived ``working_ttl_hours`` moves to the archive (it expired),
unless it is protected (:func:`~memory_cortex.services.protection.protected_because`: high
importance, an identity category, a health or safety topic): that one moves to core instead, and
the report says why (``reasons[id]``, "protected: …"). A verbatim turn is never promoted: it moves
to the archive after ``turn_archive_days``."""

from __future__ import annotations

import sqlite3
from datetime import timedelta

from ...store import lifecycle as lifecycle_sql
from ..protection import protected_because
from .clock import parse_time
from .engine import Move, RunContext, StageTools
from .report import StageReport
from .scoring import promotion_score
from .similarity import nearest_core


async def run(tools: StageTools, context: RunContext, report: StageReport, began: float) -> None:
    config = tools.config
    ttl = timedelta(hours=config.working_ttl_hours)
    turn_ttl = timedelta(days=config.turn_archive_days)
    promote: list[Move] = []
    expire: list[Move] = []
    reasons: dict[int, str] = {}
    for user_id in context.users:
        rows = await tools.rows(user_id, "working", context.pending)
        if not rows:
            continue
        facts = [row.id for row in rows if row.kind != "turn"]
        nearest = await nearest_core(tools, user_id, facts, context.pending)
        for row in rows:
            entered = parse_time(row.layer_since) or parse_time(row.created_at) or context.now
            if row.kind == "turn":
                # A turn is what was said, never a standing fact: it stays in working for
                # turn_archive_days, then rests in the archive (still searchable).
                if context.now - entered >= turn_ttl:
                    expire.append(Move(row.id, (row.access_count, row.last_accessed)))
                continue
            score = promotion_score(row, nearest.get(row.id), config)
            if score >= config.promote_threshold:
                promote.append(Move(row.id, None))
                continue
            if context.now - entered < ttl:
                continue
            # Expired: the archive leaves default search and /context, so what must never be
            # hidden goes to core instead, where decay protects it too.
            why = protected_because(row, config)
            if why is None:
                expire.append(Move(row.id, (row.access_count, row.last_accessed)))
                continue
            promote.append(Move(row.id, None))
            hours = (context.now - entered).total_seconds() / 3600
            reasons[row.id] = (
                f"protected: {why} (promotion score {score:.2f} < {config.promote_threshold:g},"
                f" {hours:.1f} h in working ≥ {config.working_ttl_hours:g})"
            )
    named = tools.cap(m.memory_id for m in promote)
    report.reasons = {str(memory_id): reasons[memory_id] for memory_id in named if memory_id in reasons}
    if context.dry_run:
        for move in promote:
            context.pending.moved[move.memory_id] = ("core", context.now_iso)
        for move in expire:
            context.pending.moved[move.memory_id] = ("archive", context.now_iso)
        done_promoted, done_expired = [m.memory_id for m in promote], [m.memory_id for m in expire]
    else:

        def work(conn: sqlite3.Connection) -> tuple[tuple[list[int], list[int]], list[int]]:
            promoted = [
                m.memory_id
                for m in promote
                if lifecycle_sql.move_layer(
                    conn, m.memory_id, from_layer="working", to_layer="core", since=context.now_iso
                )
            ]
            expired = [
                m.memory_id
                for m in expire
                if lifecycle_sql.move_layer(
                    conn,
                    m.memory_id,
                    from_layer="working",
                    to_layer="archive",
                    since=context.now_iso,
                    unread=m.unread,
                )
            ]
            tools.fill(
                report,
                began,
                promoted=promoted,
                expired=expired,
                skipped=len(promote) + len(expire) - len(promoted) - len(expired),
            )
            tools.save_report(conn, context)
            return (promoted, expired), [*promoted, *expired]

        done_promoted, done_expired = await tools.memories.write_with_index(work)
    tools.fill(
        report,
        began,
        promoted=done_promoted,
        expired=done_expired,
        skipped=len(promote) + len(expire) - len(done_promoted) - len(done_expired),
    )
    if context.dry_run:
        await tools.record_planned(context)
