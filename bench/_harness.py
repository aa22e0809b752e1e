"""Shared pieces of the benchmark scripts: a daemon subprocess, percentiles, plain-text tables.

Why a subprocess and not ``create_app`` in-process: the numbers should be the ones a client of the
real daemon sees (its own interpreter, its own threads, JSON logging and the access log included),
and the process must be killable and measurable (start-up time, RSS) on its own.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack
from pathlib import Path
from types import TracebackType
from typing import Any, TextIO

import httpx
import numpy as np
import psutil

REPO_ROOT = Path(__file__).resolve().parent.parent

# Explicit timeouts on every call: a search is short, a batch write embeds up to a few hundred texts.
SEARCH_TIMEOUT = httpx.Timeout(30.0, connect=2.0)
WRITE_TIMEOUT = httpx.Timeout(300.0, connect=2.0)


class BenchError(RuntimeError):
    """The benchmark cannot go on (daemon did not start, answered an error…)."""


def interrupt_on_sigterm() -> None:
    """Treat SIGTERM like Ctrl-C, so ``finally`` blocks still stop the daemon and remove temp files."""

    def handler(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, handler)


def free_port() -> int:
    """A TCP port nobody listens on now (bind port 0, read it, release it).

    There is a small race until the daemon binds it; on loopback in a benchmark that is acceptable.
    """
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def percentile(values: Sequence[float], q: float) -> float:
    """The ``q``-th percentile (0…100) with linear interpolation; NaN for no values."""
    if not values:
        return float("nan")
    return float(np.percentile(np.asarray(values, dtype=np.float64), q))


def format_table(headers: Sequence[str], rows: Sequence[Sequence[Any]], title: str | None = None) -> str:
    """A plain-text table (numbers right-aligned) that survives copy-paste into a report."""
    cells = [[_cell(value) for value in row] for row in rows]
    widths = [len(h) for h in headers]
    for row in cells:
        for i, text in enumerate(row):
            widths[i] = max(widths[i], len(text))
    numeric = [
        all(isinstance(row[i], int | float) or row[i] is None for row in rows) if rows else False
        for i in range(len(headers))
    ]

    def line(values: Sequence[str]) -> str:
        parts = [
            value.rjust(widths[i]) if numeric[i] else value.ljust(widths[i]) for i, value in enumerate(values)
        ]
        return "| " + " | ".join(parts) + " |"

    out = []
    if title:
        out.append(title)
    out.append(line(list(headers)))
    out.append("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    out.extend(line(row) for row in cells)
    return "\n".join(out)


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        if value != value:  # NaN
            return "-"
        if abs(value) < 1:
            return f"{value:.3f}"
        return f"{value:.2f}" if abs(value) < 100 else f"{value:.1f}"
    return str(value)


def write_json(path: Path, payload: dict[str, Any]) -> None:
    """Write the numbers for later comparison (atomically: a half-written file is never left)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(path.suffix + ".partial")
    partial.write_text(json.dumps(payload, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    partial.replace(path)


class CpuWatch:
    """How busy *other* processes kept the CPUs during a timed phase, in cores.

    The bench machine is shared (tests of other sessions run beside us): a latency measured while
    something else holds a core is not the daemon's latency, so every table reports this next to
    its numbers. Busy time of the whole system minus that of the watched processes, over wall time.

    Args:
        pids: processes whose CPU time is ours (this script, the daemon).
    """

    other_cores: float = float("nan")
    wall_s: float = float("nan")
    our_cores: float = float("nan")

    def __init__(self, pids: Sequence[int]) -> None:
        self._processes = [psutil.Process(pid) for pid in pids]
        self._started = 0.0
        self._system_busy = 0.0
        self._ours = 0.0

    @staticmethod
    def _busy(times: Any) -> float:
        return float(
            times.user
            + times.system
            + getattr(times, "nice", 0.0)
            + getattr(times, "irq", 0.0)
            + getattr(times, "softirq", 0.0)
            + getattr(times, "steal", 0.0)
        )

    def _our_cpu(self) -> float:
        total = 0.0
        for process in self._processes:
            with contextlib.suppress(psutil.Error):
                times = process.cpu_times()
                total += times.user + times.system
        return total

    def __enter__(self) -> CpuWatch:
        self._started = time.perf_counter()
        self._system_busy = self._busy(psutil.cpu_times())
        self._ours = self._our_cpu()
        return self

    def __exit__(self, *exc_info: object) -> None:
        wall = max(time.perf_counter() - self._started, 1e-9)
        system = self._busy(psutil.cpu_times()) - self._system_busy
        ours = self._our_cpu() - self._ours
        self.other_cores = max(system - ours, 0.0) / wall
        self.our_cores = ours / wall
        self.wall_s = wall


def wait_for_quiet(
    pids: Sequence[int], *, max_wait_s: float, threshold_cores: float = 0.3, window_s: float = 3.0
) -> tuple[float, float]:
    """Wait (up to ``max_wait_s``) until other processes use under ``threshold_cores`` for a window.

    Timings taken while another process's test suite holds one of the two cores say little about
    the daemon; waiting for a quiet moment is cheaper than rerunning. Returns (seconds waited, the
    other processes' cores in the last window); the caller reports the latter either way.
    """
    started = time.perf_counter()
    while True:
        with CpuWatch(pids) as cpu:
            time.sleep(window_s)
        waited = time.perf_counter() - started
        if cpu.other_cores < threshold_cores or waited >= max_wait_s:
            return waited, cpu.other_cores


def add_set_option(parser: argparse.ArgumentParser, help_text: str) -> None:
    """The repeatable ``--set SECTION.KEY=VALUE`` of the benches that start a daemon (read back
    with :func:`settings_env`); ``help_text`` says which daemon it reaches."""
    parser.add_argument("--set", action="append", default=[], metavar="SECTION.KEY=VALUE", help=help_text)


def settings_env(settings: Sequence[str]) -> dict[str, str]:
    """``["search.time_boost=0.2"]`` → ``{"MEMORY_CORTEX_SEARCH__TIME_BOOST": "0.2"}``."""
    env = {}
    for setting in settings:
        key, sep, value = setting.partition("=")
        if not sep or "." not in key:
            raise ValueError(f"--set wants section.key=value, got {setting!r}")
        env["MEMORY_CORTEX_" + key.strip().upper().replace(".", "__")] = value
    return env


def workdir_in(stack: ExitStack, given: Path | None, prefix: str) -> Path:
    """``--workdir``: the folder given (created, kept, so its databases are reused next time), or a
    temporary one that ``stack`` removes when the bench ends."""
    if given is not None:
        workdir = given.resolve()
        workdir.mkdir(parents=True, exist_ok=True)
        return workdir
    workdir = Path(tempfile.mkdtemp(prefix=prefix))
    stack.callback(shutil.rmtree, workdir, ignore_errors=True)
    return workdir


def git_revision() -> str:
    """HEAD plus ``-dirty`` when the work tree has changes: which code these numbers describe."""
    try:
        head = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=REPO_ROOT, capture_output=True, text=True, check=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=REPO_ROOT,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return f"{head}-dirty" if dirty else head


def wait_for_health(
    client: httpx.Client, *, timeout_s: float, process: subprocess.Popen[bytes] | None = None
) -> float:
    """Poll ``GET /health`` until it answers 200; returns the seconds waited.

    Raises :class:`BenchError` when the process exits first or the time runs out.
    """
    started = time.perf_counter()
    while True:
        if process is not None and process.poll() is not None:
            raise BenchError(f"daemon exited with status {process.returncode} before /health answered")
        try:
            response = client.get("/health", timeout=httpx.Timeout(1.0, connect=0.5))
            if response.status_code == 200:
                return time.perf_counter() - started
        except httpx.TransportError:
            pass
        if time.perf_counter() - started > timeout_s:
            raise BenchError(f"/health did not answer within {timeout_s:.0f}s")
        time.sleep(0.05)


class Daemon:
    """``python -m memory_cortex --db PATH --port N`` as a child process, stopped on exit.

    The child gets its own session so a Ctrl-C in the terminal reaches only this script, which then
    stops the daemon itself with SIGTERM (and SIGKILL if it ignores that for ``stop_timeout_s``).

    Args:
        db_path: SQLite file the daemon opens (created if missing).
        log_path: where the daemon's stdout and stderr (JSON log lines) are written.
        port: TCP port; ``None`` picks a free one.
        startup_timeout_s: longest wait for ``/health``.
        stop_timeout_s: grace period after SIGTERM.
        env: extra environment, e.g. ``MEMORY_CORTEX_*`` settings the flags do not cover.
    """

    def __init__(
        self,
        db_path: Path,
        log_path: Path,
        *,
        port: int | None = None,
        startup_timeout_s: float = 300.0,
        stop_timeout_s: float = 30.0,
        env: dict[str, str] | None = None,
    ) -> None:
        self.db_path = db_path
        self.log_path = log_path
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.startup_timeout_s = startup_timeout_s
        self.stop_timeout_s = stop_timeout_s
        self.env = dict(env or {})
        self.process: subprocess.Popen[bytes] | None = None
        self.startup_s: float | None = None
        self._log_file: TextIO | None = None

    def start(self) -> float:
        """Start the process and wait for ``/health``; returns seconds from spawn to first 200."""
        self._log_file = open(self.log_path, "a", encoding="utf-8")  # noqa: SIM115 - closed in stop()
        command = [
            sys.executable,
            "-m",
            "memory_cortex",
            "--db",
            str(self.db_path),
            "--port",
            str(self.port),
            "--host",
            "127.0.0.1",
        ]
        started = time.perf_counter()
        self.process = subprocess.Popen(
            command,
            cwd=REPO_ROOT,
            stdout=self._log_file,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
            env={**os.environ, "PYTHONUNBUFFERED": "1", **self.env},
        )
        try:
            with httpx.Client(base_url=self.url) as client:
                wait_for_health(client, timeout_s=self.startup_timeout_s, process=self.process)
        except BaseException as exc:
            self.stop()
            if isinstance(exc, BenchError):
                raise BenchError(f"{exc}; last log lines:\n{self.log_tail()}") from exc
            raise
        self.startup_s = time.perf_counter() - started
        return self.startup_s

    def stop(self) -> int | None:
        """SIGTERM, wait, SIGKILL if needed; returns the exit status (None if never started)."""
        process, self.process = self.process, None
        status = None
        if process is not None:
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
                try:
                    process.wait(timeout=self.stop_timeout_s)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait(timeout=10)
            status = process.returncode
        if self._log_file is not None:
            self._log_file.close()
            self._log_file = None
        return status

    @property
    def pid(self) -> int:
        if self.process is None:
            raise BenchError("daemon is not running")
        return self.process.pid

    def rss_bytes(self) -> int:
        """Resident set size of the daemon process (it has no children: one interpreter)."""
        if self.process is None:
            raise BenchError("daemon is not running")
        return int(psutil.Process(self.process.pid).memory_info().rss)

    def log_position(self) -> int:
        """Current end of the log, to count only the events of one phase with ``log_events``."""
        return self.log_path.stat().st_size if self.log_path.exists() else 0

    def log_events(self, message: str, *, since: int = 0) -> list[dict[str, Any]]:
        """JSON log records with this ``message`` written after byte ``since`` (other lines skipped)."""
        return [record for record in self._log_records(since) if record.get("message") == message]

    def log_tail(self, lines: int = 20) -> str:
        if not self.log_path.exists():
            return "(no log)"
        return "\n".join(self.log_path.read_text(encoding="utf-8", errors="replace").splitlines()[-lines:])

    def _log_records(self, since: int = 0) -> Iterator[dict[str, Any]]:
        if not self.log_path.exists():
            return
        with open(self.log_path, "rb") as handle:
            handle.seek(since)
            for raw in handle:
                line = raw.decode("utf-8", errors="replace")
                with contextlib.suppress(ValueError):
                    record = json.loads(line)
                    if isinstance(record, dict):
                        yield record

    def __enter__(self) -> Daemon:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop()


def run_main(
    name: str,
    json_path: Path | None,
    run: Callable[[], dict[str, Any]],
    print_report: Callable[[dict[str, Any]], None],
    *,
    interrupted: str = "interrupted; daemon stopped",
) -> int:
    """The entry point every bench shares: run, print the table, write ``--json``; 1 on a
    :class:`BenchError`, 130 on Ctrl-C or SIGTERM (after ``interrupted`` on stderr)."""
    interrupt_on_sigterm()
    started = time.perf_counter()
    try:
        report = run()
    except BenchError as exc:
        print(f"{name}: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(interrupted, file=sys.stderr)
        return 130
    report["wall_s"] = round(time.perf_counter() - started, 1)
    print_report(report)
    print(f"total wall time {report['wall_s']:.0f}s")
    if json_path:
        write_json(json_path, report)
        print(f"wrote {json_path}")
    return 0
