"""The Markdown mirror kept in step in the background: a debounced rewrite after ingest batches,
lifecycle runs and imports, at start and at shutdown."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable

from ..config import MarkdownConfig
from .mirror import ExportSummary, MarkdownWorkspaces
from .workers import join_or_cancel

log = logging.getLogger(__name__)


class MarkdownSync:
    """Keeps ``markdown.sync_dir`` in step with the store, in the background.

    The worker writes the mirror when it starts. Then ``request_sync()`` (after an ingest batch is
    stored, after a lifecycle run, after an import) only sets a flag; the worker rewrites the
    mirror once no request has come for
    ``sync_debounce_s`` (at most ``10 × sync_debounce_s`` after the first one), so a burst of
    writes costs one export. Worker recipe: a wake event, a stop flag, catch-and-log per sync
    (it never dies), a last sync of pending requests on stop, a timed join. With no
    ``sync_dir`` it does nothing at all.

    Args:
        workspaces: does the export.
        config: ``sync_dir`` and ``sync_debounce_s``.
    """

    MAX_DELAY_FACTOR = 10

    def __init__(
        self,
        workspaces: MarkdownWorkspaces,
        config: MarkdownConfig,
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._workspaces = workspaces
        self._directory = config.sync_dir
        self._debounce_s = config.sync_debounce_s
        self._clock = clock
        self._pending = False
        self._wake = asyncio.Event()
        self._stop = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self.syncs = 0
        self.last_error: str | None = None
        self.last_summary: ExportSummary | None = None

    @property
    def enabled(self) -> bool:
        return self._directory is not None

    @property
    def pending(self) -> bool:
        """A rewrite was asked for and waits for its debounce (or is under way)."""
        return self._pending

    def request_sync(self) -> None:
        """Ask for the mirror to be rewritten soon. Cheap; call it from the event loop."""
        if not self.enabled:
            return
        self._pending = True
        self._wake.set()

    async def start(self) -> None:
        """Start the worker; its first act is to bring the mirror up to date (no debounce: what
        changed while the daemon was down, or an API edit since, shows up at once)."""
        if not self.enabled:
            return
        self._task = asyncio.create_task(self._run(), name="markdown-sync")

    async def stop(self, timeout: float = 10.0) -> None:
        """Write what is pending (without waiting out the debounce), then stop; after ``timeout``
        the worker is cancelled (the next start writes the mirror again anyway)."""
        self._stop.set()
        self._wake.set()
        if self._task is None:
            return
        if not await join_or_cancel(self._task, timeout):
            log.warning("markdown sync stopped before it finished; the next start rewrites the mirror")

    async def _run(self) -> None:
        await self._sync()
        while True:
            await self._wake.wait()
            self._wake.clear()
            if self._pending and not self._stop.is_set():
                await self._quiet_period()
            if self._pending:
                self._pending = False
                await self._sync()
            if self._stop.is_set() and not self._pending:
                return

    async def _quiet_period(self) -> None:
        """Wait until no request came for ``sync_debounce_s`` (bounded; a stop ends it at once)."""
        deadline = self._clock() + self._debounce_s * self.MAX_DELAY_FACTOR
        while not self._stop.is_set():
            timeout = min(self._debounce_s, deadline - self._clock())
            if timeout <= 0:
                return
            try:
                await asyncio.wait_for(self._wake.wait(), timeout)
            except TimeoutError:
                return
            self._wake.clear()

    async def _sync(self) -> None:
        assert self._directory is not None
        try:
            summary = await self._workspaces.export(self._directory)
        except Exception as exc:  # never let the worker die: log, and try again at the next request
            self.last_error = f"{type(exc).__name__}: {exc}"[:500]
            log.exception("markdown sync failed", extra={"dir": str(self._directory)})
            return
        self.syncs += 1
        self.last_error = None
        self.last_summary = summary
        if summary.conflicts:
            log.warning(
                "markdown sync left files it did not write alone (and their users' mirrors)",
                extra={"dir": str(self._directory), "files": summary.conflicts[:20]},
            )
