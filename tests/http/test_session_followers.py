"""Session followers: the turns right after an FTS hit in its session get a share of its score, so
an answer is found by the words of the question it answers — never across users, sessions,
layers or to standalone facts."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from aiohttp.test_utils import TestClient

from memory_cortex.app import create_app
from tests.conftest import make_config
from tests.helpers import search, store

SESSION = [
    "Caroline: What did you think of the book Becoming Nicole?",
    "Melanie: It taught me self-acceptance and how to find support.",
    "Melanie: Also, the dog loved the park today.",
    "Caroline: Shall we meet on Friday?",
]
QUERY = "What did she take away from Becoming Nicole?"


async def start(aiohttp_client: Any, tmp_path: Path, minilm: Any, **search_settings: Any) -> TestClient:
    config = make_config(tmp_path, search={"subject_boost": 0, **search_settings})
    return await aiohttp_client(create_app(config, embedder=minilm))


async def fts_facts(client: TestClient, user_id: str = "mel", **extra: Any) -> dict[str, float]:
    found = await search(client, QUERY, user_id, mode="fts", limit=10, **extra)
    return {hit["fact"]: hit["fts_score"] for hit in found["results"]}


async def test_the_answer_after_the_question_is_found_by_its_words(
    aiohttp_client: Any, tmp_path: Path, minilm: Any
) -> None:
    client = await start(aiohttp_client, tmp_path, minilm)
    await store(
        client, *({"user_id": "mel", "fact": t, "source_session": "s1"} for t in SESSION), dedup=False
    )
    scores = await fts_facts(client)
    question, answer, next_one, later = SESSION
    assert scores[question] == 1.0
    assert scores[answer] == 0.35 and scores[next_one] == 0.35  # the next two turns
    assert later not in scores  # the third turn after it is not credited

    off = await start(aiohttp_client, tmp_path / "off", minilm, follower_weight=0)
    await store(off, *({"user_id": "mel", "fact": t, "source_session": "s1"} for t in SESSION), dedup=False)
    assert set(await fts_facts(off)) == {question}


async def test_followers_stay_in_their_user_session_and_layers(
    aiohttp_client: Any, tmp_path: Path, minilm: Any
) -> None:
    client = await start(aiohttp_client, tmp_path, minilm)
    question, answer, *_ = SESSION
    await store(
        client,
        {"user_id": "mel", "fact": question, "source_session": "s1"},
        {
            "user_id": "bob",
            "fact": "Bob: a turn of another user, a session of the same name.",
            "source_session": "s1",
        },
        {"user_id": "mel", "fact": "Caroline: a turn of another session.", "source_session": "s2"},
        {"user_id": "mel", "fact": "Mel likes tea (a standalone fact)."},
        {"user_id": "mel", "fact": answer, "source_session": "s1", "layer": "archive"},
        {"user_id": "mel", "fact": "Melanie: the next live turn of the session.", "source_session": "s1"},
        dedup=False,
    )
    scores = await fts_facts(client)
    assert set(scores) == {question, "Melanie: the next live turn of the session."}
    # Asked with the archive, the archived answer is the next turn again.
    with_archive = await fts_facts(client, layers=["core", "working", "archive"])
    assert with_archive[answer] == 0.35
    bob = await fts_facts(client, user_id="bob")
    assert bob == {}
