"""``python -m middleware mcp``: the MCP server over stdio, for desktop clients that spawn it.

The services run in this process against the configured database, as in the daemon; no daemon
needs to be running. When one is, both write the same SQLite file safely (WAL, one writer at a time,
``database.busy_timeout_ms``), and each sees the other's new vectors through the index sync. Only
what the tools need is started: no HTTP, no ingest worker (the daemon's worker owns the journal),
no hardware poller.

stdout carries the protocol and nothing else: logs go to stderr (``logging`` config), and the
models load before the first message is read.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sys
import time
from collections.abc import AsyncIterator

from ..app import load_vector_index, release_freed_heap, run_checkpoints
from ..config import Config
from ..models.embedders import create_embedder
from ..models.llm import create_llm
from ..services.access import AccessTracker
from ..services.index_sync import IndexSync
from ..services.memories import MemoryService
from ..services.recall import RecallService, synthesis_wanted
from ..services.search import SearchService
from ..store.db import Database
from ..store.vectors import VectorIndex, use_one_blas_thread
from .server import McpServices, build_mcp_server

log = logging.getLogger(__name__)


@contextlib.asynccontextmanager
async def open_services(config: Config) -> AsyncIterator[McpServices]:
    """The services the MCP tools call, started in order and stopped in reverse (as in ``create_app``)."""
    async with contextlib.AsyncExitStack() as stack:
        db = Database(
            config.database.path,
            busy_timeout_ms=config.database.busy_timeout_ms,
            read_connections=config.database.read_connections,
            synchronous=config.database.synchronous,
        )
        await asyncio.to_thread(db.open)
        stack.push_async_callback(asyncio.to_thread, db.close)
        stop_checkpoints = asyncio.Event()
        checkpoints = asyncio.create_task(
            run_checkpoints(db, stop_checkpoints, config.database.checkpoint_interval_s)
        )

        async def join_checkpoints() -> None:
            stop_checkpoints.set()
            await asyncio.wait_for(checkpoints, timeout=config.server.shutdown_timeout_s)

        stack.push_async_callback(join_checkpoints)

        embedder = create_embedder(config.embeddings)
        await embedder.start()
        stack.push_async_callback(embedder.close)
        use_one_blas_thread()
        index = VectorIndex(
            embedder.model,
            embedder.dim,
            exact_max_rows=config.search.vector_exact_max_rows,
            shortlist=config.search.vector_shortlist,
        )
        started = time.perf_counter()
        loaded = await asyncio.to_thread(load_vector_index, db, index)
        release_freed_heap()
        log.info(
            "vector index built",
            extra={"rows": loaded, "seconds": round(time.perf_counter() - started, 2)},
        )
        index_sync = IndexSync(db, index, config.database.external_write_check_s)
        await index_sync.start()
        stack.push_async_callback(index_sync.stop)

        access = AccessTracker(db, config.search.access_flush_s)
        await access.start()
        stack.push_async_callback(access.stop)  # writes the reads still pending

        llm = create_llm(config.llm)
        if llm is not None:
            await llm.start()
            stack.push_async_callback(llm.close)

        memories = MemoryService(
            db,
            index,
            embedder,
            dedup_threshold=config.ingest.dedup_threshold,
            supersede_threshold=config.ingest.supersede_threshold,
        )
        search = SearchService(
            db, index, embedder, config.search, config.embeddings.query_timeout_s, ranking=config.ranking
        )
        await asyncio.to_thread(search.warm_up)  # dateparser's data, when time-aware search is on
        recall = RecallService(
            search, memories, llm, config.recall, synthesise=synthesis_wanted(config.recall, config.llm)
        )
        yield McpServices(memories, search, recall, access)


async def serve_stdio(config: Config, user_id: str) -> None:
    """Serve MCP on stdin/stdout as ``user_id`` until the client closes stdin."""
    async with contextlib.AsyncExitStack() as stack:
        # A library that prints while the models load must not write into the protocol stream.
        # (While serving, the SDK itself points fd 1 at stderr and writes the protocol elsewhere.)
        with contextlib.redirect_stdout(sys.stderr):
            services = await stack.enter_async_context(open_services(config))
        server = build_mcp_server(services, config, user_id)
        log.info("mcp stdio ready", extra={"user_id": user_id, "db": str(config.database.path)})
        await server.run_stdio_async()
    log.info("mcp stdio stopped")
