"""The model thread's lanes: queries first, then jobs, and background jobs only when nothing else waits."""

from __future__ import annotations

import asyncio
import threading

import numpy as np

from memory_cortex.models.model_thread import ModelThread


async def test_a_background_job_waits_for_every_job_and_query_even_those_queued_after_it() -> None:
    ran: list[str] = []
    release = threading.Event()

    def encode(texts: list[str]) -> np.ndarray:
        ran.extend(texts)
        return np.zeros((len(texts), 2), dtype=np.float32)

    thread = ModelThread("test-model", encode, query_batch_max=4)
    try:
        busy = thread.call(release.wait)  # holds the only thread while the lanes fill
        background = [thread.call(ran.append, f"background {i}", background=True) for i in range(2)]
        job = thread.call(ran.append, "job")
        query = thread.query("query")
        release.set()
        await asyncio.gather(busy, job, query.future, *background)
    finally:
        await thread.stop()
    assert ran == ["query", "job", "background 0", "background 1"]


async def test_a_cancelled_background_job_is_skipped() -> None:
    ran: list[str] = []
    release = threading.Event()
    thread = ModelThread("test-model", lambda texts: np.zeros((len(texts), 2)), query_batch_max=4)
    try:
        busy = thread.call(release.wait)
        dropped = thread.call(ran.append, "dropped", background=True)
        kept = thread.call(ran.append, "kept", background=True)
        dropped.cancel()
        await asyncio.sleep(0)  # the cancellation's callback marks the job abandoned
        release.set()
        await asyncio.gather(busy, kept)
    finally:
        await thread.stop()
    assert ran == ["kept"]
