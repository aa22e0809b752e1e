"""The dashboard's overview: series over days computed from the database (memories, facts, extraction
jobs, lifecycle runs) and the search latency of the last hours (:mod:`.search_timeline`).

The day series are UTC days, oldest first, every day of the window present (zero where nothing
happened), so that a chart's x axis is time, not just the days that had data.
"""

from __future__ import annotations

import sqlite3
import time
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta

from ..records import EVERYONE, Audience, stored_timestamp
from ..store import lifecycle as lifecycle_sql
from ..store import overview as overview_sql
from ..store.db import Database
from .search_timeline import LatencyPoint, SearchTimeline

LAYERS = ("working", "core", "archive")
KINDS = ("fact", "turn", "summary")
# How many lifecycle runs and how many topics the overview shows.
RECENT_RUNS = 30
# What a lifecycle stage counts that moves or hides a row (not what it only looked at or kept).
MOVE_KINDS = ("promoted", "expired", "merged", "archived", "compressed", "summarised")
TOP_TOPICS = 12
TOP_CATEGORIES = 20
# What the overview counts over the whole daemon (every user and agent), whoever asks: the fields of
# its days and of itself that are not the requester's memories.
DAEMON_WIDE = (
    "jobs_received",
    "jobs_done",
    "jobs_failed",
    "backlog",
    "extraction_p50_ms",
    "extraction_p95_ms",
    "backlog_now",
    "lifecycle_runs",
    "search",
)


# -- the overview ------------------------------------------------------------------------------
@dataclass(frozen=True)
class DayCounts:
    """One UTC day of the overview."""

    day: str  # YYYY-MM-DD
    live_by_layer: dict[str, int]  # running totals at the day's end (live memories, layer now)
    live_by_kind: dict[str, int]  # running totals at the day's end: fact / turn / summary
    facts_by_method: dict[str, int]  # facts created that day, by how they were made
    jobs_received: int
    jobs_done: int
    jobs_failed: int
    backlog: int  # jobs waiting (received, not finished) at the day's end, or now for today
    extraction_p50_ms: float | None
    extraction_p95_ms: float | None


@dataclass(frozen=True)
class RunMoves:
    """What one (real, not dry) lifecycle run moved, summed over its stages."""

    run_id: int
    started_at: str
    trigger: str
    status: str
    moves: dict[str, int]


@dataclass(frozen=True)
class Overview:
    user_id: str
    days: list[DayCounts]
    methods: list[str]
    categories: list[tuple[str, int]]
    topics: list[tuple[str, int]]
    runs: list[RunMoves]
    backlog_now: int
    search: list[LatencyPoint]
    search_kept_minutes: int


async def build_overview(
    db: Database,
    timeline: SearchTimeline,
    user_id: str,
    days: int,
    *,
    audience: Audience = EVERYONE,
    now: float | None = None,
) -> Overview:
    """The overview of ``user_id`` over the last ``days`` UTC days (today included).

    The memories counted are those ``audience`` may see (a group session does not see the user's
    private memories, an agent not another agent's); extraction jobs, lifecycle runs and search
    latency are the whole daemon's (:data:`DAEMON_WIDE`). Everything is counted in SQL in a reader
    thread: the event loop only lays the counts out on the days.
    """
    now = time.time() if now is None else now
    today = datetime.fromtimestamp(now, UTC).date()
    first = today - timedelta(days=days - 1)
    since = stored_timestamp(datetime(first.year, first.month, first.day, tzinfo=UTC))

    def read(conn: sqlite3.Connection) -> tuple:  # type: ignore[type-arg]
        return (
            overview_sql.live_before(conn, user_id, since, audience, LAYERS, KINDS),
            overview_sql.live_since_by_day(conn, user_id, since, audience),
            overview_sql.facts_by_day_and_method(conn, user_id, since, audience),
            overview_sql.live_facts_by(conn, user_id, "category", TOP_CATEGORIES, audience),
            overview_sql.live_facts_by(conn, user_id, "topic", TOP_TOPICS, audience),
            _JobCounts(
                days=overview_sql.job_days(conn, since),
                percentiles=overview_sql.extraction_percentiles_by_day(conn, since, (50, 95)),
                waiting_before=overview_sql.jobs_waiting_at(conn, since),
                waiting_now=overview_sql.jobs_waiting_now(conn),
            ),
            lifecycle_sql.recent_runs(conn, RECENT_RUNS * 3),
        )

    (layers_before, kinds_before), live, facts, categories, topics, jobs, runs = await db.read(read)
    day_list = [(first + timedelta(days=offset)).isoformat() for offset in range(days)]
    layer_totals = _running_totals(day_list, layers_before, [(day, layer, n) for day, layer, _, n in live])
    kind_totals = _running_totals(day_list, kinds_before, [(day, kind, n) for day, _, kind, n in live])
    methods_by_day: dict[str, dict[str, int]] = {}
    for day, method, count in facts:
        methods_by_day.setdefault(day, {})[method] = count
    methods = sorted({method for _, method, _ in facts}, key=_method_order)
    job_days = _job_days(day_list, jobs, today)
    return Overview(
        user_id=user_id,
        days=[
            DayCounts(
                day=day,
                live_by_layer=layer_totals[day],
                live_by_kind=kind_totals[day],
                facts_by_method={method: methods_by_day.get(day, {}).get(method, 0) for method in methods},
                **job_days[day],
            )
            for day in day_list
        ],
        methods=methods,
        categories=categories,
        topics=topics,
        runs=_run_moves(runs)[:RECENT_RUNS][::-1],
        backlog_now=jobs.waiting_now,
        search=timeline.points(since=now - days * 86400),
        search_kept_minutes=timeline.kept_minutes,
    )


def _running_totals(
    days: list[str], baseline: dict[str, int], counts: list[tuple[str, str, int]]
) -> dict[str, dict[str, int]]:
    """The counts before the window and per (day, key) in it → totals at each day's end."""
    running = dict(baseline)
    added: dict[str, dict[str, int]] = {}
    for day, key, count in counts:
        added.setdefault(day, {}).setdefault(key, 0)
        added[day][key] += count
    totals = {}
    for day in days:
        for key, count in added.get(day, {}).items():
            running[key] = running.get(key, 0) + count
        totals[day] = dict(running)
    return totals


@dataclass(frozen=True)
class _JobCounts:
    """The extraction jobs as the store counted them (whole daemon)."""

    days: list[tuple[str, int, int, int, int]]  # day, received, done, failed, finished
    percentiles: list[tuple[str, float, float]]  # day, p50, p95 of the jobs done that day
    waiting_before: int  # received before the window and not finished by its start
    waiting_now: int


def _job_days(days: list[str], jobs: _JobCounts, today: date) -> dict[str, dict[str, int | float | None]]:
    """Per day: jobs received (done, failed), the backlog at the day's end (the one before, plus
    received, less finished; today: waiting now) and the extraction percentiles. O(days + rows)."""
    counts = {day: (received, done, failed, finished) for day, received, done, failed, finished in jobs.days}
    percentiles = {day: (p50, p95) for day, p50, p95 in jobs.percentiles}
    waiting = jobs.waiting_before
    result: dict[str, dict[str, int | float | None]] = {}
    for day in days:
        received, done, failed, finished = counts.get(day, (0, 0, 0, 0))
        waiting += received - finished
        p50, p95 = percentiles.get(day, (None, None))
        result[day] = {
            "jobs_received": received,
            "jobs_done": done,
            "jobs_failed": failed,
            "backlog": jobs.waiting_now if day == today.isoformat() else waiting,
            "extraction_p50_ms": p50,
            "extraction_p95_ms": p95,
        }
    return result


def _run_moves(runs: list[lifecycle_sql.RunRecord]) -> list[RunMoves]:
    moves = []
    for run in runs:
        if run.dry_run:
            continue
        totals: dict[str, int] = {}
        for stage in run.report.get("stages", []):
            for kind, count in (stage.get("counts") or {}).items():
                if kind in MOVE_KINDS and isinstance(count, int) and not isinstance(count, bool):
                    totals[kind] = totals.get(kind, 0) + count
        moves.append(RunMoves(run.id, run.started_at, run.trigger, run.status, totals))
    return moves


def _method_order(method: str) -> tuple[int, str]:
    known = ("llm", "llm+rules", "rules", "summary", "direct")
    return (known.index(method) if method in known else len(known), method)
