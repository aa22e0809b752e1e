"""The verbs ``status`` (asks the running daemon how it is) and ``doctor`` (checks this machine).

``status`` exits 0 when the daemon answers, 3 when nothing answers (the LSB code for "not running",
what ``systemctl status`` uses) and 1 on any other failure. ``doctor`` exits 1 when a check fails.
Both take ``--json`` for scripts.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .config import Config

NOT_RUNNING = 3
MARKS = {"ok": "✓", "warn": "!", "fail": "✗"}


def add_status_commands(commands: Any, add_config_flags: Any) -> None:
    status = commands.add_parser(
        "status",
        help="ask the running daemon how it is (exit 3: not running)",
        description="Ask the daemon at server.host:server.port for its health and counts.",
    )
    add_config_flags(status)
    status.add_argument("--port", type=int, default=argparse.SUPPRESS, help="the daemon's port (server.port)")
    status.add_argument("--json", action="store_true", help="print /health and /stats as one JSON object")
    status.set_defaults(run=run_status)

    doctor = commands.add_parser(
        "doctor",
        help="check models, database, LLM, GPU sensor, port and permissions, with fixes",
        description=(
            "Check what would keep the daemon from working on this machine, without changing anything."
            " Exit status 1 when a check fails."
        ),
    )
    add_config_flags(doctor)
    doctor.add_argument("--port", type=int, default=argparse.SUPPRESS, help="the port to check (server.port)")
    doctor.add_argument("--json", action="store_true", help="print the findings as JSON")
    doctor.set_defaults(run=run_doctor)


# Where scripts/start.sh keeps its PID file (MEMORY_CORTEX_PID_FILE overrides it), relative paths
# from the checkout; the daemon's address is beside it (memory-cortex.url).
CHECKOUT = Path(__file__).resolve().parent.parent
DEFAULT_PID_FILE = "run/memory-cortex.pid"


@dataclasses.dataclass(frozen=True)
class StartedDaemon:
    """The daemon scripts/start.sh started from this checkout, while it runs."""

    url: str
    pid: int
    pid_file: Path


def started_daemon() -> StartedDaemon | None:
    """The live daemon the PID file of scripts/start.sh names, with the address start.sh recorded
    beside it; None when there is none (no file, a stale PID, no address recorded)."""
    pid_file = Path(os.environ.get("MEMORY_CORTEX_PID_FILE") or DEFAULT_PID_FILE)
    pid_file = pid_file if pid_file.is_absolute() else CHECKOUT / pid_file
    address_file = pid_file.with_name(pid_file.name.removesuffix(".pid") + ".url")
    try:
        pid = int(pid_file.read_text().strip())
        url = address_file.read_text().strip()
        os.kill(pid, 0)
    except (OSError, ValueError):
        return None
    return StartedDaemon(url, pid, pid_file) if url.startswith("http://") else None


def address_to_ask(config: Config, args: argparse.Namespace) -> tuple[str, str]:
    """Where ``status`` and ``doctor`` look for the daemon, and why there: the address given on the
    command line or in MEMORY_CORTEX_SERVER__* first, then the daemon scripts/start.sh started from
    this checkout, then the configuration's."""
    from .config import ENV_PREFIX
    from .doctor import daemon_url

    given = getattr(args, "port", None) is not None or getattr(args, "host", None) is not None
    given = given or any(f"{ENV_PREFIX}SERVER__{key}" in os.environ for key in ("PORT", "HOST"))
    if given:
        return daemon_url(config), "the address given"
    if (started := started_daemon()) is not None:
        return started.url, f"the daemon scripts/start.sh started (pid {started.pid}, {started.pid_file})"
    return daemon_url(config), "server.host and server.port of the configuration: no daemon started by scripts/start.sh here"


def run_status(config: Config, args: argparse.Namespace) -> int:
    import httpx

    from .doctor import auth_headers

    base, why = address_to_ask(config, args)
    try:
        with httpx.Client(base_url=base, timeout=5.0) as client:
            # /health needs no token; the token goes only to a daemon that said it is memory-cortex.
            health = client.get("/health").json()
            if not isinstance(health, dict) or "version" not in health:
                raise ValueError("no version in /health")
            answer = client.get("/stats", headers=auth_headers(config))
    except httpx.TransportError as exc:
        print(
            f"memory-cortex is not running at {base} ({why}; {type(exc).__name__}): start it with"
            " ./scripts/start.sh or `memory-cortex serve`",
            file=sys.stderr,
        )
        return NOT_RUNNING
    except ValueError:
        print(
            f"something else answers at {base}, not memory-cortex: check server.port (--port)",
            file=sys.stderr,
        )
        return 1
    if answer.status_code == 401:
        print(
            f"memory-cortex at {base} wants its API token: set server.api_token in the config this command"
            " reads (or MEMORY_CORTEX_SERVER__API_TOKEN)",
            file=sys.stderr,
        )
        return 1
    if answer.status_code != 200:
        print(f"memory-cortex at {base} answered /stats with HTTP {answer.status_code}", file=sys.stderr)
        return 1
    stats = answer.json()
    if args.json:
        print(json.dumps({"url": base, "address_from": why, "health": health, "stats": stats}, indent=2))
        return 0
    print("\n".join([*status_lines(base, health, stats), f"  asked      {why}"]))
    return 0


def status_lines(base: str, health: dict[str, Any], stats: dict[str, Any]) -> list[str]:
    """The human summary of ``/health`` and ``/stats``."""
    ingest, llm, embedder = stats.get("ingest", {}), stats.get("llm", {}), stats.get("embedder", {})
    llm_state = "ok" if llm.get("ok") else f"not answering ({llm.get('last_error') or 'no call yet'})"
    embedder_state = (
        "ok" if embedder.get("ok") else f"down ({embedder.get('last_error')}): search is FTS-only"
    )
    return [
        f"memory-cortex {health.get('version', '?')} is {health.get('status', '?')} at {base}",
        f"  dashboard  {base}/ui/",
        f"  up         {readable_duration(float(health.get('uptime_s') or 0))}",
        f"  memories   {stats.get('live_memories', stats.get('total_memories', 0)):,} live"
        f" ({stats.get('total_memories', 0):,} stored, {stats.get('db_bytes', 0) / 1e6:.1f} MB)",
        f"  ingest     {ingest.get('pending', 0)} waiting, {ingest.get('running', 0)} running,"
        f" {ingest.get('failed', 0)} failed",
        f"  llm        {llm.get('backend', '?')} {llm.get('model', '')}: {llm_state}",
        f"  embedder   {embedder.get('backend', '?')} {embedder.get('model', '')}: {embedder_state}",
    ]


def readable_duration(seconds: float) -> str:
    """``3 d 4 h``, ``2 h 5 min``, ``2 min 17 s``, ``9 s``: two units at most."""
    seconds = int(seconds)
    units = (("d", 86400), ("h", 3600), ("min", 60), ("s", 1))
    parts = []
    for name, size in units:
        if seconds >= size or (name == "s" and not parts):
            count, seconds = divmod(seconds, size)
            parts.append(f"{count} {name}")
        if len(parts) == 2:
            break
    return " ".join(parts)


def run_doctor(config: Config, args: argparse.Namespace) -> int:
    from .config import config_file
    from .doctor import run_checks

    findings = run_checks(config, config_file=config_file(getattr(args, "config", None)))
    failed = any(finding.outcome == "fail" for finding in findings)
    if args.json:
        print(json.dumps([dataclasses.asdict(finding) for finding in findings], indent=2))
        return 1 if failed else 0
    width = max(len(finding.check) for finding in findings)
    for finding in findings:
        print(f"{MARKS[finding.outcome]} {finding.check.ljust(width)}  {finding.detail}")
        if finding.outcome != "ok" and finding.fix:
            print(f"  {' ' * width}  → {finding.fix}")
    problems = sum(finding.outcome == "fail" for finding in findings)
    print(f"\n{problems} problem(s) to fix" if failed else "\nnothing keeps memory-cortex from running here")
    return 1 if failed else 0
