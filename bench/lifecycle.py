"""Lifecycle run duration at 10k and 100k memories, and /hybrid-search latency while it runs.

For each size a synthetic store is written straight through the store layer, with something for
every stage: 10 % working memories (a third of them read often, to promote; the rest past or within
their TTL), 70 % core memories of every category, aged up to a year with a few reads each (to decay),
1 in 20 of them a near-duplicate of another (vector cosine ~0.89, to merge), and 20 % archive entries
100-400 days old (to compress). Then, against the real daemon (a subprocess):

1. ``/hybrid-search`` alone (idle): p50/p95 over ``--queries`` sequential queries;
2. ``POST /lifecycle/run`` (the first run: a full merge pass over every core pair) while one client
   keeps searching back to back: the run's wall time, each stage's time from its report, and the
   search p50/p95 meanwhile, with the daemon's peak RSS;
3. a second run right after (the daily steady state: the merge compares only changed rows).

Why synthetic vectors: embedding 100k texts on 2 cores takes too long, and the engine's cost does
not depend on what the vectors mean. History summaries come from a loopback stub that answers at
once (``--llm stub``, the default: it times the engine, not a model) or are skipped (``--llm rules``).

Usage::

    python bench/lifecycle.py                        # 10k and 100k, 1 user
    python bench/lifecycle.py --sizes 2000 --queries 50   # a quick smoke run
    python bench/lifecycle.py --workdir /tmp/lc --json out/lifecycle.json

``--workdir`` keeps the built databases (each run works on a copy), so a rerun skips building.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import sqlite3
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import numpy as np
from _harness import (
    REPO_ROOT,
    SEARCH_TIMEOUT,
    BenchError,
    CpuWatch,
    Daemon,
    format_table,
    git_revision,
    percentile,
    run_main,
    workdir_in,
)
from search_latency import DIM, MODEL, SyntheticText, count_rows, remove_database, user_of
from tqdm import tqdm

sys.path.insert(0, str(REPO_ROOT))

from memory_cortex.records import NewMemory
from memory_cortex.store.db import apply_migrations
from memory_cortex.store.memories import insert
from memory_cortex.vectormath import normalize, to_blob

CATEGORIES = ("fact", "fact", "fact", "preference", "identity", "decision", "todo", "context")
RUN_TIMEOUT = httpx.Timeout(3600.0, connect=2.0)
RUN_POLL_S = 0.2  # how often a run is asked how it stands
SEARCH_LIMIT = 10


# -- the synthetic store --------------------------------------------------------------------------
# Part of a built store's file name: a store built by an older version of build_database (kept in a
# --workdir) is built again. 2: layer_since is the row's synthetic age, not the build's time.
DATA_VERSION = 2


def stamp(moment: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime(moment))


def build_database(path: Path, size: int, users: int, seed: int, chunk: int = 5000) -> float | None:
    """Write ``size`` memories for every lifecycle stage into ``path`` (see the module docstring).

    Built under a ``.partial`` name and renamed when complete; a whole one is reused. Ages are
    relative to the time of building: rebuild (or delete the file) for runs on another day.
    Returns the seconds spent, or None when reused.
    """
    if count_rows(path) == size:
        return None
    remove_database(path)
    partial = path.with_name(path.name + ".partial")
    remove_database(partial)
    text = SyntheticText(seed)
    rng = np.random.default_rng(seed + 1)
    now = time.time()
    day = 86400.0
    started = time.perf_counter()
    conn = sqlite3.connect(partial, isolation_level=None)
    try:
        conn.execute("PRAGMA journal_mode = WAL")
        apply_migrations(conn)
        conn.execute("BEGIN IMMEDIATE")
        recent: dict[str, list[np.ndarray]] = {}  # each user's last vectors, sources of near-duplicates
        with tqdm(total=size, desc=f"building {size:,} rows / {users} user(s)", unit="row") as progress:
            for start in range(0, size, chunk):
                count = min(chunk, size - start)
                vectors = normalize(rng.standard_normal((count, DIM), dtype=np.float32))
                draws = rng.random((count, 4))
                reads: list[tuple[int, str | None, int]] = []
                for j, (topic, fact) in enumerate(text.facts(count)):
                    index = start + j
                    user = user_of(index, users)
                    vector = vectors[j]
                    kind, age, category = (
                        draws[j, 0],
                        draws[j, 1],
                        CATEGORIES[int(draws[j, 2] * len(CATEGORIES))],
                    )
                    access = 0
                    if kind < 0.10:  # working: a third read often (promoted), the rest young or expired
                        layer, created = "working", now - age * 4 * day
                        access = 4 if draws[j, 3] < 0.33 else 0
                    elif kind < 0.30:  # archive, 100-400 days old: compressed
                        layer, created = "archive", now - (100 + age * 300) * day
                    else:  # core, up to a year old, a few reads; 1 in 20 a near-duplicate
                        layer, created = "core", now - age * 365 * day
                        access = int(rng.zipf(2.0)) - 1 if draws[j, 3] < 0.4 else 0
                        mine = recent.setdefault(user, [])
                        if mine and draws[j, 3] > 0.95:
                            source = mine[int(rng.integers(len(mine)))]
                            noise = rng.standard_normal(DIM).astype(np.float32)
                            vector = normalize(source + 0.5 * noise / np.linalg.norm(noise))[0]
                        mine.append(vector)
                        if len(mine) > 200:
                            mine.pop(0)
                    memory_id = insert(
                        conn,
                        NewMemory(
                            user_id=user,
                            fact=fact,
                            topic=topic,
                            importance=int(1 + index % 10),
                            category=category,
                            ref=f"syn-{index}",
                            created_at=stamp(created),
                            embedding=to_blob(vector),
                            embedding_model=MODEL,
                            embedding_dim=DIM,
                            layer=layer,
                        ),
                    )
                    if access:
                        reads.append(
                            (access, stamp(created + (now - created) * float(draws[j, 3])), memory_id)
                        )
                conn.executemany(
                    "UPDATE memories SET access_count = ?, last_accessed = ? WHERE id = ?", reads
                )
                progress.update(count)
        # A synthetic history: each row entered its layer when it was made. (insert() stamps
        # layer_since now, as for a real write, and decay, expiry and compression count from it:
        # without this a fresh store has nothing for them to do.)
        conn.execute("UPDATE memories SET layer_since = created_at")
        conn.execute("COMMIT")
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    except BaseException:
        conn.close()
        remove_database(partial)
        raise
    conn.close()
    os.replace(partial, path)
    return time.perf_counter() - started


# -- a stub LLM ------------------------------------------------------------------------------------
@contextlib.contextmanager
def stub_llm() -> Iterator[str]:
    """An OpenAI-compatible chat server on loopback that summarises at once (its first memory line)."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self._reply({"data": [{"id": "stub"}]})

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            lines = body["messages"][-1]["content"].splitlines()
            content = "History: " + (lines[1] if len(lines) > 1 else "nothing")
            self._reply({"choices": [{"message": {"content": content}, "finish_reason": "stop"}]})

        def _reply(self, payload: dict[str, Any]) -> None:
            data = json.dumps(payload).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, name="stub-llm", daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


# -- measuring -------------------------------------------------------------------------------------
@dataclass
class Case:
    size: int
    users: int
    build_s: float | None = None
    idle_ms: list[float] = field(default_factory=list)
    during_ms: list[float] = field(default_factory=list)
    first: dict[str, Any] = field(default_factory=dict)
    second: dict[str, Any] = field(default_factory=dict)
    first_s: float = 0.0
    second_s: float = 0.0
    peak_rss_mb: float = 0.0
    idle_rss_mb: float = 0.0
    other_cores_idle: float = float("nan")
    other_cores_during: float = float("nan")


def search_once(client: httpx.Client, query: str, user: str) -> float:
    started = time.perf_counter()
    response = client.post("/hybrid-search", json={"query": query, "user_id": user, "limit": SEARCH_LIMIT})
    elapsed = (time.perf_counter() - started) * 1000
    if response.status_code != 200:
        raise BenchError(f"/hybrid-search answered {response.status_code}: {response.text[:300]}")
    return elapsed


def measure(
    case: Case, db_path: Path, log_path: Path, queries: list[str], warmup: int, env: dict[str, str]
) -> None:
    daemon = Daemon(db_path, log_path, env=env)
    try:
        daemon.start()
        with httpx.Client(base_url=daemon.url, timeout=SEARCH_TIMEOUT) as client:
            for i, query in enumerate(queries[:warmup]):
                search_once(client, query, user_of(i, case.users))
            timed = queries[warmup:]
            case.idle_rss_mb = daemon.rss_bytes() / 2**20
            with CpuWatch([os.getpid(), daemon.pid]) as cpu:
                for i, query in enumerate(tqdm(timed, desc="search, idle", unit="q", leave=False)):
                    case.idle_ms.append(search_once(client, query, user_of(i, case.users)))
            case.other_cores_idle = cpu.other_cores

            replies: list[httpx.Response | BaseException] = []

            def run_lifecycle() -> None:
                try:
                    with httpx.Client(base_url=daemon.url, timeout=RUN_TIMEOUT) as runner:
                        replies.append(follow_run(runner))
                except BaseException as exc:  # reported by the main thread
                    replies.append(exc)

            worker = threading.Thread(target=run_lifecycle, name="lifecycle-run")
            started = time.perf_counter()
            peak = case.idle_rss_mb
            with CpuWatch([os.getpid(), daemon.pid]) as cpu:
                worker.start()
                i = 0
                while worker.is_alive():
                    query = timed[i % len(timed)]
                    case.during_ms.append(search_once(client, query, user_of(i, case.users)))
                    i += 1
                    if i % 20 == 0:
                        peak = max(peak, daemon.rss_bytes() / 2**20)
                worker.join()
            case.first_s = time.perf_counter() - started
            case.other_cores_during = cpu.other_cores
            case.peak_rss_mb = peak
            case.first = _report(replies[0])

            replies.clear()
            started = time.perf_counter()
            run_lifecycle()
            case.second_s = time.perf_counter() - started
            case.second = _report(replies[0])
    finally:
        daemon.stop()


def follow_run(client: httpx.Client) -> dict[str, Any]:
    """Start a lifecycle run (202, a Location) and follow it to its end; its report."""
    # every write declares JSON, body or not (the request guard)
    started = client.post("/lifecycle/run", headers={"Content-Type": "application/json"})
    if started.status_code != 202:
        raise BenchError(f"POST /lifecycle/run answered {started.status_code}: {started.text[:300]}")
    location = started.headers["Location"]
    while True:
        run = client.get(location).json()
        if run["status"] != "running":
            if run["status"] != "done":
                raise BenchError(f"lifecycle run {run['id']} ended {run['status']}: {run['report']}")
            return dict(run["report"])
        time.sleep(RUN_POLL_S)


def _report(reply: dict[str, Any] | BaseException) -> dict[str, Any]:
    if isinstance(reply, BaseException):
        raise BenchError(f"the lifecycle run failed: {reply}") from reply
    return reply


def stage_seconds(report: dict[str, Any]) -> dict[str, float]:
    return {stage["name"]: stage["duration_ms"] / 1000 for stage in report.get("stages", [])}


def stage_count(report: dict[str, Any], stage: str, kind: str) -> int:
    for item in report.get("stages", []):
        if item["name"] == stage:
            return int(item["counts"].get(kind, 0))
    return 0


def summarise(case: Case) -> dict[str, Any]:
    return {
        "size": case.size,
        "users": case.users,
        "build_s": None if case.build_s is None else round(case.build_s, 1),
        "first_run_s": round(case.first_s, 2),
        "first_stage_s": stage_seconds(case.first),
        "second_run_s": round(case.second_s, 2),
        "second_stage_s": stage_seconds(case.second),
        "promoted": stage_count(case.first, "promote", "promoted"),
        "expired": stage_count(case.first, "promote", "expired"),
        "merged": stage_count(case.first, "merge", "merged"),
        "compared_first": stage_count(case.first, "merge", "compared"),
        "compared_second": stage_count(case.second, "merge", "compared"),
        "archived": stage_count(case.first, "decay", "archived"),
        "summaries": stage_count(case.first, "compress", "summaries"),
        "compress_status": next((s["status"] for s in case.first["stages"] if s["name"] == "compress"), None),
        "idle_p50_ms": percentile(case.idle_ms, 50),
        "idle_p95_ms": percentile(case.idle_ms, 95),
        "during_p50_ms": percentile(case.during_ms, 50),
        "during_p95_ms": percentile(case.during_ms, 95),
        "during_p99_ms": percentile(case.during_ms, 99),
        "searches_during": len(case.during_ms),
        "idle_rss_mb": round(case.idle_rss_mb, 1),
        "peak_rss_mb": round(case.peak_rss_mb, 1),
        "other_cores_idle": round(case.other_cores_idle, 2),
        "other_cores_during": round(case.other_cores_during, 2),
    }


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--sizes", default="10000,100000", help="comma-separated memory counts")
    parser.add_argument("--users", type=int, default=1, help="users the memories are spread over")
    parser.add_argument(
        "--queries", type=int, default=200, help="timed idle queries (also cycled during the run)"
    )
    parser.add_argument("--warmup", type=int, default=20)
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument(
        "--llm", choices=("stub", "rules"), default="stub", help="history summaries: stub or none"
    )
    parser.add_argument("--workdir", type=Path, help="keep (and reuse) the built databases here")
    parser.add_argument("--json", type=Path, help="also write the numbers to this file")
    args = parser.parse_args(argv)
    try:
        args.sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    except ValueError:
        parser.error("--sizes takes comma-separated integers")
    if not args.sizes or min(args.sizes) < 1 or args.users < 1 or args.queries < 1 or args.warmup < 0:
        parser.error("sizes, users and queries must be positive")
    return args


def run(args: argparse.Namespace) -> dict[str, Any]:
    queries = SyntheticText(args.seed + 1000).queries(args.warmup + args.queries)
    cases = []
    with contextlib.ExitStack() as stack:
        workdir = workdir_in(stack, args.workdir, "lifecycle-bench-")
        env = {
            "MEMORY_CORTEX_LIFECYCLE__ENABLED": "false",  # only the run this script asks for
            "MEMORY_CORTEX_HARDWARE__ENABLED": "false",
            "MEMORY_CORTEX_LLM__BACKEND": "rules",
        }
        if args.llm == "stub":
            url = stack.enter_context(stub_llm())
            env.update({"MEMORY_CORTEX_LLM__BACKEND": "openai", "MEMORY_CORTEX_LLM__URL": url})
        for size in args.sizes:
            case = Case(size, args.users)
            built = workdir / f"lifecycle-v{DATA_VERSION}-{size}-{args.users}u-s{args.seed}.db"
            case.build_s = build_database(built, size, args.users, args.seed)
            work = workdir / f"lifecycle-v{DATA_VERSION}-{size}-{args.users}u-s{args.seed}.run.db"
            remove_database(work)
            shutil.copy(built, work)  # a run changes the store: every measurement starts from the build
            print(
                f"{size:,} rows: " + ("reused" if case.build_s is None else f"built in {case.build_s:.1f}s"),
                flush=True,
            )
            try:
                measure(case, work, work.with_suffix(".log"), queries, args.warmup, env)
            finally:
                remove_database(work)
            cases.append(summarise(case))
    return {"revision": git_revision(), "llm": args.llm, "queries": args.queries, "cases": cases}


def print_report(report: dict[str, Any]) -> None:
    cases = report["cases"]
    print()
    print(
        format_table(
            [
                "size",
                "users",
                "run 1 s",
                "promote",
                "merge",
                "decay",
                "compress",
                "maintain",
                "run 2 s",
                "merge (run 2)",
            ],
            [
                [
                    c["size"],
                    c["users"],
                    c["first_run_s"],
                    *(
                        c["first_stage_s"].get(name, float("nan"))
                        for name in ("promote", "merge", "decay", "compress", "maintain")
                    ),
                    c["second_run_s"],
                    c["second_stage_s"].get("merge", float("nan")),
                ]
                for c in cases
            ],
            title="lifecycle run, seconds: run 1 = the first run (full merge pass), per stage from its report;"
            " run 2 = the next run at once (incremental merge)",
        )
    )
    print()
    print(
        format_table(
            [
                "size",
                "promoted",
                "expired",
                "merged",
                "compared (1 / 2)",
                "archived",
                "summaries",
                "RSS MB idle / peak",
            ],
            [
                [
                    c["size"],
                    c["promoted"],
                    c["expired"],
                    c["merged"],
                    f"{c['compared_first']} / {c['compared_second']}",
                    c["archived"],
                    c["summaries"] if c["compress_status"] == "done" else c["compress_status"],
                    f"{c['idle_rss_mb']} / {c['peak_rss_mb']}",
                ]
                for c in cases
            ],
            title=f"what run 1 did (history summaries: {report['llm']})",
        )
    )
    print()
    print(
        format_table(
            [
                "size",
                "idle p50",
                "idle p95",
                "during p50",
                "during p95",
                "during p99",
                "searches during",
                "other procs cores (idle / during)",
            ],
            [
                [
                    c["size"],
                    c["idle_p50_ms"],
                    c["idle_p95_ms"],
                    c["during_p50_ms"],
                    c["during_p95_ms"],
                    c["during_p99_ms"],
                    c["searches_during"],
                    f"{c['other_cores_idle']} / {c['other_cores_during']}",
                ]
                for c in cases
            ],
            title=f"/hybrid-search over HTTP, ms (limit {SEARCH_LIMIT}, real query embedding): idle vs while run 1"
            " runs (one client, back to back)",
        )
    )
    print(f"revision {report['revision']}")


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    return run_main(
        "lifecycle bench",
        args.json,
        lambda: run(args),
        print_report,
        interrupted="interrupted; daemon stopped (built databases in --workdir are reused next time)",
    )


if __name__ == "__main__":
    sys.exit(main())
