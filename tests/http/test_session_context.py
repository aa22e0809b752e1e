"""Turns stored with their session are embedded after the turns before them (embeddings.session_context)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
from aiohttp.test_utils import TestClient

from memory_cortex.app import create_app
from memory_cortex.keys import CONFIG
from memory_cortex.vectormath import from_blob, normalize
from tests.conftest import make_config
from tests.helpers import store_connection

TURNS = [
    "Caroline: Where did you end up going for the spring break?",
    "Melanie: Yes, Lisbon! The tiles and the custard tarts were wonderful.",
    "Caroline: That sounds lovely.",
    "Melanie: We also took a day trip to Sintra.",
]


def stored_vector(client: TestClient, memory_id: int) -> np.ndarray:
    with store_connection(client.app[CONFIG]) as conn:
        (blob,) = conn.execute("SELECT embedding FROM memories WHERE id = ?", (memory_id,)).fetchone()
    return from_blob(blob)


async def embedded(minilm: Any, text: str) -> np.ndarray:
    return normalize((await minilm.embed_documents([text]))[0])[0]


async def post(client: TestClient, body: Any) -> Any:
    response = await client.post("/memories?dedup=false", json=body)
    assert response.status == 201, await response.text()
    return await response.json()


async def test_a_turn_is_embedded_after_the_two_turns_before_it(client: TestClient, minilm: Any) -> None:
    # The first two turns in one request, the rest in later ones: the context crosses requests.
    first = await post(client, [{"user_id": "mel", "fact": t, "source_session": "s1"} for t in TURNS[:2]])
    later = [await post(client, {"user_id": "mel", "fact": t, "source_session": "s1"}) for t in TURNS[2:]]
    ids = [m["id"] for m in first["memories"]] + [m["id"] for m in later]
    expected = [
        TURNS[0],
        f"{TURNS[0]}\n{TURNS[1]}",
        f"{TURNS[0]}\n{TURNS[1]}\n{TURNS[2]}",
        f"{TURNS[1]}\n{TURNS[2]}\n{TURNS[3]}",
    ]
    for memory_id, text in zip(ids, expected, strict=True):
        assert np.allclose(
            normalize(stored_vector(client, memory_id))[0], await embedded(minilm, text), atol=1e-5
        )
    # The context is only in the vector: the memory itself is its own text.
    assert (await (await client.get(f"/memories/{ids[1]}")).json())["fact"] == TURNS[1]


async def test_no_session_other_session_or_other_user_means_no_context(
    client: TestClient, minilm: Any
) -> None:
    await post(client, {"user_id": "mel", "fact": TURNS[0], "source_session": "s1"})
    alone = await post(client, {"user_id": "mel", "fact": TURNS[1]})
    other_session = await post(client, {"user_id": "mel", "fact": TURNS[1], "source_session": "s2"})
    other_user = await post(client, {"user_id": "bob", "fact": TURNS[1], "source_session": "s1"})
    for created in (alone, other_session, other_user):
        assert np.allclose(
            normalize(stored_vector(client, created["id"]))[0], await embedded(minilm, TURNS[1]), atol=1e-5
        )


async def test_an_edit_is_re_embedded_with_the_same_context(client: TestClient, minilm: Any) -> None:
    await post(client, {"user_id": "mel", "fact": TURNS[0], "source_session": "s1"})
    answer = await post(client, {"user_id": "mel", "fact": TURNS[1], "source_session": "s1"})
    edited = "Melanie: Yes, Porto!"
    response = await client.patch(f"/memories/{answer['id']}", json={"fact": edited})
    assert response.status == 200
    assert np.allclose(
        normalize(stored_vector(client, answer["id"]))[0],
        await embedded(minilm, f"{TURNS[0]}\n{edited}"),
        atol=1e-5,
    )


async def test_the_short_answer_is_found_by_the_question_it_answers(
    aiohttp_client: Any, tmp_path: Path, minilm: Any
) -> None:
    """With its context the answer ranks right after its question; alone, chatter gets ahead of it."""
    body = [{"user_id": "mel", "fact": t, "source_session": "s1"} for t in TURNS]
    body += [{"user_id": "mel", "fact": f"Caroline: note {i} about the weekly groceries."} for i in range(30)]
    ranks = {}
    for window in (2, 0):
        # The subject boost (Melanie is named) would lift her turns too: this measures the context alone.
        config = make_config(
            tmp_path / f"w{window}", embeddings={"session_context": window}, search={"subject_boost": 0}
        )
        client = await aiohttp_client(create_app(config, embedder=minilm))
        await post(client, body)
        response = await client.post(
            "/hybrid-search",
            json={
                "query": "Where did Melanie go for spring break?",
                "user_id": "mel",
                "mode": "vector",
                "limit": 34,
            },
        )
        facts = [r["fact"] for r in (await response.json())["results"]]
        ranks[window] = facts.index(TURNS[1])
    assert ranks[2] == 1 and ranks[0] > 1, ranks  # right after the question it answers


async def test_a_fact_without_a_speaker_label_stands_alone_even_with_a_session(
    client: TestClient, minilm: Any
) -> None:
    """An agent's memory_store sends its session key with a fact: the fact is embedded alone, and
    it is no context for the turns after it."""
    first = await post(client, {"user_id": "mel", "fact": TURNS[0], "source_session": "s1"})
    fact = "The user's sister is called Ana."
    stored = await post(client, {"user_id": "mel", "fact": fact, "source_session": "s1"})
    answer = await post(client, {"user_id": "mel", "fact": TURNS[1], "source_session": "s1"})
    assert np.allclose(
        normalize(stored_vector(client, stored["id"]))[0], await embedded(minilm, fact), atol=1e-5
    )
    assert np.allclose(
        normalize(stored_vector(client, answer["id"]))[0],
        await embedded(minilm, f"{TURNS[0]}\n{TURNS[1]}"),
        atol=1e-5,
    )
    assert first["embedded"] and stored["embedded"]
    # In one batch the same holds: the fact between the two turns is not their context.
    batch = await post(
        client,
        [
            {"user_id": "bob", "fact": TURNS[0], "source_session": "s9"},
            {"user_id": "bob", "fact": fact, "source_session": "s9"},
            {"user_id": "bob", "fact": TURNS[1], "source_session": "s9"},
        ],
    )
    ids = [item["id"] for item in batch["memories"]]
    assert np.allclose(normalize(stored_vector(client, ids[1]))[0], await embedded(minilm, fact), atol=1e-5)
    assert np.allclose(
        normalize(stored_vector(client, ids[2]))[0],
        await embedded(minilm, f"{TURNS[0]}\n{TURNS[1]}"),
        atol=1e-5,
    )
