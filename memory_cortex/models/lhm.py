"""LibreHardwareMonitor's ``data.json``: the sensor tree → :class:`GpuReading` per GPU.

The tree is ``root → computer → hardware → sensor group ("Load", "Data"…) → sensor``, with
sub-hardware nested under hardware. Value strings are formatted in the Windows locale of the LHM
host: ``"45.0 °C"``, ``"1234 MB"``, ``"12,3 %"`` (decimal comma), ``"NaN %"``, ``"-"``. Formats differ:

- legacy (≤ 0.9.4): no ``HardwareId``; a GPU is recognised by its sensors' ``SensorId``
  (``/gpu-nvidia/0/load/0``);
- 0.9.7: ``HardwareId`` on hardware nodes, numeric ``RawValue`` on some sensors, a root ``Version``.

Sensors are matched on ``Type`` plus ``Text``, never on their index: NVIDIA orders its memory
sensors Free, Used, Total where AMD has Used, Free, Total. Unknown keys, sensors and hardware are
ignored. The parsing functions are pure; :class:`LhmSource` is the one HTTP client.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from typing import Any

import httpx

from .hardware import GpuReading, HardwareUnavailable

# A number, then an optional unit that does not start like more of a number (so "0:12:34", a
# time span, is not read as 0).
_VALUE = re.compile(r"^\s*([-+]?\d[\d.,]*)\s*([^\d\s:.,+-]\S*)?\s*$")
_GPU_ID = re.compile(r"^/gpu-(amd|nvidia|intel)(?:/|$)", re.IGNORECASE)
_GPU_ICONS = {"ati.png": "amd", "amd.png": "amd", "nvidia.png": "nvidia", "intel.png": "intel"}
_TO_MB = {"kb": 1 / 1024, "mb": 1.0, "gb": 1024.0, "tb": 1024.0 * 1024}

# (Type, Text) candidates per field, best first; compared case-insensitively.
_LOAD = (("load", "gpu core"),)
_MEMORY_USED = (("smalldata", "gpu memory used"), ("data", "gpu memory used"))
_MEMORY_FREE = (("smalldata", "gpu memory free"), ("data", "gpu memory free"))
_MEMORY_TOTAL = (("smalldata", "gpu memory total"), ("data", "gpu memory total"))
_CORE_TEMP = (("temperature", "gpu core"),)
_HOTSPOT_TEMP = (("temperature", "gpu hot spot"),)
_POWER = (("power", "gpu package"), ("power", "gpu ppt"), ("power", "gpu power"))


def parse_number(text: str) -> float | None:
    """``"12,3"`` → 12.3, ``"1234.5"`` → 1234.5, ``"1.234,5"`` → 1234.5; None if not a finite number.

    LHM formats with a fixed number of decimals and no grouping, so a lone comma is the decimal
    separator; where both appear, the last one is.
    """
    if "," in text and "." in text:
        decimal = "," if text.rfind(",") > text.rfind(".") else "."
        grouping = "." if decimal == "," else ","
        text = text.replace(grouping, "").replace(decimal, ".")
    elif text.count(",") == 1:
        text = text.replace(",", ".")
    elif "," in text or text.count(".") > 1:
        text = text.replace(",", "").replace(".", "")
    try:
        value = float(text)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def parse_value(text: Any) -> tuple[float | None, str]:
    """A value string as LHM writes it → (number or None, unit).

    ``"45.0 °C"`` → (45.0, "°C"); ``"12,3 %"`` → (12.3, "%"); ``"-1.000"`` → (-1.0, "");
    ``"NaN %"``, ``"-"``, ``""``, ``"0:12:34"``, anything else → (None, "").
    """
    if isinstance(text, bool) or not isinstance(text, str | int | float):
        return None, ""
    if not isinstance(text, str):
        return (float(text), "") if math.isfinite(text) else (None, "")
    match = _VALUE.match(text)
    if match is None:
        return None, ""
    return parse_number(match.group(1)), match.group(2) or ""


def sensor_value(sensor: dict[str, Any]) -> tuple[float | None, str]:
    """The sensor's current value: its ``Value`` string, else (0.9.7) a numeric ``RawValue``."""
    value, unit = parse_value(sensor.get("Value"))
    if value is None:
        raw = sensor.get("RawValue")
        if isinstance(raw, int | float) and not isinstance(raw, bool) and math.isfinite(raw):
            return float(raw), unit
    return value, unit


def parse_lhm(document: Any) -> list[GpuReading]:
    """Every GPU hardware node of a ``data.json`` document, in document order.

    Raises:
        HardwareUnavailable: the document is not an LHM sensor tree.
    """
    if not isinstance(document, dict) or not isinstance(document.get("Children"), list):
        raise HardwareUnavailable("data.json is not a LibreHardwareMonitor sensor tree")
    gpus = []
    for node in _nodes(document):
        vendor = _gpu_vendor(node)
        if vendor is not None:
            gpus.append(_read_gpu(node, vendor))
    return gpus


def _children(node: dict[str, Any]) -> list[dict[str, Any]]:
    children = node.get("Children")
    return [child for child in children if isinstance(child, dict)] if isinstance(children, list) else []


def _nodes(root: dict[str, Any]) -> Iterator[dict[str, Any]]:
    stack = [root]
    while stack:
        node = stack.pop()
        yield node
        stack.extend(reversed(_children(node)))


def _sensors(hardware: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """The hardware's own sensors, one level down in its groups (not those of its sub-hardware).

    A group ("Load") has its sensors as children, not grandchildren: it is never taken for hardware.
    """
    for group in _children(hardware):
        for sensor in _children(group):
            if "SensorId" in sensor:
                yield sensor


def _gpu_vendor(node: dict[str, Any]) -> str | None:
    if "SensorId" in node:
        return None
    hardware_id = node.get("HardwareId")
    if isinstance(hardware_id, str):  # 0.9.7: the hardware says what it is
        match = _GPU_ID.match(hardware_id)
        return match.group(1).lower() if match else None
    for sensor in _sensors(node):  # legacy: its sensors say it
        match = _GPU_ID.match(str(sensor.get("SensorId", "")))
        return match.group(1).lower() if match else None
    icon = str(node.get("ImageURL", "")).rsplit("/", 1)[-1]
    return _GPU_ICONS.get(icon)  # a GPU without a single sensor


def _hardware_id(node: dict[str, Any], vendor: str) -> str:
    if isinstance(node.get("HardwareId"), str):
        return str(node["HardwareId"])
    for sensor in _sensors(node):
        parts = str(sensor.get("SensorId", "")).split("/")
        if len(parts) > 2:
            return "/".join(parts[:3])  # "/gpu-nvidia/0/load/0" → "/gpu-nvidia/0"
    return f"/gpu-{vendor}"


def _read_gpu(node: dict[str, Any], vendor: str) -> GpuReading:
    by_key: dict[tuple[str, str], dict[str, Any]] = {}
    for sensor in _sensors(node):
        key = (str(sensor.get("Type", "")).casefold(), str(sensor.get("Text", "")).strip().casefold())
        by_key.setdefault(key, sensor)  # the first of duplicated names wins

    def first(candidates: tuple[tuple[str, str], ...]) -> float | None:
        for key in candidates:
            if key in by_key:
                value, _ = sensor_value(by_key[key])
                if value is not None:
                    return value
        return None

    def megabytes(candidates: tuple[tuple[str, str], ...]) -> float | None:
        for key in candidates:
            if key in by_key:
                value, unit = sensor_value(by_key[key])
                if value is not None:
                    return value * _TO_MB.get(unit.casefold(), 1.0)
        return None

    used, free, total = megabytes(_MEMORY_USED), megabytes(_MEMORY_FREE), megabytes(_MEMORY_TOTAL)
    if free is None and used is not None and total is not None:
        free = total - used
    if used is None and free is not None and total is not None:
        used = total - free
    return GpuReading(
        name=str(node.get("Text", "")).strip() or f"{vendor} GPU",
        vendor=vendor,
        hardware_id=_hardware_id(node, vendor),
        load_percent=first(_LOAD),
        vram_used_mb=used,
        vram_free_mb=free,
        vram_total_mb=total,
        core_temp_c=first(_CORE_TEMP),
        hotspot_temp_c=first(_HOTSPOT_TEMP),
        power_w=first(_POWER),
    )


class LhmSource:
    """LibreHardwareMonitor's web server: one long-lived client, explicit timeouts, errors mapped here.

    Args:
        url: the full ``data.json`` URL, e.g. ``http://172.17.96.1:8085/data.json``.
        timeout_s: limit of one request (connect, read, whole).
        transport: an httpx transport to use instead of the network (tests).
    """

    name = "lhm"

    def __init__(self, url: str, timeout_s: float, transport: httpx.AsyncBaseTransport | None = None) -> None:
        self.url = url
        self._timeout_s = timeout_s
        self._transport = transport
        self._client: httpx.AsyncClient | None = None

    async def start(self) -> None:
        # trust_env=False: a LAN/loopback sensor server is never reached through the user's proxy,
        # and no module here reads the environment.
        self._client = httpx.AsyncClient(
            timeout=httpx.Timeout(self._timeout_s),
            transport=self._transport,
            trust_env=False,
            headers={"Accept": "application/json"},
        )

    async def close(self) -> None:
        if self._client is not None:
            await self._client.aclose()
            self._client = None

    async def read(self) -> list[GpuReading]:
        if self._client is None:
            raise HardwareUnavailable("LibreHardwareMonitor client not started")
        try:
            response = await self._client.get(self.url)
            response.raise_for_status()
            document = response.json()
        except httpx.TimeoutException as exc:
            raise HardwareUnavailable(f"timeout after {self._timeout_s:g}s") from exc
        except httpx.HTTPStatusError as exc:
            raise HardwareUnavailable(f"HTTP {exc.response.status_code} from data.json") from exc
        except httpx.HTTPError as exc:
            raise HardwareUnavailable(f"{type(exc).__name__}: {exc}") from exc
        except ValueError as exc:  # JSONDecodeError, UnicodeDecodeError: garbage or a cut-off body
            raise HardwareUnavailable(f"invalid JSON from data.json: {exc}"[:200]) from exc
        gpus = parse_lhm(document)
        if not gpus:
            raise HardwareUnavailable("no GPU in data.json")
        return gpus
