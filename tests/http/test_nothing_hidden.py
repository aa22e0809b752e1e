"""Nothing important silently hidden (issue 23), through the real server on a loopback port:

- a correction supersedes only a memory that states the same one fact; one that also holds other
  facts stays live and recallable, and the correction links to it (``metadata.corrects``);
- decay counts from when a memory entered its layer, and never archives what is protected
  (importance, identity and safety topics); the preview says why each memory moves or stays;
- ``/context`` and ``/hybrid-search`` leave out what is not relevant at all (``search.min_relevance``)
  unless a request asks for less.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from aiohttp.test_utils import TestClient

from memory_cortex.app import create_app
from memory_cortex.services.lifecycle import iso
from tests.conftest import make_config
from tests.fakes import MovableClock
from tests.helpers import search, store, wait_idle

JSON = {"Content-Type": "application/json"}


async def start(aiohttp_client: Any, tmp_path: Any, minilm: Any, **sections: Any) -> TestClient:
    config = make_config(tmp_path, ingest={"debounce_s": 0, "retry_backoff_s": 0.05}, **sections)
    return await aiohttp_client(create_app(config, embedder=minilm))


async def say(client: TestClient, user_id: str, session: str, *lines: str) -> None:
    """The user says ``lines`` in ``session`` (one /ingest each), and the extraction runs."""
    history: list[dict[str, Any]] = []
    for line in lines:
        history.append({"role": "user", "content": line})
        body = {"messages": history, "session_id": session, "user_id": user_id, "debounce": False}
        response = await client.post("/ingest", json=body, headers=JSON)
        assert response.status == 202, await response.text()
        await wait_idle(client)


async def memories_of(client: TestClient, user_id: str) -> dict[str, dict[str, Any]]:
    """Every memory of ``user_id``, superseded ones included, by text."""
    params = {"user_id": user_id, "include_superseded": "true", "limit": "100"}
    listed = await (await client.get("/memories", params=params)).json()
    return {memory["fact"]: memory for memory in listed["memories"]}


# -- 1. a correction hides only the one fact it corrects ------------------------------------------
async def test_a_correction_keeps_the_other_facts_of_the_memory_it_corrects(
    aiohttp_client: Any, tmp_path: Any, minilm: Any
) -> None:
    client = await start(aiohttp_client, tmp_path, minilm)
    await say(
        client,
        "alex",
        "s1",
        "Remember that I have two kids, Mia (6) and Leo (4).",
        "Correction: my daughter Mia is 7, not 6.",
    )
    stored = await memories_of(client, "alex")
    kids = stored["The user has two kids, Mia (6) and Leo (4)."]
    correction = stored["The user's daughter Mia is 7, not 6."]
    assert correction["category"] == "correction"
    assert kids["superseded_by"] is None  # Leo is still there
    assert correction["metadata"]["corrects"] == kids["id"]  # …and the correction says what it corrects
    found = await search(client, "How old is Leo?", "alex")
    assert kids["id"] in [hit["id"] for hit in found["results"]]
    found = await search(client, "How old is Mia?", "alex")
    assert {kids["id"], correction["id"]} <= {hit["id"] for hit in found["results"]}


async def test_a_correction_still_supersedes_a_memory_of_the_same_one_fact(
    aiohttp_client: Any, tmp_path: Any, minilm: Any
) -> None:
    client = await start(aiohttp_client, tmp_path, minilm)
    await say(client, "sam", "s1", "Remember that I live in Porto.", "Actually, I live in Lisbon now")
    stored = await memories_of(client, "sam")
    correction = stored["The user lives in Lisbon now."]
    assert stored["The user lives in Porto."]["superseded_by"] == correction["id"]
    assert "corrects" not in correction["metadata"]


# -- 2. decay counts from the layer, and protects what must not be forgotten ---------------------
async def test_decay_counts_from_entering_core_protects_vital_facts_and_says_why(
    aiohttp_client: Any, tmp_path: Any, minilm: Any
) -> None:
    now = datetime.now(UTC)
    clock = MovableClock(now)
    config = make_config(tmp_path)
    client = await aiohttp_client(create_app(config, embedder=minilm, lifecycle_clock=clock))
    long_ago = iso(now - timedelta(days=400))  # back-dated: written today, about long ago
    allergy, todo, pills = await store(
        client,
        {
            "user_id": "sam",
            "fact": "Sam is seriously allergic to peanuts and carries an EpiPen.",
            "topic": "allergies",
            "category": "fact",
            "importance": 10,
            "created_at": long_ago,
        },
        {"user_id": "sam", "fact": "Buy a new bicycle pump.", "category": "todo", "created_at": long_ago},
        {
            "user_id": "sam",
            "fact": "Sam takes a blood pressure pill every morning.",
            "topic": "Medication",
            "importance": 3,
            "created_at": long_ago,
        },
    )
    entered = (await (await client.get(f"/memories/{todo['id']}")).json())["layer_since"]
    assert entered is not None and entered >= iso(now - timedelta(minutes=5))  # today, not 400 days ago
    decay = (await (await client.get("/lifecycle/preview")).json())["stages"][2]
    assert decay["ids"]["archived"] == [] and decay["reasons"] == {}  # a day in core: nothing decays
    clock.advance(days=60)
    decay = (await (await client.get("/lifecycle/preview")).json())["stages"][2]
    assert decay["ids"]["archived"] == [todo["id"]]
    assert decay["ids"]["protected"] == [allergy["id"], pills["id"]]
    reasons = decay["reasons"]
    assert "60.0 days in core" in reasons[str(todo["id"])] and "< 0.05" in reasons[str(todo["id"])]
    assert reasons[str(allergy["id"])].startswith("protected: importance 10 ≥ 9")
    assert reasons[str(pills["id"])].startswith("protected: topic word medication")
    report = await (await client.post("/lifecycle/run", headers=JSON)).json()
    assert report["stages"][2]["ids"]["archived"] == [todo["id"]]
    kept = await (await client.get(f"/memories/{allergy['id']}")).json()
    assert kept["layer"] == "core"


# -- 3. a query unrelated to every memory injects nothing ----------------------------------------
SMALL_STORE = (
    "Alex has two kids, Mia and Leo.",
    "Alex's sister Ana lives in Porto.",
    "Alex prefers green tea to coffee.",
    "Alex is training for a half marathon in October.",
    "Alex drives an old blue Volvo.",
)


async def test_context_and_search_leave_out_memories_unrelated_to_the_query(
    aiohttp_client: Any, tmp_path: Any, minilm: Any
) -> None:
    client = await start(aiohttp_client, tmp_path, minilm)
    await store(client, *({"user_id": "alex", "fact": fact} for fact in SMALL_STORE))
    unrelated = "How do I configure a Kubernetes ingress controller?"
    found = await search(client, unrelated, "alex")
    assert found == {"results": [], "count": 0}  # the same shape, nothing in it
    body = {"query": unrelated, "user_id": "alex"}
    block = await (await client.post("/context", json=body, headers=JSON)).json()
    assert block == {"context": "", "facts": 0}
    # A related question still finds its memory, in /context as in /hybrid-search.
    found = await search(client, "What does Alex like to drink?", "alex")
    assert found["results"][0]["fact"] == "Alex prefers green tea to coffee."
    body = {"query": "Who is in Alex's family?", "user_id": "alex"}
    block = await (await client.post("/context", json=body, headers=JSON)).json()
    assert "Mia and Leo" in block["context"] and "Kubernetes" not in block["context"]
    # …and a request may still ask for everything (min_relevance 0), in the usual shape.
    everything = await search(client, unrelated, "alex", min_relevance=0)
    assert everything["count"] == len(SMALL_STORE) and set(everything["results"][0]) == set(
        found["results"][0]
    )
    body = {"query": unrelated, "user_id": "alex", "min_relevance": 0}
    block = await (await client.post("/context", json=body, headers=JSON)).json()
    assert block["facts"] == len(SMALL_STORE)


async def test_the_floor_judges_only_what_the_vector_side_alone_proposed(
    aiohttp_client: Any, tmp_path: Any, minilm: Any
) -> None:
    """A memory that shares a word with the question is shown whatever its relevance number (a
    full-text score is relative to the query's best match); nearest vectors alone must earn it."""
    client = await start(aiohttp_client, tmp_path, minilm)
    await store(client, *({"user_id": "alex", "fact": fact} for fact in SMALL_STORE))
    found = await search(client, "Do the kids visit Ana?", "alex", min_relevance=0.99)
    facts = {hit["fact"] for hit in found["results"]}
    assert facts == {"Alex has two kids, Mia and Leo.", "Alex's sister Ana lives in Porto."}, found
    assert {hit["source"] for hit in found["results"]} <= {"fts5", "fts5+vector"}
    everything = await search(client, "Do the kids visit Ana?", "alex", min_relevance=0)
    assert any(hit["source"] == "vector" for hit in everything["results"])
