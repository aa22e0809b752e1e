"""The memory lifecycle: working memories are promoted or expire, near-duplicates merge, unread
memories decay into the archive, and old archive entries are folded into history summaries.

One run is six stages, in order (README "Memory lifecycle" has the formulas and defaults):

1. ``promote``: a working memory whose promotion score reaches ``promote_threshold`` moves to core;
   one that does not and has outlived ``working_ttl_hours`` moves to the archive (it expired). A
   verbatim turn is never promoted: it moves to the archive after ``turn_archive_days``;
2. ``merge``: live core memories at cosine ≥ ``merge_cosine`` form groups (union-find); the newest
   of a group keeps its wording and takes the group's highest importance and all its reads, the
   others are hidden behind it (``superseded_by``) with a ``merged`` link. Incremental: only rows
   created, edited or moved into core since the last merge are compared with all the others;
3. ``decay``: a core memory whose strength ``base(category) × access_factor × exp(−λ·days)`` falls
   below ``archive_threshold`` moves to the archive;
4. ``sessions``: a conversation nothing was posted to for ``session_summary_after_days`` is told
   again by the LLM as one ``session_summary`` fact in core (its turns stay); one that got new
   turns since is summarised again and the new summary supersedes the old. Committed per session;
5. ``compress``: archive entries at least ``compress_after_days`` in the archive are summarised by
   the LLM, per user and month, into a ``history_summary`` memory in core; the entries stay, each
   pointing at its summary (``compressed_into``) with a ``summarised`` link. Without an LLM, or when
   it fails, the stage is skipped and the next run tries again (so is ``sessions``);
6. ``maintain``: FTS5 ``optimize`` and a check of the vector index against the store.

Why every stage PLANS and then APPLIES: the plan is read from the store (and the vector index) while
searches and writes go on; it is then applied in ONE write transaction that re-checks each row is
still as planned (same layer, still live, not read or edited since). So a stage commits whole or not
at all (``sessions``: each session whole or not at all), a run killed at any moment leaves a consistent store, and the next run, planning from what
is there, simply does what is left. A dry run (the preview) is the same code stopped after each
plan; what earlier stages would have changed is carried to the later plans as :class:`Pending`, so
the preview lists what the run then does. Nothing is ever deleted: rows only move between layers,
get hidden behind another row, or point at a summary.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import math
import sqlite3
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np

from ..config import LifecycleConfig
from ..errors import LifecycleBusy, OnlyASecret
from ..models.llm import LLM, ChatMessage, LLMUnavailable
from ..records import ConversationSession, MemoryRecord, NewMemory
from ..store import lifecycle as lifecycle_sql
from ..store import memories as memory_sql
from ..store.db import Database
from ..store.lifecycle import LifecycleRow, RunRecord
from ..store.vectors import VectorIndex
from ..vectormath import from_blob, normalize
from . import session_summaries
from .memories import MemoryService
from .workers import join_or_cancel

log = logging.getLogger(__name__)

Clock = Callable[[], datetime]
# Called after every completed (not dry) run with its report; the Markdown mirror hooks in here.
FinishedHook = Callable[["LifecycleReport"], Awaitable[None]]

STAGES = ("promote", "merge", "decay", "sessions", "compress", "maintain")
# Rows per side of one block of the merge's cosine products: a 4096 × 4096 float32 block is 64 MB.
MERGE_BLOCK_ROWS = 4096
# Longest history summary kept, in characters (a model that ignores max_tokens is cut here).
SUMMARY_MAX_CHARS = 2000
# The longest single sleep of the daily scheduler: a suspended machine wakes to a fresh look.
SCHEDULER_MAX_SLEEP_S = 600.0
# Why a stage that needs an LLM writing prose did nothing (llm.writes_prose).
_NO_WRITER = "no LLM that writes summaries (llm.backend: rules, or the packaged Gemma 270M)"


def utc_now() -> datetime:
    return datetime.now(UTC)


def iso(moment: datetime) -> str:
    """The format of every stored timestamp: UTC, milliseconds, ``Z``."""
    return moment.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def parse_time(text: str | None) -> datetime | None:
    """A stored timestamp as an aware UTC datetime (a zone-less one is UTC); None when unreadable."""
    if not text:
        return None
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


# -- the formulas (pure, so tests and the README can check them) -------------------------------
def promotion_score(row: LifecycleRow, best_core_cosine: float | None, config: LifecycleConfig) -> float:
    """How much a working memory deserves core:

    ``w_access·min(1, reads/k) + w_signal·high_signal + w_novelty·novelty``

    - reads: ``access_count``; ``k`` = ``promote_access_count``;
    - high_signal: 1 when the category is one of ``high_signal_categories``, the importance is at
      least ``high_signal_importance``, or the rules extractor found it (it only takes explicit
      "remember that…" statements), else 0;
    - novelty: ``1 − max(0, highest cosine to the user's core memories)``: a memory core already
      says adds little (1 when the user has no core memory yet). ``best_core_cosine`` None: the row
      has no vector to compare, novelty counts 0.5 (unknown).
    """
    access = min(1.0, row.access_count / config.promote_access_count)
    high_signal = (
        row.category in config.high_signal_categories
        or row.importance >= config.high_signal_importance
        or row.extractor == "rules"
    )
    novelty = 0.5 if best_core_cosine is None else 1.0 - max(0.0, min(1.0, best_core_cosine))
    score = (
        config.promote_weight_access * access
        + config.promote_weight_signal * float(high_signal)
        + config.promote_weight_novelty * novelty
    )
    return round(score, 9)  # 0.45 + 0 must reach a 0.45 threshold despite float sums


def access_factor(access_count: int, max_access_count: int) -> float:
    """``0.5 + 0.5·log(1+n)/log(1+max n)`` over the user's core memories: 0.5 for a memory never
    read, 1 for the most read one.

    The literal ``log(1+n)/log(1+max n)`` is 0 for every unread memory, which would archive
    everything new at once; with a floor of one half an unread memory decays at its category's
    pace alone (an unread identity fact lasts ~77 days, an unread todo ~37), and reads at most
    double its strength.
    """
    if max_access_count <= 0:
        return 0.5
    return 0.5 + 0.5 * math.log1p(max(0, access_count)) / math.log1p(max_access_count)


def decay_strength(
    category: str, access_count: int, max_access_count: int, days: float, config: LifecycleConfig
) -> float:
    """``base(category) × access_factor × exp(−λ·days)``; ``days`` since the memory was last read
    or entered core, whichever is later."""
    base = config.category_bases.get(category, config.default_base)
    return (
        base * access_factor(access_count, max_access_count) * math.exp(-config.decay_lambda * max(0.0, days))
    )


def days_until_archived(category: str, config: LifecycleConfig, *, read_share: float = 0.0) -> float:
    """Days an untouched memory of ``category`` stays in core (``read_share``: its log-reads over
    the most-read memory's, 0 = never read); ``inf`` when it never falls below the threshold."""
    base = config.category_bases.get(category, config.default_base) * (0.5 + 0.5 * read_share)
    if config.archive_threshold <= 0 or base <= 0:
        return math.inf if config.archive_threshold <= 0 else 0.0
    return max(0.0, math.log(base / config.archive_threshold) / config.decay_lambda)


def next_daily_run(now: datetime, daily_at: str, *, after: datetime | None = None) -> datetime:
    """The next local ``HH:MM`` at or after ``now`` (and strictly after ``after``), as aware UTC.

    Computed on the naive local wall clock and converted back, so a run stays at 03:00 local across
    a daylight-saving change.
    """
    hour, minute = (int(part) for part in daily_at.split(":"))
    local_now = now.astimezone().replace(tzinfo=None)
    candidate = local_now.replace(hour=hour, minute=minute, second=0, microsecond=0)
    if candidate < local_now:
        candidate += timedelta(days=1)
    while True:
        moment = candidate.astimezone().astimezone(UTC)  # naive = local time
        if after is None or moment > after:
            return moment
        candidate += timedelta(days=1)


# -- reports ------------------------------------------------------------------------------------
@dataclass
class StageReport:
    """What one stage did (or, in a dry run, would do).

    Attributes:
        name: one of :data:`STAGES`.
        status: ``done``, ``planned`` (dry run), ``skipped`` (see ``reason``) or ``failed``.
        reason: why it was skipped or failed.
        duration_ms: plan plus apply.
        counts: complete counts per kind (``promoted``, ``merged``, ``archived``…).
        ids: memory ids per kind (at most ``report_max_ids`` each).
        groups: merge groups and summaries: ``{"user_id", "into": the kept row or the summary (None
            in a dry run), "ids": the rows merged into it or summarised by it, "period": YYYY-MM of
            a summary's sources}``.
    """

    name: str
    status: str = "done"
    reason: str | None = None
    duration_ms: float = 0.0
    counts: dict[str, int] = field(default_factory=dict)
    ids: dict[str, list[int]] = field(default_factory=dict)
    groups: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class LifecycleReport:
    """One run: when it judged (``now``), what triggered it, and each stage's report."""

    run_id: int | None
    trigger: str
    dry_run: bool
    user_id: str | None
    status: str
    now: str
    started_at: str
    finished_at: str | None = None
    rows_before: int = 0
    rows_after: int | None = None
    error: str | None = None
    stages: list[StageReport] = field(default_factory=list)
    merge_watermark: dict[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> LifecycleReport:
        stages = [StageReport(**stage) for stage in data.get("stages", [])]
        known = {f.name for f in dataclasses.fields(cls)} - {"stages"}
        return cls(**{k: v for k, v in data.items() if k in known}, stages=stages)

    def stage(self, name: str) -> StageReport:
        return next(stage for stage in self.stages if stage.name == name)


# -- what a dry run carries from one plan to the next -----------------------------------------
@dataclass
class Pending:
    """Changes planned but not applied (dry run): later stages plan as if they were made.

    In a real run this stays empty: each stage's changes are committed before the next one plans.
    """

    moved: dict[int, tuple[str, str]] = field(default_factory=dict)  # id → (layer, layer_since)
    hidden: set[int] = field(default_factory=set)
    absorbed: dict[int, tuple[int, int, str | None]] = field(default_factory=dict)

    def view(self, row: LifecycleRow) -> LifecycleRow | None:
        """The row as it would be (None when it would be hidden)."""
        if row.id in self.hidden:
            return None
        if row.id in self.moved:
            layer, since = self.moved[row.id]
            row = dataclasses.replace(row, layer=layer, layer_since=since)
        if row.id in self.absorbed:
            importance, reads, last_read = self.absorbed[row.id]
            row = dataclasses.replace(row, importance=importance, access_count=reads, last_accessed=last_read)
        return row


@dataclass(frozen=True)
class _Move:
    memory_id: int
    unread: tuple[int, str | None] | None  # the reads the plan saw, when a read must cancel the move


@dataclass(frozen=True)
class _MergeGroup:
    user_id: str
    kept: int
    members: tuple[int, ...]
    updated_at: dict[int, str]  # what each row's updated_at was when planned


@dataclass(frozen=True)
class _SummaryBatch:
    user_id: str
    period: str  # the month the sources are from, YYYY-MM
    sources: tuple[int, ...]
    updated_at: dict[int, str]


@dataclass
class _RunContext:
    run_id: int | None
    dry_run: bool
    now: datetime
    users: list[str]
    whole_store: bool
    pending: Pending
    report: LifecycleReport

    @property
    def now_iso(self) -> str:
        return iso(self.now)


class LifecycleService:
    """Runs the lifecycle on request and once a day.

    Args:
        db: the store.
        memories: writes through it keep the vector index and the recall cache in step; it also
            embeds the history summaries.
        index: the vector index of the live model (novelty, merge, the maintain check); None
            without an embedder (then nothing is merged).
        llm: writes the session and history summaries; None (no model that writes prose) skips
            those stages.
        config: thresholds, weights, schedule.
        gpu_busy: why the GPU is busy now, or None (the extraction gate's judgement); the daily run
            waits while it says busy.
        gpu_max_wait_s: longest the daily run waits for the GPU; then it runs anyway.
        gpu_recheck_s: how often a waiting run looks at the GPU again.
        clock: the time the lifecycle judges by (tests inject one).
    """

    def __init__(
        self,
        db: Database,
        memories: MemoryService,
        index: VectorIndex | None,
        llm: LLM | None,
        config: LifecycleConfig,
        *,
        gpu_busy: Callable[[], str | None] | None = None,
        gpu_max_wait_s: float = 600.0,
        gpu_recheck_s: float = 5.0,
        clock: Clock = utc_now,
    ) -> None:
        self._db = db
        self._memories = memories
        self._index = index
        self._llm = llm
        self._config = config
        self._gpu_busy = gpu_busy
        self._gpu_max_wait_s = gpu_max_wait_s
        self._gpu_recheck_s = gpu_recheck_s
        self._clock = clock
        self._lock = asyncio.Lock()
        self._stop = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self.on_finished: list[FinishedHook] = []
        self.next_scheduled: datetime | None = None

    # -- running ---------------------------------------------------------------------------
    async def run(
        self, *, trigger: str = "api", user_id: str | None = None, dry_run: bool = False
    ) -> LifecycleReport:
        """Run every stage now and return the report, recorded in the log of runs.

        Args:
            trigger: who asked ("api", "schedule"…), recorded with the run.
            user_id: only this user's memories (None: everyone's); FTS optimize and the index check
                always cover the whole store.
            dry_run: plan every stage, change nothing (the run is logged as a dry run).
        """
        return await self._execute(trigger=trigger, dry_run=dry_run, user_id=user_id, record=True)

    async def preview(self, *, user_id: str | None = None) -> LifecycleReport:
        """What a run now would do: the same plans, nothing applied, nothing logged."""
        return await self._execute(trigger="preview", dry_run=True, user_id=user_id, record=False)

    async def log(self, limit: int = 20) -> list[RunRecord]:
        """The latest runs, newest first."""
        return await self._db.read(lambda conn: lifecycle_sql.recent_runs(conn, limit))

    async def _execute(
        self, *, trigger: str, dry_run: bool, user_id: str | None, record: bool
    ) -> LifecycleReport:
        if dry_run:  # reads only: it may look while a run works
            return await self._stages(trigger=trigger, dry_run=True, user_id=user_id, record=record)
        if self._lock.locked():
            raise LifecycleBusy("a lifecycle run is already under way; see GET /lifecycle/log")
        async with self._lock:
            return await self._stages(trigger=trigger, dry_run=False, user_id=user_id, record=record)

    async def _stages(
        self, *, trigger: str, dry_run: bool, user_id: str | None, record: bool
    ) -> LifecycleReport:
        now = self._clock()
        started = iso(now)

        def begin(conn: sqlite3.Connection) -> tuple[int | None, int, list[str]]:
            run_id = (
                lifecycle_sql.start_run(conn, trigger=trigger, dry_run=dry_run, started_at=started)
                if record
                else None
            )
            users = [user_id] if user_id is not None else lifecycle_sql.users_with_live_rows(conn)
            return run_id, lifecycle_sql.total_rows(conn), users

        # A preview only reads; a logged run records itself in the same step.
        run_id, rows_before, users = await (self._db.write(begin) if record else self._db.read(begin))
        report = LifecycleReport(
            run_id=run_id,
            trigger=trigger,
            dry_run=dry_run,
            user_id=user_id,
            status="running",
            now=started,
            started_at=started,
            rows_before=rows_before,
        )
        context = _RunContext(run_id, dry_run, now, users, user_id is None, Pending(), report)
        log.info("lifecycle run started", extra={"run": run_id, "trigger": trigger, "dry_run": dry_run})
        try:
            for name, stage in (
                ("promote", self._promote),
                ("merge", self._merge),
                ("decay", self._decay),
                ("sessions", self._sessions),
                ("compress", self._compress),
                ("maintain", self._maintain),
            ):
                began = time.perf_counter()
                stage_report = StageReport(name=name, status="planned" if dry_run else "done")
                report.stages.append(stage_report)
                await stage(context, stage_report, began)
        except asyncio.CancelledError:
            await self._close_run(report, "interrupted", "stopped while running", shielded=True)
            raise
        except Exception as exc:
            log.exception("lifecycle run failed", extra={"run": run_id})
            report.stages[-1].status = "failed"
            report.stages[-1].reason = f"{type(exc).__name__}: {exc}"[:500]
            await self._close_run(report, "failed", report.stages[-1].reason)
            raise
        await self._close_run(report, "done", None)
        log.info(
            "lifecycle run finished",
            extra={
                "run": run_id,
                "dry_run": dry_run,
                **{f"{s.name}_{kind}": count for s in report.stages for kind, count in s.counts.items()},
            },
        )
        if not dry_run:
            for hook in list(self.on_finished):
                try:
                    await hook(report)
                except Exception:
                    log.exception("lifecycle after-run hook failed")
        return report

    async def _close_run(
        self, report: LifecycleReport, status: str, error: str | None, shielded: bool = False
    ) -> None:
        report.status = status
        report.error = error
        report.finished_at = iso(self._clock())

        def finish(conn: sqlite3.Connection) -> None:
            # Counted before the report is stored, in the same transaction: the log keeps it too.
            report.rows_after = lifecycle_sql.total_rows(conn)
            if report.run_id is not None:
                lifecycle_sql.finish_run(
                    conn,
                    report.run_id,
                    status=status,
                    report=report.to_json(),
                    finished_at=report.finished_at or "",
                )

        try:
            closing = self._db.write(finish)
            await (asyncio.shield(closing) if shielded else closing)
        except Exception:
            # The store may be closing: the run stays 'running' and the next start marks it interrupted.
            log.exception("could not record the end of lifecycle run", extra={"run": report.run_id})

    def _save_report(self, conn: sqlite3.Connection, context: _RunContext) -> None:
        """Inside a stage's transaction: the log shows exactly the stages that committed."""
        if context.run_id is not None:
            lifecycle_sql.save_report(conn, context.run_id, context.report.to_json())

    async def _record_planned(self, context: _RunContext) -> None:
        if context.run_id is not None:
            await self._db.write(lambda conn: self._save_report(conn, context))

    def _cap(self, ids: Iterable[int]) -> list[int]:
        return list(ids)[: self._config.report_max_ids]

    # -- reading rows as they are (or, in a dry run, would be) ----------------------------
    async def _rows(self, user_id: str, layer: str, pending: Pending) -> list[LifecycleRow]:
        moved_in = [mid for mid, (to, _) in pending.moved.items() if to == layer]

        def read(conn: sqlite3.Connection) -> tuple[list[LifecycleRow], dict[int, LifecycleRow]]:
            return lifecycle_sql.rows_in_layer(conn, user_id, layer), lifecycle_sql.live_rows_by_id(
                conn, moved_in
            )

        rows, extra = await self._db.read(read)
        seen: dict[int, LifecycleRow] = {}
        for row in [*rows, *(r for r in extra.values() if r.user_id == user_id)]:
            viewed = pending.view(row)
            if viewed is not None and viewed.layer == layer:
                seen[viewed.id] = viewed
        return [seen[mid] for mid in sorted(seen)]

    # -- 1. promote working → core; expire working → archive ------------------------------
    async def _promote(self, context: _RunContext, report: StageReport, began: float) -> None:
        config = self._config
        ttl = timedelta(hours=config.working_ttl_hours)
        turn_ttl = timedelta(days=config.turn_archive_days)
        promote: list[_Move] = []
        expire: list[_Move] = []
        for user_id in context.users:
            rows = await self._rows(user_id, "working", context.pending)
            if not rows:
                continue
            facts = [row.id for row in rows if row.kind != "turn"]
            nearest = await self._nearest_core(user_id, facts, context.pending)
            for row in rows:
                entered = parse_time(row.layer_since) or parse_time(row.created_at) or context.now
                if row.kind == "turn":
                    # A turn is what was said, never a standing fact: it stays in working for
                    # turn_archive_days, then rests in the archive (still searchable).
                    if context.now - entered >= turn_ttl:
                        expire.append(_Move(row.id, (row.access_count, row.last_accessed)))
                    continue
                if promotion_score(row, nearest.get(row.id), config) >= config.promote_threshold:
                    promote.append(_Move(row.id, None))
                    continue
                if context.now - entered >= ttl:
                    expire.append(_Move(row.id, (row.access_count, row.last_accessed)))
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
                self._fill(
                    report,
                    began,
                    promoted=promoted,
                    expired=expired,
                    skipped=len(promote) + len(expire) - len(promoted) - len(expired),
                )
                self._save_report(conn, context)
                return (promoted, expired), [*promoted, *expired]

            done_promoted, done_expired = await self._memories.write_with_index(work)
        self._fill(
            report,
            began,
            promoted=done_promoted,
            expired=done_expired,
            skipped=len(promote) + len(expire) - len(done_promoted) - len(done_expired),
        )
        if context.dry_run:
            await self._record_planned(context)

    def _fill(self, report: StageReport, began: float, **kinds: list[int] | int) -> None:
        for kind, value in kinds.items():
            if isinstance(value, int):
                report.counts[kind] = value
            else:
                report.counts[kind] = len(value)
                report.ids[kind] = self._cap(value)
        report.duration_ms = round((time.perf_counter() - began) * 1000, 2)

    # -- 2. merge near-duplicate core memories --------------------------------------------
    async def _merge(self, context: _RunContext, report: StageReport, began: float) -> None:
        if self._index is None or self._index.dim is None:
            report.status, report.reason = "skipped", "no vectors: no embedder, or nothing embedded yet"
            self._fill(report, began, merged=[], groups=0)
            if not context.dry_run:
                await self._db.write(lambda conn: self._save_report(conn, context))
            return
        threshold = self._config.merge_cosine
        plan_ids: tuple[int, str] = await self._db.read(
            lambda conn: (lifecycle_sql.max_memory_id(conn), lifecycle_sql.database_now(conn))
        )
        # Everything written after this point is "changed" for the next run: the earlier of the two
        # clocks, so neither a store clock nor an injected one can hide a row from it.
        since = min(plan_ids[1], context.now_iso)
        watermark = await self._db.read(lifecycle_sql.latest_merge_watermark)
        incremental = (
            watermark is not None
            and watermark.get("model") == self._index.model
            and float(watermark.get("cosine", 2.0)) <= threshold
        )
        groups: list[_MergeGroup] = []
        compared = 0
        for user_id in context.users:
            core = {
                row.id: row
                for row in await self._rows(user_id, "core", context.pending)
                # Each tells its own conversation: two alike are still two sessions.
                if row.category != session_summaries.CATEGORY
            }
            if len(core) < 2:
                continue
            if incremental:
                assert watermark is not None
                changed = set(
                    await self._db.read(
                        lambda conn, u=user_id: lifecycle_sql.changed_core_ids(
                            conn, u, int(watermark["max_id"]), str(watermark["since"])
                        )
                    )
                )
                changed |= {
                    mid for mid in core if mid in context.pending.moved or mid in context.pending.absorbed
                }
                changed &= set(core)
            else:
                changed = set(core)
            if not changed:
                continue
            # Comparing most rows with all is as costly as every pair once: then do that.
            full = len(changed) * 2 >= len(core)
            if full:
                changed = set(core)
            compared += len(changed)
            pairs = await self._similar_pairs(
                user_id, core, sorted(changed), full, context.pending, threshold
            )
            for members in _union_find_groups(pairs):
                rows = [core[mid] for mid in members]
                kept = max(rows, key=lambda r: (parse_time(r.created_at) or context.now, r.id))
                groups.append(
                    _MergeGroup(
                        user_id=user_id,
                        kept=kept.id,
                        members=tuple(sorted(r.id for r in rows if r.id != kept.id)),
                        updated_at={r.id: r.updated_at for r in rows},
                    )
                )
        if context.whole_store:
            context.report.merge_watermark = {
                "max_id": plan_ids[0],
                "since": since,
                "model": self._index.model,
                "cosine": threshold,
            }
        if context.dry_run:
            for group in groups:
                rows = await self._group_rows(group, context.pending)
                context.pending.hidden.update(group.members)
                context.pending.absorbed[group.kept] = (
                    max(r.importance for r in rows),
                    sum(r.access_count for r in rows),
                    max((r.last_accessed for r in rows if r.last_accessed), default=None),
                )
            applied = groups
            context.report.merge_watermark = None  # a dry run never moves the watermark
        else:

            def work(conn: sqlite3.Connection) -> tuple[list[_MergeGroup], list[int]]:
                done: list[_MergeGroup] = []
                touched: list[int] = []
                for group in groups:
                    current = memory_sql.get_many(conn, [group.kept, *group.members])
                    if not _as_planned(current.get(group.kept), group.user_id, "core", group.updated_at):
                        continue
                    merged = [
                        mid
                        for mid in group.members
                        if _as_planned(current.get(mid), group.user_id, "core", group.updated_at)
                    ]
                    if not merged:
                        continue
                    rows = [current[group.kept], *(current[mid] for mid in merged)]
                    for mid in merged:
                        lifecycle_sql.hide_merged(conn, mid, group.kept, context.run_id)
                    lifecycle_sql.absorb_merged(
                        conn,
                        group.kept,
                        importance=max(r.importance for r in rows),
                        access_count=sum(r.access_count for r in rows),
                        last_accessed=max((r.last_accessed for r in rows if r.last_accessed), default=None),
                    )
                    done.append(dataclasses.replace(group, members=tuple(merged)))
                    touched.extend([group.kept, *merged])
                self._merge_report(report, began, done, compared, skipped=len(groups) - len(done))
                self._save_report(conn, context)
                return done, touched

            applied = await self._memories.write_with_index(work)
        self._merge_report(report, began, applied, compared, skipped=len(groups) - len(applied))
        if context.dry_run:
            await self._record_planned(context)

    def _merge_report(
        self, report: StageReport, began: float, groups: list[_MergeGroup], compared: int, skipped: int
    ) -> None:
        merged = [mid for group in groups for mid in group.members]
        self._fill(
            report, began, merged=merged, kept=[g.kept for g in groups], compared=compared, skipped=skipped
        )
        report.counts["groups"] = len(groups)
        report.groups = [
            {"user_id": g.user_id, "into": g.kept, "ids": list(g.members), "period": None}
            for g in groups[: self._config.report_max_ids]
        ]

    async def _group_rows(self, group: _MergeGroup, pending: Pending) -> list[LifecycleRow]:
        ids = [group.kept, *group.members]
        rows = await self._db.read(lambda conn: lifecycle_sql.live_rows_by_id(conn, ids))
        return [viewed for row in rows.values() if (viewed := pending.view(row)) is not None]

    async def _similar_pairs(
        self,
        user_id: str,
        core: dict[int, LifecycleRow],
        changed: list[int],
        full: bool,
        pending: Pending,
        threshold: float,
    ) -> list[tuple[int, int]]:
        """Pairs of the user's core rows at cosine ≥ ``threshold``, where at least one is ``changed``.

        ``full``: every pair (``changed`` is then all of core, compared block by block with the
        rows after it, each pair once). Otherwise the changed rows' block is compared with all core
        rows, walked from the store in keyset pages so memory stays at two blocks.
        """
        pairs: list[tuple[int, int]] = []
        async for left_ids, left in self._blocks(changed):
            after = int(left_ids.min()) - 1 if full else 0  # a numpy int would bind as a BLOB
            async for right_ids, right in self._core_pages(user_id, set(core), pending, after):
                found = await asyncio.to_thread(
                    _pairs_at_least, left_ids, left, right_ids, right, threshold, full
                )
                pairs.extend(found)
        return pairs

    async def _blocks(self, memory_ids: Sequence[int]) -> AsyncIterator[tuple[np.ndarray, np.ndarray]]:
        """Ids and unit vectors of these rows (those with a vector of the live model), in blocks."""
        assert self._index is not None
        model, dim = self._index.model, self._index.dim
        for start in range(0, len(memory_ids), MERGE_BLOCK_ROWS):
            block = memory_ids[start : start + MERGE_BLOCK_ROWS]
            blobs = await self._db.read(
                lambda conn, ids=block: lifecycle_sql.vectors_by_id(conn, ids, model, dim)
            )
            if blobs:
                yield _matrix(sorted(blobs.items()))

    async def _core_pages(
        self, user_id: str, core: set[int], pending: Pending, after_id: int = 0
    ) -> AsyncIterator[tuple[np.ndarray, np.ndarray]]:
        """The user's core vectors with ids above ``after_id``, page by page (ids and unit vectors).

        Read from the BLOBs in keyset pages, each its own short read: no long read transaction, and
        no lock on the in-memory index, which searches hold. ``core``: the rows that count as core
        (in a dry run, rows an earlier stage would have moved in come as one extra page).
        """
        assert self._index is not None
        model, dim = self._index.model, self._index.dim
        cursor = after_id
        while True:
            page = await self._db.read(
                lambda conn, c=cursor: lifecycle_sql.core_vector_chunk(
                    conn, user_id, model, dim, c, MERGE_BLOCK_ROWS
                )
            )
            if not page:
                break
            cursor = page[-1][0]
            kept = [(mid, blob) for mid, blob in page if mid in core]
            if kept:
                yield _matrix(kept)
        moved_in = sorted(mid for mid in core if mid in pending.moved and mid > after_id)
        async for block in self._blocks(moved_in):
            yield block

    async def _nearest_core(self, user_id: str, memory_ids: list[int], pending: Pending) -> dict[int, float]:
        """The highest cosine of each row to the user's core memories (0 when there is none); rows
        without a vector are absent."""
        if self._index is None or self._index.dim is None:
            return {}
        core = {row.id for row in await self._rows(user_id, "core", pending)}
        nearest: dict[int, float] = {}
        async for ids, vectors in self._blocks(memory_ids):
            best = np.zeros(len(ids), dtype=np.float32)
            async for _, page in self._core_pages(user_id, core, pending):
                best = np.maximum(best, await asyncio.to_thread(_column_max, vectors, page))
            nearest.update(zip(ids.tolist(), best.tolist(), strict=True))
        return nearest

    # -- 3. decay core → archive ----------------------------------------------------------
    async def _decay(self, context: _RunContext, report: StageReport, began: float) -> None:
        archive: list[_Move] = []
        for user_id in context.users:
            rows = await self._rows(user_id, "core", context.pending)
            if not rows:
                continue
            most_read = max(row.access_count for row in rows)
            for row in rows:
                if self._strength(row, most_read, context.now) < self._config.archive_threshold:
                    archive.append(_Move(row.id, (row.access_count, row.last_accessed)))
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
                self._fill(report, began, archived=done, skipped=len(archive) - len(done))
                self._save_report(conn, context)
                return done, done

            archived = await self._memories.write_with_index(work)
        self._fill(report, began, archived=archived, skipped=len(archive) - len(archived))
        if context.dry_run:
            await self._record_planned(context)

    def _strength(self, row: LifecycleRow, most_read: int, now: datetime) -> float:
        """Decay strength at ``now``; the clock runs from the later of the last read and the day it
        entered core (a memory just promoted or restored starts fresh)."""
        entered = parse_time(row.layer_since) or parse_time(row.created_at)
        last_read = parse_time(row.last_accessed)
        moments = [m for m in (entered, last_read) if m is not None]
        since = max(moments) if moments else now
        days = (now - since).total_seconds() / 86400
        return decay_strength(row.category, row.access_count, most_read, days, self._config)

    # -- 4. summarise quiet sessions ------------------------------------------------------
    async def _sessions(self, context: _RunContext, report: StageReport, began: float) -> None:
        """One ``session_summary`` fact per quiet session (see :mod:`.session_summaries`).

        Unlike the other stages this one commits per session: each summary is one or more LLM
        calls, and a failure half-way keeps the summaries already written (the rest wait for the
        next run, which plans from what is there).
        """
        after_days = self._config.session_summary_after_days
        due: list[tuple[str, ConversationSession, int | None]] = []
        if after_days is not None:
            quiet_since = iso(context.now - timedelta(days=after_days))
            for user_id in context.users:
                sessions, summarised = await self._db.read(
                    lambda conn, u=user_id: (
                        memory_sql.conversation_sessions(conn, u, newest_first=False),
                        lifecycle_sql.summarised_through(conn, u),
                    )
                )
                for session in session_summaries.due_sessions(sessions, summarised, quiet_since):
                    due.append((user_id, session, summarised.get(session.session, (None, 0))[0]))
        written: list[tuple[str, ConversationSession, int]] = []
        superseded: list[int] = []
        reason = None
        if after_days is None:
            reason = "off (lifecycle.session_summary_after_days: null)"
        elif due and self._llm is None:
            reason = f"{_NO_WRITER}; retried next run"
        elif not context.dry_run:
            for user_id, session, previous in due:
                try:
                    summary_id = await self._summarise_session(context, user_id, session, previous)
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
        self._fill(
            report,
            began,
            summaries=[sid for _, _, sid in written],
            superseded=superseded,
            waiting=0 if context.dry_run else len(due) - len(written),
        )
        report.counts["sessions"] = len(planned)
        report.groups = [
            {"user_id": u, "into": sid, "ids": [], "period": None, "session": s.session}
            for u, s, sid in planned[: self._config.report_max_ids]
        ]
        if context.dry_run:
            await self._record_planned(context)
        else:
            await self._db.write(lambda conn: self._save_report(conn, context))

    async def _summarise_session(
        self, context: _RunContext, user_id: str, session: ConversationSession, previous: int | None
    ) -> int | None:
        """Write one session's summary and hide the one it replaces; None when the session changed
        while the LLM wrote (the next run summarises it again)."""
        assert self._llm is not None
        turns = await self._db.read(
            lambda conn: lifecycle_sql.session_transcript(
                conn, user_id, session.session, session.last_turn_id
            )
        )
        if not turns:
            return None  # its turns were deleted meanwhile
        parts = session_summaries.transcript_parts(turns, self._config.session_summary_chunk_chars)
        text = await session_summaries.write_summary(
            self._llm, parts, max_tokens=self._config.summary_max_tokens
        )
        memory = session_summaries.summary_memory(
            user_id, session, turns, text, created_at=context.now_iso, run_id=context.run_id
        )
        try:
            [item] = await self._memories.with_vectors([memory])
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

        return await self._memories.write_with_index(work)

    # -- 5. compress old archive entries into history summaries ---------------------------
    async def _compress(self, context: _RunContext, report: StageReport, began: float) -> None:
        cutoff = context.now - timedelta(days=self._config.compress_after_days)
        batches: list[_SummaryBatch] = []
        for user_id in context.users:
            rows = [
                row
                for row in await self._rows(user_id, "archive", context.pending)
                if row.compressed_into is None
                and row.kind != "turn"  # the conversation is kept as said, not folded into a month
                and (parse_time(row.layer_since) or parse_time(row.created_at) or context.now) <= cutoff
            ]
            rows.sort(key=lambda r: (r.created_at, r.id))
            by_month: dict[str, list[LifecycleRow]] = {}
            for row in rows:
                by_month.setdefault(row.created_at[:7], []).append(row)
            size = self._config.summary_batch_size
            for period, month in by_month.items():
                for start in range(0, len(month), size):
                    part = month[start : start + size]
                    batches.append(
                        _SummaryBatch(
                            user_id, period, tuple(r.id for r in part), {r.id: r.updated_at for r in part}
                        )
                    )
        sources = [mid for batch in batches for mid in batch.sources]
        reason = None
        if batches and self._llm is None:
            reason = f"{_NO_WRITER}; retried next run"
        elif batches and not context.dry_run:
            try:
                summaries = [await self._summarise(context, batch) for batch in batches]
            except LLMUnavailable as exc:
                reason = f"LLM unavailable: {exc}; retried next run"
                log.warning("history summaries skipped: LLM unavailable", extra={"reason": str(exc)})
        if reason is not None or not batches or context.dry_run:
            if reason is not None:
                report.status, report.reason = "skipped", reason
                self._compress_report(report, began, [], [], waiting=len(sources))
            else:
                self._compress_report(report, began, batches, [None] * len(batches))
            if context.dry_run:
                await self._record_planned(context)
            else:
                await self._db.write(lambda conn: self._save_report(conn, context))
            return
        items = await self._memories.with_vectors(summaries)

        def work(conn: sqlite3.Connection) -> tuple[list[tuple[_SummaryBatch, int]], list[int]]:
            done: list[tuple[_SummaryBatch, int]] = []
            for batch, item in zip(batches, items, strict=True):
                current = memory_sql.get_many(conn, batch.sources)
                if not all(
                    _as_planned(current.get(mid), batch.user_id, "archive", batch.updated_at)
                    and current[mid].compressed_into is None
                    for mid in batch.sources
                ):
                    continue  # an entry changed since it was read: the next run summarises it again
                summary_id = memory_sql.insert(conn, item)
                for mid in batch.sources:
                    lifecycle_sql.mark_compressed(conn, mid, summary_id, context.run_id)
                done.append((batch, summary_id))
            self._compress_report(
                report,
                began,
                [b for b, _ in done],
                [sid for _, sid in done],
                skipped=len(batches) - len(done),
            )
            self._save_report(conn, context)
            return done, [sid for _, sid in done]

        await self._memories.write_with_index(work)

    def _compress_report(
        self,
        report: StageReport,
        began: float,
        batches: list[_SummaryBatch],
        summary_ids: list[int | None],
        *,
        skipped: int = 0,
        waiting: int = 0,
    ) -> None:
        """``summary_ids`` None in a dry run (not written yet); ``waiting``: entries due but left for
        the next run (the stage was skipped)."""
        self._fill(
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
            for b, sid in list(zip(batches, summary_ids, strict=True))[: self._config.report_max_ids]
        ]

    async def _summarise(self, context: _RunContext, batch: _SummaryBatch) -> NewMemory:
        """One history summary, written by the LLM from the batch's memories (oldest first)."""
        assert self._llm is not None
        rows = await self._db.read(lambda conn: memory_sql.get_many(conn, batch.sources))
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
                f"Memories from {batch.period}, oldest first:\n"
                + "\n".join(lines)
                + "\n\nThe history summary:",
            ),
        ]
        reply = await self._llm.chat(messages, max_tokens=self._config.summary_max_tokens, temperature=0.0)
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
            metadata={
                "sources": list(batch.sources),
                "period": batch.period,
                "lifecycle_run": context.run_id,
            },
            created_at=context.now_iso,
            layer="core",
        )

    # -- 6. FTS optimize and the vector index check ---------------------------------------
    async def _maintain(self, context: _RunContext, report: StageReport, began: float) -> None:
        if not context.dry_run:

            def optimize(conn: sqlite3.Connection) -> None:
                lifecycle_sql.optimize_fts(conn)
                self._save_report(conn, context)

            await self._db.write(optimize)
        missing, extra, moved = await self._db.on_writer(
            lambda conn: self._check_index(conn, fix=not context.dry_run)
        )
        self._fill(report, began, index_missing=missing, index_extra=extra, index_moved=moved)
        report.counts["fts_optimized"] = 0 if context.dry_run else len(lifecycle_sql.FTS_TABLES)
        if context.dry_run:
            await self._record_planned(context)
        else:
            await self._db.write(lambda conn: self._save_report(conn, context))

    def _check_index(self, conn: sqlite3.Connection, *, fix: bool) -> tuple[int, int, int]:
        """Compare the vector index with the store's live rows (on the writer thread, so no write
        lands in between) and, with ``fix``, repair it: ``(missing, extra, moved)`` rows."""
        index = self._index
        if index is None:
            return 0, 0, 0
        indexed = index.layers_by_id()
        wanted = {
            mid: (user_id, layer, kind)
            for mid, user_id, layer, kind, dim in lifecycle_sql.live_index_entries(conn, index.model)
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
                user_id, layer, kind = wanted[mid]
                index.upsert(mid, user_id, from_blob(blob), layer, kind)
        return len(missing), len(extra), len(moved)

    # -- the daily schedule ----------------------------------------------------------------
    async def start(self) -> None:
        """Mark runs a killed process left 'running' as interrupted; start the daily schedule."""
        interrupted = await self._db.write(lifecycle_sql.interrupt_running)
        if interrupted:
            log.warning(
                "lifecycle runs were interrupted; the next run completes their work",
                extra={"runs": interrupted},
            )
        if self._config.enabled:
            self._task = asyncio.create_task(self._daily(), name="lifecycle-scheduler")

    async def stop(self, timeout: float = 10.0) -> None:
        """Stop the schedule; a run under way gets ``timeout`` to finish, then is cancelled (its
        committed stages stay; the next run does the rest)."""
        self._stop.set()
        if self._task is None:
            return
        if not await join_or_cancel(self._task, timeout):
            log.warning("lifecycle run stopped mid-way; the next run completes it")

    async def _daily(self) -> None:
        last: datetime | None = None
        while not self._stop.is_set():
            try:
                slot = next_daily_run(self._clock(), self._config.daily_at, after=last)
                self.next_scheduled = slot
                while not self._stop.is_set() and (wait := (slot - self._clock()).total_seconds()) > 0:
                    await self._sleep(min(wait, SCHEDULER_MAX_SLEEP_S))
                if self._stop.is_set():
                    break
                last = slot
                if self._config.wait_for_gpu:
                    await self._wait_for_gpu()
                if self._stop.is_set():
                    break
                await self.run(trigger="schedule")
            except LifecycleBusy:
                log.info("scheduled lifecycle run skipped: a run is under way")
            except Exception:  # the schedule never dies: log, pause, go on
                log.exception("scheduled lifecycle run failed")
                await self._sleep(60)

    async def _sleep(self, seconds: float) -> None:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._stop.wait(), timeout=max(0.0, seconds))

    async def _wait_for_gpu(self) -> None:
        """Hold the run while the GPU is busy, for at most ``gpu_max_wait_s`` (then run anyway)."""
        if self._gpu_busy is None or (reason := self._gpu_busy()) is None:
            return
        log.info("lifecycle run held: GPU busy", extra={"reason": reason})
        started = time.monotonic()
        while reason is not None and not self._stop.is_set():
            remaining = self._gpu_max_wait_s - (time.monotonic() - started)
            if remaining <= 0:
                log.info("lifecycle run released: maximum wait reached, GPU still busy")
                return
            await self._sleep(min(self._gpu_recheck_s, remaining))
            reason = self._gpu_busy()


# -- helpers --------------------------------------------------------------------------------------
def _as_planned(record: MemoryRecord | None, user_id: str, layer: str, updated_at: dict[int, str]) -> bool:
    """Still live, in ``layer``, of the user, and not edited since the plan read it."""
    return (
        record is not None
        and record.superseded_by is None
        and record.layer == layer
        and record.user_id == user_id
        and updated_at.get(record.id) == record.updated_at
    )


def _matrix(page: Sequence[tuple[int, bytes]]) -> tuple[np.ndarray, np.ndarray]:
    """Ids and unit vectors of ``(id, blob)`` rows, as arrays."""
    ids = np.fromiter((mid for mid, _ in page), dtype=np.int64, count=len(page))
    vectors = np.frombuffer(b"".join(blob for _, blob in page), dtype="<f4").reshape(len(page), -1)
    return ids, normalize(vectors)


def _column_max(left: np.ndarray, right: np.ndarray) -> np.ndarray:
    """For each row of ``left``, its highest cosine to the rows of ``right``."""
    return np.asarray((left @ right.T).max(axis=1), dtype=np.float32)


def _pairs_at_least(
    left_ids: np.ndarray,
    left: np.ndarray,
    right_ids: np.ndarray,
    right: np.ndarray,
    threshold: float,
    ordered: bool,
) -> list[tuple[int, int]]:
    """``(left id, right id)`` pairs with cosine ≥ ``threshold`` (``ordered``: left id < right id,
    each pair once; else any two different ids)."""
    scores = left @ right.T
    rows, cols = np.nonzero(scores >= threshold)
    a, b = left_ids[rows], right_ids[cols]
    keep = a < b if ordered else a != b
    return list(zip(a[keep].tolist(), b[keep].tolist(), strict=True))


def _union_find_groups(pairs: Iterable[tuple[int, int]]) -> Iterator[list[int]]:
    """Connected groups (two or more ids) of the pairs, each sorted, in order of their smallest id."""
    parent: dict[int, int] = {}

    def root(node: int) -> int:
        parent.setdefault(node, node)
        while parent[node] != node:
            parent[node] = parent[parent[node]]
            node = parent[node]
        return node

    for a, b in pairs:
        ra, rb = root(a), root(b)
        if ra != rb:
            parent[max(ra, rb)] = min(ra, rb)
    groups: dict[int, list[int]] = {}
    for node in parent:
        groups.setdefault(root(node), []).append(node)
    for key in sorted(groups):
        if len(groups[key]) > 1:
            yield sorted(groups[key])
