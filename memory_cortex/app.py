"""``create_app(config)``: the daemon's aiohttp application. The services come from the composition
root (:mod:`memory_cortex.runtime`), are shared under typed keys, and start and stop with the app through
one ``cleanup_ctx`` (in order, and in reverse); ``/mcp`` is wired here, loaded on first use."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from datetime import datetime
from typing import TYPE_CHECKING, Literal

from aiohttp import web
from aiohttp.web_urldispatcher import AbstractRoute

from .config import Config
from .http.bodies import BodyReader
from .http.errors import auth_middleware, error_middleware
from .http.guard import RequestGuard
from .http.request_metrics import count_requests
from .http.routes import setup_routes
from .http.time_bounds import time_bound_middleware
from .http.ui import is_public as is_public_ui_path
from .keys import (
    ACCESS_TRACKER,
    CONFIG,
    DATABASE,
    EMBEDDER,
    ENTITY_SERVICE,
    GPU_SCHEDULER,
    HARDWARE_MONITOR,
    IMPORT_RUNS,
    INDEX_SYNC,
    INGEST_SERVICE,
    LIFECYCLE_SERVICE,
    MARKDOWN_SYNC,
    MARKDOWN_WORKSPACES,
    MCP_HTTP,
    MEMORY_SERVICE,
    METRICS,
    RECALL_SERVICE,
    REEMBEDDER,
    SEARCH_SERVICE,
    STATS_SERVICE,
    TIME_PARSER,
    VECTOR_INDEX,
)
from .mcp.lazy import LazyMcpHttp
from .models.embedders import Embedder
from .models.llm import LLM
from .runtime import DAEMON, build_services, running
from .services.lifecycle import utc_now

if TYPE_CHECKING:
    from .mcp.http import McpHttp


def create_app(
    config: Config,
    *,
    embedder: Embedder | None = None,
    llm: LLM | Literal["from_config"] | None = "from_config",
    lifecycle_clock: Callable[[], datetime] = utc_now,
) -> web.Application:
    """The aiohttp application for ``config``.

    Args:
        config: the resolved configuration.
        embedder: an already started embedder to share (tests load the model once); when omitted
            the one named in the config is created, started (warmed) and closed with the app.
        llm: an already started LLM to share, or None for none (rules only); by default the one
            named in the config is created, started and closed with the app.
        lifecycle_clock: the time the memory lifecycle judges by (tests move it forward).
    """
    # Outermost first: the request counter sees the status the client gets.
    middlewares = [count_requests, error_middleware, RequestGuard(config.server).middleware()]
    if config.server.api_token is not None:
        middlewares.append(
            auth_middleware(
                config.server.api_token.get_secret_value(),
                cors=bool(config.server.cors_origins),
                public=is_public_ui_path,
            )
        )
    # Bodies are read only after the headers passed the guard and the token check.
    middlewares.append(BodyReader(config.server).middleware())
    # Innermost: a request's time bound counts the handler's work, after its body was read.
    time_bounds: dict[AbstractRoute, float] = {}  # filled by setup_routes
    middlewares.append(time_bound_middleware(time_bounds))
    app = web.Application(client_max_size=config.server.max_body_bytes, middlewares=middlewares)
    services = build_services(config, embedder=embedder, llm=llm, lifecycle_clock=lifecycle_clock)
    app[CONFIG] = config
    app[DATABASE] = services.db
    app[EMBEDDER] = services.embedder
    app[VECTOR_INDEX] = services.index
    app[MEMORY_SERVICE] = services.memories
    app[ENTITY_SERVICE] = services.entities
    app[SEARCH_SERVICE] = services.search
    app[TIME_PARSER] = services.time_parser
    app[ACCESS_TRACKER] = services.access
    app[INDEX_SYNC] = services.index_sync
    app[REEMBEDDER] = services.reembedder
    app[INGEST_SERVICE] = services.ingest
    app[RECALL_SERVICE] = services.recall
    app[HARDWARE_MONITOR] = services.hardware
    app[GPU_SCHEDULER] = services.scheduler
    app[METRICS] = services.metrics
    app[LIFECYCLE_SERVICE] = services.lifecycle
    app[MARKDOWN_WORKSPACES] = services.markdown
    app[MARKDOWN_SYNC] = services.markdown_sync
    app[IMPORT_RUNS] = services.imports
    app[STATS_SERVICE] = services.stats

    async def services_ctx(app: web.Application) -> AsyncIterator[None]:
        async with running(services, DAEMON):
            yield

    app.cleanup_ctx.append(services_ctx)
    if config.mcp.enabled:

        def build_mcp_http() -> McpHttp:
            from .mcp.http import McpHttp
            from .mcp.server import McpServices, acting_user, build_mcp_server

            tools = McpServices(services.memories, services.search, services.recall, services.entities)
            return McpHttp(build_mcp_server(tools, config, acting_user(config)), config)

        mcp_http = LazyMcpHttp(build_mcp_http)  # the SDK loads on the first /mcp request
        app[MCP_HTTP] = mcp_http

        async def mcp_ctx(app: web.Application) -> AsyncIterator[None]:
            # Last in, first out: /mcp stops taking calls before the services it calls stop.
            yield
            await mcp_http.stop(timeout=config.server.shutdown_timeout_s)

        app.cleanup_ctx.append(mcp_ctx)
    setup_routes(app, time_bounds)
    return app
