"""What a client that may not call the API can cost the daemon: memory under a body flood,
connections held by half-sent headers, log growth.

    python bench/flood.py                    # the three floods below, a table
    python bench/flood.py --bodies 60 --slow 1000 --json out.json

The daemon runs with an API token, as on a LAN bind (on loopback here: the same code path, and
``server.max_connections_per_client`` is set to the LAN default so that one address's cap applies).

1. **Wrong-token bodies**: ``--bodies`` connections each send a POST with a wrong token and an
   8 MiB body, all at once. The daemon should answer 401 from the headers and read nothing.
2. **Authorised bodies**: the same with the right token: the bodies are read, within
   ``server.max_body_bytes_in_flight`` (the rest get 503 ``server_busy``).
3. **Half-sent headers**: ``--slow`` connections each send half a request header and wait. They
   should be closed after ``server.header_timeout_s`` (or refused beyond the per-client cap).

For each: the daemon's RSS before, at its peak during (sampled every 50 ms), and 5 s after the last
connection closed; the answers by status; the daemon log's growth.
"""

from __future__ import annotations

import argparse
import asyncio
import secrets
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import psutil

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _harness import Daemon, format_table, git_revision, run_main

MIB = 1024 * 1024
BODY = 8 * MIB
SETTLE_S = 5.0


class RssSampler:
    """The peak RSS of ``pid`` while running, sampled every 50 ms in a thread."""

    def __init__(self, pid: int) -> None:
        self._process = psutil.Process(pid)
        self.peak = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def rss(self) -> int:
        return int(self._process.memory_info().rss)

    def _run(self) -> None:
        while not self._stop.is_set():
            self.peak = max(self.peak, self.rss())
            time.sleep(0.05)

    def __enter__(self) -> RssSampler:
        self._thread.start()
        return self

    def __exit__(self, *_: Any) -> None:
        self._stop.set()
        self._thread.join()


async def post_body(port: int, token: str) -> str:
    """One POST /memories with an 8 MiB body sent as fast as the daemon takes it; its status, or
    what happened to the connection."""
    try:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
    except OSError as exc:
        return f"connect: {type(exc).__name__}"
    head = (
        f"POST /memories HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        f"Authorization: Bearer {token}\r\nContent-Length: {BODY}\r\n\r\n"
    ).encode()
    chunk = b"x" * MIB
    answer = asyncio.ensure_future(reader.readline())  # read while sending: it may come early

    async def send() -> None:
        writer.write(head)
        for _ in range(BODY // MIB):
            writer.write(chunk)
            await writer.drain()

    try:
        sending = asyncio.ensure_future(send())
        await asyncio.wait({answer, sending}, timeout=60, return_when=asyncio.FIRST_COMPLETED)
        if not answer.done():
            await asyncio.wait({answer}, timeout=60)
        sending.cancel()
        status = answer.result() if answer.done() and not answer.exception() else b""
    finally:
        answer.cancel()
        writer.close()
    parts = status.split()
    return parts[1].decode() if len(parts) > 1 else "closed"


async def body_flood(port: int, token: str, count: int) -> tuple[Counter[str], float]:
    started = time.perf_counter()
    results = await asyncio.gather(*(post_body(port, token) for _ in range(count)))
    return Counter(results), time.perf_counter() - started


async def slow_headers(port: int, count: int, wait_s: float) -> dict[str, Any]:
    """``count`` connections each send half a header; how many are still open after ``wait_s``."""
    opened = []
    refused = 0
    for _ in range(count):
        try:
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
        except OSError:
            refused += 1
            continue
        writer.write(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
        opened.append((reader, writer))
    await asyncio.sleep(wait_s)
    still_open = 0
    for reader, writer in opened:
        try:
            data = await asyncio.wait_for(reader.read(1), timeout=0.01)
            still_open += 0 if data == b"" else 1
        except TimeoutError:
            still_open += 1  # nothing to read and not closed
        except OSError:
            pass
        writer.close()
    return {"opened": len(opened), "connect_failed": refused, "open_after": still_open}


def measured(
    daemon: Daemon, log_path: Path, name: str, flood: Callable[[], tuple[Mapping[str, Any], float]]
) -> dict[str, Any]:
    """One flood: the daemon's RSS before, at its peak and SETTLE_S after; what ``flood`` returned
    (its answers by kind, and how long it took); how much the daemon's log grew."""
    log_before = log_path.stat().st_size
    with RssSampler(daemon.pid) as rss:
        before = rss.rss()
        answers, seconds = flood()
        time.sleep(SETTLE_S)
        after = rss.rss()
    return {
        "flood": name,
        "rss_before_mib": before / MIB,
        "rss_peak_mib": rss.peak / MIB,
        "rss_after_mib": after / MIB,
        "answers": dict(sorted(answers.items())),
        "seconds": seconds,
        "log_bytes": log_path.stat().st_size - log_before,
    }


def run(args: argparse.Namespace) -> dict[str, Any]:
    token = secrets.token_hex(16)
    with tempfile.TemporaryDirectory(prefix="flood-") as folder:
        log_path = Path(folder) / "daemon.log"
        env = {
            "MEMORY_CORTEX_SERVER__API_TOKEN": token,
            "MEMORY_CORTEX_SERVER__MAX_CONNECTIONS_PER_CLIENT": str(args.per_client),
            "MEMORY_CORTEX_LLM__BACKEND": "rules",
        }
        daemon = Daemon(Path(folder) / "db.sqlite", log_path, env=env)
        daemon.start()
        try:
            rows = [
                measured(
                    daemon,
                    log_path,
                    f"{args.bodies} × {name}",
                    lambda key=key: asyncio.run(body_flood(daemon.port, key, args.bodies)),
                )
                for name, key in (
                    ("wrong-token 8 MiB bodies", "wrong-" + token),
                    ("authorised 8 MiB bodies", token),
                )
            ]
            rows.append(
                measured(
                    daemon,
                    log_path,
                    f"{args.slow} × half-sent header, checked after {args.slow_wait:g} s",
                    lambda: (
                        asyncio.run(slow_headers(daemon.port, args.slow, args.slow_wait)),
                        args.slow_wait,
                    ),
                )
            )
        finally:
            daemon.stop()
    return {"revision": git_revision(), "per_client": args.per_client, "rows": rows}


def print_report(report: dict[str, Any]) -> None:
    print(
        format_table(
            ["flood", "RSS before MiB", "peak MiB", "5 s after MiB", "answers", "log bytes"],
            [
                [
                    r["flood"],
                    f"{r['rss_before_mib']:.0f}",
                    f"{r['rss_peak_mib']:.0f}",
                    f"{r['rss_after_mib']:.0f}",
                    ", ".join(f"{k}: {v}" for k, v in r["answers"].items()),
                    r["log_bytes"],
                ]
                for r in report["rows"]
            ],
            title=f"floods against a daemon with an API token (revision {report['revision']},"
            f" max_connections_per_client {report['per_client']})",
        )
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bodies", type=int, default=60, help="connections per body flood")
    parser.add_argument("--slow", type=int, default=1000, help="connections sending half a header")
    parser.add_argument("--slow-wait", type=float, default=15.0, help="seconds before counting them")
    parser.add_argument("--per-client", type=int, default=32, help="server.max_connections_per_client")
    parser.add_argument("--json", type=Path, help="also write the report here")
    args = parser.parse_args(argv)
    return run_main("flood", args.json, lambda: run(args), print_report)


if __name__ == "__main__":
    sys.exit(main())
