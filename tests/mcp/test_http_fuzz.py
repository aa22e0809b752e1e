"""Properties of /mcp under generated input, against a real daemon with the real model.

The schemathesis run (tests/http/test_fuzz_openapi.py) leaves /mcp out: its bodies and errors are
JSON-RPC, answered by the SDK, not this API's contract. Here hypothesis checks that

- whatever JSON arrives (JSON-RPC-shaped messages for every MCP method, tool calls with arguments of
  any JSON type, any protocol version header, bare JSON values) the answer is never a 5xx, and
- every tool call whose arguments pass the tool's schema runs: search_memory, search_debug, recall
  and remember always succeed, forget may only refuse an id (not found, not both, itself).

A tool that raised something unexpected shows as an ``isError`` result whose text is the SDK's bare
"Error executing tool NAME" (an anticipated error adds ": why"): that fails both properties, as a
500 would for the REST API.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import pytest
import requests
from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st
from mcp.shared.inbound import NAME_BEARING_METHODS, encode_header_value

from memory_cortex.app import create_app
from memory_cortex.models.facts import CATEGORIES
from tests.conftest import make_config
from tests.helpers import serve_in_thread
from tests.mcp.helpers import TOOLS

JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=30),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=12), children, max_size=4)
    ),
    max_leaves=10,
)
METHODS = st.sampled_from(
    [
        "initialize",
        "notifications/initialized",
        "ping",
        "server/discover",
        "tools/list",
        "tools/call",
        "resources/list",
        "resources/read",
        "resources/templates/list",
        "prompts/list",
        "completion/complete",
        "logging/setLevel",
    ]
) | st.text(max_size=30)
ARGUMENT_NAMES = st.sampled_from(
    "query limit layers mode fact topic importance category memory_id superseded_by hard_delete user_id".split()
)
# Calls that pass each tool's validation, so they reach the services (where an unexpected error
# would be a crash); the memory ids run over the few the run itself creates.
TEXT = st.text(min_size=1, max_size=60).filter(str.strip)
LAYER_LISTS = st.lists(st.sampled_from(["core", "working", "archive"]), max_size=3) | st.none()
VALID_ARGUMENTS = {
    "search_memory": st.fixed_dictionaries(
        {"query": TEXT}, optional={"limit": st.integers(min_value=1, max_value=200), "layers": LAYER_LISTS}
    ),
    "search_debug": st.fixed_dictionaries(
        {"query": TEXT},
        optional={
            "limit": st.integers(min_value=1, max_value=200),
            "layers": LAYER_LISTS,
            "mode": st.sampled_from(["hybrid", "fts", "vector"]),
        },
    ),
    "remember": st.fixed_dictionaries(
        {"fact": TEXT},
        optional={
            "topic": st.text(max_size=30),
            "importance": st.integers(min_value=1, max_value=10),
            "category": st.sampled_from(CATEGORIES),
        },
    ),
    "forget": st.fixed_dictionaries(
        {"memory_id": st.integers(min_value=1, max_value=30)},
        optional={"superseded_by": st.integers(min_value=1, max_value=30), "hard_delete": st.just(True)},
    ),
    "recall": st.fixed_dictionaries({"query": TEXT}),
}
VALID_CALLS = st.one_of(
    *(
        st.fixed_dictionaries({"name": st.just(name), "arguments": args})
        for name, args in VALID_ARGUMENTS.items()
    )
)
# And calls of any shape: unknown tools, missing, extra and mistyped arguments.
ANY_CALLS = st.fixed_dictionaries(
    {
        "name": st.sampled_from(sorted(TOOLS)) | st.text(max_size=12),
        "arguments": st.dictionaries(ARGUMENT_NAMES, JSON_VALUES, max_size=5),
    }
)
TOOL_CALLS = st.one_of(VALID_CALLS, VALID_CALLS, ANY_CALLS)
RESOURCE_READS = st.fixed_dictionaries({"uri": st.sampled_from(["memory://profile"]) | st.text(max_size=30)})
IDS = st.integers(min_value=-(2**40), max_value=2**40) | st.text(max_size=8)
# Mostly well-formed tool calls (the arguments are where the tools can break), then other requests,
# then anything: malformed messages, notifications, bare JSON values.
TOOL_REQUESTS = st.fixed_dictionaries(
    {"jsonrpc": st.just("2.0"), "id": IDS, "method": st.just("tools/call"), "params": TOOL_CALLS}
)
OTHER_REQUESTS = st.fixed_dictionaries(
    {"jsonrpc": st.just("2.0"), "id": IDS, "method": METHODS},
    optional={"params": RESOURCE_READS | st.dictionaries(st.text(max_size=12), JSON_VALUES, max_size=4)},
)
ANY_MESSAGE = st.fixed_dictionaries(
    {"jsonrpc": st.just("2.0") | JSON_VALUES, "method": METHODS | JSON_VALUES},
    optional={"id": IDS | JSON_VALUES, "params": TOOL_CALLS | JSON_VALUES},
)
BODIES = st.one_of(
    TOOL_REQUESTS, TOOL_REQUESTS, TOOL_REQUESTS, TOOL_REQUESTS, OTHER_REQUESTS, ANY_MESSAGE, JSON_VALUES
)
# No header and the 2025 versions take the handshake-era path; 2026-07-28 the per-request one, whose
# requests carry their protocol version and client capabilities in params._meta (added below).
MODERN = "2026-07-28"
VERSIONS = st.sampled_from([None, None, "2025-06-18", "2025-11-25", MODERN, MODERN, "nonsense"])
MODERN_META = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientCapabilities": {},
}

# The SDK's text for a tool that raised an exception it did not expect (a ToolError adds ": why").
CRASHED_TOOL = re.compile(r"Error executing tool [^:]*")


@pytest.fixture(scope="module")
def mcp_url(tmp_path_factory: pytest.TempPathFactory, minilm: Any) -> Iterator[str]:
    config = make_config(tmp_path_factory.mktemp("mcp-fuzz"))
    with serve_in_thread(create_app(config, embedder=minilm)) as url:
        yield f"{url}/mcp"


# Deterministic (a fixed seed, no example database): a failure reproduces on the next run.
SETTINGS = settings(
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}


def post(url: str, body: Any, headers: dict[str, str]) -> dict[str, Any] | None:
    """POST one message; the JSON-RPC reply, or None for an accepted notification."""
    response = requests.post(url, data=json.dumps(body), headers=headers, timeout=60)
    assert response.status_code < 500, (response.status_code, response.text[:500])
    if response.status_code == 202 or not response.content:
        return None
    reply = response.json()
    assert isinstance(reply, dict) and reply.get("jsonrpc") == "2.0", reply
    result = reply.get("result")
    if isinstance(result, dict) and result.get("isError"):
        assert not CRASHED_TOOL.fullmatch(error_text(result)), error_text(result)
    return reply


def error_text(result: dict[str, Any]) -> str:
    return " ".join(block.get("text", "") for block in result.get("content", []))


@seed(20260728)
@settings(SETTINGS, max_examples=150)
@given(body=BODIES, version=VERSIONS)
def test_no_message_gets_a_5xx_or_crashes_a_tool(mcp_url: str, body: Any, version: str | None) -> None:
    headers = dict(HEADERS)
    if version is not None:
        headers["MCP-Protocol-Version"] = version
    if version == MODERN and isinstance(body, dict) and isinstance(body.get("params"), dict):
        # What the SDK's client sends on the per-request path: the envelope and routing headers.
        params = body["params"]
        params.setdefault("_meta", MODERN_META)
        method = body.get("method")
        if isinstance(method, str):
            headers["Mcp-Method"] = encode_header_value(method)
            name = params.get(NAME_BEARING_METHODS.get(method, ""))
            if isinstance(name, str):
                headers["Mcp-Name"] = encode_header_value(name)
    post(mcp_url, body, headers)


# What forget may answer to a well-formed call: the id names no memory of this user, or the call
# asks for two things at once, or names the memory as its own replacement.
FORGET_REFUSALS = ("not found", "not both", "supersede itself", "superseded_by must name")


@seed(20260728)
@settings(SETTINGS, max_examples=120)
@given(call=VALID_CALLS)
def test_every_well_formed_tool_call_runs(mcp_url: str, call: dict[str, Any]) -> None:
    reply = post(mcp_url, {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": call}, HEADERS)
    assert reply is not None and "result" in reply, reply
    result = reply["result"]
    if call["name"] == "forget" and result.get("isError"):
        assert any(refusal in error_text(result) for refusal in FORGET_REFUSALS), error_text(result)
        return
    assert not result.get("isError"), error_text(result)
    assert isinstance(result.get("structuredContent"), dict)
