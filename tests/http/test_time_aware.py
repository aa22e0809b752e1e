"""Time-aware memories and queries through the real server and the real MiniLM model: occurred_at
round-trips, metadata.session_date, /ingest's occurred_at, and the boost of search.time_boost."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from aiohttp.test_utils import TestClient
from pydantic import ValidationError

from memory_cortex.app import create_app
from memory_cortex.config import SearchConfig
from memory_cortex.models.embedders import SentenceTransformerEmbedder
from tests.conftest import make_config
from tests.fakes import ScriptedLLM
from tests.helpers import search, store, wait_idle

# The same kind of memory in two months: only the date tells them apart.
TRIPS = [
    ("The user went hiking in the mountains with Ana.", "2023-05-13T10:00:00Z"),
    ("The user went hiking by the lake with Ana.", "2023-08-19T10:00:00Z"),
]


async def start(
    aiohttp_client: Any, tmp_path: Path, minilm: SentenceTransformerEmbedder, **search: Any
) -> TestClient:
    config = make_config(tmp_path, search=search)
    return await aiohttp_client(create_app(config, embedder=minilm, llm=ScriptedLLM()))


async def test_occurred_at_round_trips_through_the_api(client: TestClient) -> None:
    (stored,) = await store(
        client,
        {"user_id": "u", "fact": "Met Ana at the station.", "occurred_at": "2023-05-08T15:56:00+02:00"},
    )
    assert stored["occurred_at"] == "2023-05-08T13:56:00.000Z"  # UTC, the stored format
    fetched = await (await client.get(f"/memories/{stored['id']}")).json()
    assert fetched["occurred_at"] == "2023-05-08T13:56:00.000Z"

    patched = await client.patch(f"/memories/{stored['id']}", json={"occurred_at": "2021-01-02T03:04:05"})
    assert (await patched.json())["occurred_at"] == "2021-01-02T03:04:05.000Z"
    cleared = await client.patch(f"/memories/{stored['id']}", json={"occurred_at": None})
    assert (await cleared.json())["occurred_at"] is None

    body = await search(client, "Ana station", "u")
    assert body["results"][0]["occurred_at"] is None


async def test_without_occurred_at_nothing_changes(client: TestClient) -> None:
    (stored,) = await store(client, {"user_id": "u", "fact": "Likes green tea."})
    assert stored["occurred_at"] is None


async def test_a_written_session_date_in_metadata_becomes_occurred_at(client: TestClient) -> None:
    written, iso, vague = await store(
        client,
        {"user_id": "u", "fact": "a", "metadata": {"session_date": "1:56 pm on 8 May, 2023"}},
        {"user_id": "u", "fact": "b", "metadata": {"session_date": "2022-12-24"}},
        {"user_id": "u", "fact": "c", "metadata": {"session_date": "some Monday"}},
        dedup=False,
    )
    assert written["occurred_at"] == "2023-05-08T13:56:00.000Z"
    assert iso["occurred_at"] == "2022-12-24T00:00:00.000Z"
    assert vague["occurred_at"] is None  # not a full date: the memory is about its created_at
    assert vague["metadata"] == {"session_date": "some Monday"}  # metadata kept as sent


@pytest.mark.parametrize("value", ["last tuesday", "2023-13-45", 20230508])
async def test_a_malformed_occurred_at_is_a_400(client: TestClient, value: Any) -> None:
    response = await client.post("/memories", json={"fact": "x", "occurred_at": value})
    assert response.status == 400
    assert (await response.json())["error"]["code"]


async def test_ingest_occurred_at_reaches_the_extracted_facts(
    aiohttp_client: Any, tmp_path: Path, minilm: SentenceTransformerEmbedder
) -> None:
    client = await start(aiohttp_client, tmp_path, minilm)
    messages = [{"role": "user", "content": "I adopted a dog named Rex"}]
    response = await client.post(
        "/ingest",
        json={"messages": messages, "user_id": "u", "debounce": False, "occurred_at": "2022-03-04T05:06:07Z"},
    )
    assert response.status == 202
    await wait_idle(client)
    listed = await (await client.get("/memories?user_id=u")).json()
    assert listed["memories"] and {m["occurred_at"] for m in listed["memories"]} == {
        "2022-03-04T05:06:07.000Z"
    }


async def test_a_date_in_the_query_lifts_the_memories_of_that_time(
    aiohttp_client: Any, tmp_path: Path, minilm: SentenceTransformerEmbedder
) -> None:
    client = await start(aiohttp_client, tmp_path, minilm, time_boost=1.0)
    may, august = await store(
        client, *({"user_id": "u", "fact": fact, "occurred_at": when} for fact, when in TRIPS), dedup=False
    )
    for month, expected in (("May 2023", may), ("August 2023", august)):
        body = await search(client, f"Where did the user go hiking in {month}?", "u", limit=2)
        assert body["results"][0]["id"] == expected["id"], month
    # A date that matches nothing boosts nothing: still both results, never an empty answer.
    body = await search(client, "Where did the user go hiking in 2019?", "u", limit=2)
    assert len(body["results"]) == 2


async def test_the_boost_never_reaches_another_users_memories(
    aiohttp_client: Any, tmp_path: Path, minilm: SentenceTransformerEmbedder
) -> None:
    client = await start(aiohttp_client, tmp_path, minilm, time_boost=5.0, time_candidates=100)
    await store(
        client,
        {"user_id": "alice", "fact": "Alice went hiking in 2021.", "occurred_at": "2021-06-01T00:00:00Z"},
    )
    # Bob's memories lie inside the queried month, and one says it word for word.
    await store(
        client,
        *(
            {
                "user_id": "bob",
                "fact": f"Bob went hiking in May 2023, day {day}.",
                "occurred_at": f"2023-05-{day:02d}T09:00:00Z",
            }
            for day in range(1, 20)
        ),
        dedup=False,
    )
    for anchor_query in ("Where did I go hiking in May 2023?", "what did I do last month"):
        body = await search(client, anchor_query, "alice", limit=10)
        assert {item["user_id"] for item in body["results"]} <= {"alice"}, anchor_query


async def test_relative_dates_can_count_from_the_newest_memory(
    aiohttp_client: Any, tmp_path: Path, minilm: SentenceTransformerEmbedder
) -> None:
    client = await start(aiohttp_client, tmp_path, minilm, time_boost=1.0, time_anchor="newest_memory")
    # Fed in August order first, so that without a boost the May trip would not come first.
    _august, may, _job = await store(
        client,
        *({"user_id": "u", "fact": fact, "occurred_at": when} for fact, when in reversed(TRIPS)),
        {"user_id": "u", "fact": "The user started a new job.", "occurred_at": "2023-09-10T10:00:00Z"},
        dedup=False,
    )
    # The newest memory is from September 2023, so "last May" is May 2023 (not May of this year).
    body = await search(client, "Where did the user go hiking last May?", "u", limit=2)
    assert body["results"][0]["id"] == may["id"]


@pytest.mark.parametrize(
    "settings",
    [
        {"time_boost": -0.1},
        {"time_boost": 11},
        {"time_anchor": "yesterday"},
        {"time_candidates": -1},
        {"time_candidates": 5000},
    ],
)
def test_time_settings_are_validated(settings: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        SearchConfig(**settings)


@pytest.mark.parametrize("value", [0, "soon", True])
async def test_a_malformed_ingest_occurred_at_is_a_400(client: TestClient, value: Any) -> None:
    body = {"messages": [{"role": "user", "content": "hi"}], "occurred_at": value}
    response = await client.post("/ingest", json=body)
    assert response.status == 400
