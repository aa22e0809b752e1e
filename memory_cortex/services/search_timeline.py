"""Search latency per minute, kept in memory for the dashboard's overview chart (a leaf: the
metrics feed it, the overview reads it)."""

from __future__ import annotations

import math
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field


@dataclass
class _Minute:
    minute: int  # unix time // 60
    samples: list[float] = field(default_factory=list)
    count: int = 0


@dataclass(frozen=True)
class LatencyPoint:
    """One minute of searches: how many and their latency percentiles (ms)."""

    at: float  # unix seconds, the minute's start
    count: int
    p50_ms: float
    p95_ms: float


class SearchTimeline:
    """Search latency per minute for the last ``minutes`` (a ring: the oldest minute drops out).

    Kept in memory only: it starts empty when the daemon starts (the dashboard says so). Each
    minute keeps at most ``max_samples`` latencies for its percentiles (its count stays exact).

    Args:
        minutes: how many minutes the ring holds.
        max_samples: latencies kept per minute.
        clock: unix seconds (tests pass their own).
    """

    def __init__(
        self, minutes: int = 24 * 60, max_samples: int = 2000, clock: Callable[[], float] = time.time
    ) -> None:
        self.kept_minutes = minutes
        self._minutes: deque[_Minute] = deque(maxlen=minutes)
        self._max_samples = max_samples
        self._clock = clock

    def record(self, milliseconds: float) -> None:
        minute = int(self._clock() // 60)
        if not self._minutes or self._minutes[-1].minute != minute:
            self._minutes.append(_Minute(minute))
        current = self._minutes[-1]
        current.count += 1
        if len(current.samples) < self._max_samples:
            current.samples.append(milliseconds)

    def points(self, since: float) -> list[LatencyPoint]:
        """The minutes that had searches, since ``since`` (unix seconds), oldest first."""
        return [
            LatencyPoint(
                at=minute.minute * 60.0,
                count=minute.count,
                p50_ms=round(_percentile(minute.samples, 50), 2),
                p95_ms=round(_percentile(minute.samples, 95), 2),
            )
            for minute in list(self._minutes)
            if minute.minute * 60 >= since - 60 and minute.samples
        ]


def _percentile(values: list[float], percent: float) -> float:
    """Nearest-rank percentile (exact for the small samples of one minute)."""
    ordered = sorted(values)
    rank = max(1, math.ceil(percent / 100 * len(ordered)))
    return ordered[rank - 1]
