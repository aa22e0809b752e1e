"""``GET /stats``, ``/metrics``, ``/health``, and the dashboard's ``/system/history`` and ``/config``."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path

from aiohttp import web

from .. import __version__
from ..keys import CONFIG, HARDWARE_MONITOR, METRICS, REEMBEDDER, STATS_SERVICE
from ..models.llm import LLMHealth
from ..records import stored_timestamp
from ..services.hardware import HardwareStatus
from ..services.markdown import user_folder
from ..services.metrics import CONTENT_TYPE
from ..services.metrics_scrape import stats_families
from ..services.overview import DAEMON_WIDE
from ..services.scheduler import SchedulerState
from ..services.stats import SpaceState
from .common import parse_query, resolve_user
from .schemas import (
    ChartPointOut,
    DeferralState,
    EmbedderState,
    GpuState,
    HardwareState,
    HealthResponse,
    HostState,
    IngestState,
    LLMState,
    MirrorState,
    OverviewCountOut,
    OverviewDayOut,
    OverviewQuery,
    OverviewResponse,
    OverviewRunOut,
    OverviewSearchPointOut,
    ReembedState,
    SchedulerStats,
    SearchLatency,
    StatsResponse,
    StorageState,
    SystemHistoryQuery,
    SystemHistoryResponse,
)


def mirror_state(sync_dir: Path | None, users: Iterable[str], default_user: str) -> MirrorState | None:
    if sync_dir is None:
        return None
    folders = {user: user_folder(user) for user in users}
    return MirrorState(dir=str(sync_dir.resolve()), folders=folders, default_user_id=default_user)


async def stats(request: web.Request) -> web.Response:
    result = await request.app[STATS_SERVICE].stats()
    counts, health = result.counts, result.embedder
    body = StatsResponse(
        total_memories=counts.total,
        live_memories=counts.live,
        superseded=counts.superseded,
        per_user=counts.per_user,
        per_layer=counts.per_layer,
        embedded=counts.embedded,
        stale_embeddings=counts.stale_embeddings,
        unembedded=counts.unembedded,
        reembedding=ReembedState(**dataclasses.asdict(request.app[REEMBEDDER].progress)),
        vector_index_rows=result.vector_index_rows,
        db_bytes=result.db_bytes,
        uptime_s=result.uptime_s,
        llm=llm_state(result.llm),
        ingest=IngestState.model_validate(result.ingest),
        embedder=EmbedderState(
            backend=health.backend if health else "none",
            model=health.model if health else "",
            ok=health.ok if health else False,
            dim=health.dim if health else None,
            last_error=health.last_error if health else None,
        ),
        hardware=hardware_state(result.hardware),
        scheduler=scheduler_stats(result.scheduler),
        markdown_mirror=mirror_state(
            request.app[CONFIG].markdown.sync_dir, counts.per_user, request.app[CONFIG].users.default_user_id
        ),
        search_latency=SearchLatency(**dataclasses.asdict(request.app[METRICS].recent_search_latency())),
        storage=storage_state(result.space),
    )
    return web.json_response(body.model_dump())


async def overview(request: web.Request) -> web.Response:
    """The dashboard's landing page: one user's memories (those the requester may see) and the
    daemon's work over the last days."""
    query = parse_query(request, OverviewQuery)
    result = await request.app[STATS_SERVICE].overview(
        resolve_user(request, query.user_id), query.days, audience=query.audience()
    )
    body = OverviewResponse(
        user_id=result.user_id,
        days=[OverviewDayOut(**dataclasses.asdict(day)) for day in result.days],
        methods=result.methods,
        categories=[OverviewCountOut(name=name, count=count) for name, count in result.categories],
        topics=[OverviewCountOut(name=name, count=count) for name, count in result.topics],
        lifecycle_runs=[OverviewRunOut(**dataclasses.asdict(run)) for run in result.runs],
        backlog_now=result.backlog_now,
        search=[
            OverviewSearchPointOut(
                t=_iso(point.at), count=point.count, p50_ms=point.p50_ms, p95_ms=point.p95_ms
            )
            for point in result.search
        ],
        search_kept_minutes=result.search_kept_minutes,
        daemon_wide=list(DAEMON_WIDE),
    )
    return web.json_response(body.model_dump())


async def system_history(request: web.Request) -> web.Response:
    """The hardware poller's ring buffer, for the dashboard's charts."""
    query = parse_query(request, SystemHistoryQuery)
    monitor = request.app[HARDWARE_MONITOR]
    points = monitor.chart(since=time.time() - query.minutes * 60)
    body = SystemHistoryResponse(
        interval_s=request.app[CONFIG].hardware.interval_s,
        points=[
            ChartPointOut(
                t=_iso(point.taken_at),
                **{k: v for k, v in dataclasses.asdict(point).items() if k != "taken_at"},
            )
            for point in points
        ],
    )
    return web.json_response(body.model_dump())


async def effective_config(request: web.Request) -> web.Response:
    """The configuration the daemon runs with (YAML + environment), secrets masked."""
    return web.json_response(request.app[CONFIG].model_dump(mode="json"))


async def metrics(request: web.Request) -> web.Response:
    """Prometheus text format 0.0.4, from the app's own registry."""
    result = await request.app[STATS_SERVICE].stats()
    body = request.app[METRICS].render(stats_families(result))
    return web.Response(body=body, headers={"Content-Type": CONTENT_TYPE})


async def health(request: web.Request) -> web.Response:
    """Cheap liveness: no SQL. ``degraded``: search runs FTS-only, or writes are refused (disk full)."""
    service = request.app[STATS_SERVICE]
    embedder = service.embedder_health()
    ok = embedder is not None and embedder.ok
    full = service.space().full
    body = HealthResponse(
        status="ok" if ok and not full else "degraded",
        embedder_ok=ok,
        disk_full=full,
        uptime_s=service.uptime_s,
        version=__version__,
    )
    return web.json_response(body.model_dump())


def llm_state(health: LLMHealth) -> LLMState:
    """The model's state, with how its last real call ended: the newer of the last answer and the
    last failure (a start-up probe or an old success is not "ok" after a timeout)."""
    ok_at, error_at = health.last_ok_at, health.last_error_at
    last_call = None
    if ok_at is not None or error_at is not None:
        last_call = "ok" if (ok_at or 0) >= (error_at or 0) else "failed"
    return LLMState(
        backend=health.backend,
        model=health.model,
        ok=health.ok,
        last_error=health.last_error,
        last_latency_s=health.last_latency_s,
        last_call=last_call,
        last_ok_at=_iso(ok_at) if ok_at is not None else None,
        last_error_at=_iso(error_at) if error_at is not None else None,
    )


def storage_state(space: SpaceState) -> StorageState:
    return StorageState(
        full=space.full,
        full_since=_iso(space.full_since) if space.full_since is not None else None,
        refused_writes=space.refused_writes,
        free_bytes=space.free_bytes,
    )


def hardware_state(status: HardwareStatus) -> HardwareState:
    snapshot = status.snapshot
    host = snapshot.host
    return HardwareState(
        enabled=status.enabled,
        source=status.source,
        endpoint=status.endpoint,
        taken_at=_iso(snapshot.taken_at),
        gpu_read_at=_iso(snapshot.gpu_read_at) if snapshot.gpu_read_at is not None else None,
        age_s=status.age_s,
        stale=snapshot.stale,
        stale_reason=snapshot.stale_reason,
        consecutive_failures=status.consecutive_failures,
        poll_interval_s=status.poll_interval_s,
        gpu=GpuState(**dataclasses.asdict(snapshot.gpu)) if snapshot.gpu is not None else None,
        gpus=[GpuState(**dataclasses.asdict(gpu)) for gpu in snapshot.gpus],
        host=HostState(**dataclasses.asdict(host)) if host is not None else None,
    )


def scheduler_stats(state: SchedulerState) -> SchedulerStats:
    return SchedulerStats(
        busy_reason=state.busy_reason,
        holding_job=state.holding_job,
        holding_since=_iso(state.holding_since) if state.holding_since is not None else None,
        deferred_jobs=state.deferred_jobs,
        ran_anyway=state.ran_anyway,
        deferred_seconds=state.deferred_seconds,
        recent=[
            DeferralState(
                job_id=deferral.job_id,
                reason=deferral.reason,
                waited_s=deferral.waited_s,
                ran_anyway=deferral.ran_anyway,
                finished_at=_iso(deferral.finished_at),
            )
            for deferral in state.recent
        ],
    )


def _iso(unix_seconds: float) -> str:
    """The API's timestamp format (as the store writes it): 2026-11-22T23:09:54.123Z."""
    return stored_timestamp(datetime.fromtimestamp(unix_seconds, UTC))
