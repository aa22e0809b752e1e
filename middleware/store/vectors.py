"""The in-memory vector index: one normalised float32 matrix per user, kept in step with the BLOBs.

Why per user: search is always scoped to one user, so a per-user matrix makes that scope a
dictionary lookup rather than a mask over everyone's rows, and one matrix-vector product scores all
of that user's memories (not the newest 500, as the seed did). SQLite stays the source of truth:
the index is rebuilt from the BLOBs at start-up and updated after each committed write.

Only rows embedded by the live model, not superseded, are in the index; anything else is simply
absent, so vectors of different models are never compared.

Large users (more rows than ``exact_max_rows``) are searched in two steps, because the product over
100k × 384 floats reads 150 MB and is bound by memory bandwidth (~8 ms on the reference box): a
1-bit code per dimension (its sign, 48 bytes a row; the Hamming distance between sign codes
tracks the angle between the vectors) picks the ``shortlist`` rows nearest in Hamming distance, and only those get their exact cosine
from the float32 matrix. The cosines returned are always exact; what can differ from a full scan
is that a true top-k row misses the shortlist — measured on real MiniLM vectors in the tests.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

_INITIAL_CAPACITY = 64


def normalize(vectors: np.ndarray) -> np.ndarray:
    """L2-normalise rows (a zero row stays zero), as float32."""
    vectors = np.asarray(vectors, dtype=np.float32)
    if vectors.ndim == 1:
        vectors = vectors[None, :]
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return (vectors / norms).astype(np.float32, copy=False)


def to_blob(vector: np.ndarray) -> bytes:
    """Little-endian float32 bytes, the on-disk form of an embedding."""
    return np.asarray(vector, dtype="<f4").tobytes()


def from_blob(blob: bytes, dim: int | None = None) -> np.ndarray:
    """Inverse of :func:`to_blob`; checks the length when ``dim`` is known."""
    vector = np.frombuffer(blob, dtype="<f4")
    if dim is not None and vector.shape[0] != dim:
        raise ValueError(f"embedding has {vector.shape[0]} values, expected {dim}")
    return vector.astype(np.float32)


def sign_codes(vectors: np.ndarray) -> np.ndarray:
    """One bit per dimension (positive or not), packed into uint64 words per row.

    Plain signs, not signs around the rows' mean: centring only the stored rows skews their
    Hamming distances to a query (measured: it lost a fifth of the true top 10 on MiniLM vectors).
    """
    packed = np.packbits(vectors > 0, axis=1)
    pad = (-packed.shape[1]) % 8
    if pad:
        packed = np.pad(packed, ((0, 0), (0, pad)))
    return np.ascontiguousarray(packed).view(np.uint64)


class _UserMatrix:
    """Rows of one user in a growable matrix; deletes swap the last row into the hole.

    ``codes`` (the 1-bit shortlist codes) exist only once the user is large enough to need them,
    and from then on follow every upsert, move and removal like the matrix does.
    """

    def __init__(self, dim: int, capacity: int = _INITIAL_CAPACITY) -> None:
        self.matrix = np.zeros((capacity, dim), dtype=np.float32)
        self.ids = np.zeros(capacity, dtype=np.int64)
        self.size = 0
        self.row_of: dict[int, int] = {}
        self.codes: np.ndarray | None = None

    def enable_codes(self) -> None:
        """Code every row (once, when the user grows large)."""
        codes = sign_codes(self.matrix[: self.size])
        self.codes = np.zeros((self.ids.shape[0], codes.shape[1]), dtype=np.uint64)
        self.codes[: self.size] = codes

    def upsert(self, memory_id: int, vector: np.ndarray) -> None:
        row = self.row_of.get(memory_id)
        if row is None:
            if self.size == self.ids.shape[0]:
                self._grow()
            row = self.size
            self.size += 1
            self.row_of[memory_id] = row
            self.ids[row] = memory_id
        self.matrix[row] = vector
        if self.codes is not None:
            self.codes[row] = sign_codes(vector[None, :])[0]

    def remove(self, memory_id: int) -> bool:
        row = self.row_of.pop(memory_id, None)
        if row is None:
            return False
        last = self.size - 1
        if row != last:
            moved_id = int(self.ids[last])
            self.matrix[row] = self.matrix[last]
            self.ids[row] = moved_id
            if self.codes is not None:
                self.codes[row] = self.codes[last]
            self.row_of[moved_id] = row
        self.size = last
        return True

    def _grow(self) -> None:
        capacity = self.ids.shape[0] * 2
        matrix = np.zeros((capacity, self.matrix.shape[1]), dtype=np.float32)
        matrix[: self.size] = self.matrix[: self.size]
        ids = np.zeros(capacity, dtype=np.int64)
        ids[: self.size] = self.ids[: self.size]
        self.matrix, self.ids = matrix, ids
        if self.codes is not None:
            codes = np.zeros((capacity, self.codes.shape[1]), dtype=np.uint64)
            codes[: self.size] = self.codes[: self.size]
            self.codes = codes

    def top(self, query: np.ndarray, k: int, shortlist: int | None) -> tuple[np.ndarray, np.ndarray]:
        """Row numbers and exact cosines of the best ``k`` rows, best first.

        With codes and a ``shortlist`` smaller than the user, only the rows nearest in Hamming
        distance are scored exactly; otherwise every row is.
        """
        if self.codes is not None and shortlist is not None and shortlist < self.size:
            query_code = sign_codes(query[None, :])[0]
            distances = np.bitwise_count(self.codes[: self.size] ^ query_code).sum(axis=1, dtype=np.uint16)
            rows = np.argpartition(distances, shortlist - 1)[:shortlist]
            scores = self.matrix[rows] @ query
        else:
            rows = np.arange(self.size)
            scores = self.matrix[: self.size] @ query
        k = min(k, scores.shape[0])
        best = np.argpartition(-scores, k - 1)[:k] if k < scores.shape[0] else np.arange(scores.shape[0])
        best = best[np.argsort(-scores[best], kind="stable")]
        return rows[best], scores[best]


@dataclass(frozen=True)
class VectorHit:
    memory_id: int
    cosine: float


class VectorIndex:
    """Cosine search over each user's live memories.

    Args:
        model: the embedding model whose vectors this index holds (recorded for /stats).
        dim: vector length; vectors of another length are refused. ``None``: taken from the first
            vector (a remote embedder may not have answered yet at start-up).
        exact_max_rows: users with more rows than this are searched through the 1-bit shortlist
            (``None``: always a full exact scan).
        shortlist: rows the codes hand to the exact cosine in that case.
    """

    def __init__(
        self, model: str, dim: int | None = None, *, exact_max_rows: int | None = None, shortlist: int = 2000
    ) -> None:
        self.model = model
        self.dim = dim
        self.exact_max_rows = exact_max_rows
        self.shortlist = shortlist
        self._users: dict[str, _UserMatrix] = {}
        self._user_of: dict[int, str] = {}
        # Writers (the SQLite writer thread) and searchers (reader threads) share the matrices.
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._user_of)

    def contains(self, memory_id: int) -> bool:
        return memory_id in self._user_of

    def upsert(self, memory_id: int, user_id: str, vector: np.ndarray) -> None:
        """Add or replace one memory's vector (normalised here)."""
        vector = normalize(vector)[0]
        with self._lock:
            if self.dim is None:
                self.dim = int(vector.shape[0])
            if vector.shape[0] != self.dim:
                raise ValueError(f"vector has {vector.shape[0]} values, index holds {self.dim}")
            previous_user = self._user_of.get(memory_id)
            if previous_user is not None and previous_user != user_id:
                self._users[previous_user].remove(memory_id)
            user = self._users.setdefault(user_id, _UserMatrix(self.dim))
            user.upsert(memory_id, vector)
            self._user_of[memory_id] = user_id
            if user.codes is None and self._needs_codes(user.size):
                user.enable_codes()

    def remove(self, memory_id: int) -> None:
        """Forget a memory (deleted, superseded, or re-embedded by another model)."""
        with self._lock:
            user_id = self._user_of.pop(memory_id, None)
            if user_id is not None:
                self._users[user_id].remove(memory_id)

    def load(self, counts: dict[str, int], rows: Iterable[tuple[int, str, bytes]]) -> int:
        """Bulk-fill an empty index at start-up, straight from the BLOBs.

        ``counts`` (rows per user) sizes each matrix up front, so every vector is copied once
        into place and normalised in one pass per user: no per-row lock or growth, and no
        intermediate copies that would stay in the process's resident memory. Rows of another
        length than the index's are skipped. Returns the rows loaded.
        """
        loaded = 0
        with self._lock:
            if self._user_of:
                raise RuntimeError("bulk load needs an empty index")
            users: dict[str, _UserMatrix] = {}
            for memory_id, user_id, blob in rows:
                vector = np.frombuffer(blob, dtype="<f4")
                if self.dim is None:
                    self.dim = int(vector.shape[0])
                if vector.shape[0] != self.dim:
                    continue
                user = users.get(user_id)
                if user is None:
                    user = users[user_id] = _UserMatrix(self.dim, capacity=max(counts.get(user_id, 0), 1))
                if user.size == user.ids.shape[0]:
                    user._grow()
                row = user.size
                user.matrix[row] = vector
                user.ids[row] = memory_id
                user.row_of[memory_id] = row
                user.size += 1
                self._user_of[memory_id] = user_id
                loaded += 1
            for user in users.values():
                live = user.matrix[: user.size]
                norms = np.linalg.norm(live, axis=1, keepdims=True)
                norms[norms == 0] = 1.0
                live /= norms
                if self._needs_codes(user.size):
                    user.enable_codes()
            self._users = users
        return loaded

    def sync(self, wanted: dict[int, tuple[str, np.ndarray]]) -> int:
        """Make the index hold exactly ``wanted`` (id → (user, vector)); returns ids added or removed."""
        stale = [memory_id for memory_id in list(self._user_of) if memory_id not in wanted]
        added = sum(1 for memory_id in wanted if memory_id not in self._user_of)
        for memory_id in stale:
            self.remove(memory_id)
        for memory_id, (user_id, vector) in wanted.items():
            self.upsert(memory_id, user_id, vector)
        return len(stale) + added

    def search(self, user_id: str, query: np.ndarray, k: int) -> list[VectorHit]:
        """Top ``k`` memories of ``user_id`` by cosine to ``query``, best first."""
        query = normalize(query)[0]
        with self._lock:
            user = self._users.get(user_id)
            if user is None or user.size == 0:
                return []
            shortlist = max(self.shortlist, k) if self.exact_max_rows is not None else None
            rows, scores = user.top(query, k, shortlist)
            ids = user.ids[rows]
        return [VectorHit(int(memory_id), float(score)) for memory_id, score in zip(ids, scores, strict=True)]

    def _needs_codes(self, size: int) -> bool:
        return self.exact_max_rows is not None and size > self.exact_max_rows

    def cosines(self, user_id: str, query: np.ndarray, memory_ids: list[int]) -> dict[int, float]:
        """Exact cosine of ``query`` to the given memories of ``user_id`` (those indexed)."""
        query = normalize(query)[0]
        with self._lock:
            user = self._users.get(user_id)
            if user is None:
                return {}
            rows = [(mid, user.row_of[mid]) for mid in memory_ids if mid in user.row_of]
            if not rows:
                return {}
            scores = user.matrix[[row for _, row in rows]] @ query
        return {mid: float(score) for (mid, _), score in zip(rows, scores, strict=True)}

    def share_of(self, user_id: str) -> float:
        """The user's fraction of all indexed rows (1.0 when the index is empty)."""
        with self._lock:
            total = len(self._user_of)
            user = self._users.get(user_id)
        if total == 0:
            return 1.0
        return user.size / total if user is not None else 0.0

    def count_by_user(self) -> dict[str, int]:
        with self._lock:
            return {user: m.size for user, m in self._users.items()}
