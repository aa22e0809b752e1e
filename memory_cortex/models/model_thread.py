"""The thread (or threads) that run an in-process model, with search queries ahead of everything else.

A torch model is not re-entrant, so one thread calls it; an ONNX Runtime session may be called by
several threads at once, so ``workers`` threads may share it (``embeddings.workers``). Two lanes
feed the threads: *queries* (a search waiting, with a budget of 150 ms) and *jobs* (loading,
document chunks for writes). Whenever a thread is free it takes the queries first, all those still
wanted up to ``query_batch_max`` in one model call, and only then the oldest job; a query therefore
waits for at most the jobs already running, never for a queue of writes. A third lane, *background*
(re-embedding stored rows), is taken only when the other two are empty: writes never wait behind it
for more than the call already running.

The thread hands results back with one ``call_soon_threadsafe`` per model call, the fewest trips
through a busy event loop there can be: under load every trip waits behind the other requests'
work, and those waits, not the model, were what made queries miss their budget (bench/RESULTS.md).
A query whose caller stopped waiting is marked abandoned and left out of the next batch.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np


@dataclass(eq=False)
class QueuedQuery:
    """One query in the query lane: its text, the future its vector arrives on, and whether its
    caller gave up (set from the event loop; read by the model thread, a plain flag)."""

    text: str
    future: asyncio.Future[np.ndarray]
    abandoned: bool = field(default=False)

    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        return self.future.get_loop()


@dataclass(eq=False)
class _Job:
    """A call for the model thread; ``abandoned`` once its caller cancelled (it is then skipped)."""

    call: Callable[[], Any]
    future: asyncio.Future[Any]
    abandoned: bool = field(default=False)

    def __post_init__(self) -> None:
        self.future.add_done_callback(self._cancelled)

    def _cancelled(self, future: asyncio.Future[Any]) -> None:
        self.abandoned = future.cancelled()


class ModelThread:
    """The model's threads. ``encode_queries`` turns a list of query texts into one vector each;
    with ``workers`` > 1 it and every job must be safe to run on several threads at once."""

    def __init__(
        self,
        name: str,
        encode_queries: Callable[[list[str]], np.ndarray],
        query_batch_max: int,
        workers: int = 1,
    ) -> None:
        if workers < 1:
            raise ValueError("a model needs at least one thread")
        self._loop = asyncio.get_running_loop()
        self._encode_queries = encode_queries
        self._query_batch_max = query_batch_max
        self._queries: deque[QueuedQuery] = deque()
        self._jobs: deque[_Job] = deque()
        self._background: deque[_Job] = deque()
        self._wake = threading.Condition()
        self._stopping = False
        self.workers = workers
        self._threads = [
            threading.Thread(target=self._work, name=name if index == 0 else f"{name}-{index}", daemon=True)
            for index in range(workers)
        ]
        for thread in self._threads:
            thread.start()

    def call(self, function: Callable[..., Any], *args: Any, background: bool = False) -> asyncio.Future[Any]:
        """``function(*args)`` on a model thread, after the queries waiting then (``background``:
        after every other job too, even one queued later); its result (or exception) on the
        returned future."""
        job = _Job(lambda: function(*args), asyncio.get_running_loop().create_future())
        with self._wake:
            if self._stopping:
                raise RuntimeError("the model thread is stopped")
            (self._background if background else self._jobs).append(job)
            self._wake.notify()
        return job.future

    def query(self, text: str) -> QueuedQuery:
        """Queue ``text`` in the query lane; its vector arrives on the returned entry's future."""
        entry = QueuedQuery(text, asyncio.get_running_loop().create_future())
        with self._wake:
            if self._stopping:
                raise RuntimeError("the model thread is stopped")
            self._queries.append(entry)
            self._wake.notify()
        return entry

    async def stop(self) -> None:
        """Finish what is queued, then end the threads."""
        with self._wake:
            self._stopping = True
            self._wake.notify_all()
        for thread in self._threads:
            await asyncio.to_thread(thread.join)

    def _work(self) -> None:
        while True:
            with self._wake:
                while not self._queries and not self._jobs and not self._background and not self._stopping:
                    self._wake.wait()
                batch = self._take_queries()
                job = None if batch else self._take_job()
                if not batch and job is None:
                    if self._stopping and not self._queries and not self._jobs and not self._background:
                        return
                    continue
            if batch:
                self._run_queries(batch)
            elif job is not None:
                self._run_job(job)

    def _take_job(self) -> _Job | None:
        for lane in (self._jobs, self._background):
            while lane:
                job = lane.popleft()
                if not job.abandoned:
                    return job
        return None

    def _take_queries(self) -> list[QueuedQuery]:
        batch: list[QueuedQuery] = []
        while self._queries and len(batch) < self._query_batch_max:
            entry = self._queries.popleft()
            if not entry.abandoned:
                batch.append(entry)
        return batch

    def _run_queries(self, batch: list[QueuedQuery]) -> None:
        try:
            vectors: Any = self._encode_queries([entry.text for entry in batch])
        except Exception as exc:  # every query of the batch gets it; the caller maps it
            vectors = exc
        # One hand-back per event loop (a daemon has one; a test suite may start several).
        loops: dict[asyncio.AbstractEventLoop, list[int]] = {}
        for index, entry in enumerate(batch):
            loops.setdefault(entry.loop, []).append(index)
        for loop, indexes in loops.items():
            picked = [batch[index] for index in indexes]
            part = vectors if isinstance(vectors, Exception) else vectors[indexes]
            _call_soon(loop, _deliver_queries, picked, part)

    def _run_job(self, job: _Job) -> None:
        try:
            outcome: Any = job.call()
        except Exception as exc:
            _call_soon(job.future.get_loop(), _settle, job.future, None, exc)
        else:
            _call_soon(job.future.get_loop(), _settle, job.future, outcome, None)


def _call_soon(loop: asyncio.AbstractEventLoop, callback: Callable[..., None], *args: Any) -> None:
    """``callback(*args)`` on ``loop``; nothing when that loop has closed (its caller is gone)."""
    with contextlib.suppress(RuntimeError):
        loop.call_soon_threadsafe(callback, *args)


def _deliver_queries(batch: Sequence[QueuedQuery], vectors: np.ndarray | Exception) -> None:
    for index, entry in enumerate(batch):
        if entry.future.done():
            continue
        if isinstance(vectors, Exception):
            entry.future.set_exception(vectors)
        else:
            entry.future.set_result(vectors[index])


def _settle(future: asyncio.Future[Any], result: Any, error: Exception | None) -> None:
    if future.done():
        return
    if error is not None:
        future.set_exception(error)
    else:
        future.set_result(result)
