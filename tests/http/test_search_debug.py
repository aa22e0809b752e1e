"""POST /search/debug: the same ranking as /hybrid-search (with no relevance floor, what the floor
leaves out marked ``below_floor``), the retrievers alone beside it, the scores' parts and the stage
timings, without counting anything as read."""

from __future__ import annotations

from typing import Any

from aiohttp.test_utils import TestClient

from memory_cortex.app import create_app
from memory_cortex.keys import ACCESS_TRACKER, CONFIG
from tests.conftest import make_config
from tests.helpers import search, store

FACTS = [
    {"user_id": "ann", "topic": "pets", "fact": "Ann adopted a grey cat called Miso in Lisbon."},
    {"user_id": "ann", "topic": "pets", "fact": "Ann's kitten sleeps on the windowsill all day."},
    {"user_id": "ann", "topic": "work", "fact": "Ann works as a nurse at the children's hospital."},
    {"user_id": "ann", "topic": "food", "fact": "Ann cannot eat peanuts: a severe allergy."},
    {"user_id": "bob", "topic": "pets", "fact": "Bob's cat is called Pixel."},
]


def assert_parts_make_the_score(hit: dict, fts_weight: float, vector_weight: float) -> None:
    """relevance = (fts_weight·fts + vector_weight·cosine) × every stage's factor + bonus, and
    score = relevance × the ranking factor (all rounded to 6 places in the response)."""
    relevance = fts_weight * hit["fts_score"] + vector_weight * hit["vector_score"]
    for name, factor in hit["factors"].items():
        if name != "ranking":
            relevance *= factor
    relevance += hit["bonus"]
    assert abs(hit["relevance"] - relevance) < 1e-5, hit
    assert abs(hit["score"] - hit["relevance"] * hit["factors"].get("ranking", 1.0)) < 1e-5, hit


async def debug(client: TestClient, **body: object) -> dict:
    response = await client.post("/search/debug", json=body)
    assert response.status == 200, await response.text()
    return await response.json()


async def test_fused_list_is_the_hybrid_search_ranking(client: TestClient) -> None:
    await store(client, *FACTS)
    for query in ("what is the name of Ann's cat", "where does Ann work", "allergy", "kitten"):
        expected = await search(client, query, "ann", limit=3)
        result = await debug(client, query=query, user_id="ann", limit=3)
        # The debug list has no relevance floor: what /hybrid-search leaves out is marked, not missing.
        shown = [hit for hit in result["fused"] if not hit["below_floor"]]
        assert [hit["id"] for hit in shown] == [hit["id"] for hit in expected["results"]]
        assert [hit["score"] for hit in shown] == [hit["score"] for hit in expected["results"]]
        assert [hit["rank"] for hit in result["fused"]] == list(range(1, len(result["fused"]) + 1))


async def test_parts_lists_and_timings_are_shown(client: TestClient) -> None:
    await store(client, *FACTS)
    result = await debug(client, query="Ann's cat Miso", user_id="ann")
    config = client.app[CONFIG].search
    assert result["user_id"] == "ann" and result["vector_used"] is True
    assert result["fts_match"] == '"ann" OR "cat" OR "miso"'
    assert (result["fts_weight"], result["vector_weight"]) == (config.fts_weight, config.vector_weight)
    for hit in result["fused"]:
        if not result["ranking_enabled"]:
            assert hit["score"] == hit["relevance"]
        assert_parts_make_the_score(hit, config.fts_weight, config.vector_weight)
    assert {hit["source"] for hit in result["fts_only"]} == {"fts5"}
    assert {hit["source"] for hit in result["vector_only"]} == {"vector"}
    assert all(hit["vector_score"] == 0 for hit in result["fts_only"])
    assert result["fts_only"][0]["fact"].startswith("Ann adopted a grey cat")
    # The vector side alone finds the kitten, which shares no word with the query.
    assert any("kitten" in hit["fact"] for hit in result["vector_only"])
    assert set(result["timings_ms"]) == {"hybrid", "fts", "vector"}
    for timings in result["timings_ms"].values():
        assert timings["total"] >= 0 and {"fts_and_embed", "vector", "feedback", "hydrate"} <= set(timings)
    everything = result["fused"] + result["fts_only"] + result["vector_only"]
    assert all("Pixel" not in hit["fact"] for hit in everything)  # bob's memory stays bob's


async def test_debugging_a_search_counts_no_reads(client: TestClient) -> None:
    rows = await store(client, *FACTS)
    await debug(client, query="cat", user_id="ann")
    await client.app[ACCESS_TRACKER].flush()
    for row in rows:
        current = await (await client.get(f"/memories/{row['id']}")).json()
        assert current["access_count"] == 0
    await search(client, "cat", "ann")
    await client.app[ACCESS_TRACKER].flush()
    counts = [(await (await client.get(f"/memories/{r['id']}")).json())["access_count"] for r in rows]
    assert any(counts)  # the tracker works: the plain search was counted


async def test_bad_requests_are_400(client: TestClient) -> None:
    for body in ({}, {"query": 5}, {"query": "x", "limit": 0}, {"query": "x", "layers": ["attic"]}):
        response = await client.post("/search/debug", json=body)
        assert response.status == 400, body


# A conversation in which every scoring stage has something to do: dated turns (time), speaker
# labels the query names (subject), short and long turns (length) in sessions that hold several
# good turns (session support), with the multi-factor ranking on.
TURNS = [
    ("s1", "2023-05-07T10:00:00Z", "Melanie: I painted a sunrise over the lake last weekend, with my kids."),
    ("s1", "2023-05-07T10:01:00Z", "Caroline: That sounds lovely! What colours did you use for the lake?"),
    ("s1", "2023-05-07T10:02:00Z", "Melanie: Mostly orange and pink. Painting calms me down after work."),
    ("s1", "2023-05-07T10:03:00Z", "Melanie: Bye!"),
    (
        "s2",
        "2023-08-14T18:00:00Z",
        "Caroline: I went to a pride parade and painted my face in rainbow colours.",
    ),
    ("s2", "2023-08-14T18:01:00Z", "Melanie: I took the kids camping by the river instead."),
]


async def test_every_stage_names_its_part_of_the_score(
    aiohttp_client: Any, tmp_path: Any, minilm: Any
) -> None:
    config = make_config(tmp_path, ranking={"enabled": True})
    client = await aiohttp_client(create_app(config, embedder=minilm, llm=None))
    await store(
        client,
        *(
            {
                "user_id": "mel",
                "fact": fact,
                "source_session": session,
                "occurred_at": when,
                "layer": "working",
            }
            for session, when, fact in TURNS
        ),
        dedup=False,
    )
    result = await debug(client, query="What did Melanie paint in May 2023?", user_id="mel", limit=6)
    search_config = config.search
    fused = result["fused"]
    assert fused
    for hit in fused:
        assert_parts_make_the_score(hit, search_config.fts_weight, search_config.vector_weight)
    factors = {name for hit in fused for name in hit["factors"]}
    assert factors == {"time", "subject", "length", "ranking"}, factors
    assert any(hit["bonus"] > 0 for hit in fused)
    timings = result["timings_ms"]["hybrid"]
    stages = [
        "fts_and_embed",
        "vector",
        "time",
        "speakers",
        "speaker_query",
        "feedback",
        "priors",
        "lookup",
        "hydrate",
    ]
    assert list(timings) == [*stages, "ranking", "total"]
