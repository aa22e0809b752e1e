"""The shared shutdown step of background workers."""

from __future__ import annotations

import asyncio

from memory_cortex.services.workers import join_or_cancel


async def test_a_task_that_ends_in_time_is_joined_not_cancelled() -> None:
    async def short() -> None:
        await asyncio.sleep(0.01)

    task = asyncio.create_task(short())
    assert await join_or_cancel(task, 5.0) is True
    assert task.done() and not task.cancelled()


async def test_a_task_past_its_time_is_cancelled_and_awaited() -> None:
    cleaned_up = asyncio.Event()

    async def endless() -> None:
        try:
            await asyncio.sleep(3600)
        finally:
            cleaned_up.set()

    task = asyncio.create_task(endless())
    await asyncio.sleep(0)
    assert await join_or_cancel(task, 0.05) is False
    assert task.cancelled() and cleaned_up.is_set()
