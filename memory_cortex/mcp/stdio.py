"""``python -m memory_cortex mcp``: the MCP server over stdio, for desktop clients that spawn it.

The services run in this process against the configured database, as in the daemon; no daemon
needs to be running. When one is, both write the same SQLite file safely (WAL, one writer at a time,
``database.busy_timeout_ms``), and each sees the other's new vectors through the index sync. Only
what the tools need is started: no HTTP, no ingest worker (the daemon's worker owns the journal),
no hardware poller.

stdout carries the protocol and nothing else: logs go to stderr (``logging`` config), and the
models load before the first message is read.
"""

from __future__ import annotations

import contextlib
import logging
import sys
from collections.abc import AsyncIterator

from ..config import Config
from ..runtime import TOOLS, build_services, running
from .server import McpServices, build_mcp_server

log = logging.getLogger(__name__)


@contextlib.asynccontextmanager
async def open_services(config: Config) -> AsyncIterator[McpServices]:
    """The services the MCP tools call, built by the composition root and started as the daemon
    starts them (only the parts the tools need), stopped in reverse."""
    services = build_services(config)
    async with running(services, TOOLS):
        yield McpServices(services.memories, services.search, services.recall, services.entities)


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
