"""The loop-lag probe: a loop held by blocking work shows up as lag, a free loop does not."""

from __future__ import annotations

import asyncio
import time

import pytest

from memory_cortex.services.loop_lag import LoopLagProbe


async def test_a_held_loop_is_seen_as_lag_and_stop_ends_the_probe() -> None:
    seen: list[float] = []
    probe = LoopLagProbe(0.01, seen.append)
    await probe.start()
    await asyncio.sleep(0.05)
    time.sleep(0.2)  # noqa: ASYNC251 - holds the loop, as CPU work in a handler would
    await asyncio.sleep(0.05)
    await probe.stop()
    assert max(seen) >= 0.15, seen
    assert min(seen) >= 0.0
    count = len(seen)
    await asyncio.sleep(0.05)
    assert len(seen) == count  # stopped: nothing more observed
    await probe.stop()  # idempotent


def test_an_interval_of_zero_is_refused() -> None:
    with pytest.raises(ValueError, match="positive"):
        LoopLagProbe(0, lambda _: None)
