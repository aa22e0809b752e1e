"""``GET /stats`` and ``GET /health``."""

from __future__ import annotations

import dataclasses

from aiohttp import web

from ..keys import STATS_SERVICE
from .schemas import EmbedderState, HealthResponse, IngestState, LLMState, StatsResponse


async def stats(request: web.Request) -> web.Response:
    result = await request.app[STATS_SERVICE].stats()
    counts, health = result.counts, result.embedder
    body = StatsResponse(
        total_memories=counts.total,
        live_memories=counts.live,
        superseded=counts.superseded,
        per_user=counts.per_user,
        embedded=counts.embedded,
        stale_embeddings=counts.stale_embeddings,
        unembedded=counts.unembedded,
        vector_index_rows=result.vector_index_rows,
        db_bytes=result.db_bytes,
        uptime_s=result.uptime_s,
        llm=LLMState(**dataclasses.asdict(result.llm)),
        ingest=IngestState.model_validate(result.ingest),
        embedder=EmbedderState(
            backend=health.backend if health else "none",
            model=health.model if health else "",
            ok=health.ok if health else False,
            dim=health.dim if health else None,
            last_error=health.last_error if health else None,
        ),
    )
    return web.json_response(body.model_dump())


async def health(request: web.Request) -> web.Response:
    """Cheap liveness: no SQL. ``degraded`` means search runs FTS-only."""
    service = request.app[STATS_SERVICE]
    embedder = service.embedder_health()
    ok = embedder is not None and embedder.ok
    body = HealthResponse(status="ok" if ok else "degraded", embedder_ok=ok, uptime_s=service.uptime_s)
    return web.json_response(body.model_dump())
