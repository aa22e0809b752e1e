"""Vector search on PostgreSQL: pgvector's HNSW index answers what the in-memory matrix answers on SQLite.

Why the database's index and not a matrix per daemon: several daemons share one PostgreSQL, and a
matrix in each would miss the others' writes; and at a million memories the matrix alone costs
gigabytes of RAM per daemon. Here every write is already in the index when it commits (the
``embedding_vector`` column is generated from the BLOB, and the HNSW index follows the table).

The class offers the same methods as :class:`~memory_cortex.store.vectors.VectorIndex`, so the
services use either. The methods that keep a matrix in step (``upsert``, ``remove``, …) have
nothing to do here. Every other method reads the database and blocks: callers run them in a thread
(``in_database`` tells them so).

HNSW needs a fixed dimension, while the table holds vectors of any model: one partial index per
dimension, on ``embedding_vector::vector(D)`` for the rows with ``embedding_dim = D``, created at
start-up for the live model's dimension (:meth:`PostgresVectorIndex.prepare`).
"""

from __future__ import annotations

import logging
import time
import zlib
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
import psycopg

from ...errors import StoreUnavailable
from ...records import EVERYONE, Audience, Scope
from ...vectormath import normalize
from ..retrieval import in_scope_sql
from ..vectors import VectorHit
from .connection import PgConnection
from .db import PostgresDatabase, first_line

log = logging.getLogger(__name__)

# Taken while an HNSW index is built, so two daemons starting together build it once.
INDEX_BUILD_LOCK = zlib.crc32(b"memory-cortex:hnsw")

# The HNSW search list: at least this, and twice the rows asked for (pgvector's default is 40),
# at most pgvector's ceiling (a larger value is an error, not a clamp). Past it the iterative scan
# still returns more rows: ``ef_search`` sizes each step of the walk, not the answer.
# Why 300: the graph holds every user's rows and a user's share of them is all the walk may return,
# so the list must be long. Measured (tests/store/test_postgres_vectors.py): 3,000 random 384-d
# vectors for each of two users, recall@10 of the HNSW plan was 0.66-0.72 at 100, 0.88-0.90 at 200,
# 0.95-0.96 at 300, 0.98 at 400; on 6,000 real MiniLM sentence vectors it was 1.0 from 100 up.
# A longer list also makes the planner prefer the exact plan (user index, then sort) on a small store.
MIN_EF_SEARCH = 300
MAX_EF_SEARCH = 1000


def vector_literal(vector: np.ndarray) -> str:
    """A vector as pgvector's text form; ``repr`` of a float32 round-trips it exactly."""
    return "[" + ",".join(repr(float(value)) for value in np.asarray(vector, dtype=np.float32)) + "]"


def _index_state(raw: Any, name: str) -> str:
    """``valid``, ``invalid`` (a concurrent build cut short) or ``missing``."""
    row = raw.execute(
        "SELECT i.indisvalid FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid"
        " WHERE c.relname = %s AND c.relnamespace = current_schema()::regnamespace",
        (name,),
    ).fetchone()
    return "missing" if row is None else "valid" if row[0] else "invalid"


def hnsw_index_name(dim: int) -> str:
    return f"memories_embedding_hnsw_{int(dim)}"


def ef_search(k: int) -> int:
    """``hnsw.ef_search`` for a search of ``k`` rows (see :data:`MIN_EF_SEARCH`)."""
    return min(MAX_EF_SEARCH, max(MIN_EF_SEARCH, 2 * k))


def _cosine(value: Any) -> float:
    """pgvector's cosine as the in-memory index gives it: a zero vector (NaN there) scores 0."""
    cosine = float(value)
    return 0.0 if cosine != cosine else cosine


class PostgresVectorIndex:
    """Cosine search over each user's live memories, in PostgreSQL (see the module docstring).

    Args:
        db: the open store; its read pool serves the searches.
        model: the embedding model whose vectors are searched (rows of other models never are).
        dim: vector length (``None`` until the embedder says; then nothing is found).
    """

    in_database = True
    version = None  # no in-process version: other daemons write too, so nothing may be cached by it

    def __init__(self, db: PostgresDatabase, model: str, dim: int | None = None) -> None:
        self._db = db
        self.model = model
        self.dim = dim

    # -- start-up -----------------------------------------------------------------------------
    def prepare(self) -> int:
        """Create the HNSW index for this dimension if missing and return how many live rows the
        model has. Blocking: minutes on a large store the first time.

        Built ``CONCURRENTLY``: other daemons on the database go on writing meanwhile. A build that
        was cut short leaves an invalid index behind; it is dropped and built again. Daemons
        starting together take turns by polling a lock, never by waiting on it: a session waiting
        in ``pg_advisory_lock`` holds a snapshot the concurrent build must wait for (a deadlock).
        """
        if self.dim is None:
            return 0
        try:
            self._build_index(int(self.dim))
        except psycopg.Error as exc:
            raise StoreUnavailable(
                f"PostgreSQL at {self._db.location}: the vector index could not be built:"
                f" {first_line(exc, self._db.url, self._db.location)}"
            ) from exc
        return len(self)

    def _build_index(self, dim: int) -> None:
        name = hnsw_index_name(dim)
        with self._db.admin_connection() as raw:
            if _index_state(raw, name) != "valid":
                while not raw.execute("SELECT pg_try_advisory_lock(%s)", (INDEX_BUILD_LOCK,)).fetchone()[0]:
                    time.sleep(0.5)  # another daemon builds it; then it is valid here too
                try:
                    state = _index_state(raw, name)
                    if state == "invalid":
                        raw.execute(f"DROP INDEX CONCURRENTLY IF EXISTS {name}")
                    if state != "valid":
                        started = time.perf_counter()
                        log.info("building the vector index", extra={"dim": dim})
                        raw.execute(
                            f"CREATE INDEX CONCURRENTLY IF NOT EXISTS {name} ON memories USING hnsw"
                            f" ((embedding_vector::vector({dim})) vector_cosine_ops) WHERE embedding_dim = {dim}"
                        )
                        log.info(
                            "vector index built",
                            extra={"dim": dim, "seconds": round(time.perf_counter() - started, 1)},
                        )
                finally:
                    raw.execute("SELECT pg_advisory_unlock(%s)", (INDEX_BUILD_LOCK,))

    # -- what the services ask ----------------------------------------------------------------
    def search(
        self,
        user_id: str,
        query: np.ndarray,
        k: int,
        layers: Iterable[str] | None = None,
        kinds: Iterable[str] | None = None,
        audience: Audience = EVERYONE,
        alike: Scope | None = None,
    ) -> list[VectorHit]:
        """Top ``k`` memories of ``user_id`` by cosine to ``query``, best first (the arguments
        mean what they mean for ``VectorIndex.search``)."""
        if self.dim is None or k <= 0 or query.shape[-1] != self.dim:
            return []
        sql, params = self.search_statement(user_id, query, k, layers, kinds, audience, alike)

        def run(conn: PgConnection) -> list[VectorHit]:
            # Filters (user, layer, scope) apply to what the graph walk finds: the iterative scan
            # keeps walking until k rows pass them, in roughly (then exactly, below) cosine order.
            conn.execute(f"SET LOCAL hnsw.ef_search = {ef_search(k)}")
            conn.execute("SET LOCAL hnsw.iterative_scan = relaxed_order")
            rows = conn.execute(sql, params).fetchall()
            return [VectorHit(int(memory_id), _cosine(cosine)) for memory_id, cosine in rows]

        hits = self._db.read_blocking(run)
        return sorted(hits, key=lambda hit: -hit.cosine)

    def search_statement(
        self,
        user_id: str,
        query: np.ndarray,
        k: int,
        layers: Iterable[str] | None = None,
        kinds: Iterable[str] | None = None,
        audience: Audience = EVERYONE,
        alike: Scope | None = None,
    ) -> tuple[str, tuple[Any, ...]]:
        """The SQL :meth:`search` runs and its parameters (the tests EXPLAIN it: its ORDER BY and
        its ``embedding_dim`` test must stay those of the partial index :meth:`prepare` builds)."""
        assert self.dim is not None
        dim = int(self.dim)
        scope, scope_params = in_scope_sql(
            None if layers is None else list(layers),
            None if kinds is None else list(kinds),
            audience=audience,
            dialect=PgConnection.dialect,
        )
        if alike is not None:
            reach = alike.reach
            scope += (
                " AND agent_id IS NOT DISTINCT FROM ? AND visibility = ?"
                " AND (visibility = 'private' OR source_channel IS NOT DISTINCT FROM ?)"
            )
            scope_params = (*scope_params, reach.agent_id, reach.visibility, reach.channel)
        literal = vector_literal(normalize(query)[0])
        sql = (
            f"SELECT id, 1 - (embedding_vector::vector({dim}) <=> ?::vector({dim})) FROM memories"
            f" WHERE embedding_dim = {dim} AND embedding_model = ? AND user_id = ?"
            f" AND superseded_by IS NULL{scope}"
            f" ORDER BY embedding_vector::vector({dim}) <=> ?::vector({dim}) LIMIT ?"
        )
        return sql, (literal, self.model, user_id, *scope_params, literal, k)

    def cosines(self, user_id: str, query: np.ndarray, memory_ids: list[int]) -> dict[int, float]:
        """Exact cosine of ``query`` to the given memories of ``user_id`` (those with a vector of
        the live model)."""
        if self.dim is None or not memory_ids or query.shape[-1] != self.dim:
            return {}
        rows = self._db.read_blocking(
            lambda conn: conn.execute(
                "SELECT id, 1 - (embedding_vector <=> ?::vector) FROM memories"
                " WHERE id = ANY(?) AND user_id = ? AND embedding_model = ? AND embedding_dim = ?"
                " AND superseded_by IS NULL",
                (vector_literal(query), list(memory_ids), user_id, self.model, self.dim),
            ).fetchall()
        )
        return {int(memory_id): _cosine(cosine) for memory_id, cosine in rows}

    def vectors_of(self, user_id: str, memory_ids: list[int]) -> np.ndarray:
        """The normalised vectors of these memories of ``user_id`` (those with one), one row each."""
        if self.dim is None or not memory_ids:
            return np.zeros((0, self.dim or 0), dtype=np.float32)
        rows = self._db.read_blocking(
            lambda conn: conn.execute(
                "SELECT id, embedding FROM memories WHERE id = ANY(?) AND user_id = ? AND embedding_model = ?"
                " AND embedding_dim = ? AND superseded_by IS NULL",
                (list(memory_ids), user_id, self.model, self.dim),
            ).fetchall()
        )
        found = {int(memory_id): blob for memory_id, blob in rows}
        blobs = [found[mid] for mid in memory_ids if mid in found]
        if not blobs:
            return np.zeros((0, self.dim), dtype=np.float32)
        return normalize(np.frombuffer(b"".join(blobs), dtype="<f4").reshape(len(blobs), self.dim))

    def contains(self, memory_id: int) -> bool:
        """Whether a search can find this memory (live, with a vector of the model and dimension)."""
        return bool(
            self._db.read_blocking(
                lambda conn: conn.execute(
                    "SELECT EXISTS (SELECT 1 FROM memories WHERE id = ? AND embedding_model = ?"
                    " AND embedding_dim = ? AND embedding IS NOT NULL AND superseded_by IS NULL)",
                    (memory_id, self.model, self.dim),
                ).fetchone()[0]
            )
        )

    def share_of(self, user_id: str) -> float:
        """1.0: PostgreSQL's full-text search filters by user inside the index scan, so it needs
        no window sized by the user's share (SQLite's FTS5 path does)."""
        return 1.0

    def __len__(self) -> int:
        """Live rows embedded by the model (at this dimension once it is known: the rows a search
        can find). A count: callers run it in a thread."""
        where, params = self._embedded_by_model()
        sql = f"SELECT count(*) FROM memories WHERE {where}"
        return int(self._db.read_blocking(lambda conn: conn.execute(sql, params).fetchone()[0]))

    def _embedded_by_model(self) -> tuple[str, tuple[Any, ...]]:
        """The live rows this index covers: the model's, of its dimension when known."""
        where = "embedding_model = ? AND embedding IS NOT NULL AND superseded_by IS NULL"
        if self.dim is None:
            return where, (self.model,)
        return where + " AND embedding_dim = ?", (self.model, int(self.dim))

    # -- nothing to keep in step ---------------------------------------------------------------
    def upsert(self, *args: Any, **kwargs: Any) -> None:
        """Nothing: the row's own columns are the index."""

    def set_layer(self, memory_id: int, layer: str) -> None:
        """Nothing: the row's own columns are the index."""

    def remove(self, memory_id: int) -> None:
        """Nothing: the row's own columns are the index."""

    def sync(self, wanted: dict[int, Any]) -> int:
        """Nothing: the row's own columns are the index."""
        return 0

    def layers_by_id(self) -> dict[int, tuple[str, str, str, Scope]]:
        """Nothing to check against the store: the index is the store's."""
        return {}

    def count_by_user(self) -> dict[str, int]:
        """Live rows per user (those ``__len__`` counts)."""
        where, params = self._embedded_by_model()
        rows: Sequence[Any] = self._db.read_blocking(
            lambda conn: conn.execute(
                f"SELECT user_id, count(*) FROM memories WHERE {where} GROUP BY user_id", params
            ).fetchall()
        )
        return {str(user): int(count) for user, count in rows}
