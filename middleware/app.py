"""``create_app(config)``: builds the services, shares them under typed keys, wires start-up and
shutdown through ``cleanup_ctx`` (resources are acquired in order and released in reverse)."""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import logging
import sqlite3
import time
from collections.abc import AsyncIterator, Callable
from datetime import datetime
from typing import TYPE_CHECKING, Literal

from aiohttp import web

from .config import Config
from .http.errors import auth_middleware, error_middleware
from .http.guard import RequestGuard
from .http.routes import setup_routes
from .http.ui import is_public as is_public_ui_path
from .keys import (
    ACCESS_TRACKER,
    CONFIG,
    DATABASE,
    EMBEDDER,
    GPU_SCHEDULER,
    HARDWARE_MONITOR,
    INDEX_SYNC,
    INGEST_SERVICE,
    LIFECYCLE_SERVICE,
    MARKDOWN_SYNC,
    MARKDOWN_WORKSPACES,
    MCP_HTTP,
    MEMORY_SERVICE,
    METRICS,
    RECALL_SERVICE,
    SEARCH_SERVICE,
    STATS_SERVICE,
    TIME_PARSER,
    VECTOR_INDEX,
)
from .mcp.lazy import LazyMcpHttp
from .models.embedders import Embedder, create_embedder
from .models.llm import LLM, create_llm
from .services.access import AccessTracker
from .services.extraction import ExtractionService
from .services.hardware import HardwareMonitor
from .services.index_sync import IndexSync
from .services.ingest import IngestService
from .services.lifecycle import LifecycleReport, LifecycleService, utc_now
from .services.memories import MemoryService
from .services.metrics import Metrics
from .services.mirror import MarkdownSync, MarkdownWorkspaces
from .services.recall import RecallService, synthesis_wanted
from .services.rerank import LlmReranker, RerankingSearchService
from .services.scheduler import GpuScheduler
from .services.search import SearchService
from .services.stats import StatsService
from .services.timeparse import TimeParser
from .store import memories as memory_sql
from .store.db import Database
from .store.vectors import VectorIndex, use_one_blas_thread

if TYPE_CHECKING:
    from .mcp.http import McpHttp

log = logging.getLogger(__name__)


def search_service_for(
    config: Config,
    db: Database,
    index: VectorIndex,
    embedder: Embedder,
    chat_model: LLM | None,
    time_parser: TimeParser,
) -> SearchService:
    """The search service: plain, or with the LLM reranker when ``rerank.enabled``."""
    args = (db, index, embedder, config.search, config.embeddings.query_timeout_s)
    options = {"ranking": config.ranking, "time_parser": time_parser}
    if not config.rerank.enabled:
        return SearchService(*args, **options)
    reranker = LlmReranker(chat_model, config.rerank)
    return RerankingSearchService(*args, **options, reranker=reranker, candidates=config.rerank.candidates)


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
    middlewares = [error_middleware, RequestGuard(config.server).middleware()]
    if config.server.api_token is not None:
        middlewares.append(
            auth_middleware(
                config.server.api_token.get_secret_value(),
                cors=bool(config.server.cors_origins),
                public=is_public_ui_path,
            )
        )
    app = web.Application(client_max_size=config.server.max_body_bytes, middlewares=middlewares)
    owns_embedder = embedder is None
    embedder = embedder or create_embedder(config.embeddings)
    owns_llm = llm == "from_config"
    chat_model: LLM | None = create_llm(config.llm) if llm == "from_config" else llm
    db = Database(
        config.database.path,
        busy_timeout_ms=config.database.busy_timeout_ms,
        read_connections=config.database.read_connections,
        synchronous=config.database.synchronous,
    )
    index = VectorIndex(
        embedder.model,
        embedder.dim,
        exact_max_rows=config.search.vector_exact_max_rows,
        shortlist=config.search.vector_shortlist,
    )
    memory_service = MemoryService(
        db,
        index,
        embedder,
        dedup_threshold=config.ingest.dedup_threshold,
        supersede_threshold=config.ingest.supersede_threshold,
    )
    index_sync = IndexSync(db, index, config.database.external_write_check_s)
    time_parser = TimeParser()
    search_service = search_service_for(config, db, index, embedder, chat_model, time_parser)
    access_tracker = AccessTracker(db, config.search.access_flush_s)
    extraction = ExtractionService(chat_model, config.llm)
    metrics = Metrics()
    hardware = HardwareMonitor(config.hardware)
    scheduler = GpuScheduler(hardware, config.hardware)
    markdown = MarkdownWorkspaces(db, memory_service)
    markdown_sync = MarkdownSync(markdown, config.markdown)
    ingest_service = IngestService(
        db,
        memory_service,
        extraction,
        config.ingest,
        gate=scheduler,
        on_extracted=metrics.observe_extraction,
        on_stored=markdown_sync.request_sync,
        turn_context=config.embeddings.session_context,
    )

    app[CONFIG] = config
    app[DATABASE] = db
    app[EMBEDDER] = embedder
    app[VECTOR_INDEX] = index
    app[MEMORY_SERVICE] = memory_service
    app[SEARCH_SERVICE] = search_service
    app[TIME_PARSER] = time_parser
    app[ACCESS_TRACKER] = access_tracker
    app[INDEX_SYNC] = index_sync
    app[INGEST_SERVICE] = ingest_service
    app[RECALL_SERVICE] = RecallService(
        search_service,
        memory_service,
        chat_model,
        config.recall,
        synthesise=synthesis_wanted(config.recall, config.llm),
    )
    app[HARDWARE_MONITOR] = hardware
    app[GPU_SCHEDULER] = scheduler
    app[METRICS] = metrics
    lifecycle = LifecycleService(
        db,
        memory_service,
        index,
        chat_model if config.llm.writes_prose else None,
        config.lifecycle,
        gpu_busy=scheduler.busy_reason,
        gpu_max_wait_s=config.hardware.max_deferral_s,
        gpu_recheck_s=config.hardware.recheck_s,
        clock=lifecycle_clock,
    )
    app[LIFECYCLE_SERVICE] = lifecycle

    async def mirror_after_run(report: LifecycleReport) -> None:
        if not report.dry_run:
            markdown_sync.request_sync()

    lifecycle.on_finished.append(mirror_after_run)
    app[MARKDOWN_WORKSPACES] = markdown
    app[MARKDOWN_SYNC] = markdown_sync
    app[STATS_SERVICE] = StatsService(
        memory_service, db.path, index, embedder, chat_model, ingest_service, hardware, scheduler
    )

    async def database_ctx(app: web.Application) -> AsyncIterator[None]:
        await asyncio.to_thread(db.open)
        log.info("database open", extra={"path": str(db.path)})
        stop = asyncio.Event()
        checkpoints = asyncio.create_task(run_checkpoints(db, stop, config.database.checkpoint_interval_s))
        yield
        stop.set()
        await checkpoints
        await asyncio.to_thread(db.close)
        log.info("database closed")

    async def embedder_ctx(app: web.Application) -> AsyncIterator[None]:
        if owns_embedder:
            await embedder.start()
        yield
        if owns_embedder:
            await embedder.close()

    async def vector_index_ctx(app: web.Application) -> AsyncIterator[None]:
        use_one_blas_thread()
        started = time.perf_counter()
        loaded = await asyncio.to_thread(load_vector_index, db, index)
        await asyncio.to_thread(search_service.warm_up)  # dateparser's data, when time-aware search is on
        release_freed_heap()
        log.info(
            "vector index built",
            extra={"rows": loaded, "model": index.model, "seconds": round(time.perf_counter() - started, 2)},
        )
        await index_sync.start()
        yield
        await index_sync.stop()

    async def access_ctx(app: web.Application) -> AsyncIterator[None]:
        await access_tracker.start()
        yield
        await access_tracker.stop()  # writes the reads still pending

    async def llm_ctx(app: web.Application) -> AsyncIterator[None]:
        if owns_llm and chat_model is not None:
            await chat_model.start()
        yield
        if owns_llm and chat_model is not None:
            await chat_model.close()

    async def hardware_ctx(app: web.Application) -> AsyncIterator[None]:
        await hardware.start()
        yield
        await hardware.stop()

    async def markdown_ctx(app: web.Application) -> AsyncIterator[None]:
        await markdown_sync.start()
        yield
        await markdown_sync.stop(timeout=config.server.shutdown_timeout_s)

    async def ingest_ctx(app: web.Application) -> AsyncIterator[None]:
        await ingest_service.start()
        yield
        await ingest_service.stop(timeout=config.server.shutdown_timeout_s)

    async def lifecycle_ctx(app: web.Application) -> AsyncIterator[None]:
        await lifecycle.start()
        yield
        await lifecycle.stop(timeout=config.server.shutdown_timeout_s)

    # The hardware poller starts before the extraction worker and the lifecycle schedule (whose
    # GPU gate reads it) and stops after them; so does the Markdown sync, which then writes what
    # their last batch or run asked for.
    app.cleanup_ctx.extend(
        [
            database_ctx,
            embedder_ctx,
            vector_index_ctx,
            access_ctx,
            llm_ctx,
            hardware_ctx,
            markdown_ctx,
            ingest_ctx,
            lifecycle_ctx,
        ]
    )
    if config.mcp.enabled:
        recall_service = app[RECALL_SERVICE]

        def build_mcp_http() -> McpHttp:
            from .mcp.http import McpHttp
            from .mcp.server import McpServices, acting_user, build_mcp_server

            services = McpServices(memory_service, search_service, recall_service, access_tracker)
            return McpHttp(build_mcp_server(services, config, acting_user(config)), config)

        mcp_http = LazyMcpHttp(build_mcp_http)  # the SDK loads on the first /mcp request
        app[MCP_HTTP] = mcp_http

        async def mcp_ctx(app: web.Application) -> AsyncIterator[None]:
            # Last in, first out: /mcp stops taking calls before the services it calls stop.
            yield
            await mcp_http.stop(timeout=config.server.shutdown_timeout_s)

        app.cleanup_ctx.append(mcp_ctx)
    setup_routes(app)
    return app


async def run_checkpoints(db: Database, stop: asyncio.Event, interval_s: float) -> None:
    """Checkpoint the WAL every ``interval_s`` off the request path, until ``stop``; never dies."""
    while not stop.is_set():
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), timeout=interval_s)
        try:
            await db.checkpoint()
        except Exception:
            log.exception("WAL checkpoint failed")


def release_freed_heap() -> None:
    """Give the heap freed by start-up (models, the BLOBs read into the index) back to the OS.

    glibc keeps freed small blocks in the process; ``malloc_trim`` returns them, ~7 MB of
    resident memory at 100k memories. Elsewhere (musl, macOS) this does nothing.
    """
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6").malloc_trim(0)


def load_vector_index(db: Database, index: VectorIndex) -> int:
    """Fill the index from the BLOBs of the live model: SQLite is the source of truth."""

    def read(conn: sqlite3.Connection) -> int:
        counts = memory_sql.embedding_counts(conn, index.model)
        rows = (
            (memory_id, user_id, blob, layer, kind)
            for memory_id, user_id, blob, _, layer, kind in memory_sql.iter_embeddings(conn, index.model)
        )
        return index.load(counts, rows)

    return db.read_blocking(read)
