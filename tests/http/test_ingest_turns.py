"""Every message posted to /ingest is kept verbatim as a turn, beside the extracted facts (issue 20)."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from aiohttp.test_utils import TestClient

from memory_cortex.app import create_app
from memory_cortex.redaction import SECRET_MARK
from tests.conftest import make_config
from tests.fakes import ScriptedLLM
from tests.helpers import wait_idle

# OpenClaw sends epoch milliseconds; 1747822800000 is 2025-05-21T10:20:00Z.
SESSION = [
    {"role": "user", "content": "I finally booked the flight to Lisbon for my sister's wedding.",
     "name": "Tim", "timestamp": 1747822800000, "id": "msg-1"},
    {"role": "assistant", "content": "Congratulations! When is the wedding?", "timestamp": 1747822805000},
    {"role": "user", "content": "On the 14th of June, in Sintra.", "name": "Tim", "id": "msg-3"},
]  # fmt: skip


async def start(
    aiohttp_client: Any, tmp_path: Any, minilm: Any, llm: Any = None, **ingest: Any
) -> TestClient:
    config = make_config(tmp_path, ingest={"debounce_s": 0, "retry_backoff_s": 30, **ingest})
    return await aiohttp_client(create_app(config, embedder=minilm, llm=llm))


async def post(
    client: TestClient, messages: list[dict[str, Any]], session: str = "s", user: str = "tim"
) -> None:
    body = {
        "messages": messages,
        "session_id": session,
        "user_id": user,
        "channel": "telegram",
        "debounce": False,
    }
    response = await client.post("/ingest", json=body)
    assert response.status == 202, await response.text()


async def turns_of(client: TestClient, user: str = "tim", wait_for: int = 1) -> list[dict[str, Any]]:
    """The user's turns, oldest first, once at least ``wait_for`` are stored."""
    deadline = time.monotonic() + 20
    while True:
        listed = await (
            await client.get("/memories", params={"user_id": user, "kinds": "turn", "limit": 1000})
        ).json()
        turns = sorted(listed["memories"], key=lambda m: m["id"])
        if len(turns) >= wait_for or time.monotonic() > deadline:
            return turns
        await asyncio.sleep(0.05)


async def test_each_message_becomes_a_turn_with_speaker_session_time_and_ref(
    aiohttp_client: Any, tmp_path: Any, minilm: Any
) -> None:
    client = await start(aiohttp_client, tmp_path, minilm)
    await post(client, SESSION)
    await wait_idle(client)

    turns = await turns_of(client, wait_for=3)
    assert [t["fact"] for t in turns] == [
        "Tim: I finally booked the flight to Lisbon for my sister's wedding.",
        "Assistant: Congratulations! When is the wedding?",
        "Tim: On the 14th of June, in Sintra.",
    ]
    assert {t["kind"] for t in turns} == {"turn"}
    assert [t["ref"] for t in turns] == ["msg-1", None, "msg-3"]
    assert {(t["source_session"], t["source_channel"]) for t in turns} == {("s", "telegram")}
    assert turns[0]["occurred_at"] == "2025-05-21T10:20:00.000Z"
    assert turns[1]["occurred_at"] == "2025-05-21T10:20:05.000Z"
    assert turns[2]["occurred_at"] is None or turns[2]["occurred_at"] >= "2026"  # receipt time: no timestamp
    assert {t["layer"] for t in turns} == {"working"}  # turns never start in core

    # Found by every search path, attributed: the question's words are only in the turns.
    found = await (
        await client.post("/hybrid-search", json={"query": "where is the wedding?", "user_id": "tim"})
    ).json()
    assert any("Sintra" in r["fact"] and r["kind"] == "turn" for r in found["results"])


async def test_metadata_of_a_type_it_cannot_be_is_ignored_never_refused(
    aiohttp_client: Any, tmp_path: Any, minilm: Any
) -> None:
    """Found by the fuzzer: a float ``id`` was accepted while the document said string or integer.
    The document now says what the server does: any value, and what cannot be used is ignored."""
    client = await start(aiohttp_client, tmp_path, minilm)
    odd = {"id": 2.5e-42, "name": {"first": "Tim"}, "owner": "yes", "timestamp": [1, 2]}
    await post(client, [{"role": "user", "content": "I keep bees on the roof.", **odd}])
    await wait_idle(client)

    (turn,) = await turns_of(client)
    assert turn["fact"] == "User: I keep bees on the roof."
    assert turn["ref"] is None
    document = await (await client.get("/openapi.json")).json()
    message = document["components"]["schemas"]["IngestMessage"]["properties"]
    assert all(not {"type", "anyOf"} & set(message[key]) for key in odd)


async def test_a_resent_or_compacted_history_never_stores_a_turn_twice(
    aiohttp_client: Any, tmp_path: Any, minilm: Any
) -> None:
    client = await start(aiohttp_client, tmp_path, minilm)
    await post(client, SESSION[:2])
    await wait_idle(client)
    await post(client, SESSION)  # the whole session again, one message longer
    await wait_idle(client)
    await post(client, SESSION)  # the same again: nothing new
    await wait_idle(client)
    compacted = [{"role": "compactionSummary", "content": "Tim is going to a wedding."}, SESSION[2],
                 {"role": "user", "content": "I also need a suit.", "name": "Tim"}]  # fmt: skip
    await post(client, compacted)
    await wait_idle(client)

    facts = [t["fact"] for t in await turns_of(client, wait_for=4)]
    assert facts == [
        "Tim: I finally booked the flight to Lisbon for my sister's wedding.",
        "Assistant: Congratulations! When is the wedding?",
        "Tim: On the 14th of June, in Sintra.",
        "Tim: I also need a suit.",
    ]
    # A message genuinely said again later is a new turn.
    await post(client, [*compacted, {"role": "user", "content": "I also need a suit.", "name": "Tim"}])
    await wait_idle(client)
    assert len(await turns_of(client, wait_for=5)) == 5


async def test_a_session_resent_from_its_start_never_stores_its_middle_twice(
    aiohttp_client: Any, tmp_path: Any, minilm: Any
) -> None:
    """A post that brings nothing new (the session's start again) leaves what was stored as it was:
    the next full post stores only what is new."""
    client = await start(aiohttp_client, tmp_path, minilm)
    await post(client, SESSION)
    await wait_idle(client)
    await post(client, SESSION[:1])  # the session from its start, shorter
    await wait_idle(client)
    await post(client, [*SESSION, {"role": "user", "content": "I also need a suit.", "name": "Tim"}])
    await wait_idle(client)
    facts = [t["fact"] for t in await turns_of(client, wait_for=4)]
    assert len(facts) == len(set(facts)) == 4, facts


async def test_turns_are_kept_while_the_model_fails(aiohttp_client: Any, tmp_path: Any, minilm: Any) -> None:
    """A slow, failing or absent LLM never holds the conversation back: the job retries later."""
    client = await start(aiohttp_client, tmp_path, minilm, ScriptedLLM("down"), max_attempts=3)
    await post(client, SESSION)
    turns = await turns_of(client, wait_for=3)
    assert len(turns) == 3
    jobs = (await (await client.get("/ingest/jobs")).json())["jobs"]
    assert jobs[0]["status"] in ("pending", "running")  # extraction is still to succeed
    facts = await (await client.get("/memories", params={"user_id": "tim", "kinds": "fact"})).json()
    assert facts["count"] == 0


async def test_a_secret_in_a_message_is_masked_in_its_turn(
    aiohttp_client: Any, tmp_path: Any, minilm: Any
) -> None:
    client = await start(aiohttp_client, tmp_path, minilm)
    await post(client, [{"role": "user", "content": "The wifi password is hunter2, and my PIN is 4821."},
                        {"role": "user", "content": "sk-proj-abcdefghijklmnopqrstuvwxyz123456"}])  # fmt: skip
    await wait_idle(client)
    turns = await turns_of(client)
    assert [t["fact"] for t in turns] == [
        f"User: The wifi password is {SECRET_MARK}, and my PIN is {SECRET_MARK}."
    ]


async def test_a_long_message_is_split_into_parts_of_one_turn(
    aiohttp_client: Any, tmp_path: Any, minilm: Any
) -> None:
    client = await start(aiohttp_client, tmp_path, minilm, turn_max_chars=300)
    paragraphs = [
        f"Paragraph {i}: " + " ".join(["We walked along the river and talked."] * 5) for i in range(4)
    ]
    await post(client, [{"role": "assistant", "content": "\n\n".join(paragraphs), "id": "long-1"}])
    await wait_idle(client)
    turns = await turns_of(client, wait_for=2)
    assert len(turns) >= 2 and all(len(t["fact"]) <= 300 + len("Assistant: ") for t in turns)
    assert {t["ref"] for t in turns} == {"long-1"}
    assert [t["metadata"]["part"] for t in turns] == list(range(1, len(turns) + 1))
    assert {t["metadata"]["parts"] for t in turns} == {len(turns)}
    text = " ".join(t["fact"].removeprefix("Assistant: ") for t in turns)
    assert " ".join(text.split()) == " ".join("\n\n".join(paragraphs).split())  # nothing lost or repeated


async def test_facts_only_when_turns_are_switched_off(
    aiohttp_client: Any, tmp_path: Any, minilm: Any
) -> None:
    client = await start(aiohttp_client, tmp_path, minilm, store_turns=False)
    await post(client, [{"role": "user", "content": "Remember that my bike is a green Bianchi."}])
    await wait_idle(client)
    listed = await (await client.get("/memories", params={"user_id": "tim"})).json()
    assert listed["count"] >= 1 and {m["kind"] for m in listed["memories"]} == {"fact"}


async def test_kinds_choose_facts_turns_or_both_on_every_endpoint(
    aiohttp_client: Any, tmp_path: Any, minilm: Any
) -> None:
    client = await start(aiohttp_client, tmp_path, minilm)
    await post(client, [{"role": "user", "content": "Remember that my bike is a green Bianchi from 1987."}])
    await wait_idle(client)
    await post(client, [{"role": "user", "content": "My bike is a green Bianchi too."}], user="ana")
    await wait_idle(client)

    async def kinds_found(path: str, **extra: Any) -> set[str]:
        body = {"query": "green Bianchi bike", "user_id": "tim", "limit": 10, **extra}
        answer = await (await client.post(path, json=body)).json()
        return {r["kind"] for r in answer["results"]}

    assert await kinds_found("/hybrid-search") == {"fact", "turn"}
    assert await kinds_found("/hybrid-search", kinds=["turn"]) == {"turn"}
    assert await kinds_found("/hybrid-search", kinds=["fact"]) == {"fact"}
    for mode in ("fts", "vector"):
        assert await kinds_found("/hybrid-search", kinds=["turn"], mode=mode) == {"turn"}
    context = await (
        await client.post("/context", json={"query": "bike", "user_id": "tim", "kinds": ["fact"]})
    ).json()
    assert "Bianchi" in context["context"] and "User:" not in context["context"]
    context = await (
        await client.post("/context", json={"query": "bike", "user_id": "tim", "kinds": ["turn"]})
    ).json()
    assert "User: Remember that my bike" in context["context"]
    recall = await (
        await client.post("/recall", json={"query": "bike", "user_id": "tim", "kinds": ["turn"]})
    ).json()
    assert recall["memories_used"] == 1
    listed = await (await client.get("/memories", params={"user_id": "tim", "kinds": "fact"})).json()
    assert {m["kind"] for m in listed["memories"]} == {"fact"}
    assert (await client.get("/memories", params={"kinds": "facts"})).status == 400
    assert (await client.post("/hybrid-search", json={"query": "x", "kinds": []})).status == 400
    # Another user's turn is never found for tim.
    every = await (
        await client.post(
            "/hybrid-search", json={"query": "green Bianchi", "user_id": "tim", "kinds": ["turn"]}
        )
    ).json()
    assert all(r["user_id"] == "tim" and "too" not in r["fact"] for r in every["results"])


async def test_context_gives_facts_first_then_dated_attributed_turns_within_its_budget(
    aiohttp_client: Any, tmp_path: Any, minilm: Any
) -> None:
    client = await start(aiohttp_client, tmp_path, minilm)
    await post(
        client,
        [*SESSION, {"role": "user", "content": "Remember that my sister is called Ana.", "name": "Tim"}],
    )
    await wait_idle(client)

    body = {"query": "Tim's sister wedding in Sintra", "user_id": "tim", "max_facts": 10}
    block = (await (await client.post("/context", json={**body, "max_tokens": 500})).json())["context"]
    lines = block.splitlines()
    first_turn = next(i for i, line in enumerate(lines) if line.startswith("- 2025-05-21, Tim: "))
    fact_lines = [i for i, line in enumerate(lines) if line.startswith("- [")]
    assert fact_lines and max(fact_lines) < first_turn  # facts first, then quotes
    assert "- 2025-05-21, Tim: On the 14th of June, in Sintra." not in lines  # no timestamp: received today
    assert any(line.endswith("Tim: On the 14th of June, in Sintra.") for line in lines)

    small = (await (await client.post("/context", json={**body, "max_tokens": 40})).json())["context"]
    assert len(small) <= 40 * 4 and small.startswith("## Long-Term Memories")


async def test_turns_never_merge_with_each_other_or_with_facts(
    aiohttp_client: Any, tmp_path: Any, minilm: Any
) -> None:
    """The fact extracted from a turn is nearly the turn's words: it is stored beside it, and the
    same words said twice are two turns."""
    client = await start(aiohttp_client, tmp_path, minilm)
    said = {"role": "user", "content": "Remember that my bike is called Papaya Bridge Cello."}
    await post(client, [said, {"role": "assistant", "content": "Noted."}, said])
    await wait_idle(client)
    listed = (await (await client.get("/memories", params={"user_id": "tim"})).json())["memories"]
    kinds = sorted(m["kind"] for m in listed if "Papaya Bridge Cello" in m["fact"])
    assert kinds == ["fact", "turn", "turn"]


async def test_an_extracted_fact_records_the_turns_it_came_from(
    aiohttp_client: Any, tmp_path: Any, minilm: Any
) -> None:
    client = await start(aiohttp_client, tmp_path, minilm)
    await post(client, SESSION)
    await wait_idle(client)
    await post(
        client,
        [*SESSION, {"role": "user", "content": "Remember that my sister is called Ana.", "name": "Tim"}],
    )
    await wait_idle(client)
    turns = await turns_of(client, wait_for=4)
    facts = (await (await client.get("/memories", params={"user_id": "tim", "kinds": "fact"})).json())[
        "memories"
    ]
    [ana] = [fact for fact in facts if "Ana" in fact["fact"]]
    assert ana["derived_from"] == [turns[3]["id"]]  # the new message of its job, not the earlier ones
    detail = await (await client.get(f"/memories/{ana['id']}")).json()
    assert detail["derived_from"] == [turns[3]["id"]]
    assert all(turn["derived_from"] == [] for turn in turns)
    # A person deletes the turn: the fact made from it stays as it was.
    deleted = await client.delete(
        f"/memories/{turns[3]['id']}", params={"user_id": "tim"}, headers={"Content-Type": "application/json"}
    )
    assert deleted.status == 200, await deleted.text()
    assert (await client.get(f"/memories/{turns[3]['id']}")).status == 404
    kept = await (await client.get(f"/memories/{ana['id']}")).json()
    assert (kept["fact"], kept["superseded_by"]) == (ana["fact"], None)
