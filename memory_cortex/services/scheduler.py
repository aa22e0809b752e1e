"""The GPU-aware gate of the extraction worker: do not pile work on a card that is already busy.

The daemon shares one Radeon with the rest of the home lab. Before each extraction job the worker
awaits this gate (``IngestService(gate=...)``). It holds the job while the watched GPU is busy:

- its load has been at or above ``busy_load_percent`` for ``busy_window_s`` (every poll in the
  window, so one spike is not "busy"), or
- it has less than ``min_free_vram_mb`` VRAM free (when that check is on),

re-checking every ``recheck_s``, for at most ``max_deferral_s``; then the job runs anyway, so
extraction can be slowed but never starved. Unknown or stale metrics (no sensors, LHM down) never
hold a job: the gate only acts on numbers it has. Each deferral is recorded with its reason.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import deque
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from ..config import HardwareConfig
from ..store.ingest import IngestJob
from .hardware import HardwareSnapshot

log = logging.getLogger(__name__)


class SnapshotSource(Protocol):
    """Where the gate reads the hardware (the :class:`~.hardware.HardwareMonitor`)."""

    def current(self) -> HardwareSnapshot:
        """The latest snapshot, stale when it is too old."""

    def history(self) -> Sequence[HardwareSnapshot]:
        """Recent snapshots, oldest first."""


@dataclass(frozen=True)
class Deferral:
    """One job the gate held back.

    Attributes:
        job_id: the ingest job.
        reason: why it was held (the first busy reason seen).
        waited_s: how long it was held.
        ran_anyway: True when ``max_deferral_s`` ran out while the GPU was still busy.
        finished_at: unix time the job was let go.
    """

    job_id: int
    reason: str
    waited_s: float
    ran_anyway: bool
    finished_at: float


@dataclass(frozen=True)
class SchedulerState:
    """For /stats and /metrics."""

    busy_reason: str | None
    holding_job: int | None
    holding_since: float | None
    deferred_jobs: int
    ran_anyway: int
    deferred_seconds: float
    recent: tuple[Deferral, ...]


class GpuScheduler:
    """The gate: ``await scheduler(job)`` returns when the job may run.

    Args:
        hardware: the snapshots to judge by.
        config: thresholds, window, re-check period and maximum deferral.
        clock: wall clock in unix seconds, the clock of the snapshots (tests inject one).
        sleep: how to wait between checks (tests inject one that moves their clock).
        keep: how many recent deferrals /stats shows.
    """

    def __init__(
        self,
        hardware: SnapshotSource,
        config: HardwareConfig,
        *,
        clock: Callable[[], float] = time.time,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        keep: int = 20,
    ) -> None:
        self._hardware = hardware
        self._config = config
        self._clock = clock
        self._sleep = sleep
        self._recent: deque[Deferral] = deque(maxlen=keep)
        self._holding: tuple[int, float] | None = None
        self._deferred_jobs = 0
        self._ran_anyway = 0
        self._deferred_seconds = 0.0

    async def __call__(self, job: IngestJob) -> None:
        reason = self.busy_reason()
        if reason is None:
            return
        started = self._clock()
        self._holding = (job.id, started)
        log.info("extraction held: GPU busy", extra={"job": job.id, "reason": reason})
        try:
            current: str | None = reason
            while current is not None:
                remaining = self._config.max_deferral_s - (self._clock() - started)
                if remaining <= 0:
                    break
                await self._sleep(min(self._config.recheck_s, remaining))
                current = self.busy_reason()
        finally:
            self._holding = None
        waited = round(self._clock() - started, 3)
        deferral = Deferral(job.id, reason, waited, ran_anyway=current is not None, finished_at=self._clock())
        self._recent.append(deferral)
        self._deferred_jobs += 1
        self._ran_anyway += deferral.ran_anyway
        self._deferred_seconds += waited
        log.info(
            "extraction released" + (" (maximum deferral reached)" if deferral.ran_anyway else ""),
            extra={"job": job.id, "waited_s": waited, "reason": reason},
        )

    def busy_reason(self) -> str | None:
        """Why the GPU counts as busy now, or None (also when the metrics are unknown or stale)."""
        snapshot = self._hardware.current()
        gpu = snapshot.gpu
        if snapshot.stale or gpu is None:
            return None
        limit = self._config.min_free_vram_mb
        if limit > 0 and gpu.vram_free_mb is not None and gpu.vram_free_mb < limit:
            return f"{gpu.name}: {gpu.vram_free_mb:.0f} MB VRAM free < {limit:g} MB"
        threshold = self._config.busy_load_percent
        if gpu.load_percent is not None and gpu.load_percent >= threshold and self._busy_for_the_window():
            return (
                f"{gpu.name}: load {gpu.load_percent:g}% >= {threshold:g}%"
                f" for {self._config.busy_window_s:g}s"
            )
        return None

    def _busy_for_the_window(self) -> bool:
        """Every poll of the last ``busy_window_s`` saw the load at or above the threshold, and the
        polls reach back to the window's start (too short a history is not "sustained")."""
        window_start = self._clock() - self._config.busy_window_s
        for snapshot in reversed(self._hardware.history()):
            gpu = snapshot.gpu
            if snapshot.stale or gpu is None or gpu.load_percent is None:
                return False
            if gpu.load_percent < self._config.busy_load_percent:
                return False
            if snapshot.taken_at <= window_start:
                return True
        return False

    def state(self) -> SchedulerState:
        holding = self._holding
        return SchedulerState(
            busy_reason=self.busy_reason(),
            holding_job=holding[0] if holding else None,
            holding_since=holding[1] if holding else None,
            deferred_jobs=self._deferred_jobs,
            ran_anyway=self._ran_anyway,
            deferred_seconds=round(self._deferred_seconds, 3),
            recent=tuple(self._recent),
        )
