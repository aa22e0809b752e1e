"""What every background worker does at shutdown: a timed join, then cancellation."""

from __future__ import annotations

import asyncio
import contextlib


async def join_or_cancel(task: asyncio.Task[None], timeout: float) -> bool:
    """Wait up to ``timeout`` for ``task`` to end by itself; past that, cancel it and wait for the
    cancellation. Returns True when it ended in time (False: it was cut off mid-work).

    The wait is shielded so that running out of time does not cancel the task before the caller
    decides to; the task's own exception, if it raised one, propagates as ``wait_for`` gives it.
    """
    try:
        await asyncio.wait_for(asyncio.shield(task), timeout)
    except TimeoutError:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        return False
    return True
