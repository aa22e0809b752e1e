"""``/mcp`` on the daemon: the SDK's streamable HTTP transport, served from an aiohttp handler.

The SDK's transport is an ASGI application; ``aiohttp-asgi`` bridges one aiohttp request into it
(:class:`aiohttp_asgi.resource.ASGIContext`). The route itself is an ordinary aiohttp route declared
in ``http/routes.py`` (so it is in ``/openapi.json`` and behind the same middlewares as the API: the
Host/Origin/Content-Type guard, the token, the JSON error shape for what aiohttp refuses, CORS), rather than aiohttp-asgi's prefix
resource, which the router's route table cannot see.

The transport runs stateless, answering JSON (no SSE): every POST carries a whole exchange, so the
daemon keeps no per-client session state to expire, a restart loses nothing a client relies on, and
no response is a stream held open through the bridge. The tools never call back into the client
(no sampling, no elicitation), which is the only thing sessions would add. GET (the optional
server-to-client stream) and DELETE (ending a session) are therefore answered 405, as the MCP
specification allows.

The SDK's session manager owns an anyio task group that must live as long as the daemon, and an
anyio cancel scope has to be left by the task that entered it; aiohttp may run start-up and
clean-up in different tasks. So the manager runs in a task of its own, started and stopped (with
a timed join) by the app's ``cleanup_ctx``.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from aiohttp import web
from aiohttp_asgi.resource import ASGIContext
from mcp.server import MCPServer
from mcp.server.transport_security import TransportSecuritySettings

from ..config import Config

log = logging.getLogger(__name__)

MCP_PATH = "/mcp"


class _BufferedBodyContext(ASGIContext):
    """The bridge, handing the ASGI app the body the request guard already read.

    ``http/guard.py`` reads every write's body within ``server.body_timeout_s`` before any handler
    runs; aiohttp keeps it, but the stream aiohttp-asgi would read from is then spent.
    """

    _body_sent = False

    async def on_receive(self) -> dict[str, Any]:
        body = b"" if self._body_sent else await self.request.read()
        self._body_sent = True
        return {"type": "http.request", "body": body, "more_body": False}


class McpHttp:
    """The streamable HTTP endpoint of one MCP server.

    Args:
        server: the MCP server (tools and resources).
        config: the body size limit and the access rules (see :func:`transport_security`).
    """

    def __init__(self, server: MCPServer, config: Config) -> None:
        self._asgi_app = server.streamable_http_app(
            streamable_http_path=MCP_PATH,
            stateless_http=True,
            json_response=True,
            max_request_body_size=config.server.max_body_bytes,
            # The daemon's request guard (http/guard.py) checks Host, Origin and Content-Type for
            # every route, /mcp included, with or without a token; the SDK's own check would only
            # repeat it with another error shape.
            transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
        )
        self._manager = server.session_manager
        self._max_body_bytes = config.server.max_body_bytes
        self._stop = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    async def start(self) -> None:
        """Run the session manager in its own task; return once it accepts requests."""
        started = asyncio.Event()
        self._task = asyncio.create_task(self._run(started), name="mcp-session-manager")
        waiter = asyncio.create_task(started.wait())
        await asyncio.wait({self._task, waiter}, return_when=asyncio.FIRST_COMPLETED)
        if not started.is_set():
            waiter.cancel()
            await self._task  # it ended before it started: raise what it raised
            raise RuntimeError("the MCP session manager stopped during start-up")
        log.info("mcp endpoint ready", extra={"path": MCP_PATH})

    async def stop(self, timeout: float = 10.0) -> None:
        """Stop the manager (requests still running are cancelled) and join its task."""
        self._stop.set()
        if self._task is None:
            return
        try:
            await asyncio.wait_for(self._task, timeout=timeout)
        except TimeoutError:
            log.warning("mcp session manager did not stop in time", extra={"timeout_s": timeout})
        except Exception:
            log.exception("mcp session manager failed")

    async def handle(self, request: web.Request) -> web.StreamResponse:
        """Answer one HTTP request to ``/mcp`` through the SDK's transport."""
        declared = request.content_length
        if declared is not None and declared > self._max_body_bytes:
            # Refused before the bridge with the API's JSON error, as aiohttp refuses a large API
            # body (the SDK's own check still guards bodies sent without a Content-Length).
            raise web.HTTPRequestEntityTooLarge(max_size=self._max_body_bytes, actual_size=declared)
        return await _BufferedBodyContext(self._asgi_app, request, root_path="").get_response()

    async def _run(self, started: asyncio.Event) -> None:
        async with self._manager.run():
            started.set()
            await self._stop.wait()
