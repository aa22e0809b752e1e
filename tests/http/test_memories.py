"""/memories CRUD through the real server."""

from __future__ import annotations

from typing import Any

import numpy as np
from aiohttp.test_utils import TestClient

from memory_cortex.keys import CONFIG, VECTOR_INDEX
from memory_cortex.vectormath import from_blob, normalize
from tests.helpers import search, store, store_connection

JSON = {"Content-Type": "application/json"}  # every write declares JSON, body or not (http/guard.py)


async def test_single_memory_is_created_embedded_and_readable(client: TestClient) -> None:
    response = await client.post(
        "/memories",
        json={
            "user_id": "ann",
            "topic": "pets",
            "fact": "Ann has a cat named Miso.",
            "importance": 7,
            "category": "relationship",
            "source_session": "s1",
            "source_channel": "telegram",
            "ref": "D1:1",
            "metadata": {"mood": "happy"},
            "created_at": "2023-05-08T13:56:00Z",
        },
    )
    assert response.status == 201
    created = await response.json()
    assert created["embedded"] is True and created["embedding_model"] == "all-MiniLM-L6-v2"
    assert created["created_at"].startswith("2023-05-08T13:56:00")
    assert created["action"] == "created"
    fetched = await (await client.get(f"/memories/{created['id']}")).json()
    assert fetched == {**created, "action": None}


async def test_batch_in_either_shape_is_one_transaction(client: TestClient) -> None:
    as_object = await store(client, {"fact": "one"}, {"fact": "two"})
    response = await client.post("/memories", json=[{"fact": "three"}])
    assert response.status == 201
    assert [m["fact"] for m in as_object] == ["one", "two"]
    # One invalid item rejects the whole batch: nothing is half-stored.
    response = await client.post("/memories", json={"memories": [{"fact": "four"}, {"fact": ""}]})
    assert response.status == 400
    stats = await (await client.get("/stats")).json()
    assert stats["total_memories"] == 3


async def test_list_filters_and_paginates_newest_first(client: TestClient) -> None:
    await store(
        client,
        *({"user_id": "pat", "topic": "t" + str(i % 2), "fact": f"fact {i}"} for i in range(7)),
        dedup=False,
    )
    await store(client, {"user_id": "other", "fact": "not pat's"})
    seen: list[str] = []
    before: int | None = None
    while True:
        params: dict[str, Any] = {"user_id": "pat", "limit": "3"}
        if before is not None:
            params["before_id"] = str(before)
        page = await (await client.get("/memories", params=params)).json()
        seen += [m["fact"] for m in page["memories"]]
        before = page["next_before_id"]
        if before is None:
            break
    assert seen == [f"fact {i}" for i in reversed(range(7))]
    topic = await (await client.get("/memories", params={"user_id": "pat", "topic": "t0"})).json()
    assert topic["count"] == 4


async def test_patch_re_embeds_new_text(client: TestClient) -> None:
    (memory,) = await store(client, {"user_id": "kim", "fact": "Kim plays the violin."})
    await store(client, {"user_id": "kim", "fact": "Kim owns a red bicycle."})
    response = await client.patch(f"/memories/{memory['id']}", json={"fact": "Kim studies marine biology."})
    assert response.status == 200
    patched = await response.json()
    assert patched["fact"] == "Kim studies marine biology." and patched["embedded"] is True
    body = await search(client, "ocean science", "kim", mode="vector", limit=1)
    assert body["results"][0]["id"] == memory["id"]


async def test_delete_removes_row_and_vector(client: TestClient) -> None:
    (memory,) = await store(client, {"user_id": "lee", "fact": "Lee is afraid of heights."})
    index = client.app[VECTOR_INDEX]
    assert index.contains(memory["id"])
    response = await client.delete(f"/memories/{memory['id']}", headers=JSON)
    assert response.status == 200 and (await response.json()) == {"deleted": True, "id": memory["id"]}
    assert not index.contains(memory["id"])
    assert (await client.get(f"/memories/{memory['id']}")).status == 404
    assert (await client.delete(f"/memories/{memory['id']}", headers=JSON)).status == 404
    assert (await search(client, "heights", "lee"))["count"] == 0


async def test_user_scope_on_single_memory_routes(client: TestClient) -> None:
    (memory,) = await store(client, {"user_id": "owner", "fact": "secret plan"})
    for method in ("get", "delete"):
        response = await getattr(client, method)(
            f"/memories/{memory['id']}", params={"user_id": "intruder"}, headers=JSON
        )
        assert response.status == 404
        assert (await response.json())["error"]["code"] == "memory_not_found"
    response = await client.patch(
        f"/memories/{memory['id']}", params={"user_id": "intruder"}, json={"fact": "x"}
    )
    assert response.status == 404
    assert (await client.get(f"/memories/{memory['id']}", params={"user_id": "owner"})).status == 200


async def test_blank_user_scope_means_the_default_user(client: TestClient) -> None:
    (default,) = await store(client, {"fact": "the default user's note"})
    (other,) = await store(client, {"user_id": "sam", "fact": "Sam's note"})
    assert (await client.get(f"/memories/{default['id']}", params={"user_id": ""})).status == 200
    assert (await client.get(f"/memories/{other['id']}", params={"user_id": ""})).status == 404
    response = await client.patch(
        f"/memories/{other['id']}", params={"user_id": " "}, json={"layer": "archive"}
    )
    assert response.status == 404
    assert (
        await client.delete(f"/memories/{other['id']}", params={"user_id": ""}, headers=JSON)
    ).status == 404
    assert (
        await client.delete(f"/memories/{default['id']}", params={"user_id": ""}, headers=JSON)
    ).status == 200


async def test_a_null_layer_is_a_400_not_a_500(client: TestClient) -> None:
    (memory,) = await store(client, {"fact": "a note"})
    response = await client.patch(f"/memories/{memory['id']}", json={"layer": None})
    assert response.status == 400
    assert (await client.get(f"/memories/{memory['id']}")).status == 200


async def test_superseding_across_users_is_refused(client: TestClient) -> None:
    (mine,) = await store(client, {"user_id": "a", "fact": "mine"})
    (theirs,) = await store(client, {"user_id": "b", "fact": "theirs"})
    response = await client.patch(f"/memories/{mine['id']}", json={"superseded_by": theirs["id"]})
    assert response.status == 400
    response = await client.patch(f"/memories/{mine['id']}", json={"superseded_by": mine["id"]})
    assert response.status == 400


async def test_superseded_rows_are_listed_only_when_asked(client: TestClient) -> None:
    old, new = await store(client, {"user_id": "u", "fact": "old"}, {"user_id": "u", "fact": "new"})
    await client.patch(f"/memories/{old['id']}", json={"superseded_by": new["id"]})
    default = await (await client.get("/memories", params={"user_id": "u"})).json()
    assert [m["id"] for m in default["memories"]] == [new["id"]]
    everything = await (
        await client.get("/memories", params={"user_id": "u", "include_superseded": "1"})
    ).json()
    assert {m["id"] for m in everything["memories"]} == {old["id"], new["id"]}


async def test_deleting_the_newer_memory_brings_the_superseded_one_back_into_search(
    client: TestClient,
) -> None:
    old, new = await store(
        client,
        {"user_id": "u", "fact": "Uma drinks green tea."},
        {"user_id": "u", "fact": "Uma drinks black coffee."},
        dedup=False,
    )
    await client.patch(f"/memories/{old['id']}", json={"superseded_by": new["id"]})
    index = client.app[VECTOR_INDEX]
    assert not index.contains(old["id"])
    assert (await client.delete(f"/memories/{new['id']}", headers=JSON)).status == 200
    # The foreign key restored the row in SQLite; the vector index follows in the same write.
    assert (await (await client.get(f"/memories/{old['id']}")).json())["superseded_by"] is None
    assert index.contains(old["id"])
    body = await search(client, "what does Uma drink?", "u", mode="vector")
    assert [r["id"] for r in body["results"]] == [old["id"]]
    stats = await (await client.get("/stats")).json()
    assert stats["live_memories"] == stats["vector_index_rows"] == 1


async def test_stats_counts(client: TestClient) -> None:
    await store(
        client, {"user_id": "x", "fact": "a"}, {"user_id": "x", "fact": "b"}, {"user_id": "y", "fact": "c"}
    )
    stats = await (await client.get("/stats")).json()
    assert stats["total_memories"] == 3
    assert stats["per_user"] == {"x": 2, "y": 1}
    assert stats["embedded"] == 3 and stats["vector_index_rows"] == 3
    assert stats["stale_embeddings"] == 0 and stats["unembedded"] == 0
    assert stats["db_bytes"] > 0 and stats["uptime_s"] >= 0
    assert stats["embedder"] == {
        "backend": "sentence_transformers",
        "model": "all-MiniLM-L6-v2",
        "ok": True,
        "dim": 384,
        "last_error": None,
    }
    health = await (await client.get("/health")).json()
    assert health["status"] == "ok"


async def test_paraphrase_merges_into_the_existing_memory(client: TestClient) -> None:
    (first,) = await store(
        client, {"user_id": "m", "fact": "Mia's favourite colour is green.", "importance": 4}
    )
    response = await client.post(
        "/memories", json={"user_id": "m", "fact": "Mia's favorite color is green.", "importance": 8}
    )
    merged = await response.json()
    assert merged["action"] == "merged" and merged["id"] == first["id"]
    assert merged["fact"] == "Mia's favorite color is green."  # the newer wording
    assert merged["importance"] == 8 and merged["access_count"] == 1
    assert (await (await client.get("/stats")).json())["total_memories"] == 1
    # Opting out stores it as given.
    response = await client.post(
        "/memories?dedup=false", json={"user_id": "m", "fact": "Mia's favorite color is green."}
    )
    assert (await response.json())["action"] == "created"


async def test_a_merge_stores_the_vector_of_the_memory_it_keeps(client: TestClient, minilm: Any) -> None:
    """Merged without a topic, the kept row keeps its topic, and its vector is of topic + new wording."""
    before = "Mia paints watercolour landscapes of the harbour every Sunday morning with her grandmother."
    after = "Mia paints watercolor landscapes of the harbor every Sunday morning with her grandmother."
    (first,) = await store(client, {"user_id": "m", "topic": "art", "fact": before})
    response = await client.post("/memories", json={"user_id": "m", "fact": after})
    merged = await response.json()
    assert merged["action"] == "merged" and merged["id"] == first["id"] and merged["topic"] == "art"
    with store_connection(client.app[CONFIG]) as conn:
        (blob,) = conn.execute("SELECT embedding FROM memories WHERE id = ?", (first["id"],)).fetchone()
    expected = (await minilm.embed_documents([f"art: {after}"]))[0]
    assert np.allclose(normalize(from_blob(blob))[0], normalize(expected)[0], atol=1e-5)


async def test_duplicates_inside_one_batch_become_one_memory(client: TestClient) -> None:
    stored = await store(
        client,
        {"user_id": "n", "fact": "Noah works as a nurse in Lisbon."},
        {"user_id": "n", "fact": "Noah works as a nurse in Lisbon!"},
    )
    assert stored[0]["id"] == stored[1]["id"] and stored[1]["action"] == "merged"


async def test_correction_supersedes_the_older_fact(client: TestClient) -> None:
    (old,) = await store(client, {"user_id": "o", "topic": "home", "fact": "Olga lives in Lyon."})
    response = await client.post(
        "/memories",
        json={
            "user_id": "o",
            "topic": "home",
            "fact": "Olga now lives in Porto, not Lyon.",
            "category": "correction",
        },
    )
    new = await response.json()
    assert new["action"] == "created" and new["superseded"] == old["id"]
    hidden = await (await client.get(f"/memories/{old['id']}")).json()
    assert hidden["superseded_by"] == new["id"]
    body = await search(client, "where does Olga live?", "o")
    assert [item["id"] for item in body["results"]] == [new["id"]]
