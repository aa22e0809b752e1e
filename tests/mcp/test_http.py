"""MCP over streamable HTTP at /mcp on a real daemon (loopback port, real store, real MiniLM),
driven by the official SDK's own client, in both protocol eras it speaks."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from aiohttp.test_utils import TestClient
from mcp.shared.exceptions import MCPError

from memory_cortex.app import create_app
from memory_cortex.keys import ACCESS_TRACKER, MCP_HTTP
from tests.conftest import make_config
from tests.helpers import store
from tests.mcp.helpers import TOOLS, error_text, mcp_client, mcp_url, structured

# "auto" negotiates the 2026 protocol (server/discover, no session); "legacy" is the initialize
# handshake that the desktop clients of 2025 speak.
MODES = ["auto", "legacy"]


async def test_the_sdk_loads_on_the_first_mcp_request_not_at_start_up(client: TestClient) -> None:
    """A daemon nobody talks MCP to does not pay the SDK's resident memory (~35 MB)."""
    endpoint = client.app[MCP_HTTP]
    assert not endpoint.loaded
    async with mcp_client(mcp_url(client), mode="auto") as mcp:
        assert {tool.name for tool in (await mcp.list_tools()).tools} == TOOLS
    assert endpoint.loaded


@pytest.mark.parametrize("mode", MODES)
async def test_the_sdk_client_lists_the_tools_and_the_profile_resource(client: TestClient, mode: str) -> None:
    async with mcp_client(mcp_url(client), mode=mode) as mcp:
        tools = {tool.name: tool for tool in (await mcp.list_tools()).tools}
        resources = (await mcp.list_resources()).resources
    assert set(tools) == TOOLS
    for tool in tools.values():
        assert tool.description and len(tool.description) > 200, tool.name  # written for a model
        assert tool.output_schema is not None, tool.name
    assert tools["search_memory"].annotations.read_only_hint is True
    assert tools["forget"].annotations.destructive_hint is True
    # No tool lets the model choose whose memories it reads or writes.
    assert all("user" not in name for tool in tools.values() for name in tool.input_schema["properties"])
    assert [(str(r.uri), r.mime_type) for r in resources] == [("memory://profile", "text/markdown")]
    # It takes no requester, so it says whom it is for (issue 34: it ignores scopes).
    assert "Owner-only" in (resources[0].description or "")


async def test_tool_schemas_carry_the_configured_search_limits(
    aiohttp_client: Any, tmp_path: Any, minilm: Any
) -> None:
    config = make_config(tmp_path, search={"max_limit": 50, "default_limit": 7})
    client = await aiohttp_client(create_app(config, embedder=minilm))
    async with mcp_client(mcp_url(client)) as mcp:
        tools = {tool.name: tool for tool in (await mcp.list_tools()).tools}
    for name in ("search_memory", "search_debug"):
        limit = tools[name].input_schema["properties"]["limit"]
        assert (limit["minimum"], limit["maximum"], limit["default"]) == (1, 50, 7)


@pytest.mark.parametrize("mode", MODES)
async def test_every_tool_works_against_the_real_store(client: TestClient, mode: str) -> None:
    async with mcp_client(mcp_url(client), mode=mode) as mcp:
        cello = structured(
            await mcp.call_tool(
                "remember",
                {
                    "fact": "The user plays the cello in an amateur orchestra.",
                    "topic": "music",
                    "importance": 7,
                    "category": "skill",
                },
            )
        )
        assert cello["action"] == "created" and cello["layer"] == "core" and cello["superseded"] is None
        again = structured(
            await mcp.call_tool("remember", {"fact": "The user plays the cello in an amateur orchestra."})
        )
        assert (again["action"], again["id"]) == ("merged", cello["id"])  # dedup applies
        porto = structured(
            await mcp.call_tool("remember", {"fact": "The user lives in Porto.", "topic": "home"})
        )

        found = structured(
            await mcp.call_tool("search_memory", {"query": "which instrument does the user play"})
        )
        assert found["results"][0]["id"] == cello["id"]
        assert found["results"][0]["fact"] == "The user plays the cello in an amateur orchestra."
        assert found["count"] == len(found["results"])

        debug = structured(await mcp.call_tool("search_debug", {"query": "cello orchestra", "limit": 5}))
        top = debug["results"][0]
        assert top["id"] == cello["id"] and top["source"] == "fts5+vector"
        assert 0 < top["fts_score"] <= 1 and 0 < top["vector_score"] <= 1
        assert top["relevance"] == pytest.approx(0.4 * top["fts_score"] + 0.6 * top["vector_score"], abs=1e-5)
        assert top["score"] == top["relevance"]  # ranking is off by default
        assert debug["fts_match"] == '"cello" OR "orchestra"'
        assert debug["vector_used"] is True
        assert set(debug["timings_ms"]) >= {"total"} and debug["timings_ms"]["total"] > 0

        recalled = structured(await mcp.call_tool("recall", {"query": "where does the user live?"}))
        # No LLM in the test config: the answer is the facts themselves (a list, not a failure).
        assert recalled["answer_kind"] == "list" and recalled["degraded"] is False
        assert "Porto" in recalled["answer"]
        assert recalled["memories_used"] >= 1

        profile = (await mcp.read_resource("memory://profile")).contents[0]
        assert profile.mime_type == "text/markdown"
        assert "## Skills" in profile.text and "cello" in profile.text and "Porto" in profile.text

        forgotten = structured(await mcp.call_tool("forget", {"memory_id": porto["id"]}))
        assert forgotten == {"id": porto["id"], "action": "archived"}
        after = structured(await mcp.call_tool("search_memory", {"query": "where does the user live"}))
        assert porto["id"] not in [hit["id"] for hit in after["results"]]
        archived = structured(
            await mcp.call_tool("search_memory", {"query": "where does the user live", "layers": ["archive"]})
        )
        assert [hit["id"] for hit in archived["results"]] == [porto["id"]]
        assert "Porto" not in (await mcp.read_resource("memory://profile")).contents[0].text

        deleted = structured(await mcp.call_tool("forget", {"memory_id": porto["id"], "hard_delete": True}))
        assert deleted["action"] == "deleted"
    assert (await client.get(f"/memories/{porto['id']}")).status == 404


async def test_search_and_recall_count_as_reads_but_search_debug_does_not(client: TestClient) -> None:
    (memory,) = await store(client, {"fact": "The user drinks green tea every morning."})
    tracker = client.app[ACCESS_TRACKER]
    async with mcp_client(mcp_url(client)) as mcp:
        structured(await mcp.call_tool("search_debug", {"query": "green tea"}))
        await tracker.flush()
        assert (await (await client.get(f"/memories/{memory['id']}")).json())["access_count"] == 0
        structured(await mcp.call_tool("search_memory", {"query": "green tea"}))
        structured(await mcp.call_tool("recall", {"query": "what does the user drink?"}))
    await tracker.flush()
    assert (await (await client.get(f"/memories/{memory['id']}")).json())["access_count"] == 2


async def test_a_correction_supersedes_and_forget_can_name_the_replacement(client: TestClient) -> None:
    async with mcp_client(mcp_url(client)) as mcp:
        old = structured(await mcp.call_tool("remember", {"fact": "The user's favourite colour is green."}))
        new = structured(
            await mcp.call_tool(
                "remember", {"fact": "The user's favourite colour is blue.", "category": "correction"}
            )
        )
        assert new["action"] == "created" and new["superseded"] == old["id"]

        city = structured(await mcp.call_tool("remember", {"fact": "The user works in Lyon."}))
        moved = structured(await mcp.call_tool("remember", {"fact": "The user now works from Berlin."}))
        replaced = structured(
            await mcp.call_tool("forget", {"memory_id": city["id"], "superseded_by": moved["id"]})
        )
        assert replaced == {"id": city["id"], "action": "superseded"}
        profile = (await mcp.read_resource("memory://profile")).contents[0].text
    assert "blue" in profile and "green" not in profile and "Lyon" not in profile
    stored = await (await client.get(f"/memories/{city['id']}")).json()
    assert stored["superseded_by"] == moved["id"]


# Each call is wrong in one way; the SDK must answer an MCP error, and the daemon keep serving.
BAD_CALLS = [
    ("search_memory", {}, "query"),
    ("search_memory", {"query": ""}, "query"),
    ("search_memory", {"query": "tea", "limit": 0}, "limit"),
    ("search_memory", {"query": "tea", "limit": 201}, "limit"),
    ("search_memory", {"query": "tea", "layers": ["attic"]}, "layers"),
    ("search_debug", {"query": "tea", "mode": "psychic"}, "mode"),
    ("remember", {"fact": "   "}, "blank"),
    ("remember", {"fact": "x" * 20001}, "fact"),
    ("remember", {"fact": "The user is tall.", "importance": 11}, "importance"),
    ("remember", {"fact": "The user is tall.", "category": "gossip"}, "category"),
    ("remember", {"fact": ["a", "list"]}, "fact"),
    ("forget", {"memory_id": "seven"}, "memory_id"),
    ("forget", {"memory_id": 0}, "memory_id"),
    ("forget", {"memory_id": 2**63}, "memory_id"),
    ("forget", {"memory_id": 424242}, "not found"),
    ("forget", {"memory_id": 1, "superseded_by": 2, "hard_delete": True}, "not both"),
    ("recall", {"query": 42}, "query"),
    ("no_such_tool", {}, "Unknown tool"),
]


@pytest.mark.parametrize(("tool", "arguments", "says"), BAD_CALLS, ids=[f"{t}-{s}" for t, _, s in BAD_CALLS])
async def test_bad_arguments_are_mcp_errors_not_crashes(
    client: TestClient, tool: str, arguments: dict[str, Any], says: str
) -> None:
    await store(client, {"fact": "The user is tall."}, {"fact": "The user likes tea."})
    async with mcp_client(mcp_url(client)) as mcp:
        result = await mcp.call_tool(tool, arguments)
        assert result.is_error is True
        text = error_text(result)
        assert says in text, text
        assert "Traceback" not in text
        # The same connection still works.
        assert structured(await mcp.call_tool("search_memory", {"query": "tea"}))["count"] >= 1


async def test_an_unknown_resource_is_a_protocol_error(client: TestClient) -> None:
    async with mcp_client(mcp_url(client)) as mcp:
        with pytest.raises(MCPError) as raised:
            await mcp.read_resource("memory://someone-else")
        assert raised.value.code == -32602
        assert (await mcp.read_resource("memory://profile")).contents


async def test_the_acting_user_comes_from_config_never_from_the_model(
    aiohttp_client: Any, tmp_path: Any, minilm: Any
) -> None:
    client = await aiohttp_client(
        create_app(make_config(tmp_path, mcp={"user_id": "alice"}), embedder=minilm)
    )
    (bobs,) = await store(client, {"user_id": "bob", "fact": "Bob's bank PIN hint is his cat's birthday."})
    async with mcp_client(mcp_url(client)) as mcp:
        mine = structured(await mcp.call_tool("remember", {"fact": "Alice keeps bees on her balcony."}))
        # An argument naming another user is not a parameter of any tool: it changes nothing.
        result = await mcp.call_tool("search_memory", {"query": "bank PIN cat birthday", "user_id": "bob"})
        found = [] if result.is_error else structured(result)["results"]
        assert bobs["id"] not in [hit["id"] for hit in found]
        denied = await mcp.call_tool("forget", {"memory_id": bobs["id"], "hard_delete": True})
        assert denied.is_error and "not found" in error_text(denied)
        profile = (await mcp.read_resource("memory://profile")).contents[0].text
    assert profile.startswith("# Profile of alice") and "bees" in profile and "PIN" not in profile
    alice = await (await client.get(f"/memories/{mine['id']}")).json()
    assert (alice["user_id"], alice["source_channel"]) == ("alice", "mcp")
    assert (await client.get(f"/memories/{bobs['id']}")).status == 200  # still there


async def test_the_api_token_is_required_on_mcp(aiohttp_client: Any, tmp_path: Any, minilm: Any) -> None:
    config = make_config(tmp_path, server={"api_token": "s3cret"})
    client = await aiohttp_client(create_app(config, embedder=minilm))
    url = mcp_url(client)
    message = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    for headers in ({}, {"Authorization": "Bearer wrong"}):
        response = await client.post("/mcp", json=message, headers=headers)
        assert response.status == 401
        assert (await response.json())["error"]["code"] == "unauthorized"
    with pytest.raises(ExceptionGroup) as refused:
        async with mcp_client(url) as mcp:
            await mcp.list_tools()
    assert refused.group_contains(MCPError, depth=None)
    async with mcp_client(url, headers={"Authorization": "Bearer s3cret"}) as mcp:
        assert {tool.name for tool in (await mcp.list_tools()).tools} == TOOLS


async def test_only_the_daemons_own_hosts_and_origins_reach_mcp_token_or_not(
    aiohttp_client: Any, tmp_path: Any, minilm: Any
) -> None:
    """DNS rebinding and cross-site requests: a page in the user's browser must not drive MCP."""
    message = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    config = make_config(tmp_path, server={"cors_origins": ["http://localhost:6274"]})
    client = await aiohttp_client(create_app(config, embedder=minilm))
    rebound = await client.post("/mcp", json=message, headers={"Host": "attacker.example:8300"})
    assert rebound.status == 421
    foreign = await client.post("/mcp", json=message, headers={"Origin": "http://attacker.example"})
    assert foreign.status == 403
    other_local_page = await client.post("/mcp", json=message, headers={"Origin": "http://localhost:3000"})
    assert other_local_page.status == 403
    inspector = await client.post("/mcp", json=message, headers={"Origin": "http://localhost:6274"})
    assert inspector.status == 200  # listed in server.cors_origins

    guarded = make_config(
        tmp_path / "guarded", server={"api_token": "s3cret", "allowed_hosts": ["memory.example"]}
    )
    client = await aiohttp_client(create_app(guarded, embedder=minilm))
    token = {"Authorization": "Bearer s3cret"}
    proxied = await client.post("/mcp", json=message, headers={"Host": "memory.example", **token})
    assert proxied.status == 200  # a reverse proxy's name, listed in server.allowed_hosts
    rebound = await client.post("/mcp", json=message, headers={"Host": "attacker.example", **token})
    assert rebound.status == 421  # the token does not switch the guard off


async def test_the_endpoint_is_stateless_post_only(client: TestClient) -> None:
    for method in ("GET", "DELETE"):
        response = await client.request(method, "/mcp")
        assert response.status == 405
        assert response.headers["Allow"] == "POST"
        assert (await response.json())["error"]["code"] == "method_not_allowed"
    notification = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    assert (await client.post("/mcp", json=notification)).status == 202


async def test_an_oversized_body_gets_the_api_413(aiohttp_client: Any, tmp_path: Any, minilm: Any) -> None:
    config = make_config(tmp_path, server={"max_body_bytes": 1024})
    client = await aiohttp_client(create_app(config, embedder=minilm))
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"padding": "x" * 2000}}
    response = await client.post("/mcp", json=body)
    assert response.status == 413
    assert (await response.json())["error"]["code"] == "payload_too_large"


async def test_mcp_can_be_switched_off(aiohttp_client: Any, tmp_path: Any, minilm: Any) -> None:
    client = await aiohttp_client(create_app(make_config(tmp_path, mcp={"enabled": False}), embedder=minilm))
    response = await client.post("/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
    assert response.status == 404
    assert (await response.json())["error"]["code"] == "mcp_disabled"
    assert (await client.get("/health")).status == 200


async def test_the_profile_holds_the_most_important_core_memories_only(
    aiohttp_client: Any, tmp_path: Any, minilm: Any
) -> None:
    config = make_config(tmp_path, mcp={"profile_max_facts": 2})
    client = await aiohttp_client(create_app(config, embedder=minilm))
    await store(
        client,
        {"fact": "The user owns a red bicycle.", "importance": 3},
        {"fact": "The user's name is Sam.", "importance": 9, "category": "identity"},
        {"fact": "The user is allergic to peanuts.", "importance": 6},
        {"fact": "The user is reading Dune this week.", "importance": 10, "layer": "working"},
        {"fact": "Robin supports Porto FC.", "importance": 10, "user_id": "robin"},
        dedup=False,
    )
    async with mcp_client(mcp_url(client)) as mcp:
        page = (await mcp.read_resource("memory://profile")).contents[0].text
    assert "Sam" in page and "peanuts" in page
    assert "bicycle" not in page  # past the limit: the least important goes
    assert "Dune" not in page and "Robin" not in page  # working layer, another user
    assert page.index("Sam") < page.index("peanuts")


async def test_a_long_query_is_cut_not_refused_as_on_the_api(client: TestClient) -> None:
    (memory,) = await store(client, {"fact": "The user likes green tea."})
    async with mcp_client(mcp_url(client)) as mcp:
        found = structured(await mcp.call_tool("search_memory", {"query": "green tea " + "x " * 5000}))
    assert [hit["id"] for hit in found["results"]] == [memory["id"]]


async def test_search_memory_says_what_time_a_memory_is_about(client: TestClient) -> None:
    dated, undated = await store(
        client,
        {"fact": "The user ran the Lisbon half marathon.", "occurred_at": "2023-03-19T09:00:00Z"},
        {"fact": "The user runs every Sunday morning."},
    )
    async with mcp_client(mcp_url(client)) as mcp:
        found = structured(await mcp.call_tool("search_memory", {"query": "running a marathon"}))
    about = {hit["id"]: (hit["about_time"], hit["created_at"]) for hit in found["results"]}
    assert about[dated["id"]][0] == "2023-03-19T09:00:00.000Z"
    assert about[undated["id"]][0] == about[undated["id"]][1]  # no time given: when it was stored


async def test_search_memory_and_recall_choose_facts_turns_or_both(
    aiohttp_client: Any, tmp_path: Any, minilm: Any
) -> None:
    client = await aiohttp_client(
        create_app(make_config(tmp_path, ingest={"debounce_s": 0}), embedder=minilm)
    )
    said = [{"role": "user", "content": "Remember that my cello is called Bartholomew.", "name": "Sam"}]
    assert (await client.post("/ingest", json={"messages": said, "debounce": False})).status == 202
    for _ in range(200):
        if (await (await client.get("/stats")).json())["ingest"]["done"]:
            break
        await asyncio.sleep(0.05)
    async with mcp_client(mcp_url(client)) as mcp:
        both = structured(await mcp.call_tool("search_memory", {"query": "cello Bartholomew"}))
        assert {hit["kind"] for hit in both["results"]} == {"fact", "turn"}
        turns = structured(
            await mcp.call_tool("search_memory", {"query": "cello Bartholomew", "kinds": ["turn"]})
        )
        assert [hit["fact"] for hit in turns["results"]] == [
            "Sam: Remember that my cello is called Bartholomew."
        ]
        recalled = structured(await mcp.call_tool("recall", {"query": "cello name?", "kinds": ["fact"]}))
        assert recalled["memories_used"] == 1 and "Sam:" not in recalled["answer"]


async def test_tools_show_scopes_and_answer_only_what_the_requester_may_see(client: TestClient) -> None:
    """The same rule as HTTP (issue 22): a group requester never gets a private memory, an agent
    never another agent's; remember stores the scope it is given."""
    [private] = await store(client, {"fact": "The user is allergic to peanuts.", "user_id": "default"})
    [work] = await store(
        client,
        {"fact": "The user's peanut-free office is on floor 3.", "user_id": "default", "agent_id": "work"},
    )
    async with mcp_client(mcp_url(client)) as mcp:
        shared = structured(
            await mcp.call_tool(
                "remember",
                {"fact": "The user shares peanut snacks with the book club.", "visibility": "shared"},
            )
        )

        async def found(**requester: Any) -> set[int]:
            result = structured(await mcp.call_tool("search_memory", {"query": "peanuts", **requester}))
            return {hit["id"] for hit in result["results"]}

        everything = structured(await mcp.call_tool("search_memory", {"query": "peanuts"}))
        scopes = {hit["id"]: (hit["visibility"], hit["agent_id"]) for hit in everything["results"]}
        assert scopes == {
            private["id"]: ("private", None),
            work["id"]: ("private", "work"),
            shared["id"]: ("shared", None),
        }
        assert await found(session_kind="group", channel="book-club") == {shared["id"]}
        assert await found(agent_id="home") == {private["id"], shared["id"]}
        assert await found(agent_id="work") == {private["id"], work["id"], shared["id"]}
        debug = structured(await mcp.call_tool("search_debug", {"query": "peanuts", "session_kind": "group"}))
        assert {hit["id"] for hit in debug["results"]} == {shared["id"]}
        recalled = structured(await mcp.call_tool("recall", {"query": "peanuts", "session_kind": "group"}))
        assert "allergic" not in recalled["answer"] and "floor 3" not in recalled["answer"]
