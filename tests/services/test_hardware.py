"""Hardware: the LHM parser against real data.json files, the poller against a loopback LHM
(stale, back-off, recovery, quiet logs), pyamdgpuinfo mapping, and WSL2 host detection."""

from __future__ import annotations

import asyncio
import copy
import logging
import socket
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from memory_cortex.config import HardwareConfig
from memory_cortex.models.hardware import AmdGpuInfoSource, GpuReading, HardwareUnavailable, pick_gpu
from memory_cortex.models.lhm import LhmSource, parse_lhm, parse_value
from memory_cortex.services.hardware import (
    HardwareMonitor,
    default_gateway,
    is_wsl,
    resolve_lhm_host,
    windows_nameserver,
)
from tests.fakes import FakeClock, ScriptedGpuSource
from tests.helpers import LhmServer, lhm_fixture, with_sensor_value

RX_7900_XTX = GpuReading(
    name="AMD Radeon RX 7900 XTX",
    vendor="amd",
    hardware_id="/gpu-amd/0",
    load_percent=97.0,
    vram_used_mb=18234.0,
    vram_free_mb=6262.0,
    vram_total_mb=24496.0,
    core_temp_c=58.0,
    hotspot_temp_c=78.0,
    power_w=212.4,
)


# -- the parser ----------------------------------------------------------------------------
def test_amd_fixture_gives_the_numbers_written_in_the_file() -> None:
    discrete, integrated = parse_lhm(lhm_fixture("data-amd-SYNTHETIC.json"))
    assert discrete == RX_7900_XTX
    # The iGPU has no hot spot and only SoC power ("GPU SoC"), which is not package power.
    assert integrated == GpuReading(
        name="AMD Radeon(TM) Graphics",
        vendor="amd",
        hardware_id="/gpu-amd/1",
        load_percent=2.0,
        vram_used_mb=412.0,
        vram_free_mb=100.0,
        vram_total_mb=512.0,
        core_temp_c=45.0,
        hotspot_temp_c=None,
        power_w=None,
    )


@pytest.mark.parametrize(
    ("name", "hardware_id"),
    [("data-nvidia-legacy.json", "/gpu-nvidia/0"), ("data-nvidia-0.9.7.json", "/gpu-nvidia/test/0")],
)
def test_nvidia_decimal_comma_files_legacy_and_097(name: str, hardware_id: str) -> None:
    """German locale ("10,9 W"); legacy has no HardwareId (found by SensorId), 0.9.7 has one."""
    (gpu,) = parse_lhm(lhm_fixture(name))
    assert gpu == GpuReading(
        name="NVIDIA GeForce RTX 4080 SUPER",
        vendor="nvidia",
        hardware_id=hardware_id,
        load_percent=0.0,
        vram_used_mb=577.0,
        vram_free_mb=15798.0,
        vram_total_mb=16376.0,
        core_temp_c=27.0,
        hotspot_temp_c=35.3,
        power_w=10.9,
    )


def test_memory_sensors_are_matched_by_name_not_by_index() -> None:
    """NVIDIA's smalldata/0 is Free, AMD's is Used: swapping the ids changes nothing."""
    document = lhm_fixture("data-nvidia-legacy.json")
    (gpu,) = parse_lhm(document)
    shuffled = copy.deepcopy(document)
    gpu_node = shuffled["Children"][0]["Children"][2]
    data_group = next(group for group in gpu_node["Children"] if group["Text"] == "Data")
    data_group["Children"].reverse()
    assert parse_lhm(shuffled) == [gpu]
    assert (gpu.vram_used_mb, gpu.vram_free_mb) == (577.0, 15798.0)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("45.0 °C", (45.0, "°C")),
        ("1234 MB", (1234.0, "MB")),
        ("12,3 %", (12.3, "%")),
        ("85.2 W", (85.2, "W")),
        ("15797,0 MB", (15797.0, "MB")),
        ("1.234,5 MB", (1234.5, "MB")),
        ("-1.000", (-1.0, "")),
        ("50,0 KB/s", (50.0, "KB/s")),
        ("NaN %", (None, "")),
        ("-", (None, "")),
        ("", (None, "")),
        ("0:12:34", (None, "")),  # a time span is not the number 0
        ("test_should_not_be_relevant", (None, "")),
        (None, (None, "")),
        (True, (None, "")),
        (12, (12.0, "")),
    ],
)
def test_value_strings_as_lhm_writes_them(text: Any, expected: tuple[float | None, str]) -> None:
    assert parse_value(text) == expected


def test_missing_sensors_are_none_and_free_memory_is_derived() -> None:
    document = lhm_fixture("data-amd-SYNTHETIC.json")
    gpu_node = document["Children"][0]["Children"][0]
    gpu_node["Children"] = [group for group in gpu_node["Children"] if group["Text"] in {"Data", "Load"}]
    data = next(group for group in gpu_node["Children"] if group["Text"] == "Data")
    data["Children"] = [s for s in data["Children"] if s["Text"] != "GPU Memory Free"]
    gpu = parse_lhm(document)[0]
    assert (gpu.load_percent, gpu.vram_used_mb, gpu.vram_total_mb) == (97.0, 18234.0, 24496.0)
    assert gpu.vram_free_mb == 24496.0 - 18234.0
    assert (gpu.core_temp_c, gpu.hotspot_temp_c, gpu.power_w) == (None, None, None)


def test_newer_fields_are_tolerated_and_raw_value_backs_an_unreadable_string() -> None:
    document = with_sensor_value(lhm_fixture("data-amd-SYNTHETIC.json"), "/gpu-amd/0/load/0", "-")
    gpu_node = document["Children"][0]["Children"][0]
    gpu_node["Children"][4]["Children"][0]["RawValue"] = 88.5  # "Load" / "GPU Core"
    gpu_node["SomeFutureField"] = {"nested": [1, 2]}
    gpu_node["Children"][0]["Children"][0]["Unit"] = "V"
    assert parse_lhm(document)[0].load_percent == 88.5


def test_documents_without_gpus_or_without_a_tree() -> None:
    document = lhm_fixture("data-nvidia-legacy.json")
    document["Children"][0]["Children"] = document["Children"][0]["Children"][:2]  # board and CPU
    assert parse_lhm(document) == []
    for garbage in ([], "text", {"Text": "Sensor"}, {"Children": "x"}):
        with pytest.raises(HardwareUnavailable):
            parse_lhm(garbage)


def test_the_watched_gpu_is_the_radeon_first_unless_named() -> None:
    amd = parse_lhm(lhm_fixture("data-amd-SYNTHETIC.json"))
    nvidia = parse_lhm(lhm_fixture("data-nvidia-0.9.7.json"))
    assert pick_gpu(nvidia + amd) == RX_7900_XTX  # AMD first, the discrete card before the iGPU
    assert pick_gpu(amd, "radeon(tm)") == amd[1]
    assert pick_gpu(nvidia + amd, "rtx 4080") == nvidia[0]
    assert pick_gpu(amd, "no such card") is None
    assert pick_gpu([]) is None


# -- the poller against a loopback LibreHardwareMonitor ---------------------------------------
def monitor_for(lhm: LhmServer, **overrides: Any) -> HardwareMonitor:
    settings = {"interval_s": 15, "timeout_s": 0.3, "max_backoff_s": 120, **overrides}
    return HardwareMonitor(HardwareConfig(**lhm.hardware_config(**settings)))


async def test_poller_reads_the_fixture_from_a_loopback_lhm(lhm_server: LhmServer) -> None:
    monitor = monitor_for(lhm_server)
    await monitor.open()
    try:
        assert await monitor.poll_once() == 15
    finally:
        await monitor.stop()
    snapshot = monitor.current()
    assert (snapshot.source, snapshot.stale, snapshot.stale_reason) == ("lhm", False, None)
    assert snapshot.gpu == RX_7900_XTX and len(snapshot.gpus) == 2
    assert snapshot.host is not None and snapshot.host.process_rss_mb > 0
    assert monitor.status().endpoint == lhm_server.url


@pytest.mark.parametrize(
    ("mode", "reason"),
    [
        ("slow", "timeout after 0.3s"),
        ("500", "HTTP 500 from data.json"),
        ("garbage", "invalid JSON"),
        ("truncated", "invalid JSON"),
    ],
)
async def test_failures_mark_the_snapshot_stale_back_off_and_recover(
    lhm_server: LhmServer, mode: str, reason: str
) -> None:
    monitor = monitor_for(lhm_server)
    await monitor.open()
    try:
        await monitor.poll_once()
        lhm_server.mode = mode
        delays = [await monitor.poll_once() for _ in range(4)]
        snapshot = monitor.current()
        assert delays == [30, 60, 120, 120]  # doubling from the interval, capped at max_backoff_s
        assert snapshot.stale and reason in (snapshot.stale_reason or "")
        assert snapshot.gpu == RX_7900_XTX  # the last good numbers stay for display
        assert monitor.status().consecutive_failures == 4
        lhm_server.mode = "ok"
        assert await monitor.poll_once() == 15
    finally:
        await monitor.stop()
    recovered = monitor.current()
    assert not recovered.stale and recovered.stale_reason is None
    assert monitor.status().consecutive_failures == 0


async def test_lhm_not_listening_is_stale_not_a_crash() -> None:
    with socket.socket() as sock:  # a port nobody listens on: bound, then released
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    config = HardwareConfig(lhm_host="127.0.0.1", lhm_port=port, use_pyamdgpuinfo=False, timeout_s=1)
    monitor = HardwareMonitor(config)
    await monitor.open()
    try:
        assert await monitor.poll_once() == 30
    finally:
        await monitor.stop()
    snapshot = monitor.current()
    assert snapshot.stale and snapshot.gpu is None and "ConnectError" in (snapshot.stale_reason or "")


async def test_a_failing_lhm_logs_once_not_on_every_poll(
    lhm_server: LhmServer, caplog: pytest.LogCaptureFixture
) -> None:
    monitor = monitor_for(lhm_server)
    await monitor.open()
    caplog.set_level(logging.DEBUG, logger="memory_cortex.services.hardware")
    try:
        await monitor.poll_once()
        lhm_server.mode = "500"
        for _ in range(5):
            await monitor.poll_once()
        lhm_server.mode = "ok"
        await monitor.poll_once()
    finally:
        await monitor.stop()
    loud = [r.getMessage() for r in caplog.records if r.levelno >= logging.INFO]
    assert loud == ["hardware sensors reading", "hardware sensors unavailable", "hardware sensors reading"]


async def test_an_old_snapshot_counts_as_stale() -> None:
    clock = FakeClock()
    monitor = HardwareMonitor(
        HardwareConfig(interval_s=15, timeout_s=2), sources=[ScriptedGpuSource()], clock=clock
    )
    await monitor.open()
    await monitor.poll_once()
    assert not monitor.current().stale
    clock.now += 33  # > 2 intervals + timeout without a poll
    snapshot = monitor.current()
    assert snapshot.stale and snapshot.stale_reason == "no reading for 33s"
    assert monitor.status().age_s == 33


async def test_background_worker_polls_and_stops_promptly(lhm_server: LhmServer) -> None:
    monitor = monitor_for(lhm_server, interval_s=0.02)
    await monitor.start()
    try:
        for _ in range(500):
            if lhm_server.requests >= 3:
                break
            await asyncio.sleep(0.01)
        assert lhm_server.requests >= 3 and not monitor.current().stale
    finally:
        started = time.monotonic()
        await monitor.stop()
    assert time.monotonic() - started < 1


async def test_disabled_monitoring_polls_nothing_and_says_so(lhm_server: LhmServer) -> None:
    monitor = HardwareMonitor(HardwareConfig(**lhm_server.hardware_config(enabled=False)))
    await monitor.start()
    await monitor.stop()
    status = monitor.status()
    assert lhm_server.requests == 0 and status.source == "none" and not status.enabled
    assert status.snapshot.stale and status.snapshot.stale_reason == "hardware monitoring is disabled"


# -- pyamdgpuinfo ----------------------------------------------------------------------------
class _AmdDevice:
    """Stands in for pyamdgpuinfo.GPUInfo: a card whose driver has no temperature sensor."""

    def __init__(self) -> None:
        self.gpu_id = 0
        self.name = "AMD Radeon RX 7900 XTX"
        self.memory_info = {
            "vram_size": 24496 * 1024 * 1024,
            "gtt_size": None,
            "vram_cpu_accessible_size": None,
        }

    def query_load(self) -> float:
        return 0.42

    def query_vram_usage(self) -> int:
        return 18234 * 1024 * 1024

    def query_temperature(self) -> float:
        raise RuntimeError("sensor not supported")

    def query_power(self) -> int:
        return 212


async def test_pyamdgpuinfo_readings_are_mapped_to_the_same_snapshot_type() -> None:
    module = SimpleNamespace(detect_gpus=lambda: 1, get_gpu=lambda index: _AmdDevice())
    source = AmdGpuInfoSource(module)
    await source.start()
    (gpu,) = await source.read()
    assert gpu == GpuReading(
        name="AMD Radeon RX 7900 XTX",
        vendor="amd",
        hardware_id="amdgpu/0",
        load_percent=42.0,
        vram_used_mb=18234.0,
        vram_free_mb=6262.0,
        vram_total_mb=24496.0,
        core_temp_c=None,
        power_w=212.0,
    )


async def test_without_an_amdgpu_device_the_monitor_falls_back_to_lhm(lhm_server: LhmServer) -> None:
    def no_device() -> int:
        raise FileNotFoundError(2, "No such file or directory", "/dev/dri/")

    absent = AmdGpuInfoSource(SimpleNamespace(detect_gpus=no_device, get_gpu=None))
    with pytest.raises(HardwareUnavailable, match="no amdgpu device"):
        await absent.start()
    monitor = HardwareMonitor(
        HardwareConfig(**lhm_server.hardware_config()), sources=[absent, LhmSource(lhm_server.url, 1.0)]
    )
    await monitor.open()
    try:
        await monitor.poll_once()
    finally:
        await monitor.stop()
    assert monitor.current().source == "lhm" and monitor.current().gpu == RX_7900_XTX


async def test_the_real_pyamdgpuinfo_import_is_optional() -> None:
    source = AmdGpuInfoSource()
    try:
        await source.start()
    except HardwareUnavailable as exc:  # not installed, or no /dev/dri device (WSL2, CI)
        assert "pyamdgpuinfo" in str(exc) or "amdgpu" in str(exc)
    else:  # pragma: no cover - a native Linux box with a Radeon
        pytest.skip("a real amdgpu device is present")


# -- where LHM is ---------------------------------------------------------------------------
WSL_RELEASE = "5.15.167.4-microsoft-standard-WSL2"
WSL_ROUTE = (
    "Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT\n"
    "eth0\t00000000\t016011AC\t0003\t0\t0\t0\t00000000\t0\t0\t0\n"
    "eth0\t006011AC\t00000000\t0001\t0\t0\t0\t00F0FFFF\t0\t0\t0\n"
)
WSL_RESOLV = (
    "# This file was automatically generated by WSL. To stop automatic generation of this file,"
    " add the following entry to /etc/wsl.conf:\n# [network]\n# generateResolvConf = false\n"
    "nameserver 172.17.96.1\n"
)


def test_wsl_is_detected_from_the_kernel_release() -> None:
    assert is_wsl(WSL_RELEASE)
    assert is_wsl("Linux version 4.4.0-19041-Microsoft (Microsoft@Microsoft.com)")
    assert not is_wsl("6.8.0-45-generic")


def test_windows_host_from_route_table_and_resolv_conf_text() -> None:
    assert default_gateway(WSL_ROUTE) == "172.17.96.1"
    assert default_gateway(WSL_ROUTE.splitlines()[0] + "\n") is None
    assert windows_nameserver(WSL_RESOLV) == "172.17.96.1"
    # DNS tunnelling's stub and loopback resolvers are not the Windows host.
    assert windows_nameserver("nameserver 10.255.255.254\nnameserver 127.0.0.53\n") is None
    assert windows_nameserver("nameserver fe80::1\nnameserver 192.168.1.1\n") == "192.168.1.1"


def test_lhm_host_resolution(tmp_path: Path) -> None:
    def files(release: str, route: str, resolv: str) -> dict[str, Path]:
        paths = {
            "osrelease": tmp_path / "osrelease",
            "route_table": tmp_path / "route",
            "resolv_conf": tmp_path / "resolv",
        }
        for path, text in zip(paths.values(), (release, route, resolv), strict=True):
            path.write_text(text)
        return paths

    wsl = files(WSL_RELEASE, WSL_ROUTE, WSL_RESOLV)
    assert resolve_lhm_host("10.0.0.5", **wsl) == ("10.0.0.5", "config")
    assert resolve_lhm_host(None, **wsl) == ("172.17.96.1", "wsl2 default gateway")
    no_route = files(WSL_RELEASE, "", WSL_RESOLV)
    assert resolve_lhm_host(None, **no_route) == ("172.17.96.1", "wsl2 resolv.conf nameserver")
    native = files("6.8.0-45-generic", WSL_ROUTE, WSL_RESOLV)
    assert resolve_lhm_host(None, **native) == ("127.0.0.1", "default")
    missing = {name: tmp_path / "absent" for name in ("osrelease", "route_table", "resolv_conf")}
    assert resolve_lhm_host(None, **missing) == ("127.0.0.1", "default")


async def test_a_configured_gpu_name_that_matches_nothing_is_stale_not_another_card(
    lhm_server: LhmServer,
) -> None:
    monitor = monitor_for(lhm_server, gpu_name="RTX 9090")
    await monitor.open()
    try:
        await monitor.poll_once()
    finally:
        await monitor.stop()
    snapshot = monitor.current()
    assert snapshot.stale and snapshot.gpu is None and len(snapshot.gpus) == 2
    assert snapshot.stale_reason == "no GPU whose name contains 'RTX 9090'"


async def test_no_sensor_is_a_warning_only_where_one_is_configured(caplog: pytest.LogCaptureFixture) -> None:
    """Issue 35: plain Linux with no LibreHardwareMonitor named warned at every start (this machine
    is not WSL2, where the Windows host's would be expected)."""
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        dead_port = probe.getsockname()[1]
    caplog.set_level(logging.INFO, logger="memory_cortex.services.hardware")
    quiet = {"use_pyamdgpuinfo": False, "lhm_port": dead_port, "timeout_s": 0.5}
    for settings, warned in (({}, False), ({"lhm_host": "127.0.0.1"}, True)):
        caplog.clear()
        monitor = HardwareMonitor(HardwareConfig(**quiet, **settings))
        await monitor.open()
        await monitor.poll_once()
        await monitor.stop()
        warnings = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
        if warned:
            assert warnings == ["hardware sensors unavailable"], warnings
        else:
            assert warnings == []
            assert any("no GPU sensor answers on this machine" in r.getMessage() for r in caplog.records)
