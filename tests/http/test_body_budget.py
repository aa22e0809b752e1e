"""Issue 34, item 1: nothing unauthenticated costs memory. A body is read only after the headers
passed the guard and the token check, never beyond ``server.max_body_bytes``, and within
``server.max_body_bytes_in_flight`` across all connections; memory freed after a burst is handed
back. Through a real server on a loopback port, with raw sockets where a client would misbehave."""

from __future__ import annotations

import asyncio
from typing import Any

from memory_cortex.http.bodies import TRIM_AFTER_BYTES, BodyBudget
from tests.http.test_guard import start

MIB = 1024 * 1024


def headers(path: str, length: int, token: str | None = None) -> bytes:
    auth = f"Authorization: Bearer {token}\r\n" if token else ""
    return (
        f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n{auth}"
        f"Content-Length: {length}\r\n\r\n"
    ).encode()


async def answer_to_headers_alone(port: int, head: bytes, *, body_part: bytes = b"") -> bytes:
    """What the daemon answers to ``head`` (and ``body_part``) before any more of the body is sent,
    read until it closes the connection; a daemon waiting for the body times this out."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(head + body_part)
        await writer.drain()
        return await asyncio.wait_for(reader.read(), timeout=5)
    finally:
        writer.close()


async def test_a_wrong_token_is_answered_401_before_one_body_byte_is_sent(
    aiohttp_client: Any, tmp_path: Any, minilm: Any
) -> None:
    client = await start(aiohttp_client, tmp_path, minilm, api_token="s3cret")
    answer = await answer_to_headers_alone(client.server.port, headers("/ingest", 8 * MIB, token="wrong"))
    assert answer.startswith(b"HTTP/1.1 401"), answer[:200]
    assert b'"unauthorized"' in answer  # and the connection was closed, not drained (read() returned)


async def test_a_body_declared_over_the_limit_is_413_unread(
    aiohttp_client: Any, tmp_path: Any, minilm: Any
) -> None:
    client = await start(aiohttp_client, tmp_path, minilm, max_body_bytes=MIB)
    answer = await answer_to_headers_alone(client.server.port, headers("/memories", 2 * MIB))
    assert answer.startswith(b"HTTP/1.1 413") and b'"payload_too_large"' in answer, answer[:300]


async def test_bodies_beyond_the_budget_in_flight_are_503_until_one_is_done(
    aiohttp_client: Any, tmp_path: Any, minilm: Any
) -> None:
    client = await start(
        aiohttp_client, tmp_path, minilm, max_body_bytes=MIB, max_body_bytes_in_flight=MIB + MIB // 2
    )
    port = client.server.port
    # One client holds a body of 900 KiB half sent; a second of the same size no longer fits.
    _, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(headers("/memories", 900 * 1024) + b'{"fact": "')
    await writer.drain()
    await asyncio.sleep(0.3)
    answer = await answer_to_headers_alone(port, headers("/memories", 900 * 1024))
    assert answer.startswith(b"HTTP/1.1 503"), answer[:300]
    assert b"Retry-After: 1" in answer and b'"server_busy"' in answer
    # A small body still fits beside it.
    small = await client.post("/memories", json={"fact": "Sam keeps bees."})
    assert small.status == 201
    writer.close()
    await asyncio.sleep(0.3)  # the half-sent body's reservation ends with its connection
    response = await client.post("/memories", json={"fact": "x" * (800 * 1024)})
    assert response.status != 503, await response.text()


def test_the_budget_hands_memory_back_once_a_burst_is_over() -> None:
    trims: list[int] = []
    budget = BodyBudget(4 * TRIM_AFTER_BYTES, lambda: trims.append(1))
    assert budget.take(TRIM_AFTER_BYTES) and budget.take(TRIM_AFTER_BYTES)
    assert not budget.take(3 * TRIM_AFTER_BYTES)  # over the capacity: nothing reserved
    budget.give_back(TRIM_AFTER_BYTES)
    assert trims == []  # a body is still being read
    budget.give_back(TRIM_AFTER_BYTES)
    assert trims == [1] and budget.in_flight == 0
    assert budget.take(1024)
    budget.give_back(1024)
    assert trims == [1]  # too little freed since


async def test_a_client_that_drops_mid_body_is_a_quiet_client_abort(
    aiohttp_client: Any, tmp_path: Any, minilm: Any, caplog: Any
) -> None:
    client = await start(aiohttp_client, tmp_path, minilm)
    for _ in range(3):
        _, writer = await asyncio.open_connection("127.0.0.1", client.server.port)
        writer.write(headers("/memories", 10_000) + b'{"fact": "half')
        await writer.drain()
        writer.close()
    await asyncio.sleep(0.5)
    metrics = await (await client.get("/metrics")).text()
    posts = [line for line in metrics.splitlines() if 'route="/memories"' in line and 'method="POST"' in line]
    assert not any('status="500"' in line for line in posts), posts
    assert any('status="499"' in line and line.endswith(" 3.0") for line in posts), posts
    assert not [r for r in caplog.records if r.levelname == "ERROR"], [r.getMessage() for r in caplog.records]
