"""What a run did, stage by stage, and what a dry run carries from one plan to the next."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

from ...store.lifecycle import LifecycleRow


@dataclass
class StageReport:
    """What one stage did (or, in a dry run, would do).

    Attributes:
        name: one of :data:`STAGES`.
        status: ``done``, ``planned`` (dry run), ``skipped`` (see ``reason``) or ``failed``.
        reason: why it was skipped or failed.
        duration_ms: plan plus apply.
        counts: complete counts per kind (``promoted``, ``merged``, ``archived``…).
        ids: memory ids per kind (at most ``report_max_ids`` each).
        groups: merge groups and summaries: ``{"user_id", "into": the kept row or the summary (None
            in a dry run), "ids": the rows merged into it or summarised by it, "period": YYYY-MM of
            a summary's sources}``.
        reasons: why each memory named in ``ids`` moved or stayed, by id (decay: the formula's
            numbers, or "protected: …"; promote: "protected: …" for an expired working memory
            moved to core instead of the archive).
    """

    name: str
    status: str = "done"
    reason: str | None = None
    duration_ms: float = 0.0
    counts: dict[str, int] = field(default_factory=dict)
    ids: dict[str, list[int]] = field(default_factory=dict)
    groups: list[dict[str, Any]] = field(default_factory=list)
    reasons: dict[str, str] = field(default_factory=dict)


@dataclass
class LifecycleReport:
    """One run: when it judged (``now``), what triggered it, and each stage's report."""

    run_id: int | None
    trigger: str
    dry_run: bool
    user_id: str | None
    status: str
    now: str
    started_at: str
    finished_at: str | None = None
    rows_before: int = 0
    rows_after: int | None = None
    error: str | None = None
    stages: list[StageReport] = field(default_factory=list)
    merge_watermark: dict[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> LifecycleReport:
        stages = [StageReport(**stage) for stage in data.get("stages", [])]
        known = {f.name for f in dataclasses.fields(cls)} - {"stages"}
        return cls(**{k: v for k, v in data.items() if k in known}, stages=stages)

    def stage(self, name: str) -> StageReport:
        return next(stage for stage in self.stages if stage.name == name)


# -- what a dry run carries from one plan to the next -----------------------------------------
@dataclass
class Pending:
    """Changes planned but not applied (dry run): later stages plan as if they were made.

    In a real run this stays empty: each stage's changes are committed before the next one plans.
    """

    moved: dict[int, tuple[str, str]] = field(default_factory=dict)  # id → (layer, layer_since)
    hidden: set[int] = field(default_factory=set)
    absorbed: dict[int, tuple[int, int, str | None]] = field(default_factory=dict)

    def view(self, row: LifecycleRow) -> LifecycleRow | None:
        """The row as it would be (None when it would be hidden)."""
        if row.id in self.hidden:
            return None
        if row.id in self.moved:
            layer, since = self.moved[row.id]
            row = dataclasses.replace(row, layer=layer, layer_since=since)
        if row.id in self.absorbed:
            importance, reads, last_read = self.absorbed[row.id]
            row = dataclasses.replace(row, importance=importance, access_count=reads, last_accessed=last_read)
        return row
