"""Reads are counted off the request path; the opt-in multi-factor ranking prefers the newer fact."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from aiohttp.test_utils import TestClient

from memory_cortex.app import create_app
from memory_cortex.config import RankingConfig
from memory_cortex.keys import ACCESS_TRACKER, CONFIG
from memory_cortex.services.search import ranking_multiplier
from tests.conftest import make_config
from tests.helpers import memory_record, store_connection


def access_of(client: TestClient, memory_id: int) -> tuple[int, str | None, str]:
    with store_connection(client.app[CONFIG]) as conn:
        return conn.execute(
            "SELECT access_count, last_accessed, updated_at FROM memories WHERE id = ?", (memory_id,)
        ).fetchone()


async def store(client: TestClient, fact: str, **fields: Any) -> int:
    response = await client.post("/memories?dedup=false", json={"user_id": "u", "fact": fact, **fields})
    assert response.status == 201, await response.text()
    return int((await response.json())["id"])


async def test_returned_memories_are_counted_as_read_in_batches(client: TestClient) -> None:
    espresso = await store(client, "The user drinks an espresso every morning", topic="coffee")
    unrelated = await store(client, "The user's bicycle is blue", topic="bike")
    before = access_of(client, espresso)

    found = await (
        await client.post("/hybrid-search", json={"query": "espresso", "user_id": "u", "limit": 1})
    ).json()
    assert [r["id"] for r in found["results"]] == [espresso]
    await client.post("/context", json={"query": "espresso coffee", "user_id": "u", "max_facts": 1})
    await client.post("/recall", json={"query": "espresso", "user_id": "u"})
    # Counted in memory first: the search did not write.
    assert access_of(client, espresso)[0] == 0
    await client.app[ACCESS_TRACKER].flush()

    count, last_accessed, updated_at = access_of(client, espresso)
    assert count == 3 and last_accessed is not None
    assert updated_at == before[2]  # being read is not an edit
    # Only what was returned counts: the limit-1 search and context left it out, and recall did not
    # use it either (below search.min_similarity for "espresso").
    assert access_of(client, unrelated)[0] == 0


async def test_pending_reads_are_written_at_shutdown(
    aiohttp_client: Any, tmp_path: Path, minilm: Any
) -> None:
    config = make_config(tmp_path, search={"access_flush_s": 3600})
    client = await aiohttp_client(create_app(config, embedder=minilm))
    memory_id = await store(client, "The user's cat is called Miso")
    await client.post("/hybrid-search", json={"query": "cat Miso", "user_id": "u"})
    await client.close()  # cleanup: the tracker's final drain
    with store_connection(config) as conn:
        assert conn.execute("SELECT access_count FROM memories WHERE id = ?", (memory_id,)).fetchone()[0] == 1


LYON = "The user lives in Lyon, France"
PORTO = "The user moved to Porto, Portugal"
QUESTION = "Which city is the user based in?"


async def ranked_facts(
    aiohttp_client: Any, tmp_path: Path, minilm: Any, enabled: bool
) -> list[dict[str, Any]]:
    config = make_config(tmp_path, ranking={"enabled": enabled})
    client = await aiohttp_client(create_app(config, embedder=minilm))
    a_year_ago = (datetime.now(UTC) - timedelta(days=365)).isoformat()
    await store(client, LYON, topic="home city", created_at=a_year_ago)
    await store(client, PORTO, topic="home city")
    body = await (await client.post("/hybrid-search", json={"query": QUESTION, "user_id": "u"})).json()
    await client.close()
    return body["results"]


async def test_ranking_puts_the_newer_contradicting_fact_first(
    aiohttp_client: Any, tmp_path: Path, minilm: Any
) -> None:
    plain = await ranked_facts(aiohttp_client, tmp_path / "plain", minilm, enabled=False)
    assert plain[0]["fact"] == LYON  # by relevance alone the old wording wins
    assert all(r["score"] == r["relevance"] for r in plain)

    ranked = await ranked_facts(aiohttp_client, tmp_path / "ranked", minilm, enabled=True)
    assert ranked[0]["fact"] == PORTO
    assert [r["score"] for r in ranked] == sorted((r["score"] for r in ranked), reverse=True)
    assert all(r["score"] <= r["relevance"] for r in ranked)  # the multiplier is at most 1


def test_the_multiplier_lies_between_one_minus_the_weights_and_one() -> None:
    config = RankingConfig(
        importance_weight=0.1, recency_weight=0.4, access_weight=0.1, recency_half_life_days=30
    )
    now = datetime(2026, 1, 1, tzinfo=UTC)
    best = ranking_multiplier(memory_record(importance=10, access_count=1000), now, config)
    worst = ranking_multiplier(memory_record(importance=1, created_at="2016-01-01T00:00:00Z"), now, config)
    assert abs(best - 1.0) < 1e-9 and abs(worst - 0.4) < 1e-6
    half = ranking_multiplier(memory_record(importance=1, created_at="2025-12-02T00:00:00Z"), now, config)
    assert abs(half - (0.4 + 0.2)) < 1e-6  # 30 days old: half the recency share
