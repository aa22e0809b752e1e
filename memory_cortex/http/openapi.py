"""The OpenAPI 3.1 document, generated from the route table and the pydantic models.

Each route is declared once in :data:`memory_cortex.http.routes.ENDPOINTS`; the same declaration
registers the handler and describes it here, so the document cannot drift from the server (a test
checks that every registered route is documented). Bounds that come from the config rather than the
models (the largest search limit, the most messages per ingest) are those of the serving daemon.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel
from pydantic.json_schema import models_json_schema

from .. import __version__
from ..config import Config
from .schemas import MAX_ID, ErrorResponse

if TYPE_CHECKING:
    from .routes import Endpoint

_REF = "#/components/schemas/{model}"
# Success statuses that carry no body when mapped to None (an MCP notification is answered 202).
NO_CONTENT = (202, 204)


def build_openapi(endpoints: Sequence[Endpoint], config: Config) -> dict[str, Any]:
    """The document for ``endpoints``; ``config`` gives the request limits and the time bounds."""
    search, ingest = config.search, config.ingest
    models: set[type[BaseModel]] = {ErrorResponse}
    for endpoint in endpoints:
        models.update(m for m in (endpoint.request, endpoint.query) if m is not None)
        models.update(m for m in endpoint.responses.values() if m is not None)
    ordered = sorted(models, key=lambda m: m.__name__)
    refs, schema = models_json_schema(
        [(m, "validation" if _is_input(m, endpoints) else "serialization") for m in ordered],
        ref_template=_REF,
    )

    def ref(model: type[BaseModel]) -> dict[str, Any]:
        mode = "validation" if _is_input(model, endpoints) else "serialization"
        return refs[(model, mode)]

    paths: dict[str, dict[str, Any]] = {}
    for endpoint in endpoints:
        operation: dict[str, Any] = {
            "operationId": endpoint.handler.__name__,
            "summary": endpoint.summary,
            "responses": {},
        }
        if endpoint.time_bound is not None:
            operation["description"] = endpoint.time_bound.describe(config)
            operation["x-time-bound-s"] = endpoint.time_bound.seconds(config)
        parameters = [
            {
                "name": name,
                "in": "path",
                "required": True,
                "schema": _path_param_schema(name),
            }
            for name in _path_params(endpoint.path)
        ]
        if endpoint.query is not None:
            query_schema = endpoint.query.model_json_schema(ref_template=_REF)
            for name, prop in query_schema.get("properties", {}).items():
                parameters.append(
                    {
                        "name": name,
                        "in": "query",
                        "required": name in query_schema.get("required", []),
                        "schema": prop,
                    }
                )
        if parameters:
            operation["parameters"] = parameters
        if endpoint.request is not None:
            operation["requestBody"] = {
                "required": True,
                "content": {"application/json": {"schema": ref(endpoint.request)}},
            }
        for status, model in endpoint.responses.items():
            response: dict[str, Any] = {"description": "OK" if status < 300 else "Error"}
            if model is not None:
                response["content"] = {"application/json": {"schema": ref(model)}}
            elif status < 300 and status not in NO_CONTENT:
                body = {"type": "object"} if endpoint.media_type == "application/json" else {"type": "string"}
                response["content"] = {endpoint.media_type: {"schema": body}}
            operation["responses"][str(status)] = response
        operation["responses"]["default"] = {
            "description": "Error",
            "content": {"application/json": {"schema": ref(ErrorResponse)}},
        }
        paths.setdefault(endpoint.path, {})[endpoint.method.lower()] = operation

    components = schema.get("$defs", {})
    for request in ("HybridSearchRequest", "SearchDebugRequest"):
        _bound(components[request]["properties"]["limit"], "maximum", search.max_limit)
    _bound(components["IngestRequestBody"]["properties"]["messages"], "maxItems", ingest.max_messages)
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "Memory Cortex",
            "version": __version__,
            "description": "Long-term memory daemon for LLM agents. Errors are {error:{code,message}}."
            " Every POST, PUT, PATCH and DELETE must send Content-Type: application/json, also without a"
            " body (415 otherwise); a Host that is not this machine's is 421, a foreign web Origin 403"
            " (docs/security.md).",
        },
        "paths": paths,
        "components": {"schemas": components},
    }


def _bound(prop: dict[str, Any], keyword: str, value: int) -> None:
    """Set ``keyword`` on the non-null branch of ``prop`` (``anyOf`` for an optional field)."""
    for branch in prop.get("anyOf", [prop]):
        if branch.get("type") != "null":
            branch[keyword] = value


def _is_input(model: type[BaseModel], endpoints: Sequence[Endpoint]) -> bool:
    return any(model in (e.request, e.query) for e in endpoints)


def _path_param_schema(name: str) -> dict[str, Any]:
    """Ids (``memory_id``, ``job_id``) are row ids; any other path part (a file name) is a string."""
    if name == "id" or name.endswith("_id"):
        return {"type": "integer", "minimum": 1, "maximum": MAX_ID}
    return {"type": "string", "minLength": 1}


def _path_params(path: str) -> list[str]:
    return [part[1:-1] for part in path.split("/") if part.startswith("{") and part.endswith("}")]
