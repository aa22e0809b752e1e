"""The event loop's lag: how late the loop runs a wake-up it was asked to run on time.

Every ``interval_s`` the probe sleeps and, on waking, reports how long after its due time it ran.
Whatever held the loop meanwhile (a handler's CPU work, a lock waited for on the loop) shows up
as lag; work on other threads does not, except through the GIL. The numbers go to
``memory_cortex_event_loop_lag_seconds`` (``server.loop_probe_interval_s``; 0 = no probe).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable


class LoopLagProbe:
    """Wakes every ``interval_s`` on the running loop and hands each wake-up's lateness (seconds,
    never negative) to ``observe``."""

    def __init__(self, interval_s: float, observe: Callable[[float], None]) -> None:
        if interval_s <= 0:
            raise ValueError("the probe's interval must be positive")
        self._interval_s = interval_s
        self._observe = observe
        self._task: asyncio.Task[None] | None = None

    async def start(self) -> None:
        """Begin probing on the running loop."""
        self._task = asyncio.create_task(self._run(), name="loop-lag-probe")

    async def stop(self) -> None:
        """Stop probing (idempotent)."""
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None

    async def _run(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            due = loop.time() + self._interval_s
            await asyncio.sleep(self._interval_s)
            self._observe(max(loop.time() - due, 0.0))
