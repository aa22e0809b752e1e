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
from threadpoolctl import threadpool_limits

from ..records import EVERYONE, PRIVATE_TO_ALL_AGENTS, Audience, Scope
from ..vectormath import normalize
from .id_map import IdMap
from .user_matrix import (
    KINDS,
    LAYER_CODE,
    LAYERS,
    NO_ROW,
    PRIVATE,
    SHARED_EVERYWHERE,
    TURN_BIT,
    UserMatrix,
    layer_mask,
    row_code,
)


def use_one_blas_thread() -> None:
    """Run numpy's BLAS on one thread, for the whole process.

    Why: a search runs FTS5 in one thread and the matrix product in another. With its default
    pool OpenBLAS spreads even a 2000 × 384 product over both cores of the reference box and
    stalls the FTS thread beside it (100k rows, search p95 14.8 → 10.9 ms with one thread).
    The products here are memory-bound, so one thread loses nothing. Torch, which embeds the
    queries, keeps its own thread pool.
    """
    threadpool_limits(limits=1, user_api="blas")


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

    in_database = False  # answers from memory: callers call it inline (services/index_calls.py)

    def __init__(
        self, model: str, dim: int | None = None, *, exact_max_rows: int | None = None, shortlist: int = 2000
    ) -> None:
        self.model = model
        self.dim = dim
        self.exact_max_rows = exact_max_rows
        self.shortlist = shortlist
        self._users: dict[str, UserMatrix] = {}
        self._names: list[str] = []  # user slot → user id
        self._where = IdMap()
        self._labels: dict[str, int] = {}  # agent and channel names → their codes (from 1)
        self._label_names: list[str] = []  # code - 1 → name
        # Writers (the SQLite writer thread) and searchers (reader threads) share the matrices.
        self._lock = threading.Lock()
        # Bumped by every change of the rows (upsert, set_layer, remove, load, sync): what a cache of answers
        # about the store (search's "this user has no transcript turns") is keyed on.
        self.version = 0

    def __len__(self) -> int:
        return len(self._where)

    def contains(self, memory_id: int) -> bool:
        return memory_id in self._where

    def _user(self, user_id: str) -> UserMatrix:
        user = self._users.get(user_id)
        if user is None:
            assert self.dim is not None
            user = self._users[user_id] = UserMatrix(self.dim, len(self._names))
            self._names.append(user_id)
        return user

    def _label(self, name: str) -> int:
        code = self._labels.get(name)
        if code is None:
            code = self._labels[name] = len(self._labels) + 1
            self._label_names.append(name)
        return code

    def scope_codes(self, scope: Scope) -> tuple[int, int]:
        """A row's (agent, reach) codes (call with the lock held: it may intern a new name)."""
        agent = 0 if scope.agent_id is None else self._label(scope.agent_id)
        if scope.visibility != "shared":
            return agent, PRIVATE
        return agent, SHARED_EVERYWHERE if scope.channel is None else self._label(scope.channel)

    def _audience_codes(self, audience: Audience) -> tuple[int | None, int | None]:
        """The codes :meth:`UserMatrix.allowed` takes for ``audience`` (NO_ROW: a name no row has)."""
        agent = None if audience.agent_id is None else self._labels.get(audience.agent_id, NO_ROW)
        if audience.session_kind == "private":
            return agent, None
        return agent, NO_ROW if audience.channel is None else self._labels.get(audience.channel, NO_ROW)

    def _known_codes(self, scope: Scope) -> tuple[int, int] | None:
        """:meth:`scope_codes` without interning (None: a name no row has)."""
        scope = scope.reach
        names = [name for name in (scope.agent_id, scope.channel) if name is not None]
        if any(name not in self._labels for name in names):
            return None
        return self.scope_codes(scope)

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
        self,
        memory_id: int,
        user_id: str,
        vector: np.ndarray,
        layer: str = "core",
        kind: str = "fact",
        scope: Scope = PRIVATE_TO_ALL_AGENTS,
    ) -> None:
        """Add or replace one memory's vector (normalised here), its layer, kind and scope."""
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
            row = user.put(
                found[1] if found is not None else None,
                memory_id,
                vector,
                row_code(layer, kind),
                self.scope_codes(scope),
            )
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
                codes[row] = (int(codes[row]) & TURN_BIT) | LAYER_CODE[layer]

    def remove(self, memory_id: int) -> None:
        """Forget a memory (deleted, superseded, or re-embedded by another model)."""
        with self._lock:
            self.version += 1
            self._remove_locked(memory_id)

    def load(self, counts: dict[str, int], rows: Iterable[tuple[int, str, bytes, str, str, Scope]]) -> int:
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
            for memory_id, user_id, blob, layer, kind, scope in rows:
                vector = np.frombuffer(blob, dtype="<f4")
                if self.dim is None:
                    self.dim = int(vector.shape[0])
                if vector.shape[0] != self.dim:
                    continue
                user = self._users.get(user_id)
                if user is None:
                    capacity = max(counts.get(user_id, 0), 1)
                    user = self._users[user_id] = UserMatrix(self.dim, len(self._names), capacity=capacity)
                    self._names.append(user_id)
                if user.size == user.ids.shape[0]:
                    user._grow()
                row = user.size
                user.matrix[row] = vector
                user.ids[row] = memory_id
                user.layers[row] = row_code(layer, kind)
                user.agents[row], user.reach[row] = self.scope_codes(scope)
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

    def sync(self, wanted: dict[int, tuple[str, np.ndarray, str, str, Scope]]) -> int:
        """Make the index hold exactly ``wanted`` (id → (user, vector, layer, kind, scope)); returns
        ids added or removed."""
        with self._lock:
            self.version += 1
            present = self._where.ids()
        stale = [memory_id for memory_id in present if memory_id not in wanted]
        added = sum(1 for memory_id in wanted if memory_id not in self._where)
        for memory_id in stale:
            self.remove(memory_id)
        for memory_id, (user_id, vector, layer, kind, scope) in wanted.items():
            self.upsert(memory_id, user_id, vector, layer, kind, scope)
        return len(stale) + added

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
        """Top ``k`` memories of ``user_id`` by cosine to ``query``, best first.

        ``layers``, ``kinds``: only memories in these layers and of these kinds (``None``: all).
        ``audience``: only memories it may see (the rule of :class:`~memory_cortex.records.Audience`).
        ``alike``: only memories recalled alike with this scope (:meth:`Scope.recalled_alike`: the
        candidates a new memory may be merged into or supersede).
        """
        query = normalize(query)[0]
        with self._lock:
            user = self._users.get(user_id)
            if user is None or user.size == 0:
                return []
            shortlist = max(self.shortlist, k) if self.exact_max_rows is not None else None
            exact = None if alike is None else self._known_codes(alike)
            if alike is not None and exact is None:
                return []  # an agent or channel no row has: nothing is alike
            allowed = user.allowed(layer_mask(layers, kinds), *self._audience_codes(audience), exact)
            rows, scores = user.top(query, k, shortlist, allowed)
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

    def layers_by_id(self) -> dict[int, tuple[str, str, str, Scope]]:
        """``id → (user, layer, kind, scope)`` of every indexed row, to check the index against the
        store."""
        with self._lock:  # copies only: searches wait for a memcpy, not for the dict below
            names = list(self._label_names)
            copies = [
                (
                    u,
                    m.ids[: m.size].copy(),
                    m.layers[: m.size].copy(),
                    m.agents[: m.size].copy(),
                    m.reach[: m.size].copy(),
                )
                for u, m in self._users.items()
            ]
        entries: dict[int, tuple[str, str, str, Scope]] = {}
        for user_id, ids, codes, agents, reach in copies:
            for memory_id, code, agent, where in zip(
                ids.tolist(), codes.tolist(), agents.tolist(), reach.tolist(), strict=True
            ):
                scope = Scope(
                    None if agent == 0 else names[agent - 1],
                    "private" if where == PRIVATE else "shared",
                    names[where - 1] if where > 0 else None,
                )
                entries[memory_id] = (user_id, LAYERS[code & ~TURN_BIT], KINDS[code >> 2], scope)
        return entries

    def count_by_user(self) -> dict[str, int]:
        with self._lock:
            return {user: m.size for user, m in self._users.items()}
