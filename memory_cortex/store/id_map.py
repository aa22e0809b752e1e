"""memory id → (user slot, row) for every row of the vector index, in one int64 array."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


class IdMap:
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
