"""The GPU gate: holds extraction while the card is busy (sustained load, low VRAM), never longer
than the maximum deferral, never on unknown or stale numbers, and records why."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest

from memory_cortex.config import HardwareConfig
from memory_cortex.services.hardware import HardwareMonitor
from memory_cortex.services.scheduler import GpuScheduler
from memory_cortex.store.ingest import IngestJob
from tests.fakes import FakeClock, ScriptedGpuSource
from tests.helpers import LhmServer, with_sensor_value


def job(job_id: int = 7) -> IngestJob:
    return IngestJob(
        id=job_id,
        session_key="u\x1fs",
        user_id="u",
        session_id="s",
        channel=None,
        messages=[],
        message_count=0,
        status="running",
        attempts=1,
        last_error=None,
        received_at="2026-01-01T00:00:00.000Z",
        due_at=0.0,
        started_at=None,
        finished_at=None,
        duration_ms=None,
        new_messages=None,
        facts_stored=None,
        method=None,
    )


class Rig:
    """A monitor on a scripted GPU and a gate, both on one fake clock; each sleep is one poll."""

    def __init__(self, **settings: Any) -> None:
        defaults = {"interval_s": 15, "busy_window_s": 60, "recheck_s": 15, "max_deferral_s": 600}
        self.config = HardwareConfig(**{**defaults, **settings})
        self.clock = FakeClock()
        self.gpu = ScriptedGpuSource(load=97.0)
        self.monitor = HardwareMonitor(self.config, sources=[self.gpu], clock=self.clock)
        self.gate = GpuScheduler(self.monitor, self.config, clock=self.clock, sleep=self.clock.sleep)
        self.clock.on_sleep = self.monitor.poll_once

    async def polls(self, *loads: float | None) -> None:
        """One poll per load, ``interval_s`` apart (the last one is "now")."""
        await self.monitor.open()
        for index, load in enumerate(loads):
            if index:
                self.clock.now += self.config.interval_s
            self.gpu.load = load
            await self.monitor.poll_once()


async def test_sustained_load_defers_until_the_load_drops() -> None:
    rig = Rig()
    await rig.polls(97, 97, 97, 97, 97)  # busy for the whole 60 s window
    reason = rig.gate.busy_reason()
    assert reason == "AMD Radeon RX 7900 XTX: load 97% >= 70% for 60s"

    async def cool_down_after_two_checks() -> None:
        if len(rig.clock.slept) == 2:
            rig.gpu.load = 12.0
        await rig.monitor.poll_once()

    rig.clock.on_sleep = cool_down_after_two_checks
    await rig.gate(job(7))
    assert rig.clock.slept == [15, 15]
    state = rig.gate.state()
    (deferral,) = state.recent
    assert (deferral.job_id, deferral.reason, deferral.waited_s, deferral.ran_anyway) == (
        7,
        reason,
        30,
        False,
    )
    assert (state.deferred_jobs, state.ran_anyway, state.deferred_seconds) == (1, 0, 30)
    assert state.holding_job is None and state.busy_reason is None


async def test_a_job_runs_anyway_after_the_maximum_deferral() -> None:
    rig = Rig(recheck_s=5, max_deferral_s=600)
    await rig.polls(97, 97, 97, 97, 97)
    await rig.gate(job(3))
    assert sum(rig.clock.slept) == 600 and max(rig.clock.slept) == 5
    (deferral,) = rig.gate.state().recent
    assert deferral.ran_anyway and deferral.waited_s == 600
    assert rig.gate.state().ran_anyway == 1
    # 120 polls later the history holds only the window (12 polls 5 s apart) and the one before.
    assert len(rig.monitor.history()) == 13


@pytest.mark.parametrize(
    "loads",
    [
        (97, 97, 20, 97, 97),  # a dip inside the window: not sustained
        (97, 97),  # only 15 s of history: not yet sustained
        (10, 10, 10, 10, 10),
        (97, 97, 97, 97, None),  # the load sensor vanished: unknown
    ],
)
async def test_no_wait_without_a_sustained_busy_window(loads: tuple[float | None, ...]) -> None:
    rig = Rig()
    await rig.polls(*loads)
    assert rig.gate.busy_reason() is None
    await rig.gate(job())
    assert rig.clock.slept == [] and rig.gate.state().deferred_jobs == 0


async def test_a_zero_window_makes_one_busy_poll_enough() -> None:
    rig = Rig(busy_window_s=0)
    await rig.polls(97)
    assert rig.gate.busy_reason() is not None


async def test_stale_or_unknown_metrics_never_hold_a_job() -> None:
    rig = Rig()
    await rig.polls(97, 97, 97, 97, 97)
    rig.gpu.down = "HTTP 500 from data.json"
    await rig.monitor.poll_once()  # the latest poll failed: stale
    assert rig.monitor.current().stale and rig.gate.busy_reason() is None
    rig.gpu.down = None
    await rig.polls(97, 97, 97, 97, 97)
    rig.clock.now += 60  # the poller stopped: the last reading is too old to trust
    assert rig.gate.busy_reason() is None
    await rig.gate(job())
    assert rig.clock.slept == []


async def test_disabled_monitoring_never_waits() -> None:
    config = HardwareConfig(enabled=False)
    monitor = HardwareMonitor(config)
    await monitor.start()
    gate = GpuScheduler(monitor, config)
    started = time.monotonic()
    await gate(job())
    assert time.monotonic() - started < 0.1 and gate.state().deferred_jobs == 0


async def test_too_little_free_vram_defers_at_once() -> None:
    rig = Rig(min_free_vram_mb=8000, max_deferral_s=30, recheck_s=10)
    await rig.polls(5)  # idle, but the other tenant holds the memory
    assert rig.gate.busy_reason() == "AMD Radeon RX 7900 XTX: 6262 MB VRAM free < 8000 MB"
    await rig.gate(job())
    assert rig.clock.slept == [10, 10, 10] and rig.gate.state().recent[0].ran_anyway


# -- real time, real poller, the busy fixture on a loopback LHM ------------------------------
async def test_busy_fixture_on_loopback_defers_and_runs_after_the_window(lhm_server: LhmServer) -> None:
    """RX 7900 XTX at 97 % (the AMD fixture): held to the maximum deferral while it stays busy,
    released early once the fixture turns idle."""
    config = HardwareConfig(
        **lhm_server.hardware_config(
            interval_s=0.02, timeout_s=1, busy_window_s=0.1, recheck_s=0.02, max_deferral_s=0.6
        )
    )
    monitor = HardwareMonitor(config)
    gate = GpuScheduler(monitor, config)
    await monitor.start()
    try:
        for _ in range(250):
            if gate.busy_reason() is not None:
                break
            await asyncio.sleep(0.02)
        assert "load 97% >= 70%" in (gate.busy_reason() or "")

        started = time.monotonic()
        await gate(job(1))
        assert 0.6 <= time.monotonic() - started < 2

        idle = with_sensor_value(lhm_server.document, "/gpu-amd/0/load/0", "3.0 %")
        asyncio.get_running_loop().call_later(0.15, setattr, lhm_server, "document", idle)
        started = time.monotonic()
        await gate(job(2))
        assert 0.15 <= time.monotonic() - started < 0.5
    finally:
        await monitor.stop()
    first, second = gate.state().recent
    assert (first.job_id, first.ran_anyway, second.job_id, second.ran_anyway) == (1, True, 2, False)
    assert "load 97%" in first.reason and "load 97%" in second.reason
