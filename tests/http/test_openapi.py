"""The OpenAPI document describes every route the server has, and is itself valid."""

from __future__ import annotations

from aiohttp.test_utils import TestClient
from openapi_spec_validator import validate


async def test_every_route_is_documented_and_the_document_is_valid(client: TestClient) -> None:
    response = await client.get("/openapi.json")
    assert response.status == 200
    document = await response.json()
    validate(document)
    documented = {(method.upper(), path) for path, ops in document["paths"].items() for method in ops}
    served = {
        (route.method, route.resource.canonical)
        for route in client.app.router.routes()
        if route.method != "HEAD" and route.resource is not None
    }
    assert served == documented


async def test_search_contract_fields_are_in_the_schema(client: TestClient) -> None:
    document = await (await client.get("/openapi.json")).json()
    item = document["components"]["schemas"]["SearchResultItem"]["properties"]
    assert {"id", "user_id", "topic", "fact", "importance", "score", "source"} <= set(item)
    request = document["components"]["schemas"]["HybridSearchRequest"]
    assert request["required"] == ["query"]
