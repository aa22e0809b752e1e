"""``POST /mcp``: the MCP endpoint (streamable HTTP), handed to the SDK's transport as it arrives.

The body is a JSON-RPC message for the MCP server, not a request of this API: the SDK parses and
answers it (JSON-RPC errors included), so this handler reads nothing itself.
"""

from __future__ import annotations

from aiohttp import web

from ..errors import CortexError
from ..keys import MCP_HTTP


class McpDisabled(CortexError):
    code = "mcp_disabled"
    status = 404


async def mcp_endpoint(request: web.Request) -> web.StreamResponse:
    endpoint = request.app.get(MCP_HTTP)
    if endpoint is None:
        raise McpDisabled("MCP is off on this daemon (mcp.enabled: false)")
    return await endpoint.handle(request)
