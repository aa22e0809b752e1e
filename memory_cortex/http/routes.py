"""The route table: each endpoint declared once, for the router and for OpenAPI alike."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

import aiohttp_cors
from aiohttp import web
from aiohttp.web_urldispatcher import AbstractRoute
from pydantic import BaseModel

from ..keys import CONFIG
from ..services.metrics import CONTENT_TYPE as METRICS_CONTENT_TYPE
from . import entities, ingest, lifecycle, markdown, mcp, memories, recall, search, stats, ui
from .entity_schemas import (
    EntityDetailOut,
    EntityListQuery,
    EntityListResponse,
    RelationIn,
    RelationListQuery,
    RelationListResponse,
    RelationOut,
)
from .openapi import build_openapi
from .schemas import (
    ContextRequest,
    ContextResponse,
    DeletedResponse,
    ErrorResponse,
    HealthResponse,
    HybridSearchRequest,
    HybridSearchResponse,
    ImportRunOut,
    IngestAccepted,
    IngestJobDetail,
    IngestJobsQuery,
    IngestJobsResponse,
    IngestRequestBody,
    LifecycleLogQuery,
    LifecycleLogResponse,
    LifecyclePreviewQuery,
    LifecycleReportOut,
    LifecycleRunQuery,
    LifecycleRunStatusOut,
    MarkdownImportRequest,
    McpMessage,
    McpReply,
    MemoryCreateBody,
    MemoryCreated,
    MemoryCreateQuery,
    MemoryHistoryOut,
    MemoryListQuery,
    MemoryListResponse,
    MemoryOut,
    MemoryPatch,
    OverviewQuery,
    OverviewResponse,
    RecallRequest,
    RecallResponse,
    RetryResponse,
    ScopeQuery,
    SearchDebugRequest,
    SearchDebugResponse,
    SessionListQuery,
    SessionListResponse,
    StatsResponse,
    SystemHistoryQuery,
    SystemHistoryResponse,
    VisibleRequest,
    VisibleResponse,
)
from .time_bounds import CONTEXT, PREVIEW, RECALL, REQUEST, TimeBound

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
    # Media type of the success responses. A status mapped to None is documented as any JSON object,
    # or as plain text for another media type.
    media_type: str = "application/json"
    # How long it may work on a request (http/time_bounds.py); None: unbounded here (/mcp).
    time_bound: TimeBound | None = REQUEST


async def openapi_json(request: web.Request) -> web.Response:
    config = request.app[CONFIG]
    return web.json_response(build_openapi(ENDPOINTS, config))


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
        "/search/debug",
        search.search_debug,
        "Why a search ranked what it did: the hybrid list (as /hybrid-search) beside the FTS-only and"
        " vector-only lists, each hit's score parts, the MATCH expressions and each stage's timings.",
        request=SearchDebugRequest,
        responses={200: SearchDebugResponse, 400: ErrorResponse},
    ),
    Endpoint(
        "POST",
        "/memories",
        memories.create_memories,
        "Store one memory (object) or a batch ({memories:[...]} or an array); embeds on write.",
        request=MemoryCreateBody,
        query=MemoryCreateQuery,
        responses={201: MemoryCreated, 400: ErrorResponse, 413: ErrorResponse, 415: ErrorResponse},
    ),
    Endpoint(
        "GET",
        "/memories",
        memories.list_memories,
        "List memories, newest first, filtered (user, topic, layer, category, importance, dates, text),"
        " keyset-paginated with before_id.",
        query=MemoryListQuery,
        responses={200: MemoryListResponse, 400: ErrorResponse},
    ),
    Endpoint(
        "GET",
        "/sessions",
        memories.list_sessions,
        "One user's conversations posted to /ingest (sessions with turns), most recently active first:"
        " turn counts, when said, and the session summary if one was written.",
        query=SessionListQuery,
        responses={200: SessionListResponse, 400: ErrorResponse},
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
        "POST",
        # Not under /memories/{id}: a PATCH or DELETE of that path would reach the memory routes.
        "/visible-memories",
        memories.visible_memories,
        "Which of these memories a requester (user, agent, private or group session, channel) may see:"
        " what a host asks before it shows hits it got elsewhere (OpenClaw's authorizeSearchHits).",
        request=VisibleRequest,
        responses={200: VisibleResponse, 400: ErrorResponse},
    ),
    Endpoint(
        "GET",
        "/memories/{memory_id}/history",
        memories.memory_history,
        "A memory with what it superseded, what superseded it, its lifecycle merges and history summary.",
        query=ScopeQuery,
        responses={200: MemoryHistoryOut, 404: ErrorResponse},
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
    Endpoint(
        "GET",
        "/entities",
        entities.list_entities,
        "The people, pets, places and plans one user's memories are about (the user first), each with its"
        " id and how many facts and relations the requester may see.",
        query=EntityListQuery,
        responses={200: EntityListResponse, 400: ErrorResponse},
    ),
    Endpoint(
        "GET",
        "/entities/{entity_id}",
        entities.get_entity,
        "One entity: its current facts, what later statements replaced (valid_to), its relations and the"
        " turns its facts were read from.",
        query=ScopeQuery,
        responses={200: EntityDetailOut, 404: ErrorResponse},
    ),
    Endpoint(
        "GET",
        "/relations",
        entities.list_relations,
        "One user's relations between entities (subject -predicate-> object), newest first; with entity,"
        " those naming it.",
        query=RelationListQuery,
        responses={200: RelationListResponse, 400: ErrorResponse},
    ),
    Endpoint(
        "POST",
        "/relations",
        entities.create_relation,
        "Write a relation between two entities (ids or names); the same relation in the same reach is kept"
        " once.",
        request=RelationIn,
        responses={201: RelationOut, 400: ErrorResponse, 404: ErrorResponse, 415: ErrorResponse},
    ),
    Endpoint(
        "DELETE",
        "/relations/{relation_id}",
        entities.delete_relation,
        "Delete a relation for good.",
        query=ScopeQuery,
        responses={200: DeletedResponse, 404: ErrorResponse},
    ),
    Endpoint(
        "POST",
        "/ingest",
        ingest.ingest,
        "Journal a whole session transcript (committed before the 202); extraction runs after the debounce.",
        request=IngestRequestBody,
        responses={202: IngestAccepted, 400: ErrorResponse, 413: ErrorResponse, 415: ErrorResponse},
    ),
    Endpoint(
        "GET",
        "/ingest/jobs",
        ingest.list_jobs,
        "Recent extraction jobs, newest first, by status: the owner's view (every session's jobs,"
        " no memory text; each job's memories are shown by GET /ingest/jobs/{job_id} to its requester).",
        query=IngestJobsQuery,
        responses={200: IngestJobsResponse, 400: ErrorResponse},
    ),
    Endpoint(
        "GET",
        "/ingest/jobs/{job_id}",
        ingest.get_job,
        "One extraction job and the memories it stored that the requester may see (a job of a reach"
        " it may not see is 404).",
        query=ScopeQuery,
        responses={200: IngestJobDetail, 400: ErrorResponse, 404: ErrorResponse},
    ),
    Endpoint(
        "POST",
        "/ingest/jobs/{job_id}/retry",
        ingest.retry_job,
        "Queue a failed extraction job again.",
        responses={200: RetryResponse, 404: ErrorResponse},
    ),
    Endpoint(
        "POST",
        "/import",
        markdown.import_workspace,
        "Import an OpenClaw workspace sent as content (MEMORY.md → core, memory/YYYY-MM-DD.md → working);"
        " embedded and deduplicated; a second import of the same files adds nothing. Answers 202 at once"
        " with the import and a Location to follow (GET /import/runs/{import_id}); a workspace refused"
        " (too many memories) is a 400; 409 naming the import (error.run_id) while the same workspace"
        " (user and agent) is being imported.",
        request=MarkdownImportRequest,
        responses={
            202: ImportRunOut,
            400: ErrorResponse,
            409: ErrorResponse,
            413: ErrorResponse,
            415: ErrorResponse,
        },
    ),
    Endpoint(
        "GET",
        "/import/runs/{import_id}",
        markdown.import_run,
        "One import as it stands: status, memories handled of the workspace's, and what it did once done.",
        responses={200: ImportRunOut, 400: ErrorResponse, 404: ErrorResponse},
    ),
    Endpoint(
        "POST",
        "/recall",
        recall.recall,
        "An answer grounded only in the user's top memories (LLM synthesis, cached); degraded list when the LLM is down.",
        request=RecallRequest,
        responses={200: RecallResponse, 400: ErrorResponse},
        time_bound=RECALL,
    ),
    Endpoint(
        "POST",
        "/context",
        recall.context,
        'The "## Long-Term Memories" prompt block: facts by importance then score, capped at max_tokens.',
        request=ContextRequest,
        responses={200: ContextResponse, 400: ErrorResponse},
        time_bound=CONTEXT,
    ),
    Endpoint(
        "POST",
        "/lifecycle/run",
        lifecycle.run_lifecycle,
        "Start a lifecycle run now (promote, merge, decay, sessions, compress, maintain): 202 at once"
        " with the run and a Location to follow (GET /lifecycle/runs/{run_id}); 409 naming the run"
        " (error.run_id) while another is under way.",
        query=LifecycleRunQuery,
        responses={202: LifecycleRunStatusOut, 400: ErrorResponse, 409: ErrorResponse},
    ),
    Endpoint(
        "GET",
        "/lifecycle/runs/{run_id}",
        lifecycle.lifecycle_run,
        "One lifecycle run as it stands: status, the stage under way, stages done, the report so far"
        " (complete once status is done).",
        responses={200: LifecycleRunStatusOut, 400: ErrorResponse, 404: ErrorResponse},
    ),
    Endpoint(
        "GET",
        "/lifecycle/preview",
        lifecycle.preview_lifecycle,
        "What a lifecycle run now would do: the same plans, nothing changed, nothing logged.",
        query=LifecyclePreviewQuery,
        responses={200: LifecycleReportOut, 400: ErrorResponse},
        time_bound=PREVIEW,
    ),
    Endpoint(
        "GET",
        "/lifecycle/log",
        lifecycle.lifecycle_log,
        "Past lifecycle runs and their reports, newest first.",
        query=LifecycleLogQuery,
        responses={200: LifecycleLogResponse, 400: ErrorResponse},
    ),
    Endpoint(
        "GET",
        "/stats",
        stats.stats,
        "Counts, sizes, embedder and LLM state, ingest queue, hardware snapshot and GPU gate.",
        responses={200: StatsResponse},
    ),
    Endpoint(
        "GET",
        "/stats/overview",
        stats.overview,
        "The dashboard's overview: one user's memories (those the requester may see) per day by layer,"
        " kind and extraction method, categories and topics; the whole daemon's extraction jobs, backlog"
        " and latency, lifecycle moves per run and search latency per minute (in memory since start).",
        query=OverviewQuery,
        responses={200: OverviewResponse, 400: ErrorResponse},
    ),
    Endpoint(
        "GET",
        "/system/history",
        stats.system_history,
        "GPU load, VRAM, temperature and host load of the recent polls (the dashboard's charts), oldest first.",
        query=SystemHistoryQuery,
        responses={200: SystemHistoryResponse, 400: ErrorResponse},
    ),
    Endpoint(
        "GET",
        "/config",
        stats.effective_config,
        "The effective configuration (configuration file + MEMORY_CORTEX_* environment); secrets show as ********.",
        responses={200: None},
    ),
    Endpoint(
        "GET",
        "/metrics",
        stats.metrics,
        "Prometheus metrics (text format 0.0.4): memories, search and extraction latency, ingest queue, GPU.",
        responses={200: None},
        media_type=METRICS_CONTENT_TYPE,
    ),
    Endpoint(
        "GET",
        "/health",
        stats.health,
        "Liveness; degraded when search is FTS-only.",
        responses={200: HealthResponse},
    ),
    Endpoint(
        "POST",
        "/mcp",
        mcp.mcp_endpoint,
        "MCP (Model Context Protocol) over streamable HTTP, stateless, JSON answers: one JSON-RPC message"
        " per POST (tools search_memory, remember, forget, recall, search_debug; resource memory://profile)."
        " Send Accept: application/json, text/event-stream. Errors are JSON-RPC errors, not this API's shape,"
        " except the daemon's own refusals (401, 403, 408, 413, 415, 421), which every route shares.",
        request=McpMessage,
        responses={
            200: McpReply,
            202: None,
            400: McpReply,
            401: ErrorResponse,
            403: None,
            406: McpReply,
            413: ErrorResponse,
            421: None,
        },
        time_bound=None,  # the MCP SDK answers (http/time_bounds.py)
    ),
    Endpoint(
        "GET",
        "/",
        ui.root_redirect,
        "Redirects to the dashboard, /ui/ (308): what a browser opened on the daemon's address finds.",
        responses={308: None},
        media_type="text/html",
    ),
    Endpoint(
        "GET",
        "/ui",
        ui.ui_redirect,
        "Redirects to /ui/ (308).",
        responses={308: None},
        media_type="text/html",
    ),
    Endpoint(
        "GET",
        "/ui/static/{name}",
        ui.ui_asset,
        "A dashboard asset (JavaScript module, style sheet); no token needed.",
        responses={200: None, 404: ErrorResponse},
        media_type="text/plain",
    ),
    Endpoint(
        "GET",
        "/ui/",
        ui.ui_index,
        "The dashboard (HTML; assets under /ui/static/). Loads without the token, then asks for it.",
        responses={200: None},
        media_type="text/html",
    ),
    Endpoint("GET", "/openapi.json", openapi_json, "This document.", responses={200: None}),
)


# What a browser page may send besides the CORS-safelisted headers.
CORS_ALLOWED_HEADERS = ("Authorization", "Content-Type")


def setup_routes(app: web.Application, time_bounds: dict[AbstractRoute, float] | None = None) -> None:
    """Register every endpoint; ``time_bounds`` gets each bounded route's cut-off in seconds (the
    middleware of ``http/time_bounds.py`` reads it)."""
    # One resource per path, holding every method of it: a CORS preflight is answered by the
    # resource its path matches first, so methods spread over several resources of the same path
    # would be refused there. GET routes answer HEAD too: a HEAD is a GET without the body.
    resources: dict[str, web.Resource] = {}
    routes = []
    for e in ENDPOINTS:
        resource = resources.get(e.path) or resources.setdefault(e.path, app.router.add_resource(e.path))
        added = [resource.add_route(e.method, e.handler)]
        if e.method == "GET":
            added.append(resource.add_route("HEAD", e.handler))
        routes += added
        if time_bounds is not None and e.time_bound is not None:
            time_bounds.update(dict.fromkeys(added, e.time_bound.cut_after(app[CONFIG])))
    origins = app[CONFIG].server.cors_origins
    if origins:
        # Preflight OPTIONS on every path; CORS headers only for these origins, never credentials
        # (cookies): the API token travels in the Authorization header.
        options = aiohttp_cors.ResourceOptions(allow_headers=CORS_ALLOWED_HEADERS, allow_credentials=False)
        cors = aiohttp_cors.setup(app, defaults=dict.fromkeys(origins, options))
        for route in routes:
            cors.add(route)
