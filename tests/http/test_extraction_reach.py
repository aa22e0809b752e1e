"""Issue 34, item 2: an extraction job reads as context only what was said where its own messages
were. A session id used first in private and then by a group (OpenClaw's ``groupScope: "main"``)
must not show the group's extraction the private words, or what a model echoes from them would be
stored as shared. The model here echoes every marker it is shown, as a model that extracts whatever
it reads would."""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator
from typing import Any

import pytest
from aiohttp.test_utils import TestClient

from memory_cortex.app import create_app
from tests.conftest import make_config
from tests.helpers import ChatServer
from tests.http.test_beliefs import facts_of, ingest, said

CHANNEL = "telegram:group:-100"


def echo(prompt: str) -> str:
    """One fact about Bob per marker in the prompt, as a model that believes every word it is shown."""
    markers = dict.fromkeys(re.findall(r"\bMARK-\w+", prompt))
    return json.dumps(
        [
            {
                "topic": "note",
                "fact": f"Bob mentioned {marker}.",
                "importance": 7,
                "category": "fact",
                "subject": "Bob",
                "source": [1],
            }
            for marker in markers
        ]
    )


@pytest.fixture
async def model(aiohttp_server: Any) -> AsyncIterator[ChatServer]:
    chat = ChatServer("[]", reply=echo)
    server = await aiohttp_server(chat.app)
    chat.port = server.port
    yield chat


async def start(aiohttp_client: Any, tmp_path: Any, minilm: Any, model: ChatServer) -> TestClient:
    config = make_config(tmp_path, llm=model.llm_config())
    return await aiohttp_client(create_app(config, embedder=minilm))


async def test_a_group_job_never_reads_the_private_words_of_a_reused_session_id(
    aiohttp_client: Any, tmp_path: Any, minilm: Any, model: ChatServer
) -> None:
    client = await start(aiohttp_client, tmp_path, minilm, model)
    private = [said("Between us: my new flat is above the MARK-private7731 bakery.", "2026-03-01T10:00:00Z")]
    await ingest(client, private, session_kind="private")
    shared = said("Who is bringing drinks? MARK-group42", "2026-03-01T11:00:00Z", name="Bob")
    await ingest(client, [*private, shared], session_kind="group", channel=CHANNEL)

    assert "MARK-group42" in model.prompts()  # the group job did ask the model
    facts = await facts_of(client)
    shared_facts = [f["fact"] for f in facts if f["visibility"] == "shared"]
    assert any("MARK-group42" in fact for fact in shared_facts), facts  # the echo reaches the store
    assert not any("MARK-private" in fact for fact in shared_facts), shared_facts
    # And the group's own reading of the session: what a group requester is handed.
    seen = await client.post(
        "/context",
        json={"query": "flat bakery", "user_id": "priya", "session_kind": "group", "channel": CHANNEL},
    )
    assert "MARK-private" not in (await seen.json())["context"]


async def test_a_job_of_the_same_reach_still_reads_the_session_before_it(
    aiohttp_client: Any, tmp_path: Any, minilm: Any, model: ChatServer
) -> None:
    client = await start(aiohttp_client, tmp_path, minilm, model)
    first = said("The project is called MARK-orion.", "2026-03-01T10:00:00Z")
    await ingest(client, [first])
    model.requests.clear()
    await ingest(client, [first, said("It ships in May.", "2026-03-01T10:05:00Z")])
    assert "MARK-orion" in model.prompts()  # the earlier message, as context
