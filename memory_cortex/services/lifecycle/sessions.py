"""Stage 4, ``sessions``: a conversation nothing was posted to for ``session_summary_after_days`` is
told again by the LLM as one ``session_summary`` fact in core (its turns stay); one that got new
turns since is summarised again and the new summary supersedes the old. Committed per session."""

from __future__ import annotations

import logging
import sqlite3
from datetime import timedelta

from ...errors import OnlyASecret
from ...models.llm import LLMUnavailable
from ...records import ConversationSession
from ...store import lifecycle as lifecycle_sql
from ...store import memories as memory_sql
from .clock import iso
from .engine import NO_WRITER, RunContext, StageTools
from .report import StageReport
from .session_summaries import due_sessions, summary_memory, transcript_parts, write_summary

log = logging.getLogger(__name__)


async def run(tools: StageTools, context: RunContext, report: StageReport, began: float) -> None:
    """One ``session_summary`` fact per quiet session (see :mod:`.session_summaries`).

    Unlike the other stages this one commits per session: each summary is one or more LLM
    calls, and a failure half-way keeps the summaries already written (the rest wait for the
    next run, which plans from what is there).
    """
    after_days = tools.config.session_summary_after_days
    due: list[tuple[str, ConversationSession, int | None]] = []
    if after_days is not None:
        quiet_since = iso(context.now - timedelta(days=after_days))
        for user_id in context.users:
            sessions, summarised = await tools.db.read(
                lambda conn, u=user_id: (
                    memory_sql.conversation_sessions(conn, u, newest_first=False),
                    lifecycle_sql.summarised_through(conn, u),
                )
            )
            for session in due_sessions(sessions, summarised, quiet_since):
                due.append((user_id, session, summarised.get(session.session, (None, 0))[0]))
    written: list[tuple[str, ConversationSession, int]] = []
    superseded: list[int] = []
    reason = None
    if after_days is None:
        reason = "off (lifecycle.session_summary_after_days: null)"
    elif due and tools.llm is None:
        reason = f"{NO_WRITER}; retried next run"
    elif not context.dry_run:
        for user_id, session, previous in due:
            try:
                summary_id = await _summarise_session(tools, context, user_id, session, previous)
            except LLMUnavailable as exc:
                reason = f"LLM unavailable: {exc}; retried next run"
                log.warning("session summaries stopped: LLM unavailable", extra={"reason": str(exc)})
                break
            if summary_id is not None:
                written.append((user_id, session, summary_id))
                if previous is not None:
                    superseded.append(previous)
    if reason is not None:
        report.status, report.reason = "skipped", reason
    planned = [(u, s, None) for u, s, _ in due] if context.dry_run else written
    tools.fill(
        report,
        began,
        summaries=[sid for _, _, sid in written],
        superseded=superseded,
        waiting=0 if context.dry_run else len(due) - len(written),
    )
    report.counts["sessions"] = len(planned)
    report.groups = [
        {"user_id": u, "into": sid, "ids": [], "period": None, "session": s.session}
        for u, s, sid in planned[: tools.config.report_max_ids]
    ]
    if context.dry_run:
        await tools.record_planned(context)
    else:
        await tools.db.write(lambda conn: tools.save_report(conn, context))


async def _summarise_session(
    tools: StageTools, context: RunContext, user_id: str, session: ConversationSession, previous: int | None
) -> int | None:
    """Write one session's summary and hide the one it replaces; None when the session changed
    while the LLM wrote (the next run summarises it again)."""
    assert tools.llm is not None
    turns = await tools.db.read(
        lambda conn: lifecycle_sql.session_transcript(conn, user_id, session.session, session.last_turn_id)
    )
    if not turns:
        return None  # its turns were deleted meanwhile
    parts = transcript_parts(turns, tools.config.session_summary_chunk_chars)
    text = await write_summary(tools.llm, parts, max_tokens=tools.config.summary_max_tokens)
    memory = summary_memory(user_id, session, turns, text, created_at=context.now_iso, run_id=context.run_id)
    try:
        [item] = await tools.memories.with_vectors([memory])
    except OnlyASecret:
        return None

    def work(conn: sqlite3.Connection) -> tuple[int | None, list[int]]:
        current = lifecycle_sql.summarised_through(conn, user_id).get(session.session)
        if (current[0] if current else None) != previous:
            return None, []  # another summary of it was written meanwhile
        summary_id = memory_sql.insert(conn, item)
        if previous is not None:
            lifecycle_sql.supersede(conn, previous, summary_id)
        return summary_id, [summary_id] + ([previous] if previous is not None else [])

    return await tools.memories.write_with_index(work)
