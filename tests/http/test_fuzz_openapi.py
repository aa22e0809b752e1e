"""Schemathesis fuzzes every operation of /openapi.json against the real daemon.

The daemon runs on a loopback port (fresh database, real model) and serves the document fuzzed
here. Each operation gets its examples, the coverage phase (boundary and invalid values, wrong
types, missing fields, unexpected methods) and property-based fuzzing, positive and negative. No
response may be a 5xx; each must match the documented status codes, content types and schemas;
every 4xx must be the one JSON error shape; schema-valid requests are accepted and invalid ones
refused. Generation is deterministic: a failure reproduces on the next run.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest
import requests
import schemathesis
from schemathesis.core import NOT_SET

from memory_cortex.app import create_app
from memory_cortex.config import Config
from memory_cortex.http.openapi import build_openapi
from memory_cortex.http.routes import ENDPOINTS
from memory_cortex.http.schemas import ErrorBody
from tests.conftest import make_config
from tests.helpers import serve_in_thread

# No answer may take longer (issue 25: every operation answers within its documented bound).
MOST_SECONDS = 30
# Per operation, for the fuzzing phase (the coverage phase has its own, fixed set of cases).
MAX_EXAMPLES = 25


@pytest.fixture(scope="module")
def daemon_url(tmp_path_factory: pytest.TempPathFactory, minilm: Any) -> Iterator[str]:
    config = make_config(tmp_path_factory.mktemp("fuzz"))
    with serve_in_thread(create_app(config, embedder=minilm)) as url:
        served = requests.get(f"{url}/openapi.json", timeout=30)
        assert served.status_code == 200 and served.json() == DOCUMENT
        yield url


def errors_are_json_objects(ctx: Any, response: schemathesis.Response, case: schemathesis.Case) -> None:
    """Every 4xx is ``{"error": {"code": str, "message": str}}`` served as application/json, with
    at most the optional fields ``ErrorBody`` documents beside them (a 409's ``run_id``)."""
    if not 400 <= response.status_code < 500:
        return
    content_type = response.headers.get("content-type", [""])[0]
    assert content_type.startswith("application/json"), f"{response.status_code} served as {content_type!r}"
    body = response.json()
    assert isinstance(body, dict) and set(body) == {"error"}, body
    error = body["error"]
    assert isinstance(error, dict) and {"code", "message"} <= set(error) <= set(ErrorBody.model_fields), body
    assert isinstance(error["code"], str) and error["code"], body
    assert isinstance(error["message"], str) and error["message"], body


# 400s that no schema can foresee: superseded_by must name another memory of the same user; a
# relation joins two different entities (an id and a name may be the same one); a channel only with
# a shared relation (one field's rule on another's value); a name that looks like a credential (the
# secret filter's patterns, which no JSON schema states).
RULES_ON_STORED_DATA = (
    "superseded_by must name another memory",
    "a memory cannot supersede itself",
    "a relation joins two different entities",
    "channel names the group of a shared relation",
    "looks like a credential",
)


def accepts_schema_valid_data(ctx: Any, response: schemathesis.Response, case: schemathesis.Case) -> None:
    """schemathesis' positive_data_acceptance, less the rules that depend on what is stored."""
    if response.status_code == 400 and any(rule in response.text for rule in RULES_ON_STORED_DATA):
        return
    schemathesis.checks.positive_data_acceptance(ctx, response, case)


# The document the daemon serves, built here at import so that pytest collects one test per
# operation. (schemathesis.pytest.from_fixture, which would load it from the server at run time,
# fails on pytest 9.2: it reads Node._nodeid, which 9.2 removed.) The daemon_url fixture checks
# that the running server serves exactly this document.
DOCUMENT = build_openapi(ENDPOINTS, Config())
# POST /mcp is not this API's contract but MCP's (JSON-RPC bodies and errors, answered by the SDK):
# it is driven by the SDK's own client, and fuzzed for "never a 5xx", in tests/mcp/test_http.py.
schema = schemathesis.openapi.from_dict(
    DOCUMENT,
    config=schemathesis.Config.from_dict(
        {
            "generation": {
                "mode": "all",
                "max-examples": MAX_EXAMPLES,
                "deterministic": True,
                "database": "none",
            },
        }
    ),
).exclude(path="/mcp")


# Every write must say Content-Type: application/json, body or not (http/guard.py; the document's
# description says so, as OpenAPI ignores a Content-Type header parameter). Schemathesis sends none
# without a body, so a body-less write gets it here, as every client of this API sends it.
WRITE_METHODS = {"POST", "PUT", "PATCH", "DELETE"}


@pytest.mark.slow
@schema.parametrize()
def test_no_operation_breaks_its_contract_under_fuzzing(case: schemathesis.Case, daemon_url: str) -> None:
    headers = case.headers or {}
    if (
        case.method.upper() in WRITE_METHODS
        and case.body is NOT_SET
        and "content-type" not in {name.lower() for name in headers}
    ):
        case.headers = {**headers, "Content-Type": "application/json"}
    started = time.monotonic()
    case.call_and_validate(
        base_url=daemon_url,
        excluded_checks=[schemathesis.checks.positive_data_acceptance],
        additional_checks=[errors_are_json_objects, accepts_schema_valid_data],
        timeout=MOST_SECONDS,
    )
    # Long work is started and followed, never done inside a request (http/time_bounds.py).
    assert time.monotonic() - started < MOST_SECONDS, (
        f"{case.method} {case.path} took longer than {MOST_SECONDS} s"
    )
