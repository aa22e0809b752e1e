"""The composition root: the one place where what a process runs is built, wired and started.

The daemon (:func:`memory_cortex.app.create_app`), the MCP stdio server and the CLI verbs all build
their objects here, so they cannot drift apart (the stdio server once searched without the
reranker the daemon used). Building constructs objects and starts nothing; :func:`running` starts
the parts a process needs in a fixed order and stops them in reverse:

``database`` → ``embedder`` → ``index`` (loaded from SQLite, then kept in step) → ``access`` →
``llm`` → ``hardware`` → ``markdown`` → ``ingest`` → ``lifecycle``

The hardware poller starts before the extraction worker and the lifecycle schedule (whose GPU gate
reads it) and stops after them; so does the Markdown sync, which then writes what their last batch
or run asked for. A part given from outside (a test's shared embedder or LLM) is used, never started
or closed here.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import logging
import sqlite3
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Collection
from dataclasses import dataclass
from datetime import datetime
from typing import Literal, get_args

from .config import Config
from .errors import StorageFull
from .models.embedders import Embedder, create_embedder
from .models.llm import LLM, create_llm
from .services.access import AccessTracker
from .services.entities import EntityService
from .services.extraction import ExtractionService
from .services.hardware import HardwareMonitor
from .services.import_runs import ImportRuns
from .services.index_sync import IndexSync
from .services.ingest import IngestService
from .services.lifecycle import LifecycleReport, LifecycleService, utc_now
from .services.loop_lag import LoopLagProbe
from .services.memories import MemoryService
from .services.metered_llm import MeteredLLM
from .services.metrics import Metrics
from .services.mirror import ImportSummary, MarkdownWorkspaces
from .services.mirror_sync import MarkdownSync
from .services.recall import RecallService, synthesis_wanted
from .services.reembed import Reembedder, warn_of_other_models
from .services.scheduler import GpuScheduler
from .services.search import LlmReranker, SearchService
from .services.stats import StatsService
from .services.timeparse import TimeParser
from .store import embeddings as embedding_sql
from .store.db import Database
from .store.vectors import VectorIndex, use_one_blas_thread

log = logging.getLogger(__name__)

Part = Literal[
    "loop_probe",
    "database",
    "embedder",
    "index",
    "access",
    "llm",
    "hardware",
    "markdown",
    "ingest",
    "reembed",
    "lifecycle",
]
# The order they start in (and stop in, reversed): the order of ``Part``.
PARTS: tuple[Part, ...] = get_args(Part)
DAEMON: frozenset[Part] = frozenset(PARTS)
# The MCP stdio server: what the tools call. No ingest worker (the daemon's owns the journal), no
# hardware poller, no lifecycle schedule, no mirror.
TOOLS: frozenset[Part] = frozenset({"database", "embedder", "index", "access", "llm"})


@dataclass
class Services:
    """Everything a process may run, built from one config. ``owns_*``: whether :func:`running`
    starts and closes that model (False when a caller shared an already started one)."""

    config: Config
    db: Database
    embedder: Embedder
    index: VectorIndex
    index_sync: IndexSync
    reembedder: Reembedder
    memories: MemoryService
    entities: EntityService
    time_parser: TimeParser
    search: SearchService
    access: AccessTracker
    llm: LLM | None
    recall: RecallService
    metrics: Metrics
    hardware: HardwareMonitor
    scheduler: GpuScheduler
    markdown: MarkdownWorkspaces
    markdown_sync: MarkdownSync
    imports: ImportRuns
    ingest: IngestService
    lifecycle: LifecycleService
    stats: StatsService
    owns_embedder: bool = True
    owns_llm: bool = True


# -- building -------------------------------------------------------------------------------
def new_database(config: Config, *, read_connections: int | None = None) -> Database:
    """The store as configured (not opened); ``read_connections``: fewer readers for a CLI verb."""
    readers = config.database.read_connections if read_connections is None else read_connections
    if config.database.backend == "postgres":
        from .store.postgres.db import PostgresDatabase  # psycopg: only where PostgreSQL is used

        assert config.database.url is not None  # the config's validator says so
        return PostgresDatabase(  # type: ignore[return-value]
            config.database.url.get_secret_value(),
            read_connections=readers,
            busy_timeout_ms=config.database.busy_timeout_ms,
        )
    return Database(
        config.database.path,
        busy_timeout_ms=config.database.busy_timeout_ms,
        read_connections=readers,
        synchronous=config.database.synchronous,
    )


def new_vector_index(config: Config, embedder: Embedder, db: Database) -> VectorIndex:
    """The in-memory index over SQLite's BLOBs, or PostgreSQL's own (pgvector) for that backend."""
    if config.database.backend == "postgres":
        from .store.postgres.vectors import PostgresVectorIndex

        return PostgresVectorIndex(db, embedder.model, embedder.dim)  # type: ignore[arg-type,return-value]
    return VectorIndex(
        embedder.model,
        embedder.dim,
        exact_max_rows=config.search.vector_exact_max_rows,
        shortlist=config.search.vector_shortlist,
    )


def new_memory_service(
    config: Config,
    db: Database,
    index: VectorIndex,
    embedder: Embedder,
    time_parser: TimeParser | None = None,
) -> MemoryService:
    return MemoryService(
        db,
        index,
        embedder,
        dedup_threshold=config.ingest.dedup_threshold,
        supersede_threshold=config.ingest.supersede_threshold,
        time_parser=time_parser,
        session_context=config.embeddings.session_context,
    )


def new_search_service(
    config: Config,
    db: Database,
    index: VectorIndex,
    embedder: Embedder,
    chat_model: LLM | None,
    time_parser: TimeParser,
    *,
    access: AccessTracker | None = None,
    metrics: Metrics | None = None,
) -> SearchService:
    """The search service: plain, or with the LLM reranker when ``rerank.enabled``; ``access`` and
    ``metrics`` count and time what its readers find."""
    reranker = LlmReranker(chat_model, config.rerank) if config.rerank.enabled else None
    return SearchService(
        db,
        index,
        embedder,
        config.search,
        config.embeddings.query_timeout_s,
        ranking=config.ranking,
        time_parser=time_parser,
        reranker=reranker,
        rerank_candidates=config.rerank.candidates,
        access=access,
        metrics=metrics,
        protection=config.lifecycle,
    )


def build_services(
    config: Config,
    *,
    embedder: Embedder | None = None,
    llm: LLM | Literal["from_config"] | None = "from_config",
    lifecycle_clock: Callable[[], datetime] = utc_now,
) -> Services:
    """Every service of ``config``, wired, nothing started.

    Args:
        embedder: an already started embedder to share (tests load the model once); by default the
            configured one, started and closed by :func:`running`.
        llm: an already started LLM to share, or None for none (rules only); by default the
            configured one, started and closed by :func:`running`.
        lifecycle_clock: the time the memory lifecycle judges by (tests move it forward).
    """
    owns_embedder = embedder is None
    embedder = embedder or create_embedder(config.embeddings)
    owns_llm = llm == "from_config"
    backend: LLM | None = create_llm(config.llm) if llm == "from_config" else llm
    metrics = Metrics()
    # Every service calls the LLM through one wrapper that counts its failures by kind.
    chat_model: LLM | None = None if backend is None else MeteredLLM(backend, metrics)
    db = new_database(config)
    index = new_vector_index(config, embedder, db)
    time_parser = TimeParser()
    memories = new_memory_service(config, db, index, embedder, time_parser)
    access = AccessTracker(db, config.search.access_flush_s)
    search = new_search_service(
        config, db, index, embedder, chat_model, time_parser, access=access, metrics=metrics
    )
    hardware = HardwareMonitor(config.hardware)
    scheduler = GpuScheduler(hardware, config.hardware)
    markdown = MarkdownWorkspaces(db, memories)
    markdown_sync = MarkdownSync(markdown, config.markdown)

    def mirror_after_import(summary: ImportSummary | None) -> None:
        if summary is None or summary.added or summary.merged:  # None: it may have written some
            markdown_sync.request_sync()

    imports = ImportRuns(db, markdown, on_finished=mirror_after_import)
    ingest = IngestService(
        db,
        memories,
        ExtractionService(chat_model, config.llm, metrics=metrics),
        config.ingest,
        gate=scheduler,
        on_extracted=metrics.observe_extraction,
        on_stored=markdown_sync.request_sync,
        turn_context=config.embeddings.session_context,
    )
    lifecycle = LifecycleService(
        db,
        memories,
        index,
        chat_model if config.llm.writes_prose else None,
        config.lifecycle,
        gpu_busy=scheduler.busy_reason,
        gpu_max_wait_s=config.hardware.max_deferral_s,
        gpu_recheck_s=config.hardware.recheck_s,
        clock=lifecycle_clock,
    )

    async def mirror_after_run(report: LifecycleReport) -> None:
        if not report.dry_run:
            markdown_sync.request_sync()

    lifecycle.on_finished.append(mirror_after_run)
    return Services(
        config=config,
        db=db,
        embedder=embedder,
        index=index,
        index_sync=IndexSync(db, index, config.database.external_write_check_s),
        reembedder=Reembedder(db, memories, embedder, check_interval_s=config.embeddings.reembed_check_s),
        memories=memories,
        entities=EntityService(db),
        time_parser=time_parser,
        search=search,
        access=access,
        llm=chat_model,
        recall=RecallService(
            search,
            memories,
            chat_model,
            config.recall,
            synthesise=synthesis_wanted(config.recall, config.llm),
            access=access,
            metrics=metrics,
            shared_store=config.database.backend == "postgres",
            keyword_floor=config.search.min_similarity,
            protection=config.lifecycle,
            assistant_label=config.ingest.turn_speakers.get("assistant", "Assistant"),
        ),
        metrics=metrics,
        hardware=hardware,
        scheduler=scheduler,
        markdown=markdown,
        markdown_sync=markdown_sync,
        imports=imports,
        ingest=ingest,
        lifecycle=lifecycle,
        stats=StatsService(
            memories,
            index,
            embedder,
            chat_model,
            ingest,
            hardware,
            scheduler,
            db,
            search_timeline=metrics.search_timeline,
        ),
        owns_embedder=owns_embedder,
        owns_llm=owns_llm,
    )


# -- starting and stopping ------------------------------------------------------------------
@contextlib.asynccontextmanager
async def running(services: Services, parts: Collection[Part] = DAEMON) -> AsyncIterator[Services]:
    """Start ``parts`` in the order of :data:`PARTS`; on exit (or a failed start) stop in reverse."""
    unknown = set(parts) - set(PARTS)
    if unknown:
        raise ValueError(f"unknown parts: {sorted(unknown)}")
    async with contextlib.AsyncExitStack() as stack:
        for part in PARTS:
            if part in parts:
                await _STARTERS[part](services, stack)
        yield services


async def _start_loop_probe(s: Services, stack: contextlib.AsyncExitStack) -> None:
    if s.config.server.loop_probe_interval_s > 0:
        probe = LoopLagProbe(s.config.server.loop_probe_interval_s, s.metrics.observe_loop_lag)
        await probe.start()
        stack.push_async_callback(probe.stop)


async def _start_database(s: Services, stack: contextlib.AsyncExitStack) -> None:
    await open_database(s.db, stack, checkpoint_interval_s=s.config.database.checkpoint_interval_s)


async def _start_embedder(s: Services, stack: contextlib.AsyncExitStack) -> None:
    if s.owns_embedder:
        await s.embedder.start()
        stack.push_async_callback(s.embedder.close)


async def _start_index(s: Services, stack: contextlib.AsyncExitStack) -> None:
    # dateparser's data too, when time-aware search is on: before the heap is trimmed.
    if s.index.in_database and s.index.dim is None:
        s.index.dim = s.embedder.dim  # known once the embedder has started
    await fill_vector_index(s.db, s.index, warm_up=s.search.warm_up)
    await warn_of_other_models(s.db, s.index.model)
    if not s.index.in_database:  # PostgreSQL's index sees every writer's rows
        await s.index_sync.start()
        stack.push_async_callback(s.index_sync.stop)


async def _start_access(s: Services, stack: contextlib.AsyncExitStack) -> None:
    await s.access.start()
    stack.push_async_callback(s.access.stop)  # writes the reads still pending


async def _start_llm(s: Services, stack: contextlib.AsyncExitStack) -> None:
    if s.owns_llm and s.llm is not None:
        await s.llm.start()
        stack.push_async_callback(s.llm.close)


async def _start_hardware(s: Services, stack: contextlib.AsyncExitStack) -> None:
    await s.hardware.start()
    stack.push_async_callback(s.hardware.stop)


async def _start_markdown(s: Services, stack: contextlib.AsyncExitStack) -> None:
    await s.markdown_sync.start()
    stack.push_async_callback(s.markdown_sync.stop, timeout=s.config.server.shutdown_timeout_s)
    await s.imports.start()  # after the mirror's start, so it stops (with its imports) before it
    stack.push_async_callback(s.imports.stop, timeout=s.config.server.shutdown_timeout_s)


async def _start_ingest(s: Services, stack: contextlib.AsyncExitStack) -> None:
    await s.ingest.start()
    stack.push_async_callback(s.ingest.stop, timeout=s.config.server.shutdown_timeout_s)


async def _start_reembed(s: Services, stack: contextlib.AsyncExitStack) -> None:
    if s.config.embeddings.reembeds:
        await s.reembedder.start()
        stack.push_async_callback(s.reembedder.stop)


async def _start_lifecycle(s: Services, stack: contextlib.AsyncExitStack) -> None:
    await s.lifecycle.start()
    stack.push_async_callback(s.lifecycle.stop, timeout=s.config.server.shutdown_timeout_s)


_STARTERS: dict[Part, Callable[[Services, contextlib.AsyncExitStack], Awaitable[None]]] = {
    "loop_probe": _start_loop_probe,
    "database": _start_database,
    "embedder": _start_embedder,
    "index": _start_index,
    "access": _start_access,
    "llm": _start_llm,
    "hardware": _start_hardware,
    "markdown": _start_markdown,
    "ingest": _start_ingest,
    "reembed": _start_reembed,
    "lifecycle": _start_lifecycle,
}


# -- the pieces a CLI verb needs ------------------------------------------------------------
@contextlib.asynccontextmanager
async def opened_database(config: Config, *, read_connections: int = 1) -> AsyncIterator[Database]:
    """The store opened as the daemon opens it (WAL checkpoints included), closed on exit."""
    async with contextlib.AsyncExitStack() as stack:
        db = new_database(config, read_connections=read_connections)
        await open_database(db, stack, checkpoint_interval_s=config.database.checkpoint_interval_s)
        yield db


@contextlib.asynccontextmanager
async def started_embedder(config: Config) -> AsyncIterator[Embedder]:
    """The configured embedder, started (the model loaded) and closed on exit."""
    embedder = create_embedder(config.embeddings)
    await embedder.start()
    try:
        yield embedder
    finally:
        await embedder.close()


@contextlib.asynccontextmanager
async def memory_service_over(config: Config, db: Database) -> AsyncIterator[MemoryService]:
    """A memory service over an opened store: the embedder started and the vector index loaded
    (dedup compares with the live vectors). For verbs that write memories without the daemon."""
    async with started_embedder(config) as embedder:
        index = new_vector_index(config, embedder, db)
        await fill_vector_index(db, index)
        yield new_memory_service(config, db, index, embedder)


async def open_database(
    db: Database, stack: contextlib.AsyncExitStack, *, checkpoint_interval_s: float
) -> None:
    """Open ``db`` and checkpoint its WAL in the background; both undone by ``stack``."""
    await asyncio.to_thread(db.open)
    log.info("database open", extra={"path": db.location})

    async def close() -> None:
        await asyncio.to_thread(db.close)
        log.info("database closed")

    stack.push_async_callback(close)
    stop = asyncio.Event()
    checkpoints = asyncio.create_task(run_checkpoints(db, stop, checkpoint_interval_s))

    async def join_checkpoints() -> None:
        stop.set()
        await checkpoints

    stack.push_async_callback(join_checkpoints)


async def fill_vector_index(
    db: Database, index: VectorIndex, *, warm_up: Callable[[], None] | None = None
) -> int:
    """Load the index from the store's BLOBs (SQLite is the source of truth) and run ``warm_up``,
    both off the event loop, then give the heap start-up freed back to the OS."""
    use_one_blas_thread()
    started = time.perf_counter()
    if index.in_database:
        loaded = await asyncio.to_thread(index.prepare)  # type: ignore[attr-defined]
    else:
        loaded = await asyncio.to_thread(load_vector_index, db, index)
    if warm_up is not None:
        await asyncio.to_thread(warm_up)
    release_freed_heap()
    log.info(
        "vector index built",
        extra={"rows": loaded, "model": index.model, "seconds": round(time.perf_counter() - started, 2)},
    )
    return loaded


def load_vector_index(db: Database, index: VectorIndex) -> int:
    """Fill the index from the BLOBs of the live model (blocking; the benches call it directly)."""

    def read(conn: sqlite3.Connection) -> int:
        counts = embedding_sql.embedding_counts(conn, index.model)
        rows = (
            (memory_id, user_id, blob, layer, kind, scope)
            for memory_id, user_id, blob, _, layer, kind, scope in embedding_sql.iter_embeddings(
                conn, index.model
            )
        )
        return index.load(counts, rows)

    return db.read_blocking(read)


async def run_checkpoints(db: Database, stop: asyncio.Event, interval_s: float) -> None:
    """Checkpoint the WAL every ``interval_s`` off the request path, until ``stop``; never dies."""
    while not stop.is_set():
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), timeout=interval_s)
        try:
            await db.checkpoint()
        except StorageFull:  # told once by the store; the WAL is copied back once there is room
            pass
        except Exception:
            log.exception("WAL checkpoint failed")


def release_freed_heap() -> None:
    """Give the heap freed by start-up (models, the BLOBs read into the index) back to the OS.

    glibc keeps freed small blocks in the process; ``malloc_trim`` returns them, ~7 MB of
    resident memory at 100k memories. Elsewhere (musl, macOS) this does nothing.
    """
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6").malloc_trim(0)
