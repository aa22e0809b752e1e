"""Bad requests get a 4xx with one JSON error shape; odd-but-valid ones are answered normally."""

from __future__ import annotations

from typing import Any

import pytest
from aiohttp.test_utils import TestClient

from memory_cortex.app import create_app
from tests.conftest import make_config

JSON = {"Content-Type": "application/json"}  # every write declares JSON, body or not (http/guard.py)


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


# -- found by the schemathesis fuzzer (tests/http/test_fuzz_openapi.py) ---------------------------
async def test_405_names_the_allowed_methods(client: TestClient) -> None:
    response = await client.request("TRACE", "/memories")
    await error_of(response, 405)
    # HEAD: a GET without its body.
    assert set(response.headers["Allow"].split(",")) == {"GET", "HEAD", "POST"}


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        ("GET", f"/memories?before_id={2**63}", None),
        ("GET", f"/memories?before_id={10**25}", None),
        ("PATCH", "/memories/1", {"superseded_by": 10**25}),
        ("GET", f"/memories/{2**63}", None),
        ("GET", "/memories/0", None),
        ("POST", f"/ingest/jobs/{10**25}/retry", None),
    ],
)
async def test_ids_beyond_sqlite_integers_are_400_not_500(
    client: TestClient, method: str, path: str, body: Any
) -> None:
    await store_one(client)
    await error_of(await client.request(method, path, json=body, headers=JSON), 400)


async def test_the_largest_sqlite_id_is_a_plain_404(client: TestClient) -> None:
    response = await client.get(f"/memories/{2**63 - 1}")
    assert (await error_of(response, 404))["code"] == "memory_not_found"


async def test_whole_floats_are_integers_and_fractions_are_not(client: TestClient) -> None:
    """JSON Schema (the OpenAPI document) counts 15.0 as an integer: so does the API."""
    assert (await client.post("/context", json={"query": "x", "max_facts": 15.0})).status == 200
    assert (await client.post("/hybrid-search", json={"query": "x", "limit": 5.0})).status == 200
    memory = await store_one(client, importance=7.0)
    assert memory["importance"] == 7
    await error_of(await client.post("/context", json={"query": "x", "max_facts": 15.5}), 400)
    await error_of(await client.post("/context", json={"query": "x", "max_facts": True}), 400)


@pytest.mark.parametrize("session_id", [True, False, 1.5, [1], {"a": 1}])
async def test_a_session_id_is_a_string_or_an_integer(client: TestClient, session_id: Any) -> None:
    response = await client.post("/ingest", json={"messages": [], "session_id": session_id})
    await error_of(response, 400)


@pytest.mark.parametrize("fact", ["\u0085", "\u2028 \x1c", "\u3000"])
async def test_unicode_whitespace_is_a_blank_fact(client: TestClient, fact: str) -> None:
    await error_of(await client.post("/memories", json={"fact": fact}), 400)
    memory = await store_one(client)
    await error_of(await client.patch(f"/memories/{memory['id']}", json={"fact": fact}), 400)


async def store_one(client: TestClient, **fields: Any) -> dict[str, Any]:
    response = await client.post("/memories", json={"fact": "Sam drinks oat milk", **fields})
    assert response.status == 201, await response.text()
    return await response.json()
