"""CORS is off unless server.cors_origins names origins; then only those get CORS headers."""

from __future__ import annotations

from typing import Any

import pytest
from aiohttp.test_utils import TestClient
from pydantic import ValidationError

from memory_cortex.app import create_app
from memory_cortex.config import load_config
from tests.conftest import make_config

ALLOWED = "http://localhost:3000"
OTHER = "https://evil.example"


def preflight(origin: str, method: str = "POST") -> dict[str, str]:
    return {
        "Origin": origin,
        "Access-Control-Request-Method": method,
        "Access-Control-Request-Headers": "authorization, content-type",
    }


def cors_headers(response: Any) -> dict[str, str]:
    return {k.lower(): v for k, v in response.headers.items() if k.lower().startswith("access-control-")}


async def start(aiohttp_client: Any, tmp_path: Any, minilm: Any, **server: Any) -> TestClient:
    config = make_config(tmp_path, server={"cors_origins": [ALLOWED], **server})
    return await aiohttp_client(create_app(config, embedder=minilm))


async def test_no_cors_headers_by_default(client: TestClient) -> None:
    # Without cors_origins no other origin may call at all (http/guard.py): the preflight and the
    # request itself are refused, and neither carries a CORS header.
    response = await client.options("/hybrid-search", headers=preflight(ALLOWED))
    assert response.status == 403 and (await response.json())["error"]["code"] == "origin_not_allowed"
    assert cors_headers(response) == {}
    response = await client.post("/hybrid-search", json={"query": "x"}, headers={"Origin": ALLOWED})
    assert response.status == 403 and cors_headers(response) == {}
    # A preflight from the daemon's own origin is no cross-origin request: nothing answers OPTIONS.
    own = f"http://{client.server.host}:{client.server.port}"
    response = await client.options("/hybrid-search", headers=preflight(own))
    assert response.status == 405 and (await response.json())["error"]["code"] == "method_not_allowed"


async def test_an_allowed_origin_gets_cors_on_preflight_and_request(
    aiohttp_client: Any, tmp_path: Any, minilm: Any
) -> None:
    client = await start(aiohttp_client, tmp_path, minilm)
    response = await client.options("/hybrid-search", headers=preflight(ALLOWED))
    assert response.status == 200
    headers = cors_headers(response)
    assert headers["access-control-allow-origin"] == ALLOWED
    assert headers["access-control-allow-methods"] == "POST"
    assert {h.strip().lower() for h in headers["access-control-allow-headers"].split(",")} == {
        "authorization",
        "content-type",
    }
    assert "access-control-allow-credentials" not in headers

    response = await client.post("/hybrid-search", json={"query": "x"}, headers={"Origin": ALLOWED})
    assert response.status == 200
    assert cors_headers(response) == {"access-control-allow-origin": ALLOWED}
    response = await client.delete(
        "/memories/12345", headers={"Origin": ALLOWED, "Content-Type": "application/json"}
    )
    assert response.status == 404 and cors_headers(response) == {"access-control-allow-origin": ALLOWED}


async def test_a_disallowed_origin_gets_no_cors_headers(
    aiohttp_client: Any, tmp_path: Any, minilm: Any
) -> None:
    client = await start(aiohttp_client, tmp_path, minilm)
    response = await client.options("/hybrid-search", headers=preflight(OTHER))
    assert response.status == 403 and (await response.json())["error"]["code"] == "origin_not_allowed"
    assert cors_headers(response) == {}
    # The request itself is refused too, not only left unreadable: a no-cors POST writes nothing.
    response = await client.post("/hybrid-search", json={"query": "x"}, headers={"Origin": OTHER})
    assert response.status == 403 and cors_headers(response) == {}


@pytest.mark.parametrize(
    ("path", "method"),
    [
        ("/memories/1", "PATCH"),
        ("/memories/1", "DELETE"),
        ("/memories/1", "GET"),
        ("/memories", "POST"),
        ("/ingest/jobs/1/retry", "POST"),
        ("/lifecycle/run", "POST"),
        ("/mcp", "POST"),
    ],
)
async def test_an_allowed_origin_may_preflight_every_method_of_a_path(
    aiohttp_client: Any, tmp_path: Any, minilm: Any, path: str, method: str
) -> None:
    client = await start(aiohttp_client, tmp_path, minilm)
    response = await client.options(path, headers=preflight(ALLOWED, method))
    assert response.status == 200, await response.text()
    headers = cors_headers(response)
    assert headers["access-control-allow-origin"] == ALLOWED
    assert method in {m.strip() for m in headers["access-control-allow-methods"].split(",")}


async def test_a_preflight_for_a_method_the_path_lacks_is_refused(
    aiohttp_client: Any, tmp_path: Any, minilm: Any
) -> None:
    client = await start(aiohttp_client, tmp_path, minilm)
    response = await client.options("/hybrid-search", headers=preflight(ALLOWED, "DELETE"))
    assert response.status == 403 and cors_headers(response) == {}


async def test_preflight_needs_no_token_but_the_request_does(
    aiohttp_client: Any, tmp_path: Any, minilm: Any
) -> None:
    client = await start(aiohttp_client, tmp_path, minilm, host="0.0.0.0", api_token="s3cret")
    response = await client.options("/memories", headers=preflight(ALLOWED))
    assert response.status == 200
    assert cors_headers(response)["access-control-allow-origin"] == ALLOWED

    response = await client.post("/memories", json={"fact": "x"}, headers={"Origin": ALLOWED})
    assert response.status == 401 and (await response.json())["error"]["code"] == "unauthorized"
    # The page can read why it was refused.
    assert cors_headers(response) == {"access-control-allow-origin": ALLOWED}
    response = await client.post(
        "/memories", json={"fact": "x"}, headers={"Origin": ALLOWED, "Authorization": "Bearer s3cret"}
    )
    assert response.status == 201 and cors_headers(response) == {"access-control-allow-origin": ALLOWED}

    # Only a real preflight skips the token: a bare OPTIONS, or one from another origin, does not pass.
    assert (await client.options("/memories")).status == 401
    assert (await client.options("/memories", headers=preflight(OTHER))).status == 403


@pytest.mark.parametrize(
    "origin", ["*", "localhost:3000", "http://localhost:3000/", "http://a.example/app", "null", ""]
)
def test_an_entry_that_is_not_an_origin_is_a_config_error(tmp_path: Any, origin: str) -> None:
    with pytest.raises(ValidationError, match=r"server\.cors_origins"):
        make_config(tmp_path, server={"cors_origins": [origin]})


def test_origins_can_come_from_the_environment(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMORY_CORTEX_SERVER__CORS_ORIGINS", '["http://localhost:3000", "app://memory"]')
    config_file = tmp_path / "config.yaml"
    config_file.write_text("{}")
    assert load_config(config_file).server.cors_origins == ["http://localhost:3000", "app://memory"]
