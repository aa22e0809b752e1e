"""Prometheus metrics of one app, in a registry of its own.

Not the process-global default registry: several apps in one process (the tests) must not clash.
Two kinds of numbers:

- observed as they happen: search latency (the HTTP handler times each search) and extraction
  latency (the ingest worker reports each job) — histograms;
- read at scrape time from :class:`~.stats.Stats` (memories, ingest queue, hardware, the GPU gate)
  by a collector that turns the one ``Stats`` it is handed into metric families, so a scrape costs
  one stats pass and nothing is kept in step in between.
"""

from __future__ import annotations

import platform
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
from prometheus_client import CollectorRegistry, Counter, Histogram, Info, ProcessCollector, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.exposition import CONTENT_TYPE_PLAIN_0_0_4

from .. import __version__
from ..models.hardware import MB
from .stats import Stats

CONTENT_TYPE = CONTENT_TYPE_PLAIN_0_0_4
SEARCH_MODES = ("hybrid", "fts", "vector")
# Search has a 200 ms budget; extraction takes seconds to minutes.
SEARCH_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.5, 1.0, 2.5, 5.0)
EXTRACTION_BUCKETS = (0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0, 600.0)


# Searches the dashboard's latency percentiles are taken over (histogram buckets are too coarse).
RECENT_SEARCHES = 1000


@dataclass(frozen=True)
class LatencyPercentiles:
    samples: int
    p50_ms: float | None
    p95_ms: float | None
    p99_ms: float | None


class Metrics:
    """The registry and the instruments the app feeds."""

    def __init__(self) -> None:
        self._recent_search_ms: deque[float] = deque(maxlen=RECENT_SEARCHES)
        self.registry = CollectorRegistry()
        self._search_seconds = Histogram(
            "memory_cortex_search_seconds",
            "POST /hybrid-search latency in the handler; its _count is the number of searches.",
            ["mode"],
            buckets=SEARCH_BUCKETS,
            registry=self.registry,
        )
        for mode in SEARCH_MODES:  # every series exists from the start, at zero
            self._search_seconds.labels(mode=mode)
        self._extraction_seconds = Histogram(
            "memory_cortex_extraction_seconds",
            "Extraction job latency (LLM + storing the facts), after any GPU deferral.",
            buckets=EXTRACTION_BUCKETS,
            registry=self.registry,
        )
        self._searches_without_vector = Counter(
            "memory_cortex_searches_without_vector",
            "Hybrid/vector searches whose query embedding failed or was too slow (FTS only).",
            registry=self.registry,
        )
        # memory_cortex_build_info{version, python} 1: which release a dashboard or alert is looking at.
        Info("memory_cortex_build", "The running release.", registry=self.registry).info(
            {"version": __version__, "python": platform.python_version()}
        )
        self._scrape = _StatsCollector()
        self.registry.register(self._scrape)
        ProcessCollector(registry=self.registry)  # process_cpu_seconds_total, resident memory…

    def observe_search(self, mode: str, seconds: float, *, vector_used: bool) -> None:
        """One search: its latency and whether the vector side took part (hybrid/vector modes)."""
        self._search_seconds.labels(mode=mode).observe(seconds)
        if mode == "hybrid":
            self._recent_search_ms.append(seconds * 1000)
        if mode != "fts" and not vector_used:
            self._searches_without_vector.inc()

    def recent_search_latency(self) -> LatencyPercentiles:
        """Exact percentiles of the last :data:`RECENT_SEARCHES` hybrid searches (the handler's time)."""
        if not self._recent_search_ms:
            return LatencyPercentiles(0, None, None, None)
        p50, p95, p99 = (round(float(v), 2) for v in np.percentile(self._recent_search_ms, [50, 95, 99]))
        return LatencyPercentiles(len(self._recent_search_ms), p50, p95, p99)

    def observe_extraction(self, seconds: float) -> None:
        self._extraction_seconds.observe(seconds)

    def render(self, stats: Stats) -> bytes:
        """The exposition text (format 0.0.4) with the scrape-time numbers taken from ``stats``."""
        # No await between handing the stats over and rendering: concurrent scrapes cannot mix.
        self._scrape.stats = stats
        try:
            return generate_latest(self.registry)
        finally:
            self._scrape.stats = None


class _StatsCollector:
    """Turns the ``Stats`` of the current scrape into metric families (nothing when there is none)."""

    def __init__(self) -> None:
        self.stats: Stats | None = None

    def collect(self) -> Iterator[Metric]:
        stats = self.stats
        if stats is None:
            return
        yield from self._store(stats)
        yield from self._ingest(stats)
        yield from self._hardware(stats)

    def _store(self, stats: Stats) -> Iterator[Metric]:
        memories = GaugeMetricFamily(
            "memory_cortex_memories", "Stored memories by state (live: searchable).", labels=["state"]
        )
        memories.add_metric(["live"], stats.counts.live)
        memories.add_metric(["superseded"], stats.counts.superseded)
        yield memories
        yield GaugeMetricFamily(
            "memory_cortex_memories_unembedded",
            "Memories without a vector of the live model (run the backfill).",
            value=stats.counts.unembedded + stats.counts.stale_embeddings,
        )

    def _ingest(self, stats: Stats) -> Iterator[Metric]:
        jobs = GaugeMetricFamily(
            "memory_cortex_ingest_jobs", "Extraction jobs in the ingest journal by status.", labels=["status"]
        )
        for status in ("pending", "running", "done", "failed"):
            jobs.add_metric([status], stats.ingest.get(status, 0))
        yield jobs
        gate = stats.scheduler
        yield GaugeMetricFamily(
            "memory_cortex_extraction_held",
            "1 while the GPU gate holds an extraction job back.",
            value=1 if gate.holding_job is not None else 0,
        )
        yield CounterMetricFamily(
            "memory_cortex_extraction_deferrals", "Jobs the GPU gate held back.", value=gate.deferred_jobs
        )
        yield CounterMetricFamily(
            "memory_cortex_extraction_deferred_seconds",
            "Time jobs spent held back by the GPU gate.",
            value=gate.deferred_seconds,
        )
        yield CounterMetricFamily(
            "memory_cortex_extraction_ran_anyway",
            "Jobs run after the maximum deferral although the GPU was still busy.",
            value=gate.ran_anyway,
        )

    def _hardware(self, stats: Stats) -> Iterator[Metric]:
        status = stats.hardware
        snapshot = status.snapshot
        yield GaugeMetricFamily(
            "memory_cortex_hardware_stale",
            "1 when the GPU numbers are not current (sensors down, no GPU, disabled).",
            value=1 if snapshot.stale else 0,
        )
        yield GaugeMetricFamily(
            "memory_cortex_hardware_poll_failures",
            "Consecutive failed GPU polls (0 when the last one worked).",
            value=status.consecutive_failures,
        )
        if status.age_s is not None:
            yield GaugeMetricFamily(
                "memory_cortex_hardware_age_seconds", "Age of the last GPU reading.", value=status.age_s
            )
        host = snapshot.host
        if host is not None:
            yield GaugeMetricFamily("memory_cortex_host_cpu_percent", "Host CPU use.", value=host.cpu_percent)
            yield GaugeMetricFamily(
                "memory_cortex_host_memory_used_bytes", "Host RAM in use.", value=host.ram_used_mb * MB
            )
            yield GaugeMetricFamily(
                "memory_cortex_host_memory_total_bytes", "Host RAM.", value=host.ram_total_mb * MB
            )
        if snapshot.stale:
            return  # an unknown value is an absent series, not a stale number
        labels = ["id", "gpu", "vendor"]  # gpu: the card's name
        load = GaugeMetricFamily("memory_cortex_gpu_load_percent", "GPU core load.", labels=labels)
        used = GaugeMetricFamily("memory_cortex_gpu_vram_used_bytes", "GPU memory in use.", labels=labels)
        total = GaugeMetricFamily("memory_cortex_gpu_vram_total_bytes", "GPU memory.", labels=labels)
        power = GaugeMetricFamily("memory_cortex_gpu_power_watts", "GPU package power.", labels=labels)
        temperature = GaugeMetricFamily(
            "memory_cortex_gpu_temperature_celsius",
            "GPU temperature (core = edge, hotspot = junction).",
            labels=[*labels, "sensor"],
        )
        for gpu in snapshot.gpus:
            names = [gpu.hardware_id, gpu.name, gpu.vendor]
            for family, value, scale in (
                (load, gpu.load_percent, 1),
                (used, gpu.vram_used_mb, MB),
                (total, gpu.vram_total_mb, MB),
                (power, gpu.power_w, 1),
            ):
                if value is not None:
                    family.add_metric(names, value * scale)
            for sensor, value in (("core", gpu.core_temp_c), ("hotspot", gpu.hotspot_temp_c)):
                if value is not None:
                    temperature.add_metric([*names, sensor], value)
        yield from (load, used, total, power, temperature)
