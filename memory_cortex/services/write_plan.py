"""What each memory of a write does before its transaction: merge into a near-duplicate, supersede
the fact a correction replaces, or stand alone. Read-only (the vector index); the write applies it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..records import NewMemory
from ..store.vectors import VectorIndex


@dataclass(frozen=True)
class WritePlan:
    merge_into: int | None = None  # an existing memory to update
    merge_with_batch: int | None = None  # an earlier item of the same batch
    supersede: int | None = None  # an older memory this correction replaces


def plan_writes(
    index: VectorIndex,
    rows: Sequence[NewMemory],
    vectors: np.ndarray,
    *,
    dedup_threshold: float,
    supersede_threshold: float,
    supersede: bool = True,
) -> list[WritePlan]:
    """Decide, before the transaction, what each new memory does (reads the vector index).

    A fact merges into a near-duplicate (cosine ≥ ``dedup_threshold``) of the same user and reach
    (:meth:`Scope.recalled_alike`), earlier in the batch or stored; a ``correction`` close enough
    (``supersede_threshold``) to a stored fact supersedes it (with ``supersede``); a turn is stored
    as said.
    """
    plans: list[WritePlan] = []
    for i, row in enumerate(rows):
        vector = vectors[i]
        if row.kind == "turn":
            plans.append(WritePlan())  # stored as said, whatever it resembles
            continue
        # A near-duplicate earlier in the same batch: merge into whatever that one became.
        for j in range(i):
            if (
                rows[j].user_id == row.user_id
                and rows[j].scope.recalled_alike(row.scope)
                and rows[j].kind != "turn"
                and float(vectors[j] @ vector) >= dedup_threshold
            ):
                plans.append(WritePlan(merge_with_batch=j))
                break
        else:
            # Only facts: a turn is what was said, never merged into and never superseded.
            hits = index.search(row.user_id, vector, 1, kinds=("fact",), alike=row.scope)
            best = hits[0] if hits else None
            if (
                best is not None
                and supersede
                and row.category == "correction"
                and best.cosine >= supersede_threshold
            ):
                # A correction never merges: the older fact stays, hidden, for the record.
                plans.append(WritePlan(supersede=best.memory_id))
            elif best is not None and best.cosine >= dedup_threshold:
                plans.append(WritePlan(merge_into=best.memory_id))
            else:
                plans.append(WritePlan())
    return plans
