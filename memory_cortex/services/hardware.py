"""The hardware poller: one :class:`HardwareSnapshot` every ``interval_s``, whatever the source.

The GPU comes from pyamdgpuinfo on native Linux (when installed and an amdgpu card is found), else
from LibreHardwareMonitor on the Windows host (WSL2); CPU, RAM and our own RSS from psutil. Each
poll gives a snapshot; when the GPU source fails the snapshot is marked ``stale`` with the reason
(keeping the last good GPU numbers for display), and polling backs off, doubling up to
``max_backoff_s``. A warning is logged when the sensors go away and an info line when they come
back, never once per failed poll.

Worker recipe (as everywhere here): a stop event, catch-and-log per poll so the worker never dies,
a timed stop. A short history of snapshots lets the GPU gate ask "busy for the whole window?".
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import logging
import math
import socket
import struct
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import psutil

from ..config import HardwareConfig
from ..models.hardware import (
    AmdGpuInfoSource,
    GpuReading,
    GpuSource,
    HardwareUnavailable,
    HostReading,
    pick_gpu,
    read_host,
)
from ..models.lhm import LhmSource
from .workers import join_or_cancel

log = logging.getLogger(__name__)

# Said (at INFO) where no sensor is configured and none answers: nothing is missing there.
NO_SENSOR_HERE = (
    "no GPU sensor answers on this machine (none configured): extraction never waits for the GPU;"
    " hardware.lhm_host names a LibreHardwareMonitor"
)

# WSL's DNS-tunnelling stub resolver: in /etc/resolv.conf, but not the Windows host.
_WSL_DNS_STUB = ipaddress.ip_address("10.255.255.254")


@dataclass(frozen=True)
class ChartPoint:
    """What the dashboard draws of one poll; a GPU value is None while the GPU numbers are stale."""

    taken_at: float
    gpu_load_percent: float | None
    vram_used_mb: float | None
    vram_total_mb: float | None
    gpu_temp_c: float | None
    cpu_percent: float | None
    ram_used_mb: float | None
    process_rss_mb: float | None

    @classmethod
    def of(cls, snapshot: HardwareSnapshot) -> ChartPoint:
        gpu = snapshot.gpu if not snapshot.stale else None
        host = snapshot.host
        return cls(
            taken_at=snapshot.taken_at,
            gpu_load_percent=gpu.load_percent if gpu else None,
            vram_used_mb=gpu.vram_used_mb if gpu else None,
            vram_total_mb=gpu.vram_total_mb if gpu else None,
            gpu_temp_c=gpu.core_temp_c if gpu else None,
            cpu_percent=host.cpu_percent if host else None,
            ram_used_mb=host.ram_used_mb if host else None,
            process_rss_mb=host.process_rss_mb if host else None,
        )


@dataclass(frozen=True)
class HardwareSnapshot:
    """What the daemon knows about the hardware after one poll.

    Attributes:
        taken_at: unix time of the poll.
        source: "lhm", "pyamdgpuinfo" or "none".
        gpus: every GPU the source reported; while stale, the last good ones (for display only).
        gpu: the watched GPU among ``gpus`` (see ``hardware.gpu_name``).
        gpu_read_at: unix time the GPU numbers were read; None if never.
        host: CPU/RAM/RSS from psutil; None when monitoring is off.
        stale: True when the GPU numbers are not current: the reason says why. A stale snapshot
            never holds extraction back.
        stale_reason: "timeout after 2s", "HTTP 500 from data.json", "no GPU in data.json"…
    """

    taken_at: float
    source: str
    gpus: tuple[GpuReading, ...] = ()
    gpu: GpuReading | None = None
    gpu_read_at: float | None = None
    host: HostReading | None = None
    stale: bool = True
    stale_reason: str | None = None


@dataclass(frozen=True)
class HardwareStatus:
    """The poller's state for /stats: the latest snapshot, its age, where it came from."""

    enabled: bool
    source: str
    endpoint: str | None
    snapshot: HardwareSnapshot
    age_s: float | None
    consecutive_failures: int
    poll_interval_s: float


class HardwareMonitor:
    """Polls the sensors in the background and keeps the latest snapshot and a short history.

    Args:
        config: the ``hardware`` section.
        sources: GPU sources to try in order (the first that starts is used); None = pyamdgpuinfo
            (if ``use_pyamdgpuinfo``), then LibreHardwareMonitor at the configured or detected host.
        clock: wall clock in unix seconds (tests inject one).
    """

    def __init__(
        self,
        config: HardwareConfig,
        *,
        sources: Sequence[GpuSource] | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._config = config
        self._candidates = sources
        # Whether a GPU sensor is expected here (a configured or WSL2-detected LibreHardwareMonitor,
        # given sources): its absence is a warning then, and a plain fact on a Linux box without one.
        self._sensor_expected = sources is not None
        self._clock = clock
        self._source: GpuSource | None = None
        self._process = psutil.Process()
        self._stop = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._failures = 0
        self._delay = config.interval_s
        reason = "hardware monitoring is disabled" if not config.enabled else "no reading yet"
        self._latest = HardwareSnapshot(taken_at=clock(), source="none", stale_reason=reason)
        # The polls of the last busy_window_s plus the one just before it (see poll_once).
        self._history: deque[HardwareSnapshot] = deque(maxlen=4096)
        # The dashboard's charts: one small point per poll over chart_hours (~1,440 at 15 s for 6 h).
        self._chart: deque[ChartPoint] = deque(
            maxlen=max(1, math.ceil(config.chart_hours * 3600 / config.interval_s))
        )

    @property
    def source(self) -> str:
        return self._source.name if self._source is not None else "none"

    @property
    def stale_after_s(self) -> float:
        """A snapshot older than this is stale whatever it says (the poller is stuck or backing off)."""
        return 2 * self._config.interval_s + self._config.timeout_s

    # -- lifecycle -------------------------------------------------------------------------
    async def start(self) -> None:
        """Open a GPU source and start polling (the first poll runs at once, in the background)."""
        if not self._config.enabled:
            log.info("hardware monitoring disabled")
            return
        await self.open()
        self._task = asyncio.create_task(self._run(), name="hardware-poller")

    async def open(self) -> None:
        """Pick the first GPU source that starts; without one the GPU simply stays unknown."""
        self._source = await self._open_source()
        psutil.cpu_percent(interval=None)  # the first call only primes the CPU counter

    async def stop(self, timeout: float = 5.0) -> None:
        """Stop polling (a poll in flight may finish, up to ``timeout``) and close the source."""
        self._stop.set()
        if self._task is not None:
            await join_or_cancel(self._task, timeout)
        if self._source is not None:
            await self._source.close()

    async def _open_source(self) -> GpuSource | None:
        candidates = list(self._candidates) if self._candidates is not None else self._default_sources()
        for source in candidates:
            try:
                await source.start()
            except HardwareUnavailable as exc:
                log.info("hardware source not available", extra={"source": source.name, "reason": str(exc)})
                continue
            log.info(
                "hardware source", extra={"source": source.name, "endpoint": getattr(source, "url", None)}
            )
            return source
        if self._sensor_expected:
            log.warning("no hardware source could be started: GPU metrics stay unknown")
        else:
            log.info(NO_SENSOR_HERE)
        return None

    def _default_sources(self) -> list[GpuSource]:
        sources: list[GpuSource] = [AmdGpuInfoSource()] if self._config.use_pyamdgpuinfo else []
        host, how = resolve_lhm_host(self._config.lhm_host)
        self._sensor_expected = how != "default"  # configured, or the Windows host of WSL2
        log.info("LibreHardwareMonitor host", extra={"host": host, "from": how})
        url = f"http://{_url_host(host)}:{self._config.lhm_port}/data.json"
        sources.append(LhmSource(url, self._config.timeout_s))
        return sources

    async def _run(self) -> None:
        while not self._stop.is_set():
            delay = await self.poll_once()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stop.wait(), timeout=delay)

    # -- one poll --------------------------------------------------------------------------
    async def poll_once(self) -> float:
        """Read the sources once, keep the snapshot, return the seconds until the next poll.

        Never raises: a failure is a stale snapshot and a longer pause.
        """
        now = self._clock()
        host = self._read_host()
        previous = self._latest
        try:
            if self._source is None:
                raise HardwareUnavailable("no GPU source started")
            gpus = await self._source.read()
        except Exception as exc:
            reason = str(exc) if isinstance(exc, HardwareUnavailable) else f"{type(exc).__name__}: {exc}"
            self._failed(reason, unexpected=not isinstance(exc, HardwareUnavailable))
            snapshot = replace(
                previous, taken_at=now, source=self.source, host=host, stale=True, stale_reason=reason
            )
        else:
            self._succeeded(gpus)
            gpu = pick_gpu(gpus, self._config.gpu_name)
            snapshot = HardwareSnapshot(
                taken_at=now,
                source=self.source,
                gpus=tuple(gpus),
                gpu=gpu,
                gpu_read_at=now,
                host=host,
                stale=gpu is None,
                stale_reason=None if gpu is not None else self._no_gpu_reason(),
            )
        self._latest = snapshot
        self._history.append(snapshot)
        if self._config.chart_hours > 0:
            self._chart.append(ChartPoint.of(snapshot))
        # Keep the polls of the window and the newest one before it (it covers the window start).
        window_start = now - self._config.busy_window_s
        while len(self._history) > 1 and self._history[1].taken_at <= window_start:
            self._history.popleft()
        return self._delay

    def _no_gpu_reason(self) -> str:
        wanted = self._config.gpu_name
        return f"no GPU whose name contains {wanted!r}" if wanted else "the source reported no GPU"

    def _read_host(self) -> HostReading | None:
        try:
            return read_host(self._process)
        except (psutil.Error, OSError):
            log.debug("psutil reading failed", exc_info=True)
            return None

    def _failed(self, reason: str, *, unexpected: bool) -> None:
        self._failures += 1
        self._delay = min(self._config.max_backoff_s, self._config.interval_s * 2**self._failures)
        if self._failures == 1:  # log the change of state, not every failed poll
            extra = {"source": self.source, "reason": reason, "retry_in_s": self._delay}
            if unexpected:
                log.exception("hardware poll error", extra=extra)
            elif self._sensor_expected:
                log.warning("hardware sensors unavailable", extra=extra)
            else:
                log.info(NO_SENSOR_HERE, extra=extra)
        else:
            log.debug(
                "hardware sensors still unavailable", extra={"reason": reason, "failures": self._failures}
            )

    def _succeeded(self, gpus: list[GpuReading]) -> None:
        if self._failures or self._latest.gpu_read_at is None:
            log.info(
                "hardware sensors reading",
                extra={
                    "source": self.source,
                    "gpus": [gpu.name for gpu in gpus],
                    "after_failures": self._failures,
                },
            )
        self._failures = 0
        self._delay = self._config.interval_s

    # -- what the gate, /stats, /metrics and the dashboard read ------------------------------
    def chart(self, since: float) -> list[ChartPoint]:
        """The chart points taken at or after ``since`` (unix seconds), oldest first."""
        return [point for point in self._chart if point.taken_at >= since]

    def current(self) -> HardwareSnapshot:
        """The latest snapshot; stale if it is older than :attr:`stale_after_s`."""
        snapshot = self._latest
        if not snapshot.stale and self._clock() - snapshot.taken_at > self.stale_after_s:
            age = self._clock() - snapshot.taken_at
            return replace(snapshot, stale=True, stale_reason=f"no reading for {age:.0f}s")
        return snapshot

    def history(self) -> list[HardwareSnapshot]:
        """The polls of the last ``busy_window_s`` and the one before, oldest first."""
        return list(self._history)

    def status(self) -> HardwareStatus:
        snapshot = self.current()
        read_at = snapshot.gpu_read_at
        return HardwareStatus(
            enabled=self._config.enabled,
            source=self.source,
            endpoint=getattr(self._source, "url", None),
            snapshot=snapshot,
            age_s=round(self._clock() - read_at, 3) if read_at is not None else None,
            consecutive_failures=self._failures,
            poll_interval_s=self._delay,
        )


# -- where LibreHardwareMonitor is ---------------------------------------------------------
def resolve_lhm_host(
    configured: str | None,
    *,
    osrelease: Path = Path("/proc/sys/kernel/osrelease"),
    route_table: Path = Path("/proc/net/route"),
    resolv_conf: Path = Path("/etc/resolv.conf"),
) -> tuple[str, str]:
    """The LHM host and how it was found: the configured one; on WSL2 the Windows host; else loopback.

    On WSL2 (NAT networking) the Windows host is the default gateway, and usually also the
    nameserver in /etc/resolv.conf; the gateway is tried first because with DNS tunnelling the
    nameserver is a stub (10.255.255.254). In mirrored networking mode set ``lhm_host: 127.0.0.1``.
    """
    if configured:
        return configured, "config"
    if is_wsl(_read_text(osrelease)):
        gateway = default_gateway(_read_text(route_table))
        if gateway:
            return gateway, "wsl2 default gateway"
        nameserver = windows_nameserver(_read_text(resolv_conf))
        if nameserver:
            return nameserver, "wsl2 resolv.conf nameserver"
    return "127.0.0.1", "default"


def is_wsl(osrelease: str) -> bool:
    """``/proc/sys/kernel/osrelease`` (or /proc/version) of a WSL kernel names Microsoft."""
    return "microsoft" in osrelease.lower()


def default_gateway(route_table: str) -> str | None:
    """The IPv4 default gateway from the text of ``/proc/net/route`` (hex, little-endian)."""
    for line in route_table.splitlines()[1:]:
        fields = line.split()
        if len(fields) < 4 or fields[1] != "00000000":
            continue
        try:
            flags = int(fields[3], 16)
            gateway = socket.inet_ntoa(struct.pack("<I", int(fields[2], 16)))
        except (ValueError, struct.error):
            continue
        if flags & 0x1 and flags & 0x2 and gateway != "0.0.0.0":  # RTF_UP and RTF_GATEWAY
            return gateway
    return None


def windows_nameserver(resolv_conf: str) -> str | None:
    """The first nameserver of ``/etc/resolv.conf`` that can be the Windows host (IPv4, not
    loopback, not WSL's DNS-tunnelling stub)."""
    for line in resolv_conf.splitlines():
        fields = line.split()
        if len(fields) < 2 or fields[0] != "nameserver":
            continue
        try:
            address = ipaddress.ip_address(fields[1])
        except ValueError:
            continue
        if address.version == 4 and not address.is_loopback and address != _WSL_DNS_STUB:
            return str(address)
    return None


def _read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


def _url_host(host: str) -> str:
    """An IPv6 literal needs brackets in a URL."""
    return f"[{host}]" if ":" in host and not host.startswith("[") else host
