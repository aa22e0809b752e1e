"""Every object the app shares, as a typed ``web.AppKey`` declared in this one module."""

from __future__ import annotations

from typing import Protocol

from aiohttp import web

from .config import Config
from .models.embedders import Embedder
from .services.access import AccessTracker
from .services.entities import EntityService
from .services.hardware import HardwareMonitor
from .services.import_runs import ImportRuns
from .services.index_sync import IndexSync
from .services.ingest import IngestService
from .services.lifecycle import LifecycleService
from .services.memories import MemoryService
from .services.metrics import Metrics
from .services.mirror import MarkdownWorkspaces
from .services.mirror_sync import MarkdownSync
from .services.recall import RecallService
from .services.reembed import Reembedder
from .services.scheduler import GpuScheduler
from .services.search import SearchService
from .services.stats import StatsService
from .services.timeparse import TimeParser
from .store.db import Database
from .store.vectors import VectorIndex

CONFIG = web.AppKey("config", Config)
DATABASE = web.AppKey("database", Database)
EMBEDDER = web.AppKey("embedder", Embedder)
VECTOR_INDEX = web.AppKey("vector_index", VectorIndex)
INDEX_SYNC = web.AppKey("index_sync", IndexSync)
REEMBEDDER = web.AppKey("reembedder", Reembedder)
MEMORY_SERVICE = web.AppKey("memory_service", MemoryService)
ENTITY_SERVICE = web.AppKey("entity_service", EntityService)
SEARCH_SERVICE = web.AppKey("search_service", SearchService)
ACCESS_TRACKER = web.AppKey("access_tracker", AccessTracker)
STATS_SERVICE = web.AppKey("stats_service", StatsService)
INGEST_SERVICE = web.AppKey("ingest_service", IngestService)
RECALL_SERVICE = web.AppKey("recall_service", RecallService)
HARDWARE_MONITOR = web.AppKey("hardware_monitor", HardwareMonitor)
GPU_SCHEDULER = web.AppKey("gpu_scheduler", GpuScheduler)
METRICS = web.AppKey("metrics", Metrics)
# Dates in text (queries, metadata.session_date); dateparser loads on its first use.
TIME_PARSER = web.AppKey("time_parser", TimeParser)
LIFECYCLE_SERVICE = web.AppKey("lifecycle_service", LifecycleService)
MARKDOWN_WORKSPACES = web.AppKey("markdown_workspaces", MarkdownWorkspaces)
# request_sync() after a write worth mirroring (the lifecycle engine calls it after each run).
MARKDOWN_SYNC = web.AppKey("markdown_sync", MarkdownSync)
IMPORT_RUNS = web.AppKey("import_runs", ImportRuns)


class McpEndpoint(Protocol):
    """What ``/mcp`` hands its requests to (the MCP package's lazily loaded endpoint): named here
    as a shape, so the HTTP transport never imports the MCP one."""

    async def handle(self, request: web.Request) -> web.StreamResponse: ...


MCP_HTTP = web.AppKey("mcp_http", McpEndpoint)
