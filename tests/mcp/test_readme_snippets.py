"""The README's MCP client configurations, started exactly as written (paths and token filled in).

Claude Desktop's ``claude_desktop_config.json`` entry and the ``claude mcp add`` stdio line each
spawn ``scripts/mcp.sh`` on a temporary database and are driven by the SDK's own client, which
plays the desktop client; the HTTP line and the ``.mcp.json`` entry are pointed at a real daemon
with an API token. The stdio runs start a real process with the real model: marked slow.
"""

from __future__ import annotations

import json
import shlex
import sqlite3
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from memory_cortex.app import create_app
from tests.conftest import make_config
from tests.mcp.helpers import ROOT, TOOLS, mcp_client, readme_code_block, structured

PLACEHOLDER_ROOT = "/path/to/memory-cortex"
PLACEHOLDER_TOKEN = "YOUR_API_TOKEN"
DEFAULT_URL = "http://127.0.0.1:8300/mcp"


def stdio_env(database: Path) -> dict[str, str]:
    """What the test adds to the client's environment: the test venv (the checkout has no .venv),
    a temporary database and no LLM (recall answers with the facts: fast and deterministic)."""
    return {
        "MEMORY_CORTEX_VENV": str(Path(sys.executable).parents[1]),
        "MEMORY_CORTEX_DATABASE__PATH": str(database),
        "MEMORY_CORTEX_LLM__BACKEND": "rules",
        "MEMORY_CORTEX_LOGGING__FORMAT": "text",
    }


def stored_rows(database: Path) -> list[tuple[str, str, str]]:
    with sqlite3.connect(database) as conn:
        return conn.execute("SELECT user_id, source_channel, fact FROM memories ORDER BY id").fetchall()


def filled_in(text: str) -> str:
    return text.replace(PLACEHOLDER_ROOT, str(ROOT))


@pytest.mark.slow
async def test_the_claude_desktop_entry_serves_every_tool_over_stdio(tmp_path: Path) -> None:
    config = json.loads(filled_in(readme_code_block("**Claude Desktop**", "json")))
    entry = config["mcpServers"]["memory-cortex"]
    assert set(entry) == {"command", "args"}
    database = tmp_path / "memories.db"
    server = StdioServerParameters(command=entry["command"], args=entry["args"], env=stdio_env(database))
    async with Client(server, mode="legacy") as mcp:
        assert {tool.name for tool in (await mcp.list_tools()).tools} == TOOLS
        cello = structured(
            await mcp.call_tool(
                "remember", {"fact": "Alice plays the cello.", "topic": "music", "category": "skill"}
            )
        )
        structured(await mcp.call_tool("remember", {"fact": "Alice lives in Porto.", "importance": 8}))
        found = structured(await mcp.call_tool("search_memory", {"query": "which instrument"}))
        assert found["results"][0]["id"] == cello["id"]
        debug = structured(await mcp.call_tool("search_debug", {"query": "cello"}))
        assert debug["results"][0]["fts_score"] == 1.0 and debug["fts_match"] == '"cello"'
        assert (
            "Porto"
            in structured(await mcp.call_tool("recall", {"query": "where does Alice live?"}))["answer"]
        )
        profile = (await mcp.read_resource("memory://profile")).contents[0].text
        assert profile.startswith("# Profile of alice") and "cello" in profile
        bad = await mcp.call_tool("remember", {"fact": "Alice is tall.", "importance": "very"})
        assert bad.is_error
        assert structured(await mcp.call_tool("forget", {"memory_id": cello["id"]}))["action"] == "archived"
    # The user came from the entry's --user; the process is gone and its writes are on disk.
    assert stored_rows(database) == [
        ("alice", "mcp", "Alice plays the cello."),
        ("alice", "mcp", "Alice lives in Porto."),
    ]


@pytest.mark.slow
async def test_the_claude_code_stdio_line_starts_the_server(tmp_path: Path) -> None:
    words = shlex.split(filled_in(readme_code_block("**Claude Code**", "bash")))
    assert words[:3] == ["claude", "mcp", "add"]
    separator = words.index("--")
    assert words[separator - 1] == "memory-cortex" and "stdio" in words[:separator]
    command, *args = words[separator + 1 :]
    database = tmp_path / "memories.db"
    server = StdioServerParameters(command=command, args=args, env=stdio_env(database))
    async with Client(server) as mcp:  # the SDK's default negotiation
        assert {tool.name for tool in (await mcp.list_tools()).tools} == TOOLS
        structured(await mcp.call_tool("remember", {"fact": "Alice takes the train to work."}))
    assert stored_rows(database) == [("alice", "mcp", "Alice takes the train to work.")]


def http_line() -> tuple[str, dict[str, str]]:
    """The URL and headers of the README's ``claude mcp add --transport http`` line."""
    words = shlex.split(readme_code_block("or over HTTP from the running daemon", "bash"))
    assert words[:3] == ["claude", "mcp", "add"] and words[words.index("--transport") + 1] == "http"
    (url,) = [word for word in words if word.startswith("http://")]
    name, _, value = words[words.index("--header") + 1].partition(": ")
    return url, {name: value}


def http_json() -> tuple[str, dict[str, str]]:
    """The URL and headers of the README's ``.mcp.json`` entry."""
    entry = json.loads(readme_code_block("Clients configured by a file", "json"))["mcpServers"][
        "memory-cortex"
    ]
    assert entry["type"] == "http"
    return entry["url"], entry["headers"]


@pytest.mark.parametrize("snippet", [http_line, http_json], ids=["claude-mcp-add", "mcp-json"])
async def test_the_http_client_configurations_reach_the_daemon(
    aiohttp_client: Any, tmp_path: Path, minilm: Any, snippet: Any
) -> None:
    token = "t0k3n-for-the-readme-test"
    config = make_config(tmp_path, server={"api_token": token}, mcp={"user_id": "alice"})
    client = await aiohttp_client(create_app(config, embedder=minilm))
    url, headers = snippet()
    assert url == DEFAULT_URL  # the daemon's default address and the /mcp path
    assert headers == {"Authorization": f"Bearer {PLACEHOLDER_TOKEN}"}
    url = url.replace("http://127.0.0.1:8300", str(client.make_url("")).rstrip("/"))
    headers = {name: value.replace(PLACEHOLDER_TOKEN, token) for name, value in headers.items()}
    async with mcp_client(url, headers=headers) as mcp:
        assert {tool.name for tool in (await mcp.list_tools()).tools} == TOOLS
        stored = structured(await mcp.call_tool("remember", {"fact": "Alice reads science fiction."}))
    memory = await (
        await client.get(f"/memories/{stored['id']}", headers={"Authorization": f"Bearer {token}"})
    ).json()
    assert memory["user_id"] == "alice"
