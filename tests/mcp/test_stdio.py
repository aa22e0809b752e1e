"""``python -m memory_cortex mcp``: the verb's flags, and a stdout that carries the protocol only.

(The README's client entries drive the whole tool set over stdio: test_readme_snippets.py.)
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from memory_cortex.config import Config
from memory_cortex.mcp.server import acting_user
from tests.mcp.helpers import ROOT, TOOLS


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMORY_CORTEX_")}
    return subprocess.run(
        [sys.executable, "-m", "memory_cortex", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_the_mcp_verb_has_help_naming_its_tools_and_flags() -> None:
    result = run_cli("mcp", "--help")
    assert result.returncode == 0, result.stderr
    for word in ("--user", "--db", "--config", *TOOLS, "memory://profile", "stderr"):
        assert word in result.stdout, word


def test_a_blank_user_is_refused() -> None:
    result = run_cli("mcp", "--user", "  ")
    assert result.returncode == 2
    assert "--user: must not be blank" in result.stderr


def test_the_acting_user_is_the_flag_then_the_config_then_the_default() -> None:
    assert acting_user(Config()) == "default"
    assert acting_user(Config(users={"default_user_id": "sam"})) == "sam"
    assert acting_user(Config(users={"default_user_id": "sam"}, mcp={"user_id": "alice"})) == "alice"
    assert acting_user(Config(mcp={"user_id": "alice"}), "bob") == "bob"


async def exchange(process: asyncio.subprocess.Process, message: dict[str, Any]) -> dict[str, Any] | None:
    """Write one JSON-RPC line; read the reply line for a request (None for a notification)."""
    assert process.stdin is not None and process.stdout is not None
    process.stdin.write(json.dumps(message).encode() + b"\n")
    await process.stdin.drain()
    if "id" not in message:
        return None
    line = await asyncio.wait_for(process.stdout.readline(), timeout=120)
    return json.loads(line)  # anything but a JSON-RPC line fails here


@pytest.mark.slow
async def test_stdout_carries_only_protocol_lines_and_logs_go_to_stderr(tmp_path: Path) -> None:
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("MEMORY_CORTEX_")},
        "MEMORY_CORTEX_LLM__BACKEND": "rules",
        "MEMORY_CORTEX_LOGGING__FORMAT": "text",
    }
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "memory_cortex",
        "mcp",
        "--db",
        str(tmp_path / "memories.db"),
        cwd=ROOT,
        env=env,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        initialize = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "raw-test", "version": "0"},
            },
        }
        reply = await exchange(process, initialize)
        assert reply is not None and reply["result"]["serverInfo"]["name"] == "memory-cortex"
        assert "long-term memory" in reply["result"]["instructions"]
        await exchange(process, {"jsonrpc": "2.0", "method": "notifications/initialized"})
        tools = await exchange(process, {"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
        assert tools is not None and {tool["name"] for tool in tools["result"]["tools"]} == TOOLS
        call = {
            "jsonrpc": "2.0",
            "id": 3,
            "method": "tools/call",
            "params": {"name": "remember", "arguments": {"fact": "The user collects vinyl records."}},
        }
        stored = await exchange(process, call)
        assert stored is not None and stored["result"]["structuredContent"]["action"] == "created"
        assert process.stdin is not None
        process.stdin.close()  # the client goes away: the server drains and exits
        rest, errors = await asyncio.wait_for(process.communicate(), timeout=120)
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
    assert process.returncode == 0, errors.decode()[-2000:]
    assert rest == b""  # nothing after the replies: no stray output on the protocol stream
    log = errors.decode()
    assert "mcp stdio ready" in log and "mcp stdio stopped" in log
    assert "vinyl" not in log  # memory text never reaches the log at INFO


def test_the_wrapper_script_explains_itself_and_needs_a_venv(tmp_path: Path) -> None:
    script = str(ROOT / "scripts" / "mcp.sh")
    shown = subprocess.run([script, "--help"], capture_output=True, text=True, timeout=30, check=False)
    assert shown.returncode == 0 and "--user" in shown.stdout and "stdout is the protocol" in shown.stdout
    env = {"PATH": os.environ["PATH"], "MEMORY_CORTEX_VENV": str(tmp_path / "no-venv")}
    missing = subprocess.run([script], env=env, capture_output=True, text=True, timeout=30, check=False)
    assert missing.returncode == 1 and "no Python in" in missing.stderr and missing.stdout == ""
