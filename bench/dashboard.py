"""How fast the dashboard's reads are at 100k memories: every filter of the memory table, a deep
page, a detail view with its history, search debug, the job list, the system charts and /stats.

The database is the synthetic one of ``bench/search_latency.py`` (same builder, reused from its
``--workdir``), with a fifth of the rows moved to ``working`` and a tenth to ``archive`` and a few
categories set, so the layer and category filters have something to find. The daemon runs as a
child process on the embedded defaults; each request is timed end to end over HTTP.

Usage::

    python bench/dashboard.py                           # 100k rows, one user
    python bench/dashboard.py --size 10000 --workdir /tmp/lat
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import sys
import time
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import httpx
from _harness import (
    BenchError,
    CpuWatch,
    Daemon,
    format_table,
    git_revision,
    percentile,
    run_main,
    wait_for_quiet,
    workdir_in,
)
from search_latency import build_database, user_of

USER = user_of(0, 1)
# Mixed in after the build: (SQL condition on id, what to set).
LAYER_MIX = (("id % 5 = 0", "layer = 'working'"), ("id % 10 = 1", "layer = 'archive'"))
CATEGORY_MIX = (("id % 7 = 0", "category = 'preference'"), ("id % 97 = 0", "category = 'identity'"))


def mix_layers(path: Path) -> None:
    """Give the synthetic rows some layers and categories (idempotent)."""
    with sqlite3.connect(path) as conn:
        for condition, assignment in (*LAYER_MIX, *CATEGORY_MIX):
            conn.execute(f"UPDATE memories SET {assignment} WHERE {condition}")


def requests_to_time(client: httpx.Client) -> list[tuple[str, str, str, dict[str, Any] | None]]:
    """(label, method, path, JSON body) for every read the dashboard makes."""
    first = client.get("/memories", params={"user_id": USER, "limit": 50}).json()
    top = first["memories"][0]["id"]
    middle = top // 2
    word = first["memories"][0]["fact"].split()[0]
    page = f"/memories?user_id={USER}&limit=50"
    return [
        ("memories, first page", "GET", page, None),
        ("memories, page at the middle", "GET", f"{page}&before_id={middle}", None),
        ("memories, layer=working", "GET", f"{page}&layer=working", None),
        ("memories, layer=archive, deep", "GET", f"{page}&layer=archive&before_id={middle}", None),
        ("memories, category=identity (1 %)", "GET", f"{page}&category=identity", None),
        ("memories, category that no row has", "GET", f"{page}&category=nothing", None),
        ("memories, min_importance=10", "GET", f"{page}&min_importance=10", None),
        ("memories, one month", "GET", f"{page}&since=2022-06-01&until=2022-06-30", None),
        (f"memories, q={word!r} (common)", "GET", f"{page}&q={word}", None),
        ("memories, q matching nothing", "GET", f"{page}&q=zzqqxx", None),
        ("memory detail", "GET", f"/memories/{middle}", None),
        ("memory history", "GET", f"/memories/{middle}/history", None),
        (
            "search debug (3 searches)",
            "POST",
            "/search/debug",
            {"query": "coffee with my sister", "user_id": USER},
        ),
        ("ingest jobs", "GET", "/ingest/jobs?limit=50", None),
        ("lifecycle log", "GET", "/lifecycle/log?limit=20", None),
        ("system history (6 h)", "GET", "/system/history?minutes=360", None),
        ("stats", "GET", "/stats", None),
        ("config", "GET", "/config", None),
    ]


def run(args: argparse.Namespace) -> dict[str, Any]:
    with ExitStack() as stack:
        workdir = workdir_in(stack, args.workdir, "dashboard-bench-")
        # The same file name as bench/search_latency.py's default case: built once, shared.
        db_path = workdir / f"latency-{args.size}-1u-z150-s7.db"
        build_database(db_path, args.size, 1, 7, 150)
        mix_layers(db_path)
        daemon = Daemon(
            db_path, workdir / "daemon-dashboard.log", env={"MEMORY_CORTEX_LLM__BACKEND": "rules"}
        )
        stack.callback(daemon.stop)
        daemon.start()
        rows = []
        with httpx.Client(base_url=daemon.url, timeout=30) as client:
            cases = requests_to_time(client)
            wait_for_quiet([os.getpid(), daemon.pid], max_wait_s=args.quiet_wait)
            with CpuWatch([os.getpid(), daemon.pid]) as cpu:
                for label, method, path, body in cases:
                    latencies, count = [], None
                    for i in range(args.warmup + args.repeat):
                        t0 = time.perf_counter()
                        response = client.request(method, path, json=body)
                        elapsed = (time.perf_counter() - t0) * 1000
                        if response.status_code != 200:
                            raise BenchError(
                                f"{method} {path} answered {response.status_code}: {response.text[:300]}"
                            )
                        if i >= args.warmup:
                            latencies.append(elapsed)
                        data = response.json()
                        count = data.get("count", len(data["points"]) if "points" in data else "—")
                    rows.append(
                        {
                            "request": label,
                            "rows": count,
                            "p50_ms": round(percentile(latencies, 50), 1),
                            "p95_ms": round(percentile(latencies, 95), 1),
                            "max_ms": round(max(latencies), 1),
                        }
                    )
        return {
            "revision": git_revision(),
            "size": args.size,
            "repeat": args.repeat,
            "other_cores": cpu.other_cores,
            "requests": rows,
        }


def print_report(report: dict[str, Any]) -> None:
    print(
        format_table(
            ["request", "rows", "p50 ms", "p95 ms", "max ms"],
            [[r["request"], r["rows"], r["p50_ms"], r["p95_ms"], r["max_ms"]] for r in report["requests"]],
            title=f"Dashboard reads over HTTP, {report['size']:,} memories, one user, {report['repeat']} each"
            f" (revision {report['revision']})",
        )
    )
    print(f"other processes used {report['other_cores']} cores meanwhile")


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--size", type=int, default=100_000, help="memories in the database")
    parser.add_argument("--repeat", type=int, default=30, help="timed requests of each kind")
    parser.add_argument("--warmup", type=int, default=3, help="untimed requests of each kind first")
    parser.add_argument(
        "--quiet-wait", type=float, default=60.0, help="wait this long for idle CPUs (0: not)"
    )
    parser.add_argument("--workdir", type=Path, help="keep (and reuse) the database here; default: temp")
    parser.add_argument("--json", type=Path, help="also write the numbers to this file")
    args = parser.parse_args(argv)
    if args.size < 100 or args.repeat < 1 or args.warmup < 0:
        parser.error("--size ≥ 100, --repeat ≥ 1, --warmup ≥ 0")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    return run_main("dashboard", args.json, lambda: run(args), print_report)


if __name__ == "__main__":
    sys.exit(main())
