"""What the OpenClaw plugin adds to each agent turn: its recall hook (``before_prompt_build``) against a
real daemon holding 20k memories.

The turn waits for exactly one thing from the plugin: ``before_prompt_build``, which asks
``POST /context`` and gives up after ``recallTimeoutMs`` (200 ms by default). Ingest after the turn
and the background ``/recall`` do not hold the turn, so they are not timed here. For each case the
hook runs in node, registered as OpenClaw registers it (``integrations/openclaw/bench/recall-hook.ts``),
and a bare ``POST /context`` from the same node process with the same bodies is timed beside it: the
difference is the plugin's own cost.

The database is built as ``bench/search_latency.py`` builds it (synthetic facts, random unit vectors;
queries are real sentences embedded by the daemon's MiniLM, so every hook call includes a query
embedding) and reused from ``--workdir``.

Usage::

    python bench/openclaw_plugin.py                                   # 20k memories, 200 turns
    python bench/openclaw_plugin.py --size 2000 --turns 30 --warmup 5  # smoke run
    python bench/openclaw_plugin.py --recall-timeout-ms 200,10000      # also without the cap

Needs node >= 24.16 (``scripts/node.sh`` finds or fetches it) and the plugin's ``npm ci``
(``scripts/test-openclaw-plugin.sh`` does both).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from _harness import (
    REPO_ROOT,
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
from search_latency import SyntheticText, build_database, user_of

PLUGIN_DIR = REPO_ROOT / "integrations" / "openclaw"
DRIVER = PLUGIN_DIR / "bench" / "recall-hook.ts"
# A turn that waits on the plugin: OpenClaw's default recall budget, and what the issue measures.
DEFAULT_TIMEOUTS_MS = "200"


def find_node() -> str:
    """node >= 24.16 from scripts/node.sh, and the plugin's dependencies in place."""
    try:
        node = subprocess.run(
            ["bash", str(REPO_ROOT / "scripts" / "node.sh")], capture_output=True, text=True, check=True
        ).stdout.strip()
    except subprocess.CalledProcessError as exc:
        raise BenchError(f"no usable node: {exc.stderr.strip()}") from exc
    if not (PLUGIN_DIR / "node_modules" / "openclaw").is_dir():
        raise BenchError("the plugin's dependencies are missing: run scripts/test-openclaw-plugin.sh once")
    return node


def run_driver(
    node: str, spec: dict[str, Any], workdir: Path, pids: list[int]
) -> tuple[dict[str, Any], float]:
    """One timed pass in node; returns its result and the cores other processes used meanwhile."""
    spec_path = workdir / f"spec-{spec['mode']}-{spec['recall_timeout_ms']}.json"
    spec_path.write_text(json.dumps(spec), encoding="utf-8")
    with CpuWatch(pids) as cpu:
        completed = subprocess.run(
            [node, str(DRIVER), str(spec_path)], cwd=PLUGIN_DIR, capture_output=True, text=True, check=False
        )
    if completed.returncode != 0:
        raise BenchError(f"{DRIVER.name} failed ({completed.returncode}):\n{completed.stderr[-2000:]}")
    return json.loads(completed.stdout), cpu.other_cores


def summarise(result: dict[str, Any]) -> dict[str, Any]:
    latencies = result["latencies_ms"]
    injected = result["injected"]
    chars = [c for c, ok in zip(result["block_chars"], injected, strict=True) if ok]
    return {
        "p50_ms": round(percentile(latencies, 50), 2),
        "p95_ms": round(percentile(latencies, 95), 2),
        "p99_ms": round(percentile(latencies, 99), 2),
        "max_ms": round(max(latencies), 2) if latencies else float("nan"),
        "injected_share": round(sum(injected) / len(injected), 3) if injected else float("nan"),
        "block_chars_p50": round(percentile(chars, 50), 1),
        "turns": len(latencies),
    }


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--size", type=int, default=20_000, help="memories in the store (one user)")
    parser.add_argument("--turns", type=int, default=200, help="timed turns per case")
    parser.add_argument("--warmup", type=int, default=20, help="untimed turns first")
    parser.add_argument(
        "--recall-timeout-ms",
        default=DEFAULT_TIMEOUTS_MS,
        help="comma-separated recallTimeoutMs values, one case each (200 is the default budget)",
    )
    parser.add_argument("--max-tokens", type=int, default=500, help="recallMaxTokens")
    parser.add_argument("--max-facts", type=int, default=15, help="recallMaxFacts")
    parser.add_argument("--sessions", type=int, default=8, help="OpenClaw sessions the turns rotate over")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument(
        "--quiet-wait",
        type=float,
        default=60.0,
        help="before each timed pass, wait up to this many seconds for other processes to leave the"
        " CPUs alone (0: do not wait); what they used meanwhile is reported either way",
    )
    parser.add_argument("--workdir", type=Path, help="keep (and reuse) the database here; default: temp")
    parser.add_argument("--json", type=Path, help="also write the numbers to this file")
    args = parser.parse_args(argv)
    try:
        args.recall_timeout_ms = [int(v) for v in args.recall_timeout_ms.split(",") if v.strip()]
    except ValueError:
        parser.error("--recall-timeout-ms takes comma-separated integers")
    if args.size < 1 or args.turns < 1 or args.warmup < 0 or not args.recall_timeout_ms:
        parser.error("--size and --turns must be ≥ 1, --warmup ≥ 0")
    return args


def run(args: argparse.Namespace) -> dict[str, Any]:
    node = find_node()
    users = 1  # the worst case: every memory is the one user's
    user_id = user_of(0, users)
    queries = SyntheticText(args.seed + 1000).queries(args.warmup + args.turns)
    with ExitStack() as stack:
        workdir = workdir_in(stack, args.workdir, "plugin-bench-")
        db_path = workdir / f"latency-{args.size}-{users}u-z150-s{args.seed}.db"
        built = build_database(db_path, args.size, users, args.seed, 150)
        print(
            f"{args.size:,} memories: " + ("reused" if built is None else f"built in {built:.1f}s"),
            flush=True,
        )
        daemon = Daemon(
            db_path,
            db_path.with_name(f"daemon-plugin-{db_path.stem}.log"),
            env={"MEMORY_CORTEX_LLM__BACKEND": "rules", "MEMORY_CORTEX_HARDWARE__ENABLED": "false"},
        )
        stack.enter_context(daemon)
        cases = []
        base = {
            "port": daemon.port,
            "user_id": user_id,
            "queries": queries,
            "warmup": args.warmup,
            "recall_max_tokens": args.max_tokens,
            "recall_max_facts": args.max_facts,
            "sessions": args.sessions,
        }
        for timeout_ms in args.recall_timeout_ms:
            case: dict[str, Any] = {"recall_timeout_ms": timeout_ms}
            for mode in ("context", "hook"):
                print(f"  recallTimeoutMs {timeout_ms}: {mode} pass …", flush=True)
                if args.quiet_wait > 0:
                    wait_for_quiet([os.getpid(), daemon.pid], max_wait_s=args.quiet_wait)
                spec = {**base, "mode": mode, "recall_timeout_ms": timeout_ms}
                result, other_cores = run_driver(node, spec, workdir, [os.getpid(), daemon.pid])
                case[mode] = {**summarise(result), "other_cores": round(other_cores, 2)}
            case["plugin_overhead_p50_ms"] = round(case["hook"]["p50_ms"] - case["context"]["p50_ms"], 2)
            cases.append(case)
    return {
        "revision": git_revision(),
        "size": args.size,
        "users": users,
        "turns": args.turns,
        "warmup": args.warmup,
        "recall_max_tokens": args.max_tokens,
        "recall_max_facts": args.max_facts,
        "vectors": "random unit vectors in the database; queries embedded by the daemon's MiniLM",
        "cases": cases,
    }


def print_report(report: dict[str, Any]) -> None:
    rows = []
    for case in report["cases"]:
        for mode, label in (("hook", "plugin hook"), ("context", "bare POST /context")):
            numbers = case[mode]
            rows.append(
                [
                    case["recall_timeout_ms"],
                    label,
                    numbers["p50_ms"],
                    numbers["p95_ms"],
                    numbers["p99_ms"],
                    numbers["max_ms"],
                    f"{numbers['injected_share']:.0%}",
                    numbers["block_chars_p50"],
                    numbers["other_cores"],
                ]
            )
    print()
    print(
        format_table(
            [
                "recallTimeoutMs",
                "measured",
                "p50 ms",
                "p95 ms",
                "p99 ms",
                "max ms",
                "injected",
                "block chars p50",
                "other procs cores",
            ],
            rows,
            title=f"OpenClaw plugin: time a turn waits for recall, {report['size']:,} memories of one user,"
            f" {report['turns']} turns after {report['warmup']} warm-up (recallMaxTokens"
            f" {report['recall_max_tokens']}, recallMaxFacts {report['recall_max_facts']}); 'injected' = turns"
            " whose memories arrived within the budget",
        )
    )
    print(f"revision {report['revision']}")


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    return run_main("openclaw_plugin", args.json, lambda: run(args), print_report, interrupted="interrupted")


if __name__ == "__main__":
    raise SystemExit(main())
