"""The metric families read at scrape time from :class:`~.stats.Stats`: the store's counts, the
ingest queue, the hardware and the GPU gate (what /metrics shows beside the instruments of
:class:`~.metrics.Metrics`)."""

from __future__ import annotations

from collections.abc import Iterator

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric

from ..models.hardware import MB
from .stats import Stats


def stats_families(stats: Stats) -> Iterator[Metric]:
    """Every scrape-time family of ``stats``."""
    yield from _store(stats)
    yield from _ingest(stats)
    yield from _hardware(stats)


def _store(stats: Stats) -> Iterator[Metric]:
    memories = GaugeMetricFamily(
        "memory_cortex_memories", "Stored memories by state (live: searchable).", labels=["state"]
    )
    memories.add_metric(["live"], stats.counts.live)
    memories.add_metric(["superseded"], stats.counts.superseded)
    yield memories
    yield GaugeMetricFamily(
        "memory_cortex_memories_unembedded",
        "Memories without a vector of the live model (re-embedded in the background).",
        value=stats.counts.unembedded + stats.counts.stale_embeddings,
    )
    layers = GaugeMetricFamily(
        "memory_cortex_live_memories",
        "Live memories by layer (working, core, archive).",
        labels=["layer"],
    )
    for layer, count in sorted(stats.counts.per_layer.items()):
        layers.add_metric([layer], count)
    yield layers
    yield GaugeMetricFamily(
        "memory_cortex_database_bytes",
        "Size of the store: the SQLite file with its WAL, or the PostgreSQL database.",
        value=stats.db_bytes,
    )
    space = stats.space
    yield GaugeMetricFamily(
        "memory_cortex_store_full",
        "1 while the database refuses writes for lack of disk space (answered 507 disk_full).",
        value=1 if space.full else 0,
    )
    yield CounterMetricFamily(
        "memory_cortex_store_writes_refused",
        "Writes the database refused for lack of disk space.",
        value=space.refused_writes,
    )
    if space.free_bytes is not None:  # SQLite only: PostgreSQL's disk is the server's
        yield GaugeMetricFamily(
            "memory_cortex_store_free_bytes",
            "Free space on the filesystem that holds the SQLite file.",
            value=space.free_bytes,
        )


def _ingest(stats: Stats) -> Iterator[Metric]:
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


def _hardware(stats: Stats) -> Iterator[Metric]:
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
