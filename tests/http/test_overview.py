"""The dashboard's overview (GET /stats/overview), the memory list by date (GET /memories?order=created)
and an LLM state that tells how its last real call ended."""

from __future__ import annotations

import asyncio
import time
from datetime import UTC, datetime, timedelta

from aiohttp.test_utils import TestClient

from memory_cortex.http.stats import llm_state
from memory_cortex.models.llm import LLMHealthTracking
from tests.helpers import search, store
from tests.mcp.helpers import mcp_client, mcp_url, structured


def _day(days_ago: int) -> str:
    return (datetime.now(UTC) - timedelta(days=days_ago)).date().isoformat()


def _at(days_ago: int, hour: int = 12) -> str:
    return f"{_day(days_ago)}T{hour:02d}:00:00Z"


async def _ingest_and_wait(client: TestClient, text: str, session: str) -> None:
    body = {
        "messages": [{"role": "user", "content": text}],
        "session_id": session,
        "user_id": "ann",
        "debounce": False,
    }
    response = await client.post("/ingest", json=body)
    assert response.status == 202, await response.text()
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        jobs = (await (await client.get("/ingest/jobs", params={"status": "done"})).json())["jobs"]
        if any(job["session_id"] == session for job in jobs):
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"the extraction of {session} did not finish")


async def test_overview_counts_memories_per_day_by_layer_kind_and_method(client: TestClient) -> None:
    await store(
        client,
        {
            "user_id": "ann",
            "fact": "Ann keeps bees.",
            "layer": "core",
            "category": "fact",
            "created_at": _at(3),
        },
        {"user_id": "ann", "fact": "Ann plays the cello.", "layer": "working", "created_at": _at(3)},
        {"user_id": "ann", "fact": "Ann lived in Lisbon.", "layer": "archive", "created_at": _at(40)},
        {"user_id": "ann", "fact": "A chat about bees.", "category": "session_summary", "created_at": _at(1)},
        {"user_id": "bob", "fact": "Bob is not Ann.", "created_at": _at(2)},
        dedup=False,
    )
    await _ingest_and_wait(client, "My name is Ann and I love hiking in the Alps.", "chat-1")
    for query in ("bees", "cello"):
        await search(client, query, user_id="ann")

    response = await client.get("/stats/overview", params={"user_id": "ann", "days": "7"})
    assert response.status == 200, await response.text()
    overview = await response.json()
    days = {day["day"]: day for day in overview["days"]}
    assert list(days) == [_day(offset) for offset in range(6, -1, -1)]  # every day, oldest first
    # Running totals: the archived memory from 40 days ago is the baseline of the window.
    assert days[_day(6)]["live_by_layer"] == {"working": 0, "core": 0, "archive": 1}
    assert days[_day(3)]["live_by_layer"] == {"working": 1, "core": 1, "archive": 1}
    assert days[_day(1)]["live_by_kind"] == {"fact": 3, "turn": 0, "summary": 1}
    today = days[_day(0)]
    assert today["live_by_kind"]["turn"] == 1  # the message, kept as said
    assert today["live_by_kind"]["fact"] > 3  # and what the rules extracted from it
    assert today["facts_by_method"]["rules"] >= 1
    assert days[_day(3)]["facts_by_method"]["direct"] == 2
    assert days[_day(1)]["facts_by_method"]["summary"] == 1
    assert overview["methods"][: len(overview["methods"])] == sorted(
        overview["methods"], key=["llm", "llm+rules", "rules", "summary", "direct"].index
    )
    assert today["jobs_received"] == today["jobs_done"] == 1
    assert today["extraction_p50_ms"] is not None and today["backlog"] == 0 == overview["backlog_now"]
    assert {"name": "session_summary", "count": 1} in overview["categories"]
    assert sum(point["count"] for point in overview["search"]) == 2  # bob's memory is not counted
    assert all(point["p50_ms"] <= point["p95_ms"] for point in overview["search"])
    assert overview["search_kept_minutes"] == 24 * 60


async def _overview(client: TestClient, **requester: str) -> dict:
    response = await client.get("/stats/overview", params={"user_id": "ann", "days": "7", **requester})
    assert response.status == 200, await response.text()
    return await response.json()


def _topics(overview: dict) -> set[str]:
    return {topic["name"] for topic in overview["topics"]}


def _facts_today(overview: dict) -> tuple[int, int]:
    """Live facts at today's end, and facts made today by any method."""
    today = overview["days"][-1]
    return today["live_by_kind"]["fact"], sum(today["facts_by_method"].values())


async def test_the_overview_counts_only_what_the_requester_may_see(client: TestClient) -> None:
    await store(
        client,
        {"user_id": "ann", "fact": "Ann sees a cardiologist.", "topic": "heart", "source_channel": "dm"},
        {
            "user_id": "ann",
            "fact": "Ann sings in the choir.",
            "topic": "choir",
            "visibility": "shared",
            "source_channel": "telegram:group:-1",
        },
        {"user_id": "ann", "fact": "Ann's recipes, kept by bot B.", "topic": "recipes", "agent_id": "bot-b"},
        {
            "user_id": "ann",
            "fact": "Ann's calendar, kept by bot A.",
            "topic": "calendar",
            "agent_id": "bot-a",
        },
        dedup=False,
    )
    owner = await _overview(client)
    assert _topics(owner) == {"heart", "choir", "recipes", "calendar"} and _facts_today(owner) == (4, 4)

    # A group conversation: only what was shared there; the private DM fact is not even a topic.
    group = await _overview(client, session_kind="group", channel="telegram:group:-1")
    assert _topics(group) == {"choir"} and _facts_today(group) == (1, 1)
    assert {category["count"] for category in group["categories"]} == {1}
    # An agent: every agent's memories and its own, never another agent's.
    agent = await _overview(client, agent_id="bot-a")
    assert _topics(agent) == {"heart", "choir", "calendar"} and _facts_today(agent) == (3, 3)
    # The daemon's own work is not the requester's: the answer says which numbers are whole-daemon.
    assert {"backlog_now", "lifecycle_runs", "search", "jobs_received", "backlog"} <= set(
        group["daemon_wide"]
    )


async def test_searches_through_mcp_count_in_the_overview(client: TestClient) -> None:
    await store(client, {"fact": "The user plays the cello in an amateur orchestra."})
    async with mcp_client(mcp_url(client)) as mcp:
        structured(await mcp.call_tool("search_memory", {"query": "which instrument does the user play"}))
    await search(client, "cello")
    overview = await (await client.get("/stats/overview", params={"days": "1"})).json()
    assert sum(point["count"] for point in overview["search"]) == 2  # the MCP search and the HTTP one


async def test_overview_rejects_a_window_out_of_range(client: TestClient) -> None:
    response = await client.get("/stats/overview", params={"days": "0"})
    assert response.status == 400


async def test_memory_list_by_created_is_newest_first_with_a_stable_cursor(client: TestClient) -> None:
    stored = await store(
        client,
        {"fact": "Told last week.", "created_at": _at(7)},
        {"fact": "Told today.", "created_at": _at(0, 1)},
        {"fact": "Imported from last year.", "created_at": _at(365)},
        {"fact": "Told yesterday.", "created_at": _at(1)},
        {"fact": "Also yesterday, same second.", "created_at": _at(1)},
        dedup=False,
    )
    by_text = {memory["fact"]: memory["id"] for memory in stored}
    shown: list[str] = []
    cursor = None
    while True:
        params = {"order": "created", "limit": "2", **({"before_id": str(cursor)} if cursor else {})}
        page = await (await client.get("/memories", params=params)).json()
        shown += [memory["fact"] for memory in page["memories"]]
        cursor = page["next_before_id"]
        if cursor is None:
            break
    assert shown == [
        "Told today.",
        "Also yesterday, same second.",  # same created_at: the later id first
        "Told yesterday.",
        "Told last week.",
        "Imported from last year.",
    ]
    by_id = await (await client.get("/memories")).json()  # the default order is still by id
    assert [memory["id"] for memory in by_id["memories"]] == sorted(by_text.values(), reverse=True)


def test_a_timeout_after_a_success_is_a_failed_last_call() -> None:
    model = LLMHealthTracking("gemma")
    assert llm_state(model.health()).last_call is None  # never called: neither ok nor failed
    model._answered(0.4)
    assert llm_state(model.health()).last_call == "ok"
    model._failed("no reply within 10.0s", "timeout")
    state = llm_state(model.health())
    assert state.last_call == "failed" and state.last_error == "no reply within 10.0s"
    model._answered(0.5)
    state = llm_state(model.health())
    assert (
        state.last_call == "ok" and state.last_ok_at is not None and state.last_ok_at >= state.last_error_at
    )
