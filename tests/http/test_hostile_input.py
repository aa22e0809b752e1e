"""Input that parses but cannot be used is a 400, never a 500, and never journaled or stored."""

from __future__ import annotations

from typing import Any

import pytest
from aiohttp.test_utils import TestClient

from tests.helpers import run_lifecycle

JSON = {"Content-Type": "application/json"}


async def post_raw(client: TestClient, path: str, body: str | bytes) -> Any:
    return await client.post(path, data=body if isinstance(body, bytes) else body.encode(), headers=JSON)


async def assert_400(response: Any) -> str:
    assert response.status == 400, await response.text()
    body = await response.json()
    assert set(body) == {"error"} and body["error"]["message"]
    return body["error"]["message"]


@pytest.mark.parametrize("path", ["/memories", "/hybrid-search", "/ingest", "/context", "/import"])
async def test_json_nested_deeper_than_any_body_needs_is_a_400(client: TestClient, path: str) -> None:
    for depth in (70, 5000):  # past the limit, and past Python's own recursion limit
        body = '{"query": "x", "fact": "x", "messages": [], "metadata": ' + "[" * depth + "]" * depth + "}"
        assert "nested" in await assert_400(await post_raw(client, path, body))


@pytest.mark.parametrize("path", ["/memories", "/hybrid-search", "/ingest"])
@pytest.mark.parametrize("number", ["9" * 5000, "1e400", "-1e999", "NaN", "Infinity"])
async def test_a_number_that_cannot_be_used_is_a_400(client: TestClient, path: str, number: str) -> None:
    message = '{"role": "user", "content": "hi", "id": ' + number + "}"
    body = '{"query": "x", "fact": "x", "limit": 3, "messages": [' + message + "]}"
    await assert_400(await post_raw(client, path, body))
    jobs = await (await client.get("/ingest/jobs")).json()
    assert jobs["count"] == 0  # never journaled, so the worker never chokes on it


async def test_nul_in_a_query_string_is_a_400(client: TestClient) -> None:
    for query in ("q=%00abc", "user_id=a%00b", "topic=x%00", "category=%00"):
        await assert_400(await client.get(f"/memories?{query}"))
    await assert_400(await client.get("/memories/1?user_id=%00"))
    await assert_400(await client.get("/ingest/jobs?status=%00"))


async def test_nul_in_a_stored_text_is_a_400(client: TestClient) -> None:
    message = await assert_400(await client.post("/memories", json={"fact": "a\x00b"}))
    assert "NUL" in message
    await assert_400(await client.post("/hybrid-search", json={"query": "a\x00b"}))


async def test_a_nul_in_free_form_metadata_is_kept_as_json(client: TestClient) -> None:
    """Metadata is stored as JSON, where a NUL stays an escape: only text fields refuse one."""
    body = {"fact": "Sam keeps bees.", "metadata": {"note": "a\x00b"}}
    response = await client.post("/memories", json=body)
    assert response.status == 201, await response.text()
    assert (await response.json())["metadata"] == {"note": "a\x00b"}
    # Every reader of metadata still answers, for this user and everyone (PostgreSQL's json ->>
    # cannot read a document holding the escape: such a row reads as having none of its keys).
    overview = await client.get("/stats/overview")
    assert overview.status == 200, await overview.text()
    assert (await run_lifecycle(client))["status"] == "done"


@pytest.mark.parametrize(
    "query",
    [
        "until=9999-12-31",
        "since=9999-12-31T23:59:59-05:00",
        "since=0001-01-01T00:00:00%2B01:00",
        "until=0001-01-01",
    ],
)
async def test_time_bounds_at_the_edge_of_the_calendar_are_answered(client: TestClient, query: str) -> None:
    response = await client.get(f"/memories?{query}")
    assert response.status == 200, await response.text()


async def test_nul_inside_a_message_is_dropped_not_refused(client: TestClient) -> None:
    """A transcript is the user's conversation: one odd character must not lose the session."""
    body = {"messages": [{"role": "user", "content": "Remember that I like te\x00a."}], "debounce": False}
    response = await client.post("/ingest", json=body)
    assert response.status == 202


@pytest.mark.parametrize("user_id", ["x" * 201, "sam\n", "sam\x00", "tab\there", "bell\x07", "del\x7f"])
async def test_a_user_id_must_be_short_and_printable(client: TestClient, user_id: str) -> None:
    await assert_400(await client.post("/memories", json={"fact": "x", "user_id": user_id}))
    await assert_400(await client.post("/hybrid-search", json={"query": "x", "user_id": user_id}))
    await assert_400(await client.post("/ingest", json={"messages": [], "user_id": user_id}))
    await assert_400(await client.get("/memories", params={"user_id": user_id}))
    stats = await (await client.get("/stats")).json()
    assert stats["total_memories"] == 0


async def test_a_user_id_of_200_characters_in_any_script_is_fine(client: TestClient) -> None:
    for user_id in ("é" * 200, "用户" * 100, "sam.o'neil-2@home"):
        response = await client.post("/memories", json={"fact": "Likes tea.", "user_id": user_id})
        assert response.status == 201, await response.text()


async def test_session_and_channel_names_are_bounded_too(client: TestClient) -> None:
    await assert_400(await client.post("/ingest", json={"messages": [], "session_id": "s" * 501}))
    await assert_400(await client.post("/ingest", json={"messages": [], "channel": "c\n"}))
    await assert_400(await client.post("/memories", json={"fact": "x", "source_session": "a\x01"}))


async def test_memory_ids_are_never_reused(client: TestClient) -> None:
    first = await (await client.post("/memories", json={"fact": "The newest memory."})).json()
    assert (await client.delete(f"/memories/{first['id']}", headers=JSON)).status == 200
    second = await (await client.post("/memories", json={"fact": "Another memory."})).json()
    assert second["id"] > first["id"]
    stale = await client.get(f"/memories/{first['id']}")
    assert stale.status == 404  # a client holding the old id is told it is gone, not shown another
