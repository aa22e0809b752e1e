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
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
from threadpoolctl import threadpool_limits

from ..vectormath import normalize

_INITIAL_CAPACITY = 64

# The memory layers (migration 004) and kinds (migration 009), numbered for the per-row code
# array: a row's code is its layer's number, plus 4 when it is a turn (codes 0-2 and 4-6, so a
# mask of wanted codes fits in one byte).
LAYERS = ("working", "core", "archive")
KINDS = ("fact", "turn")
_LAYER_CODE = {name: code for code, name in enumerate(LAYERS)}
_TURN_BIT = 4
_ALL_CODES = [layer | kind * _TURN_BIT for kind in range(len(KINDS)) for layer in range(len(LAYERS))]


def row_code(layer: str, kind: str = "fact") -> int:
    """The code of a row in ``layer`` of ``kind``."""
    return _LAYER_CODE[layer] | (_TURN_BIT if kind == "turn" else 0)


def layer_mask(layers: Iterable[str] | None, kinds: Iterable[str] | None = None) -> int | None:
    """A bit per wanted (layer, kind) code (``None``: every row, no filtering)."""
    if layers is None and kinds is None:
        return None
    wanted_layers = LAYERS if layers is None else tuple(layers)
    wanted_kinds = KINDS if kinds is None else tuple(kinds)
    mask = 0
    for layer in wanted_layers:
        for kind in wanted_kinds:
            mask |= 1 << row_code(layer, kind)
    return None if mask == sum(1 << code for code in _ALL_CODES) else mask


def use_one_blas_thread() -> None:
    """Run numpy's BLAS on one thread, for the whole process.

    Why: a search runs FTS5 in one thread and the matrix product in another. With its default
    pool OpenBLAS spreads even a 2000 × 384 product over both cores of the reference box and
    stalls the FTS thread beside it (100k rows, search p95 14.8 → 10.9 ms with one thread).
    The products here are memory-bound, so one thread loses nothing. Torch, which embeds the
    queries, keeps its own thread pool.
    """
    threadpool_limits(limits=1, user_api="blas")


def sign_codes(vectors: np.ndarray) -> np.ndarray:
    """One bit per dimension (positive or not), packed into uint64 words: shape (rows, words).

    Plain signs, not signs around the rows' mean: centring only the stored rows skews their
    Hamming distances to a query (measured: it lost a fifth of the true top 10 on MiniLM vectors).
    """
    packed = np.packbits(vectors > 0, axis=1)
    pad = (-packed.shape[1]) % 8
    if pad:
        packed = np.pad(packed, ((0, 0), (0, pad)))
    return np.ascontiguousarray(packed).view(np.uint64)


def hamming_shortlist(distances: np.ndarray, count: int) -> np.ndarray:
    """Positions of ``count`` smallest ``distances`` (small non-negative ints), in no order.

    A histogram of the distances (at most one bucket per bit) finds the cut-off in one pass,
    several times faster than ``argpartition`` over 100k values; ties at the cut-off are taken
    in row order.
    """
    histogram = np.bincount(distances)
    cutoff = int(np.searchsorted(np.cumsum(histogram), count))
    below = np.flatnonzero(distances < cutoff)
    at_cutoff = np.flatnonzero(distances == cutoff)[: count - below.shape[0]]
    return np.concatenate((below, at_cutoff))


class _UserMatrix:
    """Rows of one user in a growable matrix; deletes swap the last row into the hole.

    ``codes`` (the 1-bit shortlist codes) exist only once the user is large enough to need them,
    and from then on follow every upsert, move and removal like the matrix does. They are stored
    word-major, shape (words, capacity): the Hamming distance of every row is then six passes
    over contiguous arrays, ~6× faster at 100k rows than XOR-ing row-major codes.
    """

    def __init__(self, dim: int, slot: int, capacity: int = _INITIAL_CAPACITY) -> None:
        self.slot = slot  # the user's number in the index's id map
        self.matrix = np.zeros((capacity, dim), dtype=np.float32)
        self.ids = np.zeros(capacity, dtype=np.int64)
        self.layers = np.zeros(capacity, dtype=np.uint8)  # row codes (row_code: layer and kind)
        self.size = 0
        self.codes: np.ndarray | None = None

    def enable_codes(self) -> None:
        """Code every row (once, when the user grows large)."""
        codes = sign_codes(self.matrix[: self.size])
        self.codes = np.zeros((codes.shape[1], self.ids.shape[0]), dtype=np.uint64)
        self.codes[:, : self.size] = codes.T

    def put(self, row: int | None, memory_id: int, vector: np.ndarray, layer: int) -> int:
        """Write ``memory_id``'s vector at ``row`` (None: a new row at the end); returns the row."""
        if row is None:
            if self.size == self.ids.shape[0]:
                self._grow()
            row = self.size
            self.size += 1
            self.ids[row] = memory_id
        self.matrix[row] = vector
        self.layers[row] = layer
        if self.codes is not None:
            self.codes[:, row] = sign_codes(vector[None, :])[0]
        return row

    def remove_row(self, row: int) -> int | None:
        """Drop ``row``: the last row moves into the hole; returns the id that moved (None if none)."""
        last = self.size - 1
        moved_id = None
        if row != last:
            moved_id = int(self.ids[last])
            self.matrix[row] = self.matrix[last]
            self.ids[row] = moved_id
            self.layers[row] = self.layers[last]
            if self.codes is not None:
                self.codes[:, row] = self.codes[:, last]
        self.size = last
        return moved_id

    def _grow(self) -> None:
        capacity = self.ids.shape[0] * 2
        matrix = np.zeros((capacity, self.matrix.shape[1]), dtype=np.float32)
        matrix[: self.size] = self.matrix[: self.size]
        ids = np.zeros(capacity, dtype=np.int64)
        ids[: self.size] = self.ids[: self.size]
        layers = np.zeros(capacity, dtype=np.uint8)
        layers[: self.size] = self.layers[: self.size]
        self.matrix, self.ids, self.layers = matrix, ids, layers
        if self.codes is not None:
            codes = np.zeros((self.codes.shape[0], capacity), dtype=np.uint64)
            codes[:, : self.size] = self.codes[:, : self.size]
            self.codes = codes

    def top(
        self, query: np.ndarray, k: int, shortlist: int | None, layers: int | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """Row numbers and exact cosines of the best ``k`` rows, best first.

        With codes and a ``shortlist`` smaller than the rows searched, only the rows nearest in
        Hamming distance are scored exactly; otherwise every row is. ``layers`` (a
        :func:`layer_mask`) keeps only rows of those layers.
        """
        allowed = None
        if layers is not None:
            allowed = (np.left_shift(np.uint8(1), self.layers[: self.size]) & np.uint8(layers)) != 0
        searched = self.size if allowed is None else int(np.count_nonzero(allowed))
        if searched == 0:
            return np.zeros(0, dtype=np.intp), np.zeros(0, dtype=np.float32)
        if self.codes is not None and shortlist is not None and shortlist < searched:
            query_code = sign_codes(query[None, :])[0]
            distances = np.bitwise_count(self.codes[0, : self.size] ^ query_code[0]).astype(np.uint16)
            for word in range(1, query_code.shape[0]):
                distances += np.bitwise_count(self.codes[word, : self.size] ^ query_code[word])
            if allowed is not None:
                distances[~allowed] = 64 * query_code.shape[0] + 1  # farther than any real row
            rows = hamming_shortlist(distances, shortlist)
            scores = self.matrix[rows] @ query
        elif allowed is not None:
            rows = np.flatnonzero(allowed)
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


class _IdMap:
    """memory id → (user slot, row) for every indexed memory.

    One int64 per id up to the largest (``slot << 32 | row``, −1 = absent) instead of the two dicts
    it replaced (id → user, and per user id → row: ~19 MB of Python objects at 100k memories, now
    under 1 MB). Ids are SQLite rowids, dense from 1; an id far beyond the others (an import that
    kept odd ids) goes to a small dict rather than stretching the array.
    """

    _ROW_BITS = 32
    _ROW_MASK = (1 << _ROW_BITS) - 1

    def __init__(self) -> None:
        self._dense = np.full(1024, -1, dtype=np.int64)
        self._sparse: dict[int, int] = {}
        self._count = 0

    def __len__(self) -> int:
        return self._count

    def __contains__(self, memory_id: int) -> bool:
        return self._packed(memory_id) >= 0

    def get(self, memory_id: int) -> tuple[int, int] | None:
        packed = self._packed(memory_id)
        return None if packed < 0 else (packed >> self._ROW_BITS, packed & self._ROW_MASK)

    def set(self, memory_id: int, slot: int, row: int) -> None:
        packed = (slot << self._ROW_BITS) | row
        if memory_id not in self:
            self._count += 1
        if 0 <= memory_id < self._dense.shape[0]:
            self._dense[memory_id] = packed
            return
        if 0 <= memory_id < 2 * (self._count + self._dense.shape[0]):
            grown = np.full(max(memory_id + 1, 2 * self._dense.shape[0]), -1, dtype=np.int64)
            grown[: self._dense.shape[0]] = self._dense
            self._dense = grown
            self._dense[memory_id] = packed
            return
        self._sparse[memory_id] = packed

    def pop(self, memory_id: int) -> tuple[int, int] | None:
        found = self.get(memory_id)
        if found is not None:
            self._count -= 1
            if 0 <= memory_id < self._dense.shape[0]:
                self._dense[memory_id] = -1
            else:
                del self._sparse[memory_id]
        return found

    def ids(self) -> list[int]:
        return np.flatnonzero(self._dense >= 0).tolist() + list(self._sparse)

    def rows_of(self, slot: int, memory_ids: Sequence[int]) -> tuple[list[int], list[int]]:
        """The ids among ``memory_ids`` that belong to user ``slot``, and their rows, in that order."""
        found_ids, rows = [], []
        for memory_id in memory_ids:
            packed = self._packed(memory_id)
            if packed >= 0 and packed >> self._ROW_BITS == slot:
                found_ids.append(memory_id)
                rows.append(packed & self._ROW_MASK)
        return found_ids, rows

    def _packed(self, memory_id: int) -> int:
        if 0 <= memory_id < self._dense.shape[0]:
            return int(self._dense[memory_id])
        return self._sparse.get(memory_id, -1)


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
        self._names: list[str] = []  # user slot → user id
        self._where = _IdMap()
        # Writers (the SQLite writer thread) and searchers (reader threads) share the matrices.
        self._lock = threading.Lock()
        # Bumped by every change of the rows (upsert, set_layer, remove, load, sync): what a cache of answers
        # about the store (search's "this user has no transcript turns") is keyed on.
        self.version = 0

    def __len__(self) -> int:
        return len(self._where)

    def contains(self, memory_id: int) -> bool:
        return memory_id in self._where

    def _user(self, user_id: str) -> _UserMatrix:
        user = self._users.get(user_id)
        if user is None:
            assert self.dim is not None
            user = self._users[user_id] = _UserMatrix(self.dim, len(self._names))
            self._names.append(user_id)
        return user

    def _remove_locked(self, memory_id: int) -> None:
        found = self._where.pop(memory_id)
        if found is None:
            return
        slot, row = found
        user = self._users[self._names[slot]]
        moved_id = user.remove_row(row)
        if moved_id is not None:
            self._where.set(moved_id, slot, row)

    def upsert(
        self, memory_id: int, user_id: str, vector: np.ndarray, layer: str = "core", kind: str = "fact"
    ) -> None:
        """Add or replace one memory's vector (normalised here), its layer and kind."""
        vector = normalize(vector)[0]
        with self._lock:
            self.version += 1
            if self.dim is None:
                self.dim = int(vector.shape[0])
            if vector.shape[0] != self.dim:
                raise ValueError(f"vector has {vector.shape[0]} values, index holds {self.dim}")
            found = self._where.get(memory_id)
            user = self._user(user_id)
            if found is not None and found[0] != user.slot:
                self._remove_locked(memory_id)  # it changed owner
                found = None
            row = user.put(found[1] if found is not None else None, memory_id, vector, row_code(layer, kind))
            self._where.set(memory_id, user.slot, row)
            if user.codes is None and self._needs_codes(user.size):
                user.enable_codes()

    def set_layer(self, memory_id: int, layer: str) -> None:
        """Record that a memory moved to another layer (its vector and kind stay)."""
        with self._lock:
            self.version += 1
            found = self._where.get(memory_id)
            if found is not None:
                slot, row = found
                codes = self._users[self._names[slot]].layers
                codes[row] = (int(codes[row]) & _TURN_BIT) | _LAYER_CODE[layer]

    def remove(self, memory_id: int) -> None:
        """Forget a memory (deleted, superseded, or re-embedded by another model)."""
        with self._lock:
            self.version += 1
            self._remove_locked(memory_id)

    def load(self, counts: dict[str, int], rows: Iterable[tuple[int, str, bytes, str, str]]) -> int:
        """Bulk-fill an empty index at start-up, straight from the BLOBs.

        ``counts`` (rows per user) sizes each matrix up front, so every vector is copied once
        into place and normalised in one pass per user: no per-row lock or growth, and no
        intermediate copies that would stay in the process's resident memory. Rows of another
        length than the index's are skipped. Returns the rows loaded.
        """
        loaded = 0
        with self._lock:
            self.version += 1
            if len(self._where):
                raise RuntimeError("bulk load needs an empty index")
            for memory_id, user_id, blob, layer, kind in rows:
                vector = np.frombuffer(blob, dtype="<f4")
                if self.dim is None:
                    self.dim = int(vector.shape[0])
                if vector.shape[0] != self.dim:
                    continue
                user = self._users.get(user_id)
                if user is None:
                    capacity = max(counts.get(user_id, 0), 1)
                    user = self._users[user_id] = _UserMatrix(self.dim, len(self._names), capacity=capacity)
                    self._names.append(user_id)
                if user.size == user.ids.shape[0]:
                    user._grow()
                row = user.size
                user.matrix[row] = vector
                user.ids[row] = memory_id
                user.layers[row] = row_code(layer, kind)
                user.size += 1
                self._where.set(memory_id, user.slot, row)
                loaded += 1
            for user in self._users.values():
                live = user.matrix[: user.size]
                norms = np.linalg.norm(live, axis=1, keepdims=True)
                norms[norms == 0] = 1.0
                live /= norms
                if self._needs_codes(user.size):
                    user.enable_codes()
        return loaded

    def sync(self, wanted: dict[int, tuple[str, np.ndarray, str, str]]) -> int:
        """Make the index hold exactly ``wanted`` (id → (user, vector, layer, kind)); returns ids
        added or removed."""
        with self._lock:
            self.version += 1
            present = self._where.ids()
        stale = [memory_id for memory_id in present if memory_id not in wanted]
        added = sum(1 for memory_id in wanted if memory_id not in self._where)
        for memory_id in stale:
            self.remove(memory_id)
        for memory_id, (user_id, vector, layer, kind) in wanted.items():
            self.upsert(memory_id, user_id, vector, layer, kind)
        return len(stale) + added

    def search(
        self,
        user_id: str,
        query: np.ndarray,
        k: int,
        layers: Iterable[str] | None = None,
        kinds: Iterable[str] | None = None,
    ) -> list[VectorHit]:
        """Top ``k`` memories of ``user_id`` by cosine to ``query``, best first.

        ``layers``, ``kinds``: only memories in these layers and of these kinds (``None``: all).
        """
        query = normalize(query)[0]
        with self._lock:
            user = self._users.get(user_id)
            if user is None or user.size == 0:
                return []
            shortlist = max(self.shortlist, k) if self.exact_max_rows is not None else None
            rows, scores = user.top(query, k, shortlist, layer_mask(layers, kinds))
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
            found, rows = self._where.rows_of(user.slot, memory_ids)
            if not rows:
                return {}
            scores = user.matrix[rows] @ query
        return {mid: float(score) for mid, score in zip(found, scores, strict=True)}

    def vectors_of(self, user_id: str, memory_ids: list[int]) -> np.ndarray:
        """The normalised vectors of these memories of ``user_id`` (those indexed), one row each."""
        with self._lock:
            user = self._users.get(user_id)
            rows = self._where.rows_of(user.slot, memory_ids)[1] if user is not None else []
            if user is None or not rows:
                return np.zeros((0, self.dim or 0), dtype=np.float32)
            return user.matrix[rows].copy()

    def share_of(self, user_id: str) -> float:
        """The user's fraction of all indexed rows (1.0 when the index is empty)."""
        with self._lock:
            total = len(self._where)
            user = self._users.get(user_id)
        if total == 0:
            return 1.0
        return user.size / total if user is not None else 0.0

    def layers_by_id(self) -> dict[int, tuple[str, str, str]]:
        """``id → (user, layer, kind)`` of every indexed row, to check the index against the store."""
        with self._lock:  # copies only: searches wait for a memcpy, not for the dict below
            copies = [(u, m.ids[: m.size].copy(), m.layers[: m.size].copy()) for u, m in self._users.items()]
        entries: dict[int, tuple[str, str]] = {}
        for user_id, ids, codes in copies:
            for memory_id, code in zip(ids.tolist(), codes.tolist(), strict=True):
                entries[memory_id] = (user_id, LAYERS[code & ~_TURN_BIT], KINDS[code >> 2])
        return entries

    def count_by_user(self) -> dict[str, int]:
        with self._lock:
            return {user: m.size for user, m in self._users.items()}
