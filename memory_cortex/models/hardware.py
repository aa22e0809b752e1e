"""Where the GPU numbers come from, behind one small Protocol; and the host's own numbers.

GPU backends (a :class:`GpuSource` each):

- ``lhm`` (:mod:`memory_cortex.models.lhm`): LibreHardwareMonitor's ``data.json`` over HTTP, the way
  to see the Radeon from WSL2 (LHM runs on the Windows host).
- ``pyamdgpuinfo`` (:class:`AmdGpuInfoSource`): the amdgpu driver through the optional pyamdgpuinfo
  package, on native Linux only (the import fails, or no ``/dev/dri`` device is found, on WSL2).

Every backend failure is raised as :class:`HardwareUnavailable`, mapped once, inside the backend.
The host's CPU, RAM and this process's RSS come from psutil (:func:`read_host`): always there, cheap.
"""

from __future__ import annotations

import asyncio
import importlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import psutil

from ..errors import CortexError

MB = 1024 * 1024
# The lab's card is a Radeon: it is the one watched unless the config names another.
VENDOR_ORDER = ("amd", "nvidia", "intel")


class HardwareUnavailable(CortexError):
    """A hardware source did not answer, or answered something unusable; the reason says which."""

    code = "hardware_unavailable"
    status = 503


@dataclass(frozen=True)
class GpuReading:
    """One GPU's numbers at one moment; None where the source does not report the value.

    Attributes:
        name: the card's name, e.g. "AMD Radeon RX 7900 XTX".
        vendor: "amd", "nvidia", "intel" or "unknown".
        hardware_id: the source's id, e.g. LHM "/gpu-amd/0" or "amdgpu/0".
        load_percent: core (graphics) load, 0…100.
        vram_used_mb, vram_free_mb, vram_total_mb: dedicated memory in MiB (LHM's "MB").
        core_temp_c, hotspot_temp_c: edge/core and junction temperature in °C.
        power_w: package (board) power in watts.
    """

    name: str
    vendor: str
    hardware_id: str
    load_percent: float | None = None
    vram_used_mb: float | None = None
    vram_free_mb: float | None = None
    vram_total_mb: float | None = None
    core_temp_c: float | None = None
    hotspot_temp_c: float | None = None
    power_w: float | None = None


@dataclass(frozen=True)
class HostReading:
    """The machine the daemon runs on (inside WSL2: the VM), from psutil."""

    cpu_percent: float
    ram_used_mb: float
    ram_total_mb: float
    process_rss_mb: float


class GpuSource(Protocol):
    """Anything that reads the GPUs."""

    name: str

    async def start(self) -> None:
        """Open the client or the device; raises :class:`HardwareUnavailable` if there is none."""

    async def close(self) -> None:
        """Release the client or the device."""

    async def read(self) -> list[GpuReading]:
        """Every GPU the source sees now; raises :class:`HardwareUnavailable` on any failure."""


def pick_gpu(gpus: Sequence[GpuReading], name_contains: str = "") -> GpuReading | None:
    """The GPU to watch: the first whose name contains ``name_contains`` (case-insensitive) if given;
    else AMD first, then NVIDIA, then Intel, the one with the most VRAM first (a discrete card
    before the iGPU of the same vendor), source order otherwise."""
    if name_contains:
        wanted = name_contains.casefold()
        return next((gpu for gpu in gpus if wanted in gpu.name.casefold()), None)

    def rank(gpu: GpuReading) -> tuple[int, float]:
        vendor = VENDOR_ORDER.index(gpu.vendor) if gpu.vendor in VENDOR_ORDER else len(VENDOR_ORDER)
        return vendor, -(gpu.vram_total_mb or 0.0)

    return min(gpus, key=rank, default=None)


def read_host(process: psutil.Process) -> HostReading:
    """CPU (since the previous call: prime it once), RAM and ``process``'s resident memory."""
    memory = psutil.virtual_memory()
    return HostReading(
        cpu_percent=float(psutil.cpu_percent(interval=None)),
        ram_used_mb=round((memory.total - memory.available) / MB, 1),
        ram_total_mb=round(memory.total / MB, 1),
        process_rss_mb=round(process.memory_info().rss / MB, 1),
    )


class AmdGpuInfoSource:
    """The amdgpu driver through pyamdgpuinfo (optional: ``pip install pyamdgpuinfo``).

    Args:
        module: the pyamdgpuinfo module or a stand-in with the same two functions (tests); None
            imports the real one at :meth:`start`.
    """

    name = "pyamdgpuinfo"

    def __init__(self, module: Any | None = None) -> None:
        self._module = module
        self._devices: list[Any] = []

    async def start(self) -> None:
        module = self._module
        if module is None:
            try:
                module = importlib.import_module("pyamdgpuinfo")
            except ImportError as exc:
                raise HardwareUnavailable("pyamdgpuinfo is not installed") from exc
        try:
            count = module.detect_gpus()
            self._devices = [module.get_gpu(index) for index in range(count)]
        except (OSError, RuntimeError) as exc:  # no /dev/dri (WSL2, containers), no amdgpu device
            raise HardwareUnavailable(f"no amdgpu device: {exc}") from exc
        if not self._devices:
            raise HardwareUnavailable("no amdgpu device")

    async def close(self) -> None:
        self._devices = []

    async def read(self) -> list[GpuReading]:
        if not self._devices:
            raise HardwareUnavailable("pyamdgpuinfo not started")
        # ioctls into the driver: quick, but blocking calls all the same, so off the event loop.
        return await asyncio.to_thread(lambda: [self._read_one(device) for device in self._devices])

    @staticmethod
    def _read_one(device: Any) -> GpuReading:
        def query(method: str) -> float | None:
            try:
                return float(getattr(device, method)())
            except (RuntimeError, OSError, AttributeError):  # unsupported sensor on this card/driver
                return None

        vram_bytes = (getattr(device, "memory_info", None) or {}).get("vram_size")
        used_bytes = query("query_vram_usage")
        total = round(vram_bytes / MB, 1) if vram_bytes else None
        used = round(used_bytes / MB, 1) if used_bytes is not None else None
        load = query("query_load")
        return GpuReading(
            name=getattr(device, "name", None) or "AMD GPU",
            vendor="amd",
            hardware_id=f"amdgpu/{getattr(device, 'gpu_id', 0)}",
            load_percent=round(load * 100, 1) if load is not None else None,
            vram_used_mb=used,
            vram_free_mb=round(total - used, 1) if total is not None and used is not None else None,
            vram_total_mb=total,
            core_temp_c=query("query_temperature"),
            power_w=query("query_power"),
        )
