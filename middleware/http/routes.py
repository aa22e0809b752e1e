"""The route table: each endpoint declared once, for the router and for OpenAPI alike."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from aiohttp import web
from pydantic import BaseModel

from . import memories, search, stats
from .openapi import build_openapi
from .schemas import (
    DeletedResponse,
    ErrorResponse,
    HealthResponse,
    HybridSearchRequest,
    HybridSearchResponse,
    MemoryBatchIn,
    MemoryCreateQuery,
    MemoryListQuery,
    MemoryListResponse,
    MemoryOut,
    MemoryPatch,
    ScopeQuery,
    StatsResponse,
)

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


@dataclass(frozen=True)
class Endpoint:
    method: str
    path: str
    handler: Handler
    summary: str
    request: type[BaseModel] | None = None
    query: type[BaseModel] | None = None
    responses: dict[int, type[BaseModel] | None] = field(default_factory=dict)


async def openapi_json(request: web.Request) -> web.Response:
    return web.json_response(build_openapi(ENDPOINTS))


ENDPOINTS: tuple[Endpoint, ...] = (
    Endpoint(
        "POST",
        "/hybrid-search",
        search.hybrid_search,
        "Hybrid FTS5 + vector search over one user's live memories.",
        request=HybridSearchRequest,
        responses={200: HybridSearchResponse, 400: ErrorResponse},
    ),
    Endpoint(
        "POST",
        "/memories",
        memories.create_memories,
        "Store one memory (object) or a batch ({memories:[...]} or an array); embeds on write.",
        request=MemoryBatchIn,
        query=MemoryCreateQuery,
        responses={201: MemoryOut, 400: ErrorResponse, 413: ErrorResponse, 415: ErrorResponse},
    ),
    Endpoint(
        "GET",
        "/memories",
        memories.list_memories,
        "List memories, newest first, filtered by user/topic, keyset-paginated with before_id.",
        query=MemoryListQuery,
        responses={200: MemoryListResponse, 400: ErrorResponse},
    ),
    Endpoint(
        "GET",
        "/memories/{memory_id}",
        memories.get_memory,
        "One memory by id.",
        query=ScopeQuery,
        responses={200: MemoryOut, 404: ErrorResponse},
    ),
    Endpoint(
        "PATCH",
        "/memories/{memory_id}",
        memories.patch_memory,
        "Change fields of a memory; new text is re-embedded; superseded_by hides it from search.",
        request=MemoryPatch,
        query=ScopeQuery,
        responses={200: MemoryOut, 400: ErrorResponse, 404: ErrorResponse},
    ),
    Endpoint(
        "DELETE",
        "/memories/{memory_id}",
        memories.delete_memory,
        "Delete a memory for good.",
        query=ScopeQuery,
        responses={200: DeletedResponse, 404: ErrorResponse},
    ),
    Endpoint("GET", "/stats", stats.stats, "Counts, sizes, embedder state.", responses={200: StatsResponse}),
    Endpoint(
        "GET",
        "/health",
        stats.health,
        "Liveness; degraded when search is FTS-only.",
        responses={200: HealthResponse},
    ),
    Endpoint("GET", "/openapi.json", openapi_json, "This document."),
)


def setup_routes(app: web.Application) -> None:
    for endpoint in ENDPOINTS:
        app.router.add_route(endpoint.method, endpoint.path, endpoint.handler)
