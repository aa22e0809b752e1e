"""Load test: many concurrent clients against the real daemon on a 20,000-memory database.

The database is built like ``bench/search_latency.py``'s (its builder, straight through the store
layer: varied synthetic English, random unit vectors, several users), then copied for each run so
the pristine one can be reused. The real daemon runs as a subprocess with ``llm.backend: rules``
(extraction is the fast rules extractor), hardware polling off (nothing leaves loopback) and an
ingest debounce of ``--debounce-s`` (2 s), so extraction jobs run during the test.

``--clients`` clients (50) share one ``httpx.AsyncClient`` on loopback. For ``--duration`` seconds
(60) each sends one request after another, no pause, drawn from ``--mix`` (percent weights):

- ``search`` (80): ``POST /hybrid-search`` with questions about the synthetic people and things;
- ``write`` (8): ``POST /memories`` with a new fact, or (one write in four, once the client has
  written something) a near-duplicate of one of its own facts, which dedup should merge;
- ``patch`` (4) and ``delete`` (3): ``PATCH``/``DELETE /memories/{id}`` of a memory this client
  created (new importance, or new text that is re-embedded);
- ``ingest`` (5): ``POST /ingest`` with the client's OpenClaw-shaped session, the whole history
  every time, one turn longer each post; one post in five with ``debounce: false``.

It stops by itself: no request starts after the duration, every request has a timeout
(``--timeout``), and a hard deadline cancels whatever is still in flight. It then prints, per
endpoint, requests, errors by kind (HTTP status or transport error), p50/p95/p99 latency of the
successful requests and their throughput; the daemon's RSS and CPU; and what the daemon's log holds:
"database is locked", ERROR records, Tracebacks, and how many searches went FTS-only because the
query embedding missed ``embeddings.query_timeout_s`` (200, but no vectors). The exit status is 1 when any request failed or
the log holds any of these.

Usage::

    python bench/load.py                                # 20,000 memories, 50 clients, 60 s
    python bench/load.py --duration 10 --clients 10     # quick check
    python bench/load.py --workdir /tmp/load --json out/load.json

``--workdir`` keeps the built database; a rerun reuses it (each run works on a fresh copy).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import shutil
import sqlite3
import sys
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Mapping
from contextlib import ExitStack, closing, suppress
from dataclasses import dataclass, field
from itertools import count
from pathlib import Path
from typing import Any

import httpx
import psutil
from _harness import (
    BenchError,
    CpuWatch,
    Daemon,
    add_set_option,
    format_table,
    git_revision,
    interrupt_on_sigterm,
    percentile,
    settings_env,
    wait_for_quiet,
    workdir_in,
    write_json,
)
from search_latency import (
    FTS_ONLY_EVENT,
    NAMES,
    PLACES,
    TOPICS,
    SyntheticText,
    build_database,
    remove_database,
    user_of,
)
from tqdm import tqdm

ZIPF_OFFSET = 150  # search_latency's default: word frequencies like English after the function words
SEARCH_LIMIT = 10
NEAR_DUPLICATE_SHARE = 0.25  # of writes, once the client has a fact of its own to repeat
INGEST_NOW_SHARE = 0.2  # of /ingest posts: debounce false ("extract now", as before a compaction)
POOL_SIZE = 5000  # distinct queries and facts; shared by all clients, wrapped around if exhausted
HARD_DEADLINE_GRACE_S = 10.0  # past duration + request timeout: cancel whatever is still in flight
JSON_HEADERS = {"Content-Type": "application/json"}
MB = 1024 * 1024
LOG_LEVELS = ("CRITICAL", "ERROR", "WARNING")

OP_SEARCH = "POST /hybrid-search"
OP_WRITE = "POST /memories"
OP_WRITE_DUPLICATE = "POST /memories (near-duplicate)"
OP_PATCH = "PATCH /memories/{id}"
OP_DELETE = "DELETE /memories/{id}"
OP_INGEST = "POST /ingest"
OP_INGEST_NOW = "POST /ingest (debounce: false)"
ALL_OPS = (OP_SEARCH, OP_WRITE, OP_WRITE_DUPLICATE, OP_PATCH, OP_DELETE, OP_INGEST, OP_INGEST_NOW)
DEFAULT_MIX = "search=80,write=8,patch=4,delete=3,ingest=5"


# -- what the clients record -------------------------------------------------------------------
@dataclass
class Recorder:
    """Every request's outcome, by operation: latencies of the successes, errors by kind."""

    latencies_ms: dict[str, list[float]] = field(default_factory=lambda: {op: [] for op in ALL_OPS})
    errors: dict[str, Counter[str]] = field(default_factory=lambda: {op: Counter() for op in ALL_OPS})
    merged: Counter[str] = field(default_factory=Counter)  # writes the daemon answered "merged"

    def record(self, op: str, latency_ms: float, error: str | None) -> None:
        if error is None:
            self.latencies_ms[op].append(latency_ms)
        else:
            self.errors[op][error] += 1

    def requests(self, op: str) -> int:
        return len(self.latencies_ms[op]) + self.errors[op].total()

    def total_requests(self) -> int:
        return sum(self.requests(op) for op in ALL_OPS)

    def total_errors(self) -> int:
        return sum(errors.total() for errors in self.errors.values())


async def timed_request(
    client: httpx.AsyncClient,
    recorder: Recorder,
    op: str,
    method: str,
    url: str,
    *,
    body: Any = None,
    params: dict[str, str] | None = None,
) -> httpx.Response | None:
    """Send one request, record its latency or its error; the response when it was a 2xx."""
    # Serialised before the clock starts: the client's own JSON work is not the daemon's.
    content = None if body is None else json.dumps(body).encode()
    # Every POST, PATCH and DELETE says it is JSON, a body-less DELETE too (the daemon's CSRF rule:
    # 415 otherwise).
    headers = JSON_HEADERS if content is not None or method in ("POST", "PATCH", "DELETE") else None
    started = time.perf_counter()
    try:
        response = await client.request(method, url, content=content, headers=headers, params=params)
    except httpx.HTTPError as exc:
        recorder.record(op, (time.perf_counter() - started) * 1000, type(exc).__name__)
        return None
    except asyncio.CancelledError:
        recorder.record(op, (time.perf_counter() - started) * 1000, "cancelled at hard deadline")
        raise
    elapsed_ms = (time.perf_counter() - started) * 1000
    if not response.is_success:
        recorder.record(op, elapsed_ms, f"HTTP {response.status_code}")
        return None
    recorder.record(op, elapsed_ms, None)
    return response


# -- the workload --------------------------------------------------------------------------------
@dataclass
class Workload:
    """What the clients draw from: distinct questions, new facts, words for conversations."""

    queries: list[str]
    facts: list[tuple[str, str]]  # (topic, fact)
    vocabulary: list[str]
    users: int
    history: int
    _next_query: count[int] = field(default_factory=count)
    _next_fact: count[int] = field(default_factory=count)

    @classmethod
    def build(cls, seed: int, users: int, history: int) -> Workload:
        # Other seeds than the database's: the questions and new facts are not copies of stored rows.
        queries = SyntheticText(seed + 1000, ZIPF_OFFSET).queries(POOL_SIZE)
        text = SyntheticText(seed + 2000, ZIPF_OFFSET)
        return cls(queries, text.facts(POOL_SIZE), text.vocabulary, users, history)

    def query(self) -> str:
        return self.queries[next(self._next_query) % len(self.queries)]

    def fact(self) -> tuple[str, str]:
        return self.facts[next(self._next_fact) % len(self.facts)]


@dataclass
class ClientState:
    """One client: its user, its own random stream, the memories it created, its session."""

    index: int
    user_id: str
    rng: random.Random
    # memory id → (topic, fact) of the memories this client created
    own_facts: dict[int, tuple[str, str]] = field(default_factory=dict)
    session: list[dict[str, Any]] = field(default_factory=list)  # OpenClaw messages, oldest first
    session_id: str = ""


def near_duplicate(fact: str, rng: random.Random) -> str:
    """The same statement with a trivial change, so its MiniLM cosine stays above the 0.92 dedup bar."""
    stem = fact[:-1] if fact.endswith(".") else fact
    return rng.choice((f"{stem}!", f"Note: {fact}", f"{stem}, as I said."))


def conversation_turn(state: ClientState, vocabulary: list[str], turn: int) -> list[dict[str, Any]]:
    """One user message (often one the rules extractor keeps), the reply, sometimes a tool message."""
    rng = state.rng
    thing, thing2 = rng.choice(vocabulary), rng.choice(vocabulary)
    user_text = rng.choice(
        (
            f"Remember that my favorite {thing} is in {rng.choice(PLACES)}.",
            f"I prefer {thing} over {thing2}.",
            f"My {rng.choice(TOPICS)} plan is to {thing} with {rng.choice(NAMES)}.",
            f"What do you think about {thing} and {thing2}?",
            f"We talked about {thing} yesterday, nothing important.",
        )
    )
    stamp = 1_700_000_000_000 + turn * 60_000
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": [{"type": "text", "text": user_text}], "timestamp": stamp},
        {"role": "assistant", "content": f"Noted about {thing}.", "timestamp": stamp + 1000},
    ]
    if rng.random() < 0.2:  # tool output: skipped by the daemon, but part of what OpenClaw sends
        messages.append(
            {"role": "toolResult", "content": [{"type": "text", "text": f"search: 3 hits for {thing}"}]}
        )
    return messages


Operation = Callable[["LoadContext", ClientState], Awaitable[None]]


@dataclass
class LoadContext:
    client: httpx.AsyncClient
    recorder: Recorder
    workload: Workload

    async def request(
        self, op: str, method: str, url: str, *, body: Any = None, params: dict[str, str] | None = None
    ) -> httpx.Response | None:
        return await timed_request(self.client, self.recorder, op, method, url, body=body, params=params)


def json_of(response: httpx.Response) -> dict[str, Any]:
    try:
        payload = response.json()
    except ValueError:
        return {}
    return payload if isinstance(payload, dict) else {}


async def do_search(ctx: LoadContext, state: ClientState) -> None:
    body = {"query": ctx.workload.query(), "user_id": state.user_id, "limit": SEARCH_LIMIT}
    await ctx.request(OP_SEARCH, "POST", "/hybrid-search", body=body)


async def do_write(ctx: LoadContext, state: ClientState) -> None:
    duplicate_of = None
    if state.own_facts and state.rng.random() < NEAR_DUPLICATE_SHARE:
        duplicate_of = state.rng.choice(list(state.own_facts))
        # Same topic: the daemon embeds "topic: fact", so only the wording of the fact changes.
        topic, original = state.own_facts[duplicate_of]
        fact = near_duplicate(original, state.rng)
    else:
        topic, fact = ctx.workload.fact()
    op = OP_WRITE if duplicate_of is None else OP_WRITE_DUPLICATE
    body = {"user_id": state.user_id, "topic": topic, "fact": fact, "importance": state.rng.randint(1, 10)}
    response = await ctx.request(op, "POST", "/memories", body=body)
    if response is None:
        return
    created = json_of(response)
    memory_id = created.get("id")
    if created.get("action") == "merged":
        ctx.recorder.merged[op] += 1
        if memory_id in state.own_facts:
            state.own_facts[memory_id] = (topic, fact)  # the merge keeps the newer wording
    elif isinstance(memory_id, int):
        state.own_facts[memory_id] = (topic, fact)


async def do_patch(ctx: LoadContext, state: ClientState) -> None:
    if not state.own_facts:
        await do_write(ctx, state)
        return
    memory_id = state.rng.choice(list(state.own_facts))
    body: dict[str, Any]
    if state.rng.random() < 0.5:
        body = {"importance": state.rng.randint(1, 10)}
    else:
        topic, fact = ctx.workload.fact()  # new text: re-embedded
        body = {"fact": fact, "topic": topic}
        state.own_facts[memory_id] = (topic, fact)
    params = {"user_id": state.user_id}
    await ctx.request(OP_PATCH, "PATCH", f"/memories/{memory_id}", body=body, params=params)


async def do_delete(ctx: LoadContext, state: ClientState) -> None:
    if not state.own_facts:
        await do_write(ctx, state)
        return
    memory_id = state.rng.choice(list(state.own_facts))
    del state.own_facts[memory_id]
    params = {"user_id": state.user_id}
    await ctx.request(OP_DELETE, "DELETE", f"/memories/{memory_id}", params=params)


async def do_ingest(ctx: LoadContext, state: ClientState) -> None:
    state.session.extend(conversation_turn(state, ctx.workload.vocabulary, len(state.session)))
    now = state.rng.random() < INGEST_NOW_SHARE
    body = {
        "messages": state.session,
        "session_id": state.session_id,
        "channel": "telegram",
        "user_id": state.user_id,
        "debounce": not now,
    }
    await ctx.request(OP_INGEST_NOW if now else OP_INGEST, "POST", "/ingest", body=body)


OPERATIONS: dict[str, Operation] = {
    "search": do_search,
    "write": do_write,
    "patch": do_patch,
    "delete": do_delete,
    "ingest": do_ingest,
}


def new_client(index: int, workload: Workload, seed: int) -> ClientState:
    state = ClientState(index, user_of(index, workload.users), random.Random(seed * 1000 + index))
    state.session_id = f"agent:main:load-{index}"
    while len(state.session) < workload.history:  # an ongoing conversation, not a fresh one
        state.session.extend(conversation_turn(state, workload.vocabulary, len(state.session)))
    return state


async def run_client(ctx: LoadContext, state: ClientState, mix: dict[str, int], stop_at: float) -> None:
    """Requests back to back, each drawn from the mix, until ``stop_at`` (perf_counter)."""
    names, weights = list(mix), list(mix.values())
    while time.perf_counter() < stop_at:
        await OPERATIONS[state.rng.choices(names, weights)[0]](ctx, state)


# -- the run -------------------------------------------------------------------------------------
@dataclass
class DaemonUsage:
    """RSS samples and CPU seconds of the daemon while the clients ran."""

    pid: int
    rss_samples: list[int] = field(default_factory=list)
    cpu_s: float = 0.0

    def cpu_now(self) -> float:
        try:
            times = psutil.Process(self.pid).cpu_times()
        except psutil.Error:  # the daemon died: the run reports it elsewhere
            return float("nan")
        return float(times.user + times.system)

    def sample_rss(self) -> None:
        with suppress(psutil.Error):
            self.rss_samples.append(int(psutil.Process(self.pid).memory_info().rss))


async def monitor(usage: DaemonUsage, recorder: Recorder, duration_s: float) -> None:
    """Once a second: the daemon's RSS, and a progress bar with the requests and errors so far."""
    with tqdm(total=int(duration_s), desc="load", unit="s", leave=False) as progress:
        while True:
            usage.sample_rss()
            progress.set_postfix(requests=recorder.total_requests(), errors=recorder.total_errors())
            if progress.n < progress.total:
                progress.update(1)
            await asyncio.sleep(1.0)


@dataclass
class LoadResult:
    recorder: Recorder
    elapsed_s: float
    usage: DaemonUsage
    unfinished_clients: int


async def run_load(url: str, pid: int, workload: Workload, args: argparse.Namespace) -> LoadResult:
    """``args.clients`` clients for ``args.duration`` seconds; bounded by a hard deadline."""
    recorder = Recorder()
    usage = DaemonUsage(pid)
    limits = httpx.Limits(max_connections=args.clients, max_keepalive_connections=args.clients)
    timeout = httpx.Timeout(args.timeout, connect=2.0)
    clients = [new_client(i, workload, args.seed) for i in range(args.clients)]
    async with httpx.AsyncClient(base_url=url, limits=limits, timeout=timeout) as client:
        ctx = LoadContext(client, recorder, workload)
        started = time.perf_counter()
        cpu_before = usage.cpu_now()
        stop_at = started + args.duration
        tasks = [asyncio.create_task(run_client(ctx, state, args.mix, stop_at)) for state in clients]
        monitor_task = asyncio.create_task(monitor(usage, recorder, args.duration))
        try:
            done, unfinished = await asyncio.wait(
                tasks, timeout=args.duration + args.timeout + HARD_DEADLINE_GRACE_S
            )
        finally:
            for task in [*tasks, monitor_task]:
                task.cancel()
            await asyncio.gather(*tasks, monitor_task, return_exceptions=True)
        elapsed_s = time.perf_counter() - started
        usage.cpu_s = usage.cpu_now() - cpu_before
        usage.sample_rss()
    for task in done:  # a client that died of something else than a failed request: a bug here
        if not task.cancelled() and task.exception() is not None:
            raise BenchError(f"a client crashed: {task.exception()!r}") from task.exception()
    return LoadResult(recorder, elapsed_s, usage, len(unfinished))


@dataclass
class LogScan:
    """What the daemon's log says about the run."""

    database_locked: int = 0
    error_records: int = 0
    traceback_lines: int = 0
    warning_records: int = 0
    fts_only_searches: int = 0
    error_messages: Counter[str] = field(default_factory=Counter)

    @property
    def clean(self) -> bool:
        return not (self.database_locked or self.error_records or self.traceback_lines)


def scan_log(path: Path, load_from: int = 0) -> LogScan:
    """Count lines with "database is locked" or "Traceback", ERROR/CRITICAL and WARNING records
    (JSON or not) in the whole log, and FTS-only searches past byte ``load_from`` (the clients' part).
    """
    scan = LogScan()
    if not path.exists():
        return scan
    with open(path, "rb") as handle:
        offset = 0
        for raw in handle:
            line = raw.decode("utf-8", errors="replace")
            scan.database_locked += "database is locked" in line
            scan.traceback_lines += "Traceback" in line
            try:
                record = json.loads(line)
            except ValueError:
                record = None
            if isinstance(record, dict):
                level, message = record.get("level"), str(record.get("message"))
            else:  # a line some library printed itself
                level, message = next(
                    ((name, line.strip()[:200]) for name in LOG_LEVELS if line.startswith(name)), (None, "")
                )
            if level in ("ERROR", "CRITICAL"):
                scan.error_records += 1
                scan.error_messages[message] += 1
            scan.warning_records += level == "WARNING"
            scan.fts_only_searches += offset >= load_from and message == FTS_ONLY_EVENT
            offset += len(raw)
    return scan


def after_load(url: str) -> tuple[float | None, dict[str, Any]]:
    """Is the daemon still answering (``/health`` in ms, None if not), and its ``/stats``."""
    timeout = httpx.Timeout(10.0, connect=2.0)
    with httpx.Client(base_url=url, timeout=timeout) as client:
        try:
            started = time.perf_counter()
            health = client.get("/health")
            health_ms = (time.perf_counter() - started) * 1000 if health.status_code == 200 else None
            stats = client.get("/stats")
            return health_ms, stats.json() if stats.status_code == 200 else {}
        except (httpx.HTTPError, ValueError):
            return None, {}


def prepare_database(workdir: Path, args: argparse.Namespace) -> Path:
    """Build (or reuse) the pristine database, and return a fresh copy for this run to change."""
    pristine = workdir / f"load-{args.memories}-{args.users}u-s{args.seed}.db"
    build_s = build_database(pristine, args.memories, args.users, args.seed, ZIPF_OFFSET)
    print(
        f"{args.memories:,} memories / {args.users} users: "
        + ("reused" if build_s is None else f"built in {build_s:.1f}s"),
        flush=True,
    )
    run_copy = workdir / "load-run.db"
    remove_database(run_copy)
    shutil.copyfile(pristine, run_copy)  # the builder checkpoints: no -wal file to copy
    label_vectors(run_copy, recorded_model({**os.environ, **args.settings_env}))
    return run_copy


def recorded_model(environment: Mapping[str, str]) -> str:
    """The model name a daemon run in ``environment`` searches (``embeddings.quantize`` changes it);
    a setting of the user's config file is not seen: pass it with --set."""
    from memory_cortex.config import EmbeddingsConfig

    prefix = "MEMORY_CORTEX_EMBEDDINGS__"
    chosen = {
        name[len(prefix) :].lower(): value for name, value in environment.items() if name.startswith(prefix)
    }
    return EmbeddingsConfig.model_validate(chosen).recorded_model


def label_vectors(db_path: Path, model: str) -> None:
    """Record the copy's (random) vectors as ``model``'s, so the run's daemon searches them."""
    with closing(sqlite3.connect(db_path)) as conn, conn:
        conn.execute("UPDATE memories SET embedding_model = ? WHERE embedding IS NOT NULL", (model,))


def run(args: argparse.Namespace, workdir: Path) -> dict[str, Any]:
    db_path = prepare_database(workdir, args)
    log_path = workdir / "load-run-daemon.log"
    log_path.unlink(missing_ok=True)
    workload = Workload.build(args.seed, args.users, args.history)
    env = {
        "MEMORY_CORTEX_LLM__BACKEND": "rules",
        "MEMORY_CORTEX_HARDWARE__ENABLED": "false",
        "MEMORY_CORTEX_INGEST__DEBOUNCE_S": str(args.debounce_s),
        **args.settings_env,
    }
    daemon = Daemon(db_path, log_path, env=env)
    exit_status: int | None = None
    try:
        startup_s = daemon.start()
        with httpx.Client(base_url=daemon.url, timeout=httpx.Timeout(30.0, connect=2.0)) as client:
            for query in workload.queries[-args.warmup :] if args.warmup else []:
                response = client.post(
                    "/hybrid-search", json={"query": query, "user_id": user_of(0, args.users)}
                )
                if response.status_code != 200:
                    raise BenchError(f"warm-up search answered {response.status_code}: {response.text[:300]}")
        _, other_cores_before = wait_for_quiet([os.getpid(), daemon.pid], max_wait_s=args.quiet_wait)
        rss_before = daemon.rss_bytes()
        load_from = daemon.log_position()
        print(f"daemon up in {startup_s:.1f}s; {args.clients} clients for {args.duration:g}s …", flush=True)
        with CpuWatch([os.getpid(), daemon.pid]) as cpu:
            result = asyncio.run(run_load(daemon.url, daemon.pid, workload, args))
        health_ms, stats = after_load(daemon.url)
    finally:
        exit_status = daemon.stop()
    return summarise(args, result, stats, scan_log(log_path, load_from)) | {
        "startup_s": round(startup_s, 2),
        "health_after_load_ms": None if health_ms is None else round(health_ms, 1),
        "daemon_exit_status": exit_status,
        "daemon_rss_before_mb": round(rss_before / MB, 1),
        "other_cores_before": round(other_cores_before, 2),
        "other_cores": round(cpu.other_cores, 2),
        "daemon_log": str(log_path) if args.workdir else None,
    }


def rounded_percentile(values: list[float], q: float) -> float | None:
    """For the JSON file: None, not NaN, when an endpoint had no successful request."""
    return round(percentile(values, q), 2) if values else None


def summarise(
    args: argparse.Namespace, result: LoadResult, stats: dict[str, Any], log: LogScan
) -> dict[str, Any]:
    recorder, elapsed = result.recorder, result.elapsed_s
    endpoints = []
    for op in ALL_OPS:
        ok = recorder.latencies_ms[op]
        endpoints.append(
            {
                "endpoint": op,
                "requests": recorder.requests(op),
                "errors": recorder.errors[op].total(),
                "error_kinds": dict(recorder.errors[op]),
                "p50_ms": rounded_percentile(ok, 50),
                "p95_ms": rounded_percentile(ok, 95),
                "p99_ms": rounded_percentile(ok, 99),
                "ok_per_s": round(len(ok) / elapsed, 2),
                "merged": recorder.merged[op],
            }
        )
    all_ok = [ms for op in ALL_OPS for ms in recorder.latencies_ms[op]]
    all_errors: Counter[str] = Counter()
    for errors in recorder.errors.values():
        all_errors.update(errors)
    samples = result.usage.rss_samples or [0]
    ingest = stats.get("ingest", {}) if isinstance(stats.get("ingest"), dict) else {}
    return {
        "revision": git_revision(),
        "settings": list(args.set),
        "memories": args.memories,
        "users": args.users,
        "clients": args.clients,
        "duration_s": args.duration,
        "elapsed_s": round(elapsed, 2),
        "mix": args.mix,
        "debounce_s": args.debounce_s,
        "request_timeout_s": args.timeout,
        "endpoints": endpoints,
        "total": {
            "requests": recorder.total_requests(),
            "errors": recorder.total_errors(),
            "error_kinds": dict(all_errors),
            "p50_ms": rounded_percentile(all_ok, 50),
            "p95_ms": rounded_percentile(all_ok, 95),
            "p99_ms": rounded_percentile(all_ok, 99),
            "ok_per_s": round(len(all_ok) / elapsed, 2),
        },
        "unfinished_clients": result.unfinished_clients,
        "daemon_rss_peak_mb": round(max(samples) / MB, 1),
        "daemon_rss_end_mb": round(samples[-1] / MB, 1),
        "daemon_cpu_cores": round(result.usage.cpu_s / elapsed, 2),
        "live_memories_after": stats.get("live_memories"),
        "ingest_after": {k: ingest.get(k) for k in ("pending", "running", "done", "failed")},
        "log": {
            "database_locked": log.database_locked,
            "error_records": log.error_records,
            "traceback_lines": log.traceback_lines,
            "warning_records": log.warning_records,
            "fts_only_searches": log.fts_only_searches,
            "top_error_messages": dict(log.error_messages.most_common(5)),
        },
    }


# -- the report ----------------------------------------------------------------------------------
def error_kinds(kinds: dict[str, int]) -> str:
    return ", ".join(f"{kind} ×{n}" for kind, n in sorted(kinds.items(), key=lambda kv: -kv[1])) or "-"


def failures(report: dict[str, Any]) -> list[str]:
    """Why this run failed; empty when it passed."""
    log = report["log"]
    reasons = []
    if report["total"]["errors"]:
        reasons.append(f"{report['total']['errors']} failed requests")
    if log["database_locked"]:
        reasons.append(f'"database is locked" ×{log["database_locked"]} in the daemon log')
    if log["error_records"] or log["traceback_lines"]:
        reasons.append(
            f"{log['error_records']} ERROR records / {log['traceback_lines']} Traceback lines in the log"
        )
    if report["health_after_load_ms"] is None:
        reasons.append("/health did not answer after the load")
    if report["daemon_exit_status"] not in (0, None):
        reasons.append(f"daemon exited with status {report['daemon_exit_status']} on SIGTERM")
    return reasons


def print_report(report: dict[str, Any]) -> None:
    rows = [
        [
            e["endpoint"],
            e["requests"],
            e["errors"],
            error_kinds(e["error_kinds"]),
            e["p50_ms"],
            e["p95_ms"],
            e["p99_ms"],
            e["ok_per_s"],
            e["merged"],
        ]
        for e in report["endpoints"]
    ]
    total = report["total"]
    rows.append(
        [
            "total",
            total["requests"],
            total["errors"],
            error_kinds(total["error_kinds"]),
            total["p50_ms"],
            total["p95_ms"],
            total["p99_ms"],
            total["ok_per_s"],
            sum(e["merged"] for e in report["endpoints"]),
        ]
    )
    print()
    print(
        format_table(
            ["endpoint", "requests", "errors", "error kinds", "p50 ms", "p95 ms", "p99 ms", "ok/s", "merged"],
            rows,
            title=f"{report['clients']} clients × {report['elapsed_s']:.1f}s, {report['memories']:,} memories /"
            f" {report['users']} users, mix {report['mix']}; latency of 2xx answers; merged = writes"
            " dedup answered with action 'merged'",
        )
    )
    log, ingest = report["log"], report["ingest_after"]
    searches = next(e["requests"] for e in report["endpoints"] if e["endpoint"] == OP_SEARCH)
    print()
    print(
        format_table(
            ["measure", "value"],
            [
                ["daemon start-up s", report["startup_s"]],
                [
                    "daemon RSS MB: before / peak / end",
                    f"{report['daemon_rss_before_mb']} / "
                    f"{report['daemon_rss_peak_mb']} / {report['daemon_rss_end_mb']}",
                ],
                ["daemon CPU (cores, mean over the run)", report["daemon_cpu_cores"]],
                [
                    "other processes' CPU (cores): before / during",
                    f"{report['other_cores_before']} / {report['other_cores']}",
                ],
                ["clients cut off at the hard deadline", report["unfinished_clients"]],
                ["/health after the load, ms", report["health_after_load_ms"]],
                [
                    "ingest jobs after: pending / running / done / failed",
                    " / ".join(str(ingest[k]) for k in ("pending", "running", "done", "failed")),
                ],
                ["live memories after", report["live_memories_after"]],
                ['log: "database is locked" lines', log["database_locked"]],
                [
                    "log: ERROR records / Traceback lines",
                    f"{log['error_records']} / {log['traceback_lines']}",
                ],
                ["log: WARNING records", log["warning_records"]],
                [
                    "log: searches that went FTS-only (query embedding too slow)",
                    f"{log['fts_only_searches']} of {searches}",
                ],
                ["daemon exit status on SIGTERM", report["daemon_exit_status"]],
            ],
            title="daemon",
        )
    )
    for message, n in log["top_error_messages"].items():
        print(f"  ERROR ×{n}: {message}")
    if report.get("daemon_log"):
        print(f"daemon log: {report['daemon_log']}")
    reasons = failures(report)
    if report.get("settings"):
        print(f"settings: {', '.join(report['settings'])}")
    print(
        f"revision {report['revision']}: "
        + ("FAIL: " + "; ".join(reasons) if reasons else "PASS (no errors)")
    )


# -- command line --------------------------------------------------------------------------------
def parse_mix(text: str) -> dict[str, int]:
    """``"search=80,write=8"`` → weights; unknown names and negative or all-zero weights are refused."""
    mix: dict[str, int] = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        name, _, weight = part.partition("=")
        if name.strip() not in OPERATIONS:
            raise argparse.ArgumentTypeError(f"unknown operation {name!r} (known: {', '.join(OPERATIONS)})")
        try:
            mix[name.strip()] = int(weight)
        except ValueError:
            raise argparse.ArgumentTypeError(f"weight of {name!r} is not an integer") from None
    if not mix or min(mix.values()) < 0 or sum(mix.values()) == 0:
        raise argparse.ArgumentTypeError("the mix needs non-negative weights, not all zero")
    return mix


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--memories", type=int, default=20_000, help="memories in the database")
    parser.add_argument(
        "--users", type=int, default=10, help="users the memories (and clients) are spread over"
    )
    parser.add_argument("--clients", type=int, default=50, help="concurrent clients")
    parser.add_argument("--duration", type=float, default=60.0, help="seconds the clients send requests")
    parser.add_argument("--mix", type=parse_mix, default=DEFAULT_MIX, help=f"percent weights ({DEFAULT_MIX})")
    parser.add_argument("--timeout", type=float, default=30.0, help="per-request timeout, seconds")
    parser.add_argument(
        "--debounce-s", type=float, default=2.0, help="the daemon's ingest.debounce_s for the run"
    )
    parser.add_argument(
        "--history", type=int, default=40, help="messages in each client's session at the start"
    )
    parser.add_argument("--warmup", type=int, default=10, help="untimed searches before the clients start")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument(
        "--quiet-wait",
        type=float,
        default=30.0,
        help="wait up to this many seconds for other processes to leave the CPUs alone first (0: do not)",
    )
    add_set_option(parser, "a daemon setting (repeatable), e.g. --set embeddings.backend=onnx")
    parser.add_argument("--workdir", type=Path, help="keep (and reuse) the database here; default: temp")
    parser.add_argument("--json", type=Path, help="also write the numbers to this file")
    args = parser.parse_args(argv)
    try:
        args.settings_env = settings_env(args.set)
    except ValueError as exc:
        parser.error(str(exc))
    if args.memories < 1 or args.users < 1 or args.clients < 1 or args.duration <= 0 or args.timeout <= 0:
        parser.error("--memories, --users, --clients, --duration and --timeout must be positive")
    if args.history < 0 or args.warmup < 0 or args.debounce_s < 0:
        parser.error("--history, --warmup and --debounce-s must be ≥ 0")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    interrupt_on_sigterm()
    try:
        with ExitStack() as stack:
            workdir = workdir_in(stack, args.workdir, "load-bench-")
            report = run(args, workdir)
    except BenchError as exc:
        print(f"load: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("interrupted; daemon stopped (a database in --workdir is reused next time)", file=sys.stderr)
        return 130
    print_report(report)
    if args.json:
        write_json(args.json, report)
        print(f"wrote {args.json}")
    return 1 if failures(report) else 0


if __name__ == "__main__":
    sys.exit(main())
