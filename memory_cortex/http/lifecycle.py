"""``POST /lifecycle/run``, ``GET /lifecycle/runs/{run_id}``, ``GET /lifecycle/preview`` and
``GET /lifecycle/log``.

A run is never done inside a request: ``POST /lifecycle/run`` starts it and answers 202 with its id
and a ``Location`` to follow; the run goes on when the client goes away.
"""

from __future__ import annotations

from typing import Any

from aiohttp import web

from ..errors import RunNotFound
from ..keys import LIFECYCLE_SERVICE
from ..services.lifecycle import STAGES, LifecycleReport, RunRecord
from .common import accepted, int_from_path, parse_query
from .schemas import (
    LifecycleLogQuery,
    LifecycleLogResponse,
    LifecyclePreviewQuery,
    LifecycleReportOut,
    LifecycleRunOut,
    LifecycleRunQuery,
    LifecycleRunStatusOut,
)


def _user(user_id: str | None) -> str | None:
    """Absent or blank: every user (unlike the memory endpoints, there is no default user here)."""
    return user_id if user_id is not None and user_id.strip() else None


def report_out(report: LifecycleReport | dict[str, Any]) -> LifecycleReportOut:
    data = report.to_json() if isinstance(report, LifecycleReport) else report
    return LifecycleReportOut.model_validate(data)


def run_path(run_id: int) -> str:
    return f"/lifecycle/runs/{run_id}"


async def run_lifecycle(request: web.Request) -> web.Response:
    query = parse_query(request, LifecycleRunQuery)
    service = request.app[LIFECYCLE_SERVICE]
    run_id = await service.start_run(user_id=_user(query.user_id), dry_run=query.dry_run)
    run = await service.get_run(run_id)
    assert run is not None  # logged before start_run returns; runs are never deleted
    return accepted(run_status(run), run_path(run_id))


async def lifecycle_run(request: web.Request) -> web.Response:
    run_id = int_from_path(request, "run_id")
    run = await request.app[LIFECYCLE_SERVICE].get_run(run_id)
    if run is None:
        raise RunNotFound(f"no lifecycle run {run_id}")
    return web.json_response(run_status(run).model_dump())


def run_status(run: RunRecord) -> LifecycleRunStatusOut:
    """A run with its progress: each stage saves the report as it commits, so the stages in the
    report are the ones done, on whichever daemon runs it."""
    done = sum(1 for stage in run.report.get("stages") or [] if stage.get("status") != "failed")
    running = run.status == "running"
    return LifecycleRunStatusOut(
        **run_out(run).model_dump(),
        stage=STAGES[done] if running and done < len(STAGES) else None,
        stages_done=done,
        stages_total=len(STAGES),
    )


def run_out(run: RunRecord) -> LifecycleRunOut:
    return LifecycleRunOut(
        id=run.id,
        trigger=run.trigger,
        dry_run=run.dry_run,
        status=run.status,  # type: ignore[arg-type]  # the CHECK constraint holds it
        started_at=run.started_at,
        finished_at=run.finished_at,
        report=report_out(run.report) if run.report.get("stages") is not None else None,
    )


async def preview_lifecycle(request: web.Request) -> web.Response:
    query = parse_query(request, LifecyclePreviewQuery)
    report = await request.app[LIFECYCLE_SERVICE].preview(user_id=_user(query.user_id))
    return web.json_response(report_out(report).model_dump())


async def lifecycle_log(request: web.Request) -> web.Response:
    query = parse_query(request, LifecycleLogQuery)
    runs = await request.app[LIFECYCLE_SERVICE].log(query.limit)
    items = [run_out(run) for run in runs]
    return web.json_response(LifecycleLogResponse(runs=items, count=len(items)).model_dump())
