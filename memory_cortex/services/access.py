"""Access tracking: every memory a search, recall or context block returns is counted as read.

The counts feed the lifecycle (promotion, decay) and the optional multi-factor ranking. Bumping them
inside the request would put a write, and the single writer's queue, on the search path; instead a
request only adds ids to an in-memory tally, and this worker writes the tally in one transaction every
``flush_interval_s`` (or sooner when ``max_pending`` distinct ids wait). A crash loses at most the
last interval's counts, never a memory: access counts are a ranking signal, not data.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import Counter
from collections.abc import Iterable

from ..errors import StorageFull
from ..store import memories as memory_sql
from ..store.db import Database

log = logging.getLogger(__name__)


class AccessTracker:
    """Batches ``access_count``/``last_accessed`` bumps off the request path.

    Args:
        db: the store (writes go through its single writer).
        flush_interval_s: longest time a bump waits before it is written.
        max_pending: distinct ids that trigger an early flush (bounds the tally's memory).
    """

    def __init__(self, db: Database, flush_interval_s: float = 5.0, max_pending: int = 10_000) -> None:
        self._db = db
        self._flush_interval_s = flush_interval_s
        self._max_pending = max_pending
        self._pending: Counter[int] = Counter()
        self._wake = asyncio.Event()
        self._stop = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self.flushed = 0

    def record(self, memory_ids: Iterable[int]) -> None:
        """Count one read of each memory (cheap: no I/O; safe to call from a handler)."""
        self._pending.update(memory_ids)
        if len(self._pending) >= self._max_pending:
            self._wake.set()

    async def start(self) -> None:
        self._task = asyncio.create_task(self._run(), name="access-tracker")

    async def stop(self) -> None:
        """Stop the worker and write what is still pending (the final drain)."""
        self._stop.set()
        self._wake.set()
        if self._task is not None:
            await asyncio.wait_for(self._task, timeout=10)
        await self.flush()

    async def flush(self) -> int:
        """Write the pending bumps now; returns the memories updated."""
        if not self._pending:
            return 0
        batch, self._pending = self._pending, Counter()
        try:
            updated = await self._db.write(lambda conn: memory_sql.bump_access(conn, batch))
        except Exception:
            # Put them back: the next flush tries again (counts are merged, not lost).
            self._pending.update(batch)
            raise
        self.flushed += updated
        return updated

    async def _run(self) -> None:
        while not self._stop.is_set():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), timeout=self._flush_interval_s)
            self._wake.clear()
            try:
                await self.flush()
            except StorageFull:  # told once by the store; the tally waits for room
                pass
            except Exception:  # the worker never dies; the tally waits for the next round
                log.exception("access counts not written")
