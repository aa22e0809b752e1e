"""What the MCP tests share: the SDK client pointed at a test daemon, and tool-result accessors."""

from __future__ import annotations

import contextlib
import re
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx2
from aiohttp.test_utils import TestClient
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp_types import CallToolResult

ROOT = Path(__file__).resolve().parents[2]
# The MCP client set-up the snippet tests start as written (moved from the README to the docs site).
README = (ROOT / "docs" / "getting-started" / "mcp.md").read_text(encoding="utf-8")
TOOLS = {
    "search_memory",
    "remember",
    "forget",
    "recall",
    "search_debug",
    "list_entities",
    "get_entity",
    "list_relations",
}


@contextlib.asynccontextmanager
async def mcp_client(
    url: str, *, mode: str = "auto", headers: dict[str, str] | None = None
) -> AsyncIterator[Client]:
    """The SDK's own client on ``url`` (streamable HTTP), with extra HTTP ``headers`` if given."""
    if headers is None:
        async with Client(url, mode=mode) as client:
            yield client
        return
    async with (
        httpx2.AsyncClient(headers=headers, timeout=60) as http,
        Client(streamable_http_client(url, http_client=http), mode=mode) as client,
    ):
        yield client


def mcp_url(client: TestClient) -> str:
    """The /mcp URL of the daemon behind an aiohttp test client."""
    return str(client.make_url("/mcp"))


def structured(result: CallToolResult) -> dict[str, Any]:
    """A successful tool result's structured content."""
    assert not result.is_error, error_text(result)
    assert result.structured_content is not None
    return result.structured_content


def error_text(result: CallToolResult) -> str:
    return " ".join(getattr(block, "text", "") for block in result.content)


def readme_code_block(after: str, language: str) -> str:
    """The first ``language`` code block of the README after the line containing ``after``."""
    start = README.index(after)
    match = re.compile(rf"```{language}\n(.*?)\n```", re.DOTALL).search(README, start)
    assert match is not None, f"no {language} block after {after!r} in the README"
    return match.group(1)
