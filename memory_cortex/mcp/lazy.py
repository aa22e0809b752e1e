"""``/mcp`` on the daemon, loaded on first use.

Importing the MCP SDK (and the ASGI stack under it) adds ~35 MB to the daemon's resident memory,
which would put a 100k-memory daemon past its 700 MB budget for a transport many installs never
use. So the daemon starts without it: the first request to ``/mcp`` imports the SDK (in a thread,
so the event loop is not held), builds the server and starts its session manager; later requests
go straight through. Nothing here imports the SDK at module level.
"""

from __future__ import annotations

import asyncio
import importlib
from collections.abc import Callable
from typing import TYPE_CHECKING

from aiohttp import web

if TYPE_CHECKING:
    from .http import McpHttp


class LazyMcpHttp:
    """Builds the streamable HTTP endpoint on the first request and stops it at shutdown.

    Args:
        build: makes the endpoint (imports the SDK); called once, on the event loop, after the
            modules it needs were imported in a thread.
    """

    def __init__(self, build: Callable[[], McpHttp]) -> None:
        self._build = build
        self._endpoint: McpHttp | None = None
        self._lock = asyncio.Lock()
        self._stopped = False

    @property
    def loaded(self) -> bool:
        return self._endpoint is not None

    async def handle(self, request: web.Request) -> web.StreamResponse:
        """Answer one ``/mcp`` request, starting the endpoint first if this is the first one."""
        endpoint = self._endpoint or await self._start()
        return await endpoint.handle(request)

    async def stop(self, timeout: float = 10.0) -> None:
        async with self._lock:
            self._stopped = True
            if self._endpoint is not None:
                await self._endpoint.stop(timeout=timeout)

    async def _start(self) -> McpHttp:
        async with self._lock:
            if self._stopped:
                raise web.HTTPServiceUnavailable(text="shutting down")
            if self._endpoint is None:
                await asyncio.to_thread(importlib.import_module, "memory_cortex.mcp.http")
                endpoint = self._build()
                await endpoint.start()
                self._endpoint = endpoint
            return self._endpoint
