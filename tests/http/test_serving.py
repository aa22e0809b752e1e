"""Issue 34, item 4: connections cannot be held or piled up. The daemon's own serving stack
(``http/serving.py``, what ``memory-cortex serve`` runs) on a loopback port: a connection that
sends half a header is closed after ``server.header_timeout_s``; beyond
``server.max_connections_per_client`` a client's new connection is closed at once while its others
work; "accept() out of system resource" is logged once per interval."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import pytest

from memory_cortex.app import create_app
from memory_cortex.config import ServerConfig
from memory_cortex.http.serving import LAN_CONNECTIONS_PER_CLIENT, AcceptErrorLog, per_client_cap, serve
from memory_cortex.startup import bind
from tests.conftest import make_config

Serve = Callable[..., Awaitable[int]]


@pytest.fixture
async def served(tmp_path: Any, minilm: Any) -> AsyncIterator[Serve]:
    """Start the daemon's serving stack with ``server`` settings; returns its port."""
    running: list[tuple[asyncio.Event, asyncio.Task[None]]] = []

    async def start(**server: Any) -> int:
        config = make_config(tmp_path, server={"port": 0, **server})
        sock = bind("127.0.0.1", 0)
        port = int(sock.getsockname()[1])
        stop = asyncio.Event()
        task = asyncio.create_task(serve(create_app(config, embedder=minilm), sock, config.server, stop=stop))
        running.append((stop, task))
        for _ in range(200):
            if await get_health(port, timeout=1) is not None:
                return port
            await asyncio.sleep(0.05)
        raise AssertionError("the daemon did not answer /health")

    yield start
    for stop, task in running:
        stop.set()
        await asyncio.wait_for(task, timeout=30)


async def get_health(port: int, timeout: float = 5, path: str = "/health") -> bytes | None:
    """The answer to GET ``path`` on a connection of its own, or None when none came."""
    try:
        reader, writer = await asyncio.wait_for(asyncio.open_connection("127.0.0.1", port), timeout)
    except OSError:
        return None
    try:
        writer.write(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".encode())
        return await asyncio.wait_for(reader.read(), timeout)
    except (OSError, TimeoutError):
        return None
    finally:
        writer.close()


async def test_a_connection_that_sends_half_a_header_is_closed_after_the_header_timeout(
    served: Serve,
) -> None:
    port = await served(header_timeout_s=1.0)
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
    await writer.drain()
    started = time.monotonic()
    assert await asyncio.wait_for(reader.read(), timeout=10) == b""  # closed, unanswered
    assert time.monotonic() - started < 3.0  # aiohttp alone held it 75 s
    writer.close()


async def test_a_client_beyond_its_connection_cap_is_closed_while_its_others_work(served: Serve) -> None:
    port = await served(max_connections_per_client=2)
    held = [await asyncio.open_connection("127.0.0.1", port) for _ in range(2)]
    await asyncio.sleep(0.2)
    assert await get_health(port) in (None, b"")  # a third one: closed at once
    for _, writer in held:
        writer.close()
    await asyncio.sleep(0.3)
    answer = await get_health(port)
    assert answer is not None and answer.startswith(b"HTTP/1.1 200"), answer


def test_the_cap_is_on_by_default_only_beyond_loopback() -> None:
    assert per_client_cap(ServerConfig()) == 0  # every local client is 127.0.0.1
    lan = ServerConfig(host="0.0.0.0", api_token="t" * 32)
    assert per_client_cap(lan) == LAN_CONNECTIONS_PER_CLIENT
    assert per_client_cap(lan.model_copy(update={"max_connections_per_client": 0})) == 0


def test_accept_errors_are_logged_once_per_interval(caplog: pytest.LogCaptureFixture) -> None:
    now = [0.0]
    handler = AcceptErrorLog(every_s=60.0, clock=lambda: now[0])
    loop = asyncio.new_event_loop()
    context = {
        "message": "socket.accept() out of system resource",
        "exception": OSError(24, "Too many open files"),
    }
    try:
        with caplog.at_level(logging.ERROR, logger="memory_cortex.http.serving"):
            for second in range(120):
                now[0] = float(second)
                for _ in range(100):
                    handler(loop, dict(context))
    finally:
        loop.close()
    lines = [r for r in caplog.records if r.name == "memory_cortex.http.serving"]
    assert len(lines) == 2  # 12,000 failed accepts, at 0 s and 60 s
    assert getattr(lines[1], "since_last_logged", None) == 5999


async def test_a_client_that_drops_mid_body_is_counted_as_closed_and_nothing_is_logged(
    served: Serve, caplog: pytest.LogCaptureFixture
) -> None:
    """What ``serve`` runs does not cancel the handler (unlike aiohttp's test server): the body read
    fails instead. It was an ERROR with a traceback and a 500 in /metrics."""
    port = await served()
    for _ in range(3):
        _, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(
            b"POST /memories HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            b'Content-Length: 10000\r\n\r\n{"fact": "half'
        )
        await writer.drain()
        writer.close()
    await asyncio.sleep(0.5)
    metrics = (await get_health(port, path="/metrics") or b"").decode()
    posts = [line for line in metrics.splitlines() if 'route="/memories"' in line and 'method="POST"' in line]
    assert any('status="499"' in line and line.endswith(" 3.0") for line in posts), posts
    assert not any('status="500"' in line for line in posts), posts
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR], [
        r.getMessage() for r in caplog.records
    ]
