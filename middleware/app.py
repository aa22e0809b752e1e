"""``create_app(config)``: builds the services, shares them under typed keys, wires start-up and
shutdown through ``cleanup_ctx`` (resources are acquired in order and released in reverse)."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator

from aiohttp import web

from .config import Config
from .http.errors import error_middleware
from .http.routes import setup_routes
from .keys import (
    CONFIG,
    DATABASE,
    EMBEDDER,
    INDEX_SYNC,
    MEMORY_SERVICE,
    SEARCH_SERVICE,
    STATS_SERVICE,
    VECTOR_INDEX,
)
from .models.embedders import Embedder, create_embedder
from .services.index_sync import IndexSync
from .services.memories import MemoryService
from .services.search import SearchService
from .services.stats import StatsService
from .store import memories as memory_sql
from .store.db import Database
from .store.vectors import VectorIndex, from_blob

log = logging.getLogger(__name__)


def create_app(config: Config, *, embedder: Embedder | None = None) -> web.Application:
    """The aiohttp application for ``config``.

    Args:
        config: the resolved configuration.
        embedder: an already started embedder to share (tests load the model once); when omitted
            the one named in the config is created, started (warmed) and closed with the app.
    """
    app = web.Application(client_max_size=config.server.max_body_bytes, middlewares=[error_middleware])
    owns_embedder = embedder is None
    embedder = embedder or create_embedder(config.embeddings)
    db = Database(
        config.database.path,
        busy_timeout_ms=config.database.busy_timeout_ms,
        read_connections=config.database.read_connections,
    )
    index = VectorIndex(embedder.model, embedder.dim)
    memory_service = MemoryService(
        db,
        index,
        embedder,
        dedup_threshold=config.ingest.dedup_threshold,
        supersede_threshold=config.ingest.supersede_threshold,
    )
    index_sync = IndexSync(db, index, config.database.external_write_check_s)

    app[CONFIG] = config
    app[DATABASE] = db
    app[EMBEDDER] = embedder
    app[VECTOR_INDEX] = index
    app[MEMORY_SERVICE] = memory_service
    app[SEARCH_SERVICE] = SearchService(db, index, embedder, config.search, config.embeddings.query_timeout_s)
    app[INDEX_SYNC] = index_sync
    app[STATS_SERVICE] = StatsService(memory_service, db.path, index, embedder)

    async def database_ctx(app: web.Application) -> AsyncIterator[None]:
        await asyncio.to_thread(db.open)
        log.info("database open", extra={"path": str(db.path)})
        yield
        await asyncio.to_thread(db.close)
        log.info("database closed")

    async def embedder_ctx(app: web.Application) -> AsyncIterator[None]:
        if owns_embedder:
            await embedder.start()
        yield
        if owns_embedder:
            await embedder.close()

    async def vector_index_ctx(app: web.Application) -> AsyncIterator[None]:
        started = time.perf_counter()
        loaded = await asyncio.to_thread(load_vector_index, db, index)
        log.info(
            "vector index built",
            extra={"rows": loaded, "model": index.model, "seconds": round(time.perf_counter() - started, 2)},
        )
        await index_sync.start()
        yield
        await index_sync.stop()

    app.cleanup_ctx.extend([database_ctx, embedder_ctx, vector_index_ctx])
    setup_routes(app)
    return app


def load_vector_index(db: Database, index: VectorIndex) -> int:
    """Fill the index from the BLOBs of the live model: SQLite is the source of truth."""

    def read(conn) -> int:  # type: ignore[no-untyped-def]
        count = 0
        for memory_id, user_id, blob, dim in memory_sql.iter_embeddings(conn, index.model):
            if index.dim is not None and dim != index.dim:
                continue  # same model name, other size: a misconfiguration, never compared
            index.upsert(memory_id, user_id, from_blob(blob, dim))
            count += 1
        return count

    return db.read_blocking(read)
