#!/usr/bin/env python3
"""What the hardware poller costs: CPU time per LibreHardwareMonitor poll, and per hour.

A loopback aiohttp server in a child process (so its CPU is not counted) serves the biggest
fixture, ``tests/fixtures/lhm/data-nvidia-0.9.7.json`` (copied from ../shared) (67 KB, 170 nodes); the real
:class:`HardwareMonitor` polls it ``--polls`` times back to back (HTTP GET through the long-lived
httpx client, JSON decode, tree walk, psutil host reading). CPU is this process's
``time.process_time()``; per hour assumes one poll every ``--interval`` seconds (15: 240 polls).
Between polls the worker only waits on an event: no CPU.

    python bench/hardware_poller.py [--polls 400] [--interval 15] [--fixture PATH] [--json PATH]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import psutil
from tqdm import tqdm

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._harness import REPO_ROOT, format_table, percentile, write_json
from memory_cortex.config import HardwareConfig
from memory_cortex.models.hardware import read_host
from memory_cortex.models.lhm import parse_lhm
from memory_cortex.services.hardware import HardwareMonitor

FIXTURE = REPO_ROOT / "tests" / "fixtures" / "lhm" / "data-nvidia-0.9.7.json"
WARM_UP = 10


def serve(path: Path) -> None:
    """The child process: serve ``path`` as /data.json on a free loopback port, print the port."""
    from aiohttp import web

    body = path.read_bytes()

    async def data(request: web.Request) -> web.Response:
        return web.Response(body=body, content_type="application/json")

    async def run() -> None:
        app = web.Application()
        app.router.add_get("/data.json", data)
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        port = runner.addresses[0][1]
        print(port, flush=True)
        await asyncio.Event().wait()

    asyncio.run(run())


def cpu_ms(seconds: float, count: int) -> float:
    return seconds / count * 1000


async def measure_polls(port: int, polls: int, interval: float) -> dict[str, Any]:
    config = HardwareConfig(
        lhm_host="127.0.0.1", lhm_port=port, use_pyamdgpuinfo=False, interval_s=interval, timeout_s=5
    )
    monitor = HardwareMonitor(config)
    await monitor.open()
    try:
        for _ in range(WARM_UP):
            await monitor.poll_once()
        if monitor.current().stale:
            raise SystemExit(f"poller could not read the fixture: {monitor.current().stale_reason}")
        walls = []
        cpu_started = time.process_time()
        for _ in tqdm(range(polls), desc="LHM polls", unit="poll"):
            started = time.perf_counter()
            await monitor.poll_once()
            walls.append((time.perf_counter() - started) * 1000)
        cpu = time.process_time() - cpu_started
    finally:
        await monitor.stop()
    return {"cpu_s": cpu, "wall_p50_ms": percentile(walls, 50), "wall_p95_ms": percentile(walls, 95)}


def measure_parse(path: Path, count: int) -> float:
    text = path.read_text(encoding="utf-8")
    started = time.process_time()
    for _ in range(count):
        parse_lhm(json.loads(text))
    return time.process_time() - started


def measure_psutil(count: int) -> float:
    process = psutil.Process()
    read_host(process)
    started = time.process_time()
    for _ in range(count):
        read_host(process)
    return time.process_time() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--polls", type=int, default=400)
    parser.add_argument("--interval", type=float, default=15.0, help="hardware.interval_s to project to")
    parser.add_argument("--fixture", type=Path, default=FIXTURE)
    parser.add_argument("--json", type=Path)
    parser.add_argument("--serve", type=Path, help=argparse.SUPPRESS)  # the child process
    args = parser.parse_args()
    if args.serve:
        serve(args.serve)
        return 0

    server = subprocess.Popen(
        [sys.executable, __file__, "--serve", str(args.fixture)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert server.stdout is not None
        port = int(server.stdout.readline())
        polled = asyncio.run(measure_polls(port, args.polls, args.interval))
    finally:
        server.terminate()
        server.wait(timeout=10)
    parse_s = measure_parse(args.fixture, args.polls)
    psutil_s = measure_psutil(args.polls)

    per_hour = 3600 / args.interval
    rows = []
    for what, seconds in (
        ("whole poll (HTTP + JSON + tree walk + psutil)", polled["cpu_s"]),
        ("  of which JSON decode + tree walk", parse_s),
        ("  of which psutil host reading", psutil_s),
    ):
        ms = cpu_ms(seconds, args.polls)
        seconds_per_hour = ms * per_hour / 1000
        # A string: the table's float format would round a share this small to 0.000.
        share = f"{seconds_per_hour / 3600 * 100:.4f}"
        rows.append([what, round(ms, 3), int(per_hour), round(seconds_per_hour, 3), share])
    print()
    print(
        format_table(
            ["what", "CPU ms / poll", f"polls / hour @ {args.interval:g}s", "CPU s / hour", "% of one core"],
            rows,
            title=(
                f"{args.fixture.name} ({args.fixture.stat().st_size // 1024} KB), {args.polls} polls;"
                f" wall p50 {polled['wall_p50_ms']:.2f} ms, p95 {polled['wall_p95_ms']:.2f} ms per poll"
            ),
        )
    )
    if args.json:
        write_json(
            args.json,
            {
                "fixture": args.fixture.name,
                "polls": args.polls,
                "interval_s": args.interval,
                "cpu_ms_per_poll": cpu_ms(polled["cpu_s"], args.polls),
                "parse_cpu_ms_per_poll": cpu_ms(parse_s, args.polls),
                "psutil_cpu_ms_per_poll": cpu_ms(psutil_s, args.polls),
                **{key: polled[key] for key in ("wall_p50_ms", "wall_p95_ms")},
            },
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
