"""Workspace imports run in the background: ``POST /import`` starts one and answers at once.

Why: an import embeds and deduplicates every memory of a workspace, up to 5,000 per request, which
takes minutes on a small machine; a request held that long times out in clients and proxies, and a
retried POST would start a second import. So the import is logged (``store/imports.py``), run as a
task of the daemon, and followed by its id; the run goes on when the client goes away.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
from collections.abc import Callable, Mapping
from typing import Any

from ..store import imports as imports_sql
from ..store.db import Database
from ..store.imports import ImportRun

__all__ = ["ImportRun", "ImportRuns"]
from .mirror import ImportPlan, ImportSummary, MarkdownWorkspaces
from .workers import join_or_cancel

log = logging.getLogger(__name__)

# How often a running import records how far it got (what GET /import/runs/{id} shows).
PROGRESS_EVERY_S = 0.5


class _Counted:
    """The import's progress (``mirror.Progress``), kept here and written out by the runner."""

    def __init__(self) -> None:
        self.total: Any = 0
        self.done = 0

    def update(self, n: float = 1) -> None:
        self.done += int(n)


class ImportRuns:
    """Starts imports in the background, logs how each goes, and answers where one stands.

    Args:
        db: the store (the log of runs lives there, so any daemon on a shared store can answer).
        workspaces: what reads a workspace and writes its memories.
        on_imported: told each finished import's summary (the Markdown mirror syncs on it).
    """

    def __init__(
        self,
        db: Database,
        workspaces: MarkdownWorkspaces,
        on_imported: Callable[[ImportSummary], None] | None = None,
    ) -> None:
        self._db = db
        self._workspaces = workspaces
        self._on_imported = on_imported
        self._tasks: set[asyncio.Task[None]] = set()

    async def start(self) -> None:
        """Mark imports a killed daemon left running as interrupted (only those whose daemon is
        gone, when several daemons share the store)."""
        me = self._db.instance_id
        interrupted = await self._db.write(lambda conn: imports_sql.interrupt_abandoned(conn, me))
        if interrupted:
            log.warning("imports were interrupted by a stop; send them again", extra={"imports": interrupted})

    async def stop(self, timeout: float = 10.0) -> None:
        """Give imports under way ``timeout`` to finish, then cancel them (each is marked
        interrupted; the memories written so far stay, and a new import skips them)."""
        for task in list(self._tasks):
            await join_or_cancel(task, timeout)

    async def begin(
        self, user_id: str, files: Mapping[str, str], *, agent_id: str | None, max_memories: int | None
    ) -> int:
        """Check the workspace (InvalidRequest at once when it is refused), log the import and
        start it; its id."""
        plan = await asyncio.to_thread(
            self._workspaces.plan_import, user_id, files, max_memories=max_memories, agent_id=agent_id
        )
        me = self._db.instance_id
        run_id = await self._db.write(lambda conn: imports_sql.start(conn, user_id, agent_id, me))
        task = asyncio.create_task(self._run(run_id, plan), name=f"import-{run_id}")
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        log.info("import started", extra={"import": run_id, "memories": plan.memories})
        return run_id

    async def get(self, run_id: int) -> ImportRun | None:
        return await self._db.read(lambda conn: imports_sql.by_id(conn, run_id))

    async def _run(self, run_id: int, plan: ImportPlan) -> None:
        progress = _Counted()
        work = asyncio.ensure_future(self._workspaces.run_import(plan, progress=progress))
        try:
            while not work.done():
                await asyncio.wait({work}, timeout=PROGRESS_EVERY_S)
                await self._db.write(
                    lambda conn, done=progress.done, total=int(progress.total or 0): (
                        imports_sql.record_progress(conn, run_id, done, total)
                    )
                )
            summary = work.result()
        except asyncio.CancelledError:
            work.cancel()
            with contextlib.suppress(Exception, asyncio.CancelledError):
                await asyncio.shield(
                    self._close(run_id, "interrupted", error="the daemon stopped while it ran")
                )
            raise
        except Exception as exc:
            work.cancel()  # a failed progress write must not leave the import running unlogged
            log.exception("import failed", extra={"import": run_id})
            await self._close(run_id, "failed", error=f"{type(exc).__name__}: {exc}"[:500])
            return
        await self._close(run_id, "done", result=dataclasses.asdict(summary), progress=progress)
        if self._on_imported is not None:
            self._on_imported(summary)

    async def _close(
        self,
        run_id: int,
        status: str,
        *,
        result: dict[str, Any] | None = None,
        error: str | None = None,
        progress: _Counted | None = None,
    ) -> None:
        def close(conn: Any) -> None:
            if progress is not None:
                imports_sql.record_progress(conn, run_id, progress.done, int(progress.total or 0))
            imports_sql.finish(conn, run_id, status=status, result=result, error=error)

        try:
            await self._db.write(close)
        except Exception:
            log.exception("could not record the end of an import", extra={"import": run_id})
