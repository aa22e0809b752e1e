"""The request guard (http/guard.py): a web page can neither rebind a name onto the daemon nor send it
writes across origins; the rules hold on every route, with and without a token."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest
from aiohttp.test_utils import TestClient
from pydantic import ValidationError

from memory_cortex.app import create_app
from memory_cortex.config import ServerConfig
from memory_cortex.http.guard import RequestGuard, is_loopback_name
from tests.conftest import make_config

JSON = {"Content-Type": "application/json"}
EVIL_HOST = "evil.example:8300"
EVIL_ORIGIN = "http://evil.example:8300"


async def start(aiohttp_client: Any, tmp_path: Any, minilm: Any, **server: Any) -> TestClient:
    config = make_config(tmp_path, server=server)
    return await aiohttp_client(create_app(config, embedder=minilm))


def auth(token: str | None) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"} if token else {}


async def error_code(response: Any) -> str:
    assert response.content_type == "application/json"
    return (await response.json())["error"]["code"]


async def total_memories(client: TestClient, token: str | None = None) -> int:
    response = await client.get("/stats", headers=auth(token))
    assert response.status == 200
    return (await response.json())["total_memories"]


# -- Host -------------------------------------------------------------------------------------
ROUTES = [
    ("GET", "/memories"),
    ("GET", "/stats"),
    ("GET", "/health"),
    ("GET", "/metrics"),
    ("GET", "/config"),
    ("GET", "/ui/"),
    ("GET", "/ui/static/app.js"),
    ("GET", "/openapi.json"),
    ("POST", "/hybrid-search"),
    ("POST", "/memories"),
    ("PATCH", "/memories/1"),
    ("DELETE", "/memories/1"),
    ("POST", "/mcp"),
]


@pytest.mark.parametrize("token", [None, "s3cret"])
async def test_a_rebound_host_is_refused_on_every_route(
    aiohttp_client: Any, tmp_path: Any, minilm: Any, token: str | None
) -> None:
    client = await start(aiohttp_client, tmp_path, minilm, api_token=token)
    await client.post("/memories", json={"fact": "Sam's blood type is AB negative."}, headers=auth(token))
    for method, path in ROUTES:
        headers = {"Host": EVIL_HOST, **JSON, **auth(token)}
        body = b'{"query": "blood", "fact": "x"}' if method != "GET" else None
        response = await client.request(method, path, data=body, headers=headers)
        assert response.status == 421, (method, path, response.status)
        assert await error_code(response) == "misdirected_request"
        assert "blood" not in await response.text()


@pytest.mark.parametrize(
    "host", ["127.0.0.1:8300", "127.0.0.1", "127.8.9.10:1", "localhost:8300", "LOCALHOST", "app.localhost:8300",
             "[::1]:8300", "[::1]"]
)  # fmt: skip
async def test_loopback_hosts_are_answered(client: TestClient, host: str) -> None:
    response = await client.get("/stats", headers={"Host": host})
    assert response.status == 200


@pytest.mark.parametrize(
    "host", ["evil.example", "127.0.0.1.evil.example:8300", "localhost.evil.example", "192.168.1.5:8300",
             "0.0.0.0:8300", "[::]:8300", "127.0.0.1:99999", "127.0.0.1:x", "", "[::1"]
)  # fmt: skip
async def test_other_hosts_are_refused(client: TestClient, host: str) -> None:
    response = await client.get("/stats", headers={"Host": host})
    assert response.status == 421


async def test_allowed_hosts_and_the_bound_address_are_answered(
    aiohttp_client: Any, tmp_path: Any, minilm: Any
) -> None:
    client = await start(
        aiohttp_client, tmp_path, minilm, host="192.168.1.5", api_token="t", allowed_hosts=["Memory.LAN"]
    )
    for host in ("memory.lan", "MEMORY.lan:8300", "192.168.1.5:8300", "localhost"):
        response = await client.get("/stats", headers={"Host": host, **auth("t")})
        assert response.status == 200, host
    response = await client.get("/stats", headers={"Host": "other.lan", **auth("t")})
    assert response.status == 421


async def test_an_allowed_host_with_a_port_admits_that_port_only(
    aiohttp_client: Any, tmp_path: Any, minilm: Any
) -> None:
    client = await start(aiohttp_client, tmp_path, minilm, allowed_hosts=["memory.lan:8443"])
    assert (await client.get("/stats", headers={"Host": "memory.lan:8443"})).status == 200
    assert (await client.get("/stats", headers={"Host": "memory.lan:8300"})).status == 421


@pytest.mark.parametrize("entry", ["http://memory.lan", "memory.lan/x", "*.lan", "memory lan", ""])
def test_an_allowed_hosts_entry_that_is_no_host_is_a_config_error(tmp_path: Any, entry: str) -> None:
    with pytest.raises(ValidationError, match=r"server\.allowed_hosts"):
        make_config(tmp_path, server={"allowed_hosts": [entry]})


def test_loopback_names() -> None:
    assert all(map(is_loopback_name, ["localhost", "a.localhost", "127.0.0.1", "127.255.0.9", "::1"]))
    assert not any(map(is_loopback_name, ["localhost.example", "10.0.0.1", "0.0.0.0", "::", "example"]))


def test_an_unspecified_bind_address_admits_no_host_by_itself() -> None:
    guard = RequestGuard(ServerConfig(host="0.0.0.0", api_token="t"))
    assert not guard.host_allowed("0.0.0.0:8300")
    assert guard.host_allowed("127.0.0.1:8300")


# -- Origin -----------------------------------------------------------------------------------
@pytest.mark.parametrize("method", ["GET", "POST", "OPTIONS"])
async def test_a_foreign_origin_is_refused(client: TestClient, method: str) -> None:
    path = "/memories" if method == "GET" else "/hybrid-search"
    body = b'{"query": "x"}' if method == "POST" else None
    for origin in (
        EVIL_ORIGIN,
        "null",
        "http://localhost:3000",
        f"https://127.0.0.1:{client.server.port + 1}",
    ):
        response = await client.request(method, path, data=body, headers={"Origin": origin, **JSON})
        assert response.status == 403, origin
        assert await error_code(response) == "origin_not_allowed"


async def test_the_daemons_own_origin_is_answered(client: TestClient) -> None:
    """The dashboard calls its API from the daemon's own origin; a TLS proxy in front makes it https."""
    host = f"127.0.0.1:{client.server.port}"
    for origin in (f"http://{host}", f"https://{host}"):
        response = await client.post("/memories", json={"fact": "x"}, headers={"Origin": origin})
        assert response.status == 201, origin


async def test_a_cross_site_write_stores_nothing(client: TestClient) -> None:
    """What a page's no-cors fetch sends: its Origin, and a text/plain or no content type."""
    attempts = [
        ("/memories", {"Origin": EVIL_ORIGIN, **JSON}),
        ("/memories", {"Origin": EVIL_ORIGIN, "Content-Type": "text/plain"}),
        ("/memories", {"Content-Type": "text/plain;charset=UTF-8"}),
        ("/memories", {}),
        ("/ingest", {"Origin": EVIL_ORIGIN}),
        ("/ingest", {}),
    ]
    body = b'{"fact": "planted", "messages": [{"role": "user", "content": "remember that I love spam"}]}'
    for path, headers in attempts:
        response = await client.post(path, data=body, headers=headers, skip_auto_headers=["Content-Type"])
        assert response.status in (403, 415), (path, headers, response.status)
    assert await total_memories(client) == 0
    jobs = await (await client.get("/ingest/jobs")).json()
    assert jobs["count"] == 0


# -- Content-Type ------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("DELETE", "/memories/1"),
        ("POST", "/lifecycle/run"),
        ("POST", "/ingest/jobs/1/retry"),
        ("PATCH", "/memories/1"),
    ],
)
async def test_every_write_must_declare_json_even_without_a_body(
    client: TestClient, method: str, path: str
) -> None:
    response = await client.request(method, path, skip_auto_headers=["Content-Type"])
    assert response.status == 415 and await error_code(response) == "unsupported_media_type"
    form = {"Content-Type": "application/x-www-form-urlencoded"}
    response = await client.request(method, path, data=b"dry_run=false", headers=form)
    assert response.status == 415
    response = await client.request(method, path, headers=JSON)
    assert response.status != 415


async def test_a_form_post_cannot_start_a_lifecycle_run(client: TestClient) -> None:
    form = {"Content-Type": "application/x-www-form-urlencoded", "Origin": EVIL_ORIGIN}
    assert (await client.post("/lifecycle/run", data=b"x=1", headers=form)).status == 403
    assert (
        await client.post("/lifecycle/run", data=b"x=1", headers={"Content-Type": form["Content-Type"]})
    ).status == 415
    runs = await (await client.get("/lifecycle/log")).json()
    assert runs["runs"] == []


async def test_json_suffix_types_are_json(client: TestClient) -> None:
    response = await client.post(
        "/memories", data=b'{"fact": "x"}', headers={"Content-Type": "application/vnd.api+json"}
    )
    assert response.status == 201


@pytest.mark.parametrize("token", ["s3cret"])
async def test_the_rules_hold_with_a_token(
    aiohttp_client: Any, tmp_path: Any, minilm: Any, token: str
) -> None:
    client = await start(aiohttp_client, tmp_path, minilm, api_token=token)
    response = await client.post(
        "/memories", json={"fact": "x"}, headers={"Origin": EVIL_ORIGIN, **auth(token)}
    )
    assert response.status == 403
    response = await client.post(
        "/memories", data=b'{"fact": "x"}', headers={"Content-Type": "text/plain", **auth(token)}
    )
    assert response.status == 415
    assert await total_memories(client, token) == 0


# -- slow bodies -------------------------------------------------------------------------------
async def test_a_body_sent_too_slowly_is_answered_408_and_the_connection_closed(
    aiohttp_client: Any, tmp_path: Any, minilm: Any
) -> None:
    client = await start(aiohttp_client, tmp_path, minilm, body_timeout_s=1.0)
    body = b'{"fact": "slowly sent, one byte at a time"}'
    reader, writer = await asyncio.open_connection("127.0.0.1", client.server.port)
    writer.write(
        b"POST /memories HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        + f"Content-Length: {len(body)}\r\n\r\n".encode()
    )

    async def send_slowly() -> None:
        for byte in body:
            writer.write(bytes([byte]))
            try:
                await writer.drain()
            except ConnectionError:
                return
            await asyncio.sleep(0.4)

    started = time.monotonic()
    sender = asyncio.create_task(send_slowly())
    answer = await asyncio.wait_for(reader.read(), timeout=10)  # until the daemon closes
    elapsed = time.monotonic() - started
    sender.cancel()
    writer.close()
    assert answer.startswith(b"HTTP/1.1 408"), answer[:200]
    assert b'"request_timeout"' in answer
    assert 1.0 <= elapsed < 4.0  # the whole body would have taken 17 s
    assert await total_memories(client) == 0


async def test_a_body_in_time_is_read_once_and_used(client: TestClient) -> None:
    """The guard reads the body; the handler still gets all of it."""
    response = await client.post("/memories", json={"fact": "Sam keeps bees."})
    assert response.status == 201 and (await response.json())["fact"] == "Sam keeps bees."
