"""The dashboard's page and assets: served from the package, with a strict CSP, and open without the
API token (they hold no data) while every API call the page makes still needs it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from aiohttp.test_utils import TestClient

from memory_cortex.app import create_app
from memory_cortex.models.embedders import SentenceTransformerEmbedder
from memory_cortex.ui import STATIC_DIR
from tests.conftest import make_config


async def test_ui_redirects_to_the_page_and_serves_it_with_a_strict_policy(client: TestClient) -> None:
    redirect = await client.get("/ui", allow_redirects=False)
    assert redirect.status == 308
    assert redirect.headers["Location"] == "/ui/"
    page = await client.get("/ui/")
    assert page.status == 200
    assert page.content_type == "text/html"
    assert "<title>Memory Cortex</title>" in await page.text()
    policy = page.headers["Content-Security-Policy"]
    assert "script-src 'self'" in policy and "connect-src 'self'" in policy


async def test_every_shipped_asset_is_served_with_its_type(client: TestClient) -> None:
    types = {".js": "text/javascript", ".css": "text/css", ".html": "text/html"}
    assets = sorted(path for path in STATIC_DIR.iterdir() if path.is_file())
    assert assets
    for path in assets:
        response = await client.get(f"/ui/static/{path.name}")
        assert response.status == 200, path.name
        assert response.content_type == types.get(path.suffix, response.content_type)
        assert await response.read() == path.read_bytes()
        assert "Content-Security-Policy" in response.headers


async def test_unknown_or_escaping_asset_names_are_404(client: TestClient) -> None:
    for name in ("nope.js", ".hidden", "..%2Fconfig.py", "%2E%2E%2F__init__.py"):
        response = await client.get(f"/ui/static/{name}")
        assert response.status == 404, name
        assert (await response.json())["error"]["code"] == "not_found"


async def test_with_a_token_the_page_loads_but_no_data_does(
    aiohttp_client: Any, tmp_path: Path, minilm: SentenceTransformerEmbedder
) -> None:
    config = make_config(tmp_path, server={"api_token": "s3cret"})
    client = await aiohttp_client(create_app(config, embedder=minilm))
    assert (await client.get("/ui/")).status == 200
    assert (await client.get("/ui/static/index.html")).status == 200
    for path in ("/stats", "/memories", "/ingest/jobs", "/lifecycle/log", "/openapi.json"):
        assert (await client.get(path)).status == 401, path
    # Only reads of the page are open: nothing else under /ui/ slips past the token.
    assert (await client.post("/ui/")).status == 401
    authorised = await client.get("/stats", headers={"Authorization": "Bearer s3cret"})
    assert authorised.status == 200
