"""Stage 5, ``compress``: archive entries at least ``compress_after_days`` in the archive are
summarised by the LLM, per user and month, into a ``history_summary`` memory in core; the entries
stay, each pointing at its summary (``compressed_into``) with a ``summarised`` link. Without an LLM
that writes prose, or when it fails, the stage is skipped and the next run tries again."""

from __future__ import annotations

import logging
import sqlite3
from dataclasses import dataclass
from datetime import timedelta

from ...models.llm import ChatMessage, LLMUnavailable
from ...records import PRIVATE_TO_ALL_AGENTS, NewMemory, Scope
from ...store import lifecycle as lifecycle_sql
from ...store import memories as memory_sql
from ...store.lifecycle import LifecycleRow
from .clock import parse_time
from .engine import NO_WRITER, RunContext, StageTools, as_planned
from .report import StageReport

log = logging.getLogger(__name__)

# Longest history summary kept, in characters (a model that ignores max_tokens is cut here).
SUMMARY_MAX_CHARS = 2000


@dataclass(frozen=True)
class SummaryBatch:
    """Archived memories of one user, month and scope, folded into one history summary (with that
    scope: a summary never carries a private memory where it could not be recalled)."""

    user_id: str
    period: str  # the month the sources are from, YYYY-MM
    sources: tuple[int, ...]
    updated_at: dict[int, str]
    scope: Scope = PRIVATE_TO_ALL_AGENTS


async def run(tools: StageTools, context: RunContext, report: StageReport, began: float) -> None:
    cutoff = context.now - timedelta(days=tools.config.compress_after_days)
    batches: list[SummaryBatch] = []
    for user_id in context.users:
        rows = [
            row
            for row in await tools.rows(user_id, "archive", context.pending)
            if row.compressed_into is None
            and row.kind != "turn"  # the conversation is kept as said, not folded into a month
            and (parse_time(row.layer_since) or parse_time(row.created_at) or context.now) <= cutoff
        ]
        rows.sort(key=lambda r: (r.created_at, r.id))
        by_month: dict[tuple[str, Scope], list[LifecycleRow]] = {}
        for row in rows:
            by_month.setdefault((row.created_at[:7], row.scope.reach), []).append(row)
        size = tools.config.summary_batch_size
        for (period, scope), month in by_month.items():
            for start in range(0, len(month), size):
                part = month[start : start + size]
                batches.append(
                    SummaryBatch(
                        user_id, period, tuple(r.id for r in part), {r.id: r.updated_at for r in part}, scope
                    )
                )
    sources = [mid for batch in batches for mid in batch.sources]
    reason = None
    if batches and tools.llm is None:
        reason = f"{NO_WRITER}; retried next run"
    elif batches and not context.dry_run:
        try:
            summaries = [await _summarise(tools, context, batch) for batch in batches]
        except LLMUnavailable as exc:
            reason = f"LLM unavailable: {exc}; retried next run"
            log.warning("history summaries skipped: LLM unavailable", extra={"reason": str(exc)})
    if reason is not None or not batches or context.dry_run:
        if reason is not None:
            report.status, report.reason = "skipped", reason
            _compress_report(tools, report, began, [], [], waiting=len(sources))
        else:
            _compress_report(tools, report, began, batches, [None] * len(batches))
        if context.dry_run:
            await tools.record_planned(context)
        else:
            await tools.db.write(lambda conn: tools.save_report(conn, context))
        return
    items = await tools.memories.with_vectors(summaries)

    def work(conn: sqlite3.Connection) -> tuple[list[tuple[SummaryBatch, int]], list[int]]:
        done: list[tuple[SummaryBatch, int]] = []
        for batch, item in zip(batches, items, strict=True):
            current = memory_sql.get_many(conn, batch.sources)
            if not all(
                as_planned(current.get(mid), batch.user_id, "archive", batch.updated_at)
                and current[mid].compressed_into is None
                for mid in batch.sources
            ):
                continue  # an entry changed since it was read: the next run summarises it again
            summary_id = memory_sql.insert(conn, item)
            for mid in batch.sources:
                lifecycle_sql.mark_compressed(conn, mid, summary_id, context.run_id)
            done.append((batch, summary_id))
        _compress_report(
            tools,
            report,
            began,
            [b for b, _ in done],
            [sid for _, sid in done],
            skipped=len(batches) - len(done),
        )
        tools.save_report(conn, context)
        return done, [sid for _, sid in done]

    await tools.memories.write_with_index(work)


def _compress_report(
    tools: StageTools,
    report: StageReport,
    began: float,
    batches: list[SummaryBatch],
    summary_ids: list[int | None],
    *,
    skipped: int = 0,
    waiting: int = 0,
) -> None:
    """``summary_ids`` None in a dry run (not written yet); ``waiting``: entries due but left for
    the next run (the stage was skipped)."""
    tools.fill(
        report,
        began,
        summarised=[mid for b in batches for mid in b.sources],
        summaries=[sid for sid in summary_ids if sid is not None],
        skipped=skipped,
        waiting=waiting,
    )
    report.counts["summaries"] = len(batches)
    report.groups = [
        {"user_id": b.user_id, "into": sid, "ids": list(b.sources), "period": b.period}
        for b, sid in list(zip(batches, summary_ids, strict=True))[: tools.config.report_max_ids]
    ]


async def _summarise(tools: StageTools, context: RunContext, batch: SummaryBatch) -> NewMemory:
    """One history summary, written by the LLM from the batch's memories (oldest first)."""
    assert tools.llm is not None
    rows = await tools.db.read(lambda conn: memory_sql.get_many(conn, batch.sources))
    lines = [
        f"- {r.created_at[:10]}: {r.topic + ': ' if r.topic else ''}{r.fact}"
        for r in (rows[mid] for mid in batch.sources if mid in rows)
    ]
    messages = [
        ChatMessage(
            "system",
            "You condense old memories about one user into a short history summary. Keep names,"
            " places, dates, numbers and decisions; drop repetition. Write plain sentences, no list,"
            " no preamble, at most five sentences.",
        ),
        ChatMessage(
            "user",
            f"Memories from {batch.period}, oldest first:\n" + "\n".join(lines) + "\n\nThe history summary:",
        ),
    ]
    reply = await tools.llm.chat(messages, max_tokens=tools.config.summary_max_tokens, temperature=0.0)
    summary = " ".join(reply.split())[:SUMMARY_MAX_CHARS]
    if not summary:
        raise LLMUnavailable("the LLM wrote an empty summary")
    importance = max((r.importance for r in rows.values()), default=5)
    return NewMemory(
        user_id=batch.user_id,
        fact=summary,
        topic=f"history {batch.period}",
        importance=importance,
        category="history_summary",
        agent_id=batch.scope.agent_id,
        visibility=batch.scope.visibility,
        source_channel=batch.scope.channel,
        metadata={
            "sources": list(batch.sources),
            "period": batch.period,
            "lifecycle_run": context.run_id,
        },
        created_at=context.now_iso,
        layer="core",
    )
