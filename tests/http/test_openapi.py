"""The OpenAPI document describes every route the server has, and is itself valid."""

from __future__ import annotations

import re
import sys
from typing import Any

from aiohttp.test_utils import TestClient
from openapi_spec_validator import validate

from memory_cortex.app import create_app
from memory_cortex.http.schemas import NOT_BLANK
from tests.conftest import make_config


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


async def test_scope_fields_are_in_the_document(client: TestClient) -> None:
    """Issue 22: every read takes the requester's context, memories carry their scope."""
    document = await (await client.get("/openapi.json")).json()
    schemas = document["components"]["schemas"]
    requester = {"agent_id", "session_kind", "channel"}
    for name in (
        "HybridSearchRequest",
        "SearchDebugRequest",
        "ContextRequest",
        "RecallRequest",
        "VisibleRequest",
    ):
        assert requester <= set(schemas[name]["properties"]), name
    for path in ("/memories", "/memories/{memory_id}", "/memories/{memory_id}/history"):
        params = {p["name"] for p in document["paths"][path]["get"]["parameters"] if p["in"] == "query"}
        assert requester <= params, path
    assert {"agent_id", "session_kind"} <= set(schemas["IngestRequestBody"]["properties"])
    assert {"agent_id", "visibility"} <= set(schemas["MemoryIn"]["properties"])
    assert {"agent_id", "visibility", "channel"} <= set(schemas["SearchResultItem"]["properties"])
    assert {"agent_id", "visibility"} <= set(schemas["MemoryOut"]["properties"])
    assert "/visible-memories" in document["paths"]


# -- found by the schemathesis fuzzer (tests/http/test_fuzz_openapi.py) ---------------------------
async def test_post_memories_documents_every_body_and_answer_it_accepts(client: TestClient) -> None:
    document = await (await client.get("/openapi.json")).json()
    schemas = document["components"]["schemas"]
    operation = document["paths"]["/memories"]["post"]
    body = schemas[operation["requestBody"]["content"]["application/json"]["schema"]["$ref"].split("/")[-1]]
    refs = [branch.get("$ref") or branch["items"]["$ref"] for branch in body["anyOf"]]
    # one memory, {memories: [...]}, or a bare array of memories
    assert refs == [f"#/components/schemas/{name}" for name in ("MemoryIn", "MemoryBatchIn", "MemoryIn")]
    created = operation["responses"]["201"]["content"]["application/json"]["schema"]["$ref"].split("/")[-1]
    assert [b["$ref"].split("/")[-1] for b in schemas[created]["anyOf"]] == [
        "MemoryOut",
        "MemoryBatchResponse",
    ]


async def test_patch_documents_which_fields_may_be_null(client: TestClient) -> None:
    document = await (await client.get("/openapi.json")).json()
    fields = document["components"]["schemas"]["MemoryPatch"]["properties"]
    nullable = {name for name, prop in fields.items() if {"type": "null"} in prop.get("anyOf", [])}
    assert nullable == {"ref", "superseded_by", "occurred_at", "agent_id"}  # null agent: every agent
    assert all("default" not in fields[name] for name in set(fields) - nullable)


async def test_configured_limits_are_in_the_document(aiohttp_client: Any, tmp_path: Any, minilm: Any) -> None:
    config = make_config(tmp_path, search={"max_limit": 50}, ingest={"max_messages": 7})
    client = await aiohttp_client(create_app(config, embedder=minilm))
    document = await (await client.get("/openapi.json")).json()
    schemas = document["components"]["schemas"]
    (limit, _) = schemas["HybridSearchRequest"]["properties"]["limit"]["anyOf"]
    assert (limit["minimum"], limit["maximum"]) == (1, 50)
    assert schemas["IngestRequestBody"]["properties"]["messages"]["maxItems"] == 7


async def test_path_ids_and_the_document_itself_are_described(client: TestClient) -> None:
    document = await (await client.get("/openapi.json")).json()
    (memory_id,) = document["paths"]["/memories/{memory_id}"]["get"]["parameters"][:1]
    assert memory_id["schema"] == {"type": "integer", "minimum": 1, "maximum": 2**63 - 1}
    ok = document["paths"]["/openapi.json"]["get"]["responses"]["200"]
    assert ok["content"] == {"application/json": {"schema": {"type": "object"}}}


def test_the_not_blank_pattern_means_what_str_strip_removes() -> None:
    """The document's pattern for a fact and the server's blank check agree on every character."""
    pattern = re.compile(NOT_BLANK)
    for code in range(sys.maxunicode + 1):
        char = chr(code)
        assert (pattern.search(char) is None) == char.isspace(), hex(code)


async def test_path_parameters_have_their_real_types(client: TestClient) -> None:
    """Ids are integers; a file name (the dashboard's static assets) is a string."""
    paths = (await (await client.get("/openapi.json")).json())["paths"]
    (name,) = paths["/ui/static/{name}"]["get"]["parameters"]
    assert name["schema"]["type"] == "string"
    (memory_id,) = paths["/memories/{memory_id}"]["get"]["parameters"][:1]
    assert memory_id["name"] == "memory_id" and memory_id["schema"]["type"] == "integer"
