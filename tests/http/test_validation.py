"""Bad requests get a 4xx with one JSON error shape; odd-but-valid ones are answered normally."""

from __future__ import annotations

from typing import Any

import pytest
from aiohttp.test_utils import TestClient

from middleware.app import create_app
from tests.conftest import make_config


async def error_of(response: Any, status: int) -> dict[str, Any]:
    assert response.status == status, await response.text()
    body = await response.json()
    assert set(body) == {"error"} and set(body["error"]) == {"code", "message"}
    return body["error"]


@pytest.mark.parametrize(
    ("body", "code"),
    [
        ("{not json", "invalid_json"),
        ("[1, 2]", "invalid_request"),
        ('"a string"', "invalid_request"),
        ("", "invalid_request"),
        ('{"user_id": "a"}', "invalid_request"),  # query missing
        ('{"query": 42}', "invalid_request"),
        ('{"query": "x", "limit": "10"}', "invalid_request"),
        ('{"query": "x", "limit": 0}', "invalid_request"),
        ('{"query": "x", "limit": -3}', "invalid_request"),
        ('{"query": "x", "limit": 100000}', "invalid_request"),
        ('{"query": "x", "limit": 2.5}', "invalid_request"),
        ('{"query": "x", "user_id": 7}', "invalid_request"),
        ('{"query": "x", "mode": "magic"}', "invalid_request"),
    ],
)
async def test_bad_search_bodies_are_400(client: TestClient, body: str, code: str) -> None:
    response = await client.post("/hybrid-search", data=body, headers={"Content-Type": "application/json"})
    assert (await error_of(response, 400))["code"] == code


@pytest.mark.parametrize(
    "body",
    [
        {"fact": ""},
        {"fact": "   "},
        {"fact": "x", "importance": 0},
        {"fact": "x", "importance": 11},
        {"fact": "x", "importance": "5"},
        {"fact": "x", "metadata": "not an object"},
        {"fact": "x", "unknown_field": 1},
        {"fact": "x", "created_at": "yesterday"},
        {"memories": []},
        {"memories": "x"},
    ],
)
async def test_bad_memory_bodies_are_400(client: TestClient, body: Any) -> None:
    await error_of(await client.post("/memories", json=body), 400)


async def test_openclaw_style_bodies_are_answered_normally(client: TestClient) -> None:
    """JSON.stringify drops undefined fields and keeps extra ones: never a 4xx for that."""
    response = await client.post("/hybrid-search", json={"query": "hello", "extra": {"name": "x"}})
    assert response.status == 200
    response = await client.post("/hybrid-search", json={"query": "hello", "user_id": None, "limit": None})
    assert response.status == 200


async def test_wrong_content_type_is_415(client: TestClient) -> None:
    response = await client.post("/hybrid-search", data="query=x", headers={"Content-Type": "text/plain"})
    assert (await error_of(response, 415))["code"] == "unsupported_media_type"


async def test_lone_surrogate_is_400_not_500(client: TestClient) -> None:
    raw = '{"fact": "broken \\ud800 text"}'
    response = await client.post("/memories", data=raw, headers={"Content-Type": "application/json"})
    await error_of(response, 400)


async def test_unknown_route_and_method_are_json(client: TestClient) -> None:
    assert (await error_of(await client.get("/nope"), 404))["code"] == "not_found"
    assert (await error_of(await client.put("/hybrid-search"), 405))["code"] == "method_not_allowed"
    assert (await error_of(await client.get("/memories/abc"), 400))["code"] == "invalid_request"


async def test_body_over_the_limit_is_413(aiohttp_client: Any, tmp_path: Any, minilm: Any) -> None:
    config = make_config(tmp_path, server={"max_body_bytes": 1024})
    client = await aiohttp_client(create_app(config, embedder=minilm))
    response = await client.post("/memories", json={"fact": "x" * 4096})
    assert (await error_of(response, 413))["code"] == "payload_too_large"


async def test_with_a_token_every_endpoint_but_health_needs_it(
    aiohttp_client: Any, tmp_path: Any, minilm: Any
) -> None:
    config = make_config(tmp_path, server={"api_token": "s3cret"})
    client = await aiohttp_client(create_app(config, embedder=minilm))
    assert (await client.get("/health")).status == 200
    for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": "s3cret"}):
        response = await client.post("/hybrid-search", json={"query": "x"}, headers=headers)
        assert (await error_of(response, 401))["code"] == "unauthorized"
    assert (await client.get("/stats")).status == 401
    ok = await client.post("/hybrid-search", json={"query": "x"}, headers={"Authorization": "Bearer s3cret"})
    assert ok.status == 200


def test_a_reachable_address_without_a_token_refuses_to_start(tmp_path: Any) -> None:
    from pydantic import ValidationError

    with pytest.raises(ValidationError, match=r"set server\.api_token"):
        make_config(tmp_path, server={"host": "0.0.0.0"})
    assert make_config(tmp_path, server={"host": "0.0.0.0", "api_token": "t"}).server.host == "0.0.0.0"
    assert make_config(tmp_path, server={"host": "::1"}).server.is_loopback
