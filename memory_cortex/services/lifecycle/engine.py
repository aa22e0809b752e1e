"""What every stage works with: the run's context, the store and models behind a small toolbox,
and the checks a plan is applied under. Each stage is a module with one ``run(tools, context,
report, began)``; :class:`~.service.LifecycleService` calls them in the order of ``STAGES``."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from ...config import LifecycleConfig
from ...models.llm import LLM
from ...records import MemoryRecord
from ...store import lifecycle as lifecycle_sql
from ...store.db import Database
from ...store.lifecycle import LifecycleRow
from ...store.vectors import VectorIndex
from ..memories import MemoryService
from .clock import iso
from .report import LifecycleReport, Pending, StageReport

# Why a stage that needs an LLM writing prose did nothing (llm.writes_prose).
NO_WRITER = "no LLM that writes summaries (llm.backend: rules, or the packaged Gemma 270M)"


@dataclass
class RunContext:
    """One run as its stages see it: who, when, dry or not, and the report being filled."""

    run_id: int | None
    dry_run: bool
    now: datetime
    users: list[str]
    whole_store: bool
    pending: Pending
    report: LifecycleReport

    @property
    def now_iso(self) -> str:
        return iso(self.now)


@dataclass(frozen=True)
class Move:
    """A row to move between layers (promote, expire, decay)."""

    memory_id: int
    unread: tuple[int, str | None] | None  # the reads the plan saw, when a read must cancel the move


@dataclass
class StageTools:
    """The store, the models and the config a stage plans and applies with.

    Attributes:
        memories: writes through it keep the vector index and the recall cache in step; it also
            embeds new summaries.
        index: the live model's vector index; None without an embedder (then nothing is merged).
        llm: writes session and history summaries; None (no model that writes prose) skips them.
    """

    db: Database
    memories: MemoryService
    index: VectorIndex | None
    llm: LLM | None
    config: LifecycleConfig

    # -- reading rows as they are (or, in a dry run, would be) ----------------------------
    async def rows(self, user_id: str, layer: str, pending: Pending) -> list[LifecycleRow]:
        moved_in = [mid for mid, (to, _) in pending.moved.items() if to == layer]

        def read(conn: sqlite3.Connection) -> tuple[list[LifecycleRow], dict[int, LifecycleRow]]:
            return lifecycle_sql.rows_in_layer(conn, user_id, layer), lifecycle_sql.live_rows_by_id(
                conn, moved_in
            )

        rows, extra = await self.db.read(read)
        seen: dict[int, LifecycleRow] = {}
        for row in [*rows, *(r for r in extra.values() if r.user_id == user_id)]:
            viewed = pending.view(row)
            if viewed is not None and viewed.layer == layer:
                seen[viewed.id] = viewed
        return [seen[mid] for mid in sorted(seen)]

    def fill(self, report: StageReport, began: float, **kinds: list[int] | int) -> None:
        for kind, value in kinds.items():
            if isinstance(value, int):
                report.counts[kind] = value
            else:
                report.counts[kind] = len(value)
                report.ids[kind] = self.cap(value)
        report.duration_ms = round((time.perf_counter() - began) * 1000, 2)

    def save_report(self, conn: sqlite3.Connection, context: RunContext) -> None:
        """Inside a stage's transaction: the log shows exactly the stages that committed."""
        if context.run_id is not None:
            lifecycle_sql.save_report(conn, context.run_id, context.report.to_json())

    async def record_planned(self, context: RunContext) -> None:
        if context.run_id is not None:
            await self.db.write(lambda conn: self.save_report(conn, context))

    def cap(self, ids: Iterable[int]) -> list[int]:
        return list(ids)[: self.config.report_max_ids]


def as_planned(record: MemoryRecord | None, user_id: str, layer: str, updated_at: dict[int, str]) -> bool:
    """Still live, in ``layer``, of the user, and not edited since the plan read it."""
    return (
        record is not None
        and record.superseded_by is None
        and record.layer == layer
        and record.user_id == user_id
        and updated_at.get(record.id) == record.updated_at
    )
