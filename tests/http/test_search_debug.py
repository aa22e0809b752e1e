"""POST /search/debug: the same ranking as /hybrid-search, the retrievers alone beside it, the
scores' parts and the stage timings, without counting anything as read."""

from __future__ import annotations

from aiohttp.test_utils import TestClient

from middleware.keys import ACCESS_TRACKER, CONFIG
from tests.helpers import search, store

FACTS = [
    {"user_id": "ann", "topic": "pets", "fact": "Ann adopted a grey cat called Miso in Lisbon."},
    {"user_id": "ann", "topic": "pets", "fact": "Ann's kitten sleeps on the windowsill all day."},
    {"user_id": "ann", "topic": "work", "fact": "Ann works as a nurse at the children's hospital."},
    {"user_id": "ann", "topic": "food", "fact": "Ann cannot eat peanuts: a severe allergy."},
    {"user_id": "bob", "topic": "pets", "fact": "Bob's cat is called Pixel."},
]


async def debug(client: TestClient, **body: object) -> dict:
    response = await client.post("/search/debug", json=body)
    assert response.status == 200, await response.text()
    return await response.json()


async def test_fused_list_is_the_hybrid_search_ranking(client: TestClient) -> None:
    await store(client, *FACTS)
    for query in ("what is the name of Ann's cat", "where does Ann work", "allergy", "kitten"):
        expected = await search(client, query, "ann", limit=3)
        result = await debug(client, query=query, user_id="ann", limit=3)
        assert [hit["id"] for hit in result["fused"]] == [hit["id"] for hit in expected["results"]]
        assert [hit["score"] for hit in result["fused"]] == [hit["score"] for hit in expected["results"]]
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
        parts = config.fts_weight * hit["fts_score"] + config.vector_weight * hit["vector_score"]
        assert abs(hit["relevance"] - parts) < 1e-5
    assert {hit["source"] for hit in result["fts_only"]} == {"fts5"}
    assert {hit["source"] for hit in result["vector_only"]} == {"vector"}
    assert all(hit["vector_score"] == 0 for hit in result["fts_only"])
    assert result["fts_only"][0]["fact"].startswith("Ann adopted a grey cat")
    # The vector side alone finds the kitten, which shares no word with the query.
    assert any("kitten" in hit["fact"] for hit in result["vector_only"])
    assert set(result["timings_ms"]) == {"hybrid", "fts", "vector"}
    for timings in result["timings_ms"].values():
        assert timings["total"] >= 0 and {"fts_and_embed", "vector", "prf", "hydrate"} <= set(timings)
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
