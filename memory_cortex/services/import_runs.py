"""Workspace imports run in the background: ``POST /import`` starts one and answers at once.

Why: an import embeds and deduplicates every memory of a workspace, up to 5,000 per request, which
takes minutes on a small machine; a request held that long times out in clients and proxies, and a
retried POST would start a second import. So the import is logged (``store/imports.py``), run as a
task of the daemon, and followed by its id; the run goes on when the client goes away.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from collections.abc import Callable, Mapping
from typing import Any

from ..errors import ImportBusy, StoreUnavailable
from ..store import imports as imports_sql
from ..store.db import Database
from ..store.imports import ImportRun
from .mirror import ImportPlan, ImportSummary, MarkdownWorkspaces
from .workers import join_or_cancel

__all__ = ["ImportRun", "ImportRuns"]

log = logging.getLogger(__name__)

# How often a running import records how far it got (what GET /import/runs/{id} shows).
PROGRESS_EVERY_S = 0.5
# Tries to record an import's end before giving up (the store may be briefly busy or away).
CLOSE_TRIES = 3


class _Counted:
    """The import's progress (``mirror.Progress``), kept here and written out by the runner."""

    def __init__(self) -> None:
        self.total: Any = 0
        self.done = 0

    def update(self, n: float = 1) -> None:
        self.done += int(n)


class ImportRuns:
    """Starts imports in the background, logs how each goes, and answers where one stands.

    One import of a workspace (user and agent) runs at a time: a second would plan against the
    same missing texts and store them twice.

    Args:
        db: the store (the log of runs lives there, so any daemon on a shared store can answer).
        workspaces: what reads a workspace and writes its memories.
        on_finished: told each import's end, with its summary (None: it failed or was stopped,
            perhaps after writing some memories); the Markdown mirror syncs on it.
    """

    def __init__(
        self,
        db: Database,
        workspaces: MarkdownWorkspaces,
        on_finished: Callable[[ImportSummary | None], None] | None = None,
    ) -> None:
        self._db = db
        self._workspaces = workspaces
        self._on_finished = on_finished
        self._tasks: dict[int, asyncio.Task[None]] = {}  # this daemon's imports under way, by id
        self._stopping = False

    async def start(self) -> None:
        """Mark imports a killed daemon left running as interrupted (only those whose daemon is
        gone, when several daemons share the store)."""
        me = self._db.instance_id
        interrupted = await self._db.write(lambda conn: imports_sql.interrupt_abandoned(conn, me))
        if interrupted:
            log.warning("imports were interrupted by a stop; send them again", extra={"imports": interrupted})

    async def stop(self, timeout: float = 10.0) -> None:
        """Refuse new imports; give those under way ``timeout`` (together) to finish, then cancel
        them (each is marked interrupted; the memories written so far stay, a new import skips them)."""
        self._stopping = True
        while self._tasks:
            await asyncio.gather(
                *(join_or_cancel(task, timeout) for task in list(self._tasks.values())),
                return_exceptions=True,
            )

    async def begin(
        self, user_id: str, files: Mapping[str, str], *, agent_id: str | None, max_memories: int | None
    ) -> int:
        """Check the workspace (InvalidRequest at once when it is refused), log the import and
        start it; its id. ImportBusy while the same workspace is being imported."""
        if self._stopping:
            raise StoreUnavailable("the daemon is stopping; send the import again once it is back")
        plan = await asyncio.to_thread(
            self._workspaces.plan_import, user_id, files, max_memories=max_memories, agent_id=agent_id
        )
        me = self._db.instance_id

        def log_start(conn: Any) -> int:
            # In the write transaction that logs it: two requests cannot both see none running.
            running = imports_sql.running_for(conn, user_id, agent_id)
            if running is not None:
                imports_sql.interrupt_if_abandoned(conn, running, me)
                running = imports_sql.running_for(conn, user_id, agent_id)
            if running is not None:
                raise ImportBusy(
                    f"an import of this workspace is under way (import {running}); follow it at"
                    f" GET /import/runs/{running}",
                    running,
                )
            return imports_sql.start(conn, user_id, agent_id, me)

        run_id = await self._db.write(log_start)
        task = asyncio.create_task(self._run(run_id, plan), name=f"import-{run_id}")
        self._tasks[run_id] = task
        task.add_done_callback(lambda _: self._tasks.pop(run_id, None))
        log.info("import started", extra={"import": run_id, "memories": plan.memories})
        return run_id

    async def get(self, run_id: int) -> ImportRun | None:
        """One import as the store has it; one left running by a daemon that is gone is marked
        interrupted first (PostgreSQL: nobody else would until a daemon starts). A client polls
        this: an import this daemon runs, and any on SQLite (one daemon), is read and no more."""
        run = await self._db.read(lambda conn: imports_sql.by_id(conn, run_id))
        if run is None or run.status != "running" or run_id in self._tasks or self._db.instance_id == 0:
            return run
        me = self._db.instance_id
        await self._db.write(lambda conn: imports_sql.interrupt_if_abandoned(conn, run_id, me))
        return await self._db.read(lambda conn: imports_sql.by_id(conn, run_id))

    async def _run(self, run_id: int, plan: ImportPlan) -> None:
        progress = _Counted()
        work = asyncio.ensure_future(self._workspaces.run_import(plan, progress=progress))
        try:
            while True:
                await asyncio.wait({work}, timeout=PROGRESS_EVERY_S)
                if work.done():
                    break
                await self._record_progress(run_id, progress)
            summary = work.result()
        except asyncio.CancelledError:
            work.cancel()
            # A batch in flight ends (committed or rolled back) before the run is marked.
            await asyncio.gather(work, return_exceptions=True)
            await asyncio.shield(
                self._close(run_id, "interrupted", error=imports_sql.INTERRUPTED, progress=progress)
            )
            self._finished(None)
            raise
        except Exception as exc:
            log.exception("import failed", extra={"import": run_id})
            await self._close(run_id, "failed", error=f"{type(exc).__name__}: {exc}"[:500], progress=progress)
            self._finished(None)
            return
        await self._close(run_id, "done", result=dataclasses.asdict(summary), progress=progress)
        self._finished(summary)

    async def _record_progress(self, run_id: int, progress: _Counted) -> None:
        """Progress is only shown: a write that fails (the store busy a moment) is logged, and the
        import goes on."""
        done, total = progress.done, int(progress.total or 0)
        try:
            await self._db.write(lambda conn: imports_sql.record_progress(conn, run_id, done, total))
        except Exception:
            log.warning("could not record an import's progress", extra={"import": run_id}, exc_info=True)

    def _finished(self, summary: ImportSummary | None) -> None:
        if self._on_finished is None:
            return
        try:
            self._on_finished(summary)
        except Exception:
            log.exception("after-import hook failed")

    async def _close(
        self,
        run_id: int,
        status: str,
        *,
        result: dict[str, Any] | None = None,
        error: str | None = None,
        progress: _Counted,
    ) -> None:
        done, total = progress.done, int(progress.total or 0)

        def close(conn: Any) -> None:
            imports_sql.record_progress(conn, run_id, done, total)
            imports_sql.finish(conn, run_id, status=status, result=result, error=error)

        for attempt in range(1, CLOSE_TRIES + 1):
            try:
                await self._db.write(close)
                return
            except Exception:
                log.warning(
                    "could not record the end of an import",
                    extra={"import": run_id, "attempt": attempt},
                    exc_info=True,
                )
                if attempt < CLOSE_TRIES:
                    await asyncio.sleep(attempt)
        # Left running: the next start of this daemon (or a read from another, on PostgreSQL) marks it.
        log.error("the end of an import was not recorded", extra={"import": run_id, "status": status})
