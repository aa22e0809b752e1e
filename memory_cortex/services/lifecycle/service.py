"""The lifecycle service: runs the stages in order on request and once a day, and logs each run.

Why every stage PLANS and then APPLIES: the plan is read from the store (and the vector index) while
searches and writes go on; it is then applied in ONE write transaction that re-checks each row is
still as planned (same layer, still live, not read or edited since). So a stage commits whole or not
at all (``sessions``: each session whole or not at all), a run killed at any moment leaves a
consistent store, and the next run, planning from what is there, simply does what is left. A dry run
(the preview) is the same code stopped after each plan; what earlier stages would have changed is
carried to the later plans as :class:`~.report.Pending`, so the preview lists what the run then
does. Nothing is ever deleted: rows only move between layers, get hidden behind another row, or
point at a summary.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sqlite3
import time
from collections.abc import Awaitable, Callable
from datetime import datetime

from ...config import LifecycleConfig
from ...errors import LifecycleBusy
from ...models.llm import LLM
from ...store import lifecycle as lifecycle_sql
from ...store.db import Database
from ...store.lifecycle import RunRecord
from ...store.vectors import VectorIndex
from ..memories import MemoryService
from ..workers import join_or_cancel
from . import compress, decay, maintain, merge, promote, sessions
from .clock import iso, next_daily_run, utc_now
from .engine import RunContext, StageTools
from .report import LifecycleReport, Pending, StageReport

log = logging.getLogger(__name__)

Clock = Callable[[], datetime]
# Called after every completed (not dry) run with its report; the Markdown mirror hooks in here.
FinishedHook = Callable[[LifecycleReport], Awaitable[None]]
# Told a logged run's id as soon as its row exists (before its first stage).
Recorded = Callable[[int], None]
Stage = Callable[[StageTools, RunContext, StageReport, float], Awaitable[None]]

STAGES = ("promote", "merge", "decay", "sessions", "compress", "maintain")
_RUN: dict[str, Stage] = {
    "promote": promote.run,
    "merge": merge.run,
    "decay": decay.run,
    "sessions": sessions.run,
    "compress": compress.run,
    "maintain": maintain.run,
}
# The longest single sleep of the daily scheduler: a suspended machine wakes to a fresh look.
SCHEDULER_MAX_SLEEP_S = 600.0


def _busy(what: str, run_id: int | None, *, elsewhere: bool = False) -> LifecycleBusy:
    """The 409 for a second start: it names the run to follow when it is known (a run that has
    taken the lock but not yet logged itself has no id yet)."""
    where = "another daemon is running a lifecycle run" if elsewhere else f"a lifecycle {what} is under way"
    if run_id is None:
        return LifecycleBusy(f"{where}; see GET /lifecycle/log")
    return LifecycleBusy(f"{where} (run {run_id}); follow it at GET /lifecycle/runs/{run_id}", run_id)


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
        self._config = config
        self._tools = StageTools(db, memories, index, llm, config)
        self._gpu_busy = gpu_busy
        self._gpu_max_wait_s = gpu_max_wait_s
        self._gpu_recheck_s = gpu_recheck_s
        self._clock = clock
        self._lock = asyncio.Lock()
        self._running_id: int | None = None  # the run (not a dry run) this daemon is doing
        # One logged dry run at a time: each plans every stage (minutes on a large store), and
        # nothing else bounds how many a client could start.
        self._dry_lock = asyncio.Lock()
        self._dry_running_id: int | None = None
        self._stop = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._background: set[asyncio.Task[None]] = set()
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
        report = await self._execute(trigger=trigger, dry_run=dry_run, user_id=user_id, record=True)
        assert report is not None  # only a scheduled run is ever skipped
        return report

    async def start_run(
        self, *, trigger: str = "api", user_id: str | None = None, dry_run: bool = False
    ) -> int:
        """Start a run (see :meth:`run`) in the background and return its id once it is logged.

        Why: a run takes seconds to minutes (merge passes, LLM summaries); the caller follows it by
        id (``GET /lifecycle/runs/{id}``) instead of holding a request open, and the run goes on
        when that caller goes away. Raises :class:`LifecycleBusy`, with the running id, while
        another run (here or, on PostgreSQL, in another daemon) is under way.
        """
        recorded: asyncio.Future[int] = asyncio.get_running_loop().create_future()

        def on_recorded(run_id: int) -> None:
            if not recorded.done():
                recorded.set_result(run_id)

        task = asyncio.create_task(
            self._in_background(trigger=trigger, dry_run=dry_run, user_id=user_id, on_recorded=on_recorded),
            name="lifecycle-run",
        )
        self._background.add(task)
        task.add_done_callback(self._finished)
        await asyncio.wait({recorded, task}, return_when=asyncio.FIRST_COMPLETED)
        if recorded.done():
            return recorded.result()
        task.result()  # raises what stopped it before its row existed (LifecycleBusy, the store)
        raise RuntimeError("the lifecycle run ended without being logged")  # pragma: no cover

    def _finished(self, task: asyncio.Task[None]) -> None:
        """A background run ended: forget it, and log a failure nobody is left to hear (the caller
        of :meth:`start_run` may have gone before the run was logged)."""
        self._background.discard(task)
        if (
            not task.cancelled()
            and (error := task.exception()) is not None
            and not isinstance(error, LifecycleBusy)
        ):
            log.error("lifecycle run could not start", exc_info=error)

    async def _in_background(
        self, *, trigger: str, dry_run: bool, user_id: str | None, on_recorded: Recorded
    ) -> None:
        """A run nobody awaits: a failure after its row exists is logged and recorded by
        :meth:`_stages`; one before it is raised to :meth:`start_run`."""
        logged = False

        def mark(run_id: int) -> None:
            nonlocal logged
            logged = True
            on_recorded(run_id)

        try:
            await self._execute(
                trigger=trigger, dry_run=dry_run, user_id=user_id, record=True, on_recorded=mark
            )
        except Exception:
            if not logged:
                raise

    async def preview(self, *, user_id: str | None = None) -> LifecycleReport:
        """What a run now would do: the same plans, nothing applied, nothing logged."""
        report = await self._execute(trigger="preview", dry_run=True, user_id=user_id, record=False)
        assert report is not None
        return report

    async def log(self, limit: int = 20) -> list[RunRecord]:
        """The latest runs, newest first."""
        return await self._db.read(lambda conn: lifecycle_sql.recent_runs(conn, limit))

    async def get_run(self, run_id: int) -> RunRecord | None:
        """One logged run as the store has it now (its report: the stages committed so far)."""
        return await self._db.read(lambda conn: lifecycle_sql.run_by_id(conn, run_id))

    async def _execute(
        self,
        *,
        trigger: str,
        dry_run: bool,
        user_id: str | None,
        record: bool,
        unless_scheduled_since: datetime | None = None,
        on_recorded: Recorded | None = None,
    ) -> LifecycleReport | None:
        """Run (or plan) the stages; None when ``unless_scheduled_since`` is given and a scheduled
        run started at or after it (asked under the lock: another daemon's run for the same slot)."""
        if dry_run and not record:  # the preview: reads only, it may look while a run works
            return await self._stages(trigger=trigger, dry_run=True, user_id=user_id, record=False)
        if dry_run:
            if self._dry_lock.locked():
                raise _busy("dry run", self._dry_running_id)
            async with self._dry_lock:
                return await self._tracked_stages(
                    "_dry_running_id", trigger=trigger, dry_run=True, user_id=user_id, on_recorded=on_recorded
                )
        if self._lock.locked():
            raise _busy("run", self._running_id)
        async with self._lock, self._db.exclusive("lifecycle") as held:
            if not held:  # PostgreSQL: another daemon on the same database is running one
                other = await self._db.read(lifecycle_sql.running_run_id)
                raise _busy("run", other, elsewhere=True)
            if unless_scheduled_since is not None and await self._scheduled_run_since(unless_scheduled_since):
                return None
            # Holding the lock, no other run is under way on this database: a run still marked
            # running was cut off (a daemon killed while another held the lock at its start).
            await self._db.write(lambda conn: lifecycle_sql.interrupt_running(conn, dry_runs=False))
            return await self._tracked_stages(
                "_running_id",
                trigger=trigger,
                dry_run=False,
                user_id=user_id,
                on_recorded=on_recorded,
                record=record,
            )

    async def _tracked_stages(
        self,
        attribute: str,
        *,
        trigger: str,
        dry_run: bool,
        user_id: str | None,
        on_recorded: Recorded | None,
        record: bool = True,
    ) -> LifecycleReport:
        """:meth:`_stages`, with the run's id in ``attribute`` from when it is logged until it ends
        (what a 409 for a second start names)."""

        def remember(run_id: int) -> None:
            setattr(self, attribute, run_id)
            if on_recorded is not None:
                on_recorded(run_id)

        try:
            return await self._stages(
                trigger=trigger, dry_run=dry_run, user_id=user_id, record=record, on_recorded=remember
            )
        finally:
            setattr(self, attribute, None)

    async def _stages(
        self,
        *,
        trigger: str,
        dry_run: bool,
        user_id: str | None,
        record: bool,
        on_recorded: Recorded | None = None,
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
        if run_id is not None and on_recorded is not None:
            on_recorded(run_id)
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
        context = RunContext(run_id, dry_run, now, users, user_id is None, Pending(), report)
        log.info("lifecycle run started", extra={"run": run_id, "trigger": trigger, "dry_run": dry_run})
        try:
            for name in STAGES:
                began = time.perf_counter()
                stage_report = StageReport(name=name, status="planned" if dry_run else "done")
                report.stages.append(stage_report)
                await _RUN[name](self._tools, context, stage_report, began)
        except asyncio.CancelledError:
            if report.stages:  # what it committed stays; the next run completes the stage
                report.stages[-1].status = "skipped"
                report.stages[-1].reason = "the daemon stopped while it ran; the next run completes it"
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

    # -- the daily schedule ----------------------------------------------------------------
    async def start(self) -> None:
        """Mark runs a killed process left 'running' as interrupted; start the daily schedule.

        With several daemons on one PostgreSQL, a run left 'running' may be another daemon's, under
        way: it is only marked when no daemon holds the lifecycle lock.
        """
        async with self._db.exclusive("lifecycle") as held:
            interrupted = await self._db.write(lifecycle_sql.interrupt_running) if held else 0
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
        tasks = [*self._background, *([self._task] if self._task is not None else [])]
        ended = await asyncio.gather(
            *(join_or_cancel(task, timeout) for task in tasks), return_exceptions=True
        )
        if not all(result is True for result in ended):
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
                ran = await self._execute(
                    trigger="schedule", dry_run=False, user_id=None, record=True, unless_scheduled_since=slot
                )
                if ran is None:  # PostgreSQL: another daemon on the same database took tonight's slot
                    log.info("scheduled lifecycle run skipped: another daemon ran it")
            except LifecycleBusy:
                log.info("scheduled lifecycle run skipped: a run is under way (here or in another daemon)")
            except Exception:  # the schedule never dies: log, pause, go on
                log.exception("scheduled lifecycle run failed")
                await self._sleep(60)

    async def _scheduled_run_since(self, slot: datetime) -> bool:
        """Whether a scheduled run (not a dry run) started at or after ``slot``: with several daemons
        on one database each wakes for the same slot, and whoever starts first does it for all."""
        since = iso(slot)
        runs = await self._db.read(lambda conn: lifecycle_sql.recent_runs(conn, 20))
        return any(r.trigger == "schedule" and not r.dry_run and r.started_at >= since for r in runs)

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
