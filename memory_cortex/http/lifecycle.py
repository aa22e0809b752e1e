"""``POST /lifecycle/run``, ``GET /lifecycle/preview`` and ``GET /lifecycle/log``."""

from __future__ import annotations

from typing import Any

from aiohttp import web

from ..keys import LIFECYCLE_SERVICE
from ..services.lifecycle import LifecycleReport
from .common import parse_query
from .schemas import (
    LifecycleLogQuery,
    LifecycleLogResponse,
    LifecyclePreviewQuery,
    LifecycleReportOut,
    LifecycleRunOut,
    LifecycleRunQuery,
)


def _user(user_id: str | None) -> str | None:
    """Absent or blank: every user (unlike the memory endpoints, there is no default user here)."""
    return user_id if user_id is not None and user_id.strip() else None


def report_out(report: LifecycleReport | dict[str, Any]) -> LifecycleReportOut:
    data = report.to_json() if isinstance(report, LifecycleReport) else report
    return LifecycleReportOut.model_validate(data)


async def run_lifecycle(request: web.Request) -> web.Response:
    query = parse_query(request, LifecycleRunQuery)
    report = await request.app[LIFECYCLE_SERVICE].run(user_id=_user(query.user_id), dry_run=query.dry_run)
    return web.json_response(report_out(report).model_dump())


async def preview_lifecycle(request: web.Request) -> web.Response:
    query = parse_query(request, LifecyclePreviewQuery)
    report = await request.app[LIFECYCLE_SERVICE].preview(user_id=_user(query.user_id))
    return web.json_response(report_out(report).model_dump())


async def lifecycle_log(request: web.Request) -> web.Response:
    query = parse_query(request, LifecycleLogQuery)
    runs = await request.app[LIFECYCLE_SERVICE].log(query.limit)
    items = [
        LifecycleRunOut(
            id=run.id,
            trigger=run.trigger,
            dry_run=run.dry_run,
            status=run.status,  # type: ignore[arg-type]  # the CHECK constraint holds it
            started_at=run.started_at,
            finished_at=run.finished_at,
            report=report_out(run.report) if run.report.get("stages") is not None else None,
        )
        for run in runs
    ]
    return web.json_response(LifecycleLogResponse(runs=items, count=len(items)).model_dump())
