"""The in-process embedders side by side: the packaged all-MiniLM-L6-v2 on torch
(``sentence_transformers``), on ONNX Runtime (``onnx``) and its 8-bit quantised copy
(``onnx-int8``: ``embeddings.quantize: int8``).

Each backend runs in a child process of its own (so its memory is its own and torch is never loaded
by the ONNX one), through the daemon's own embedder class with the default settings (one core per
model call; ``embeddings.workers`` model threads on ONNX Runtime, 2 by default, one on torch):

- start: from creating the embedder to its first vector (model load, warm-up; for ``onnx`` a
  cached export, made beforehand by an untimed start);
- query p50/p95: one LoCoMo question at a time, as a search embeds its query;
- documents/s: every LoCoMo turn ("Speaker: text"), through ``embed_documents`` as stores write;
- the same turns each after the two before it in its session, as a transcript turn is embedded
  (``embeddings.session_context``: three times the tokens);
- RSS after all of it, and the vectors' largest difference from (and lowest cosine to) the torch
  backend's;
- install size of what the backend needs beyond the other (site-packages folders).

Usage::

    python bench/embedders.py                      # both backends, all turns, 300 questions
    python bench/embedders.py --turns 1000 --json out/embedders.json
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
from _harness import REPO_ROOT, BenchError, format_table, git_revision, percentile, run_main, wait_for_quiet
from locomo_retrieval import DEFAULT_DATA, load_conversations

# Each variant's embeddings settings.
BACKENDS: dict[str, dict[str, str]] = {
    "sentence_transformers": {"backend": "sentence_transformers"},
    "onnx": {"backend": "onnx", "quantize": "none"},
    "onnx-int8": {"backend": "onnx", "quantize": "int8"},
}
# What each backend imports beyond the daemon's other dependencies (top-level site-packages names).
PACKAGES = {"sentence_transformers": ("torch", "sentence_transformers"), "onnx": ("onnxruntime", "onnx")}


def measure(
    backend: str, texts: list[str], contexted: list[str], queries: list[str], cache_dir: str, out: str
) -> None:
    """In the child: start the backend, time it, and write the numbers and the vectors."""
    sys.path.insert(0, str(REPO_ROOT))
    from memory_cortex.config import EmbeddingsConfig
    from memory_cortex.models.embedders import create_embedder

    async def run() -> dict[str, Any]:
        config = EmbeddingsConfig(**BACKENDS[backend], cache_dir=Path(cache_dir))  # type: ignore[arg-type]
        embedder = create_embedder(config)
        started = time.perf_counter()
        await embedder.start()
        start_s = time.perf_counter() - started
        latencies = []
        for query in queries:
            began = time.perf_counter()
            await embedder.embed_query(query)
            latencies.append((time.perf_counter() - began) * 1000)
        began = time.perf_counter()
        vectors = await embedder.embed_documents(texts)
        documents_s = len(texts) / (time.perf_counter() - began)
        began = time.perf_counter()
        await embedder.embed_documents(contexted)
        contexted_s = len(contexted) / (time.perf_counter() - began)
        await embedder.close()
        np.save(out + ".npy", vectors)
        return {
            "start_s": round(start_s, 2),
            "query_p50_ms": round(percentile(latencies, 50), 2),
            "query_p95_ms": round(percentile(latencies, 95), 2),
            "documents_per_s": round(documents_s, 1),
            "contexted_per_s": round(contexted_s, 1),
            "model_threads": config.workers if config.backend == "onnx" else 1,
            "rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
            "torch_loaded": "torch" in sys.modules,
        }

    Path(out).write_text(json.dumps(asyncio.run(run())))


def install_mb(backend: str) -> float:
    """Size of the site-packages folders of what ``backend`` needs."""
    import site

    total = 0
    for root in site.getsitepackages():
        for name in PACKAGES[BACKENDS[backend]["backend"]]:
            folder = Path(root) / name
            if folder.is_dir():
                total += sum(path.stat().st_size for path in folder.rglob("*") if path.is_file())
    return round(total / 1e6)


def in_session_context(turns: list[tuple[str, Any]], texts: list[str]) -> list[str]:
    """Each text after the ones before it in its session (at most ``embeddings.session_context``
    of them), as the daemon embeds a transcript turn."""
    from memory_cortex.config import EmbeddingsConfig

    context = EmbeddingsConfig().session_context
    said: dict[tuple[str, int], list[str]] = {}
    contexted = []
    for (conversation, turn), text in zip(turns, texts, strict=True):
        earlier = said.setdefault((conversation, turn.session), [])
        contexted.append("\n".join([*earlier[len(earlier) - context :], text] if context else [text]))
        earlier.append(text)
    return contexted


def run(args: argparse.Namespace) -> dict[str, Any]:
    conversations, _ = load_conversations(args.data.resolve())
    turns = [(conv.sample_id, turn) for conv in conversations for turn in conv.turns][: args.turns]
    texts = [f"{turn.speaker}: {turn.text}" for _, turn in turns]
    contexted = in_session_context(turns, texts)
    questions = [q.question for conv in conversations for q in conv.questions][: args.questions]
    results: dict[str, Any] = {}
    vectors: dict[str, np.ndarray] = {}
    with tempfile.TemporaryDirectory(prefix="embedders-bench-") as workdir:
        inputs = Path(workdir) / "inputs.json"
        inputs.write_text(json.dumps({"texts": texts, "contexted": contexted, "queries": questions}))
        cache_dir = str(Path(workdir) / "cache")
        for backend in args.backends:
            if backend.startswith("onnx"):  # the one-time export, outside the timing
                _child(
                    backend,
                    inputs,
                    cache_dir,
                    Path(workdir) / "export-run",
                    ["--questions", "1", "--turns", "1"],
                )
            wait_for_quiet([os.getpid()], max_wait_s=args.quiet_wait)
            out = Path(workdir) / backend
            _child(backend, inputs, cache_dir, out, [])
            results[backend] = json.loads(out.read_text())
            results[backend]["install_mb"] = install_mb(backend)
            vectors[backend] = np.load(str(out) + ".npy")
    reference = vectors.get("sentence_transformers")
    for backend, found in vectors.items():
        results[backend]["max_abs_diff_vs_torch"] = (
            float(np.abs(found - reference).max()) if reference is not None else None
        )
        results[backend]["min_cosine_vs_torch"] = (
            float((found * reference).sum(axis=1).min()) if reference is not None else None
        )
    return {
        "revision": git_revision(),
        "turns": len(texts),
        "questions": len(questions),
        "backends": results,
    }


def _child(backend: str, inputs: Path, cache_dir: str, out: Path, extra: list[str]) -> None:
    command = [
        sys.executable,
        __file__,
        "--child",
        backend,
        "--inputs",
        str(inputs),
        "--cache-dir",
        cache_dir,
    ]
    child = subprocess.run([*command, "--out", str(out), *extra], capture_output=True, text=True, check=False)
    if child.returncode != 0:
        raise BenchError(f"{backend}: {child.stderr.strip()[-800:]}")


def print_report(report: dict[str, Any]) -> None:
    rows = [
        [
            name,
            numbers["model_threads"],
            numbers["start_s"],
            numbers["query_p50_ms"],
            numbers["query_p95_ms"],
            numbers["documents_per_s"],
            numbers["contexted_per_s"],
            numbers["rss_mb"],
            numbers["install_mb"],
            "yes" if numbers["torch_loaded"] else "no",
            "—" if numbers["max_abs_diff_vs_torch"] is None else f"{numbers['max_abs_diff_vs_torch']:.1e}",
            "—" if numbers["min_cosine_vs_torch"] is None else f"{numbers['min_cosine_vs_torch']:.4f}",
        ]
        for name, numbers in report["backends"].items()
    ]
    print(
        format_table(
            [
                "backend",
                "model threads",
                "start s",
                "query p50 ms",
                "query p95 ms",
                "turns/s",
                "turns in context/s",
                "RSS MB",
                "install MB",
                "torch",
                "max |Δ| vs torch",
                "min cosine vs torch",
            ],
            rows,
            title=f"in-process embedders, one core per model call ({report['turns']} LoCoMo turns, {report['questions']} questions)",
        )
    )
    print(f"revision {report['revision']}")


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="folder with conv-*.json")
    parser.add_argument(
        "--backends", default=",".join(BACKENDS), help="comma-separated, of: " + ", ".join(BACKENDS)
    )
    parser.add_argument("--turns", type=int, default=100_000, help="at most this many turns to embed")
    parser.add_argument("--questions", type=int, default=300, help="queries embedded one at a time")
    parser.add_argument(
        "--quiet-wait", type=float, default=30.0, help="wait for quiet CPUs before each backend"
    )
    parser.add_argument("--json", type=Path, help="also write the numbers to this file")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--inputs", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--cache-dir", help=argparse.SUPPRESS)
    parser.add_argument("--out", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    args.backends = [name.strip() for name in args.backends.split(",") if name.strip()]
    if set(args.backends) - set(BACKENDS):
        parser.error(f"--backends: choose from {', '.join(BACKENDS)}")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.child:
        inputs = json.loads(args.inputs.read_text())
        measure(
            args.child,
            inputs["texts"][: args.turns],
            inputs["contexted"][: args.turns],
            inputs["queries"][: args.questions],
            args.cache_dir,
            args.out,
        )
        return 0
    return run_main("embedders", args.json, lambda: run(args), print_report, interrupted="interrupted")


if __name__ == "__main__":
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    sys.exit(main())
