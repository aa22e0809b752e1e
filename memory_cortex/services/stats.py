"""Numbers about the daemon for /stats and /health (no memory text)."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from typing import Any

from ..models.embedders import Embedder, EmbedderHealth
from ..models.llm import LLM, LLMHealth
from ..records import Audience
from ..store.db import Database
from ..store.embeddings import StoreCounts
from ..store.space import SpaceState
from ..store.vectors import VectorIndex
from .hardware import HardwareMonitor, HardwareStatus
from .ingest import IngestService
from .memories import MemoryService
from .overview import Overview, build_overview
from .scheduler import GpuScheduler, SchedulerState
from .search_timeline import SearchTimeline


@dataclass(frozen=True)
class Stats:
    counts: StoreCounts
    vector_index_rows: int
    db_bytes: int
    uptime_s: float
    embedder: EmbedderHealth | None
    llm: LLMHealth
    ingest: dict[str, Any]
    hardware: HardwareStatus
    scheduler: SchedulerState
    space: SpaceState


# A StatsService without its database (unit tests) knows nothing of the disk.
UNKNOWN_SPACE = SpaceState(full=False, full_since=None, refused_writes=0, free_bytes=None)


class StatsService:
    """Collects counts from the store and state from the models.

    Args:
        memories: the memory service (its counts come from one SQL pass).
        index: the vector index (rows it holds).
        embedder: for its health.
        llm: for its health (None: rules only).
        ingest: for the queue.
        hardware: the hardware poller (latest snapshot, its age and source).
        scheduler: the GPU gate of the extraction worker (deferred jobs and why).
        db: the store: its size, and the overview's series (None: size 0, no overview).
        search_timeline: search latency per minute since the daemon started (the overview's chart),
            recorded where searches are timed (:meth:`~.metrics.Metrics.observe_search`); None: an
            empty one.
    """

    def __init__(
        self,
        memories: MemoryService,
        index: VectorIndex | None,
        embedder: Embedder | None,
        llm: LLM | None,
        ingest: IngestService,
        hardware: HardwareMonitor,
        scheduler: GpuScheduler,
        db: Database | None = None,
        search_timeline: SearchTimeline | None = None,
    ) -> None:
        self._db = db
        self._search_timeline = SearchTimeline() if search_timeline is None else search_timeline
        self._hardware = hardware
        self._scheduler = scheduler
        self._llm = llm
        self._ingest = ingest
        self._memories = memories
        self._index = index
        self._embedder = embedder
        self._started = time.monotonic()

    @property
    def uptime_s(self) -> float:
        return round(time.monotonic() - self._started, 3)

    def space(self) -> SpaceState:
        """Whether the store has room to write (no SQL: a ``statvfs`` at most)."""
        return self._db.space.state() if self._db is not None else UNKNOWN_SPACE

    def embedder_health(self) -> EmbedderHealth | None:
        return self._embedder.health() if self._embedder is not None else None

    async def db_bytes(self) -> int:
        return await self._db.size_bytes() if self._db is not None else 0

    async def stats(self) -> Stats:
        return Stats(
            counts=await self._memories.counts(),
            vector_index_rows=await self._index_rows(),
            db_bytes=await self.db_bytes(),
            uptime_s=self.uptime_s,
            embedder=self.embedder_health(),
            llm=self._llm.health() if self._llm is not None else LLMHealth("rules", "rules", True),
            ingest=await self._ingest.queue(),
            hardware=self._hardware.status(),
            scheduler=self._scheduler.state(),
            space=self.space(),
        )

    async def _index_rows(self) -> int:
        if self._index is None:
            return 0
        if self._index.in_database:  # a count in the database: off the loop
            return await asyncio.to_thread(len, self._index)
        return len(self._index)

    async def overview(self, user_id: str, days: int, *, audience: Audience) -> Overview:
        """The dashboard's overview of ``user_id`` over the last ``days`` UTC days: the memories
        ``audience`` may see, and the daemon's own work (:func:`build_overview`)."""
        if self._db is None:
            raise RuntimeError("StatsService was built without its database")
        return await build_overview(self._db, self._search_timeline, user_id, days, audience=audience)
