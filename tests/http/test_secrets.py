"""No secret is ever stored, whatever path a text takes: LLM extraction, the rules extractor,
``POST /memories``, ``PATCH``, MCP ``remember`` and ``POST /import`` (memory_cortex/redaction.py)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import pytest
from aiohttp.test_utils import TestClient

from memory_cortex.app import create_app
from memory_cortex.redaction import SECRET_MARK
from tests.conftest import make_config
from tests.helpers import ChatServer, import_workspace
from tests.mcp.helpers import error_text, mcp_client, mcp_url, structured

SECRETS = ("hunter2", "4821", "sk-proj-abcdefghijklmnopqrstuvwxyz123456", "4111 1111 1111 1111")
CONVERSATION = [
    {"role": "user", "content": "Remember that the wifi password is hunter2 and my bank PIN is 4821."},
    {"role": "assistant", "content": "Got it."},
    {
        "role": "user",
        "content": "My OpenAI key is sk-proj-abcdefghijklmnopqrstuvwxyz123456. I live in Porto.",
    },
    {"role": "user", "content": "Pay with my card number 4111 1111 1111 1111 from now on."},
]
# What a model that extracts everything it is told answers.
EXTRACTED = json.dumps(
    [
        {"topic": "wifi", "fact": "The user's wifi password is hunter2.", "importance": 8, "category": "fact"},
        {"topic": "bank", "fact": "The user's bank PIN is 4821.", "importance": 8, "category": "fact"},
        {"topic": "keys", "fact": "The user's OpenAI API key is sk-proj-abcdefghijklmnopqrstuvwxyz123456.",
         "importance": 7, "category": "fact"},
        {"topic": "payment", "fact": "The user pays with card 4111 1111 1111 1111.", "importance": 6,
         "category": "preference"},
        {"topic": "wifi", "fact": "The user's wifi password is [secret removed].", "importance": 8,
         "category": "fact"},
        {"topic": "home", "fact": "The user lives in Porto.", "importance": 7, "category": "identity"},
    ]
)  # fmt: skip


@pytest.fixture
async def chat_model(aiohttp_server: Any) -> AsyncIterator[ChatServer]:
    model = ChatServer(EXTRACTED)
    server = await aiohttp_server(model.app)
    model.port = server.port
    yield model


async def all_text(client: TestClient, user_id: str = "sam", kinds: str = "fact,turn") -> str:
    """Everything stored for the user, as the API lists it (facts, topics, metadata)."""
    response = await client.get("/memories", params={"user_id": user_id, "limit": 1000, "kinds": kinds})
    assert response.status == 200
    return json.dumps(await response.json(), ensure_ascii=False)


def assert_no_secret(text: str) -> None:
    for secret in SECRETS:
        assert secret not in text, secret


async def ingest_and_wait(client: TestClient) -> None:
    body = {"messages": CONVERSATION, "session_id": "s", "user_id": "sam", "debounce": False}
    assert (await client.post("/ingest", json=body)).status == 202
    for _ in range(400):
        jobs = (await (await client.get("/ingest/jobs")).json())["jobs"]
        if jobs and jobs[0]["status"] in ("done", "failed"):
            assert jobs[0]["status"] == "done", jobs[0]
            return
        await asyncio.sleep(0.05)
    raise AssertionError("the ingest job did not finish")


async def test_a_model_that_extracts_secrets_stores_none(
    aiohttp_client: Any, tmp_path: Any, minilm: Any, chat_model: ChatServer
) -> None:
    config = make_config(tmp_path, llm=chat_model.llm_config(), ingest={"debounce_s": 0})
    client = await aiohttp_client(create_app(config, embedder=minilm))
    await ingest_and_wait(client)
    # The model never saw a secret: the transcript is masked before the prompt is built …
    assert chat_model.requests
    assert_no_secret(chat_model.prompts())
    assert SECRET_MARK in chat_model.prompts()
    assert "never credentials" in chat_model.prompts().lower() or "Never credentials" in chat_model.prompts()
    # … and what it answered with secrets in it (or their masked remains) is dropped; the turns
    # keep what was said with each secret masked in place.
    stored = await all_text(client)
    assert_no_secret(stored)
    facts = await all_text(client, kinds="fact")
    assert SECRET_MARK not in facts and "Porto" in facts
    assert f"the wifi password is {SECRET_MARK}" in await all_text(client, kinds="turn")
    context = await (
        await client.post("/context", json={"query": "wifi password bank pin", "user_id": "sam"})
    ).json()
    assert_no_secret(context["context"])


async def test_the_rules_extractor_stores_no_secret(aiohttp_client: Any, tmp_path: Any, minilm: Any) -> None:
    client = await aiohttp_client(
        create_app(make_config(tmp_path, ingest={"debounce_s": 0}), embedder=minilm)
    )
    await ingest_and_wait(client)
    assert_no_secret(await all_text(client))
    assert SECRET_MARK not in await all_text(client, kinds="fact")


async def test_the_journal_never_holds_a_secret_while_the_job_waits(
    aiohttp_client: Any, tmp_path: Any, minilm: Any
) -> None:
    """The transcript waits in the journal for its debounce: masked before it is written, in every
    file of the database (the WAL included), block-shaped content too."""
    config = make_config(tmp_path, ingest={"debounce_s": 3600})
    client = await aiohttp_client(create_app(config, embedder=minilm))
    blocks = [
        {"role": "user", "content": [{"type": "text", "text": "The door code is 4821."}], "name": "Sam"}
    ]
    body = {"messages": CONVERSATION + blocks, "session_id": "s", "user_id": "sam"}
    assert (await client.post("/ingest", json=body)).status == 202

    [job] = (await (await client.get("/ingest/jobs")).json())["jobs"]
    assert job["status"] == "pending"
    database = config.database.path
    for path in database.parent.glob(database.name + "*"):
        assert_no_secret(path.read_bytes().decode("utf-8", "replace"))
    detail = await (await client.get(f"/ingest/jobs/{job['id']}")).json()
    assert detail["job"]["message_count"] == 5


async def test_the_journal_keeps_only_what_the_worker_reads_and_every_name_masked(
    aiohttp_client: Any, tmp_path: Any, minilm: Any
) -> None:
    """Issue 34: tool-call arguments, extra keys, a name and a message id sat unmasked in the
    journal (and its WAL) while a job waited; a turn's ref and a memory's metadata keys kept a
    token; a session id shaped like one was stored as it came."""
    config = make_config(tmp_path, ingest={"debounce_s": 3600})
    client = await aiohttp_client(create_app(config, embedder=minilm))
    token = "ghp_" + "a" * 36
    messages = [
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Checking the repo."},
                {"type": "tool_use", "name": "git", "input": {"password": "zebra-tool-arg-77"}},
            ],
            "id": token,
            "extra": {"note": "zebra-extra-key-88"},
        },
        {"role": "user", "content": "ok", "name": f"Sam {token}"},
    ]
    body = {"messages": messages, "session_id": "s", "user_id": "sam"}
    assert (await client.post("/ingest", json=body)).status == 202
    database = config.database.path
    stored = "".join(
        path.read_bytes().decode("utf-8", "replace") for path in database.parent.glob(database.name + "*")
    )
    for kept in (token, "zebra-tool-arg-77", "zebra-extra-key-88"):
        assert kept not in stored, kept
    [job] = (await (await client.get("/ingest/jobs")).json())["jobs"]
    assert job["message_count"] == 2

    memory = await client.post(
        "/memories",
        json={"user_id": "sam", "fact": "Sam's repo moved.", "ref": token, "metadata": {token: 1}},
    )
    assert memory.status == 201
    assert token not in await memory.text()
    refused = await client.post("/ingest", json={**body, "session_id": token})
    assert refused.status == 400
    assert (await refused.json())["error"]["message"].startswith("session_id: looks like a credential"), (
        await refused.text()
    )


async def test_the_api_masks_secrets_and_refuses_a_fact_that_is_only_one(client: TestClient) -> None:
    response = await client.post(
        "/memories",
        json={
            "user_id": "sam",
            "fact": "The garage door code is 4821 and the wifi password is hunter2.",
            "topic": "codes",
            "metadata": {"note": "key sk-proj-abcdefghijklmnopqrstuvwxyz123456", "n": 1},
        },
    )
    assert response.status == 201
    body = await response.json()
    assert body["fact"] == f"The garage door code is {SECRET_MARK} and the wifi password is {SECRET_MARK}."
    assert body["metadata"] == {"note": f"key {SECRET_MARK}", "n": 1}

    response = await client.post(
        "/memories", json={"user_id": "sam", "fact": "sk-proj-abcdefghijklmnopqrstuvwxyz123456"}
    )
    assert response.status == 400
    assert (await response.json())["error"]["code"] == "only_a_secret"

    response = await client.patch(
        f"/memories/{body['id']}", json={"fact": "The bank PIN is 4821.", "topic": "pin 4821"}
    )
    assert response.status == 200
    assert (await response.json())["fact"] == f"The bank PIN is {SECRET_MARK}."
    assert_no_secret(await all_text(client))


@pytest.mark.parametrize(
    ("fact", "secret"),
    [
        ("Staging runs with DB_PASSWORD=hunter2 in its .env", "hunter2"),
        ('The app config has {"api_key": "abcd1234efgh5678ijkl"} in it', "abcd1234efgh5678ijkl"),
        ("I log in with mysql --password=s3cr3tpass -u root", "s3cr3tpass"),
        ("My passphrase is orbit velvet canyon moss", "velvet canyon moss"),
        ("Mein WLAN-Passwort ist Sommer2024", "Sommer2024"),
    ],
)
async def test_the_api_masks_secrets_in_machine_formats_and_other_languages(
    client: TestClient, fact: str, secret: str
) -> None:
    """Issue 34, item 3: these were stored verbatim through POST /memories."""
    response = await client.post("/memories", json={"user_id": "sam", "fact": fact})
    assert response.status == 201
    stored = (await response.json())["fact"]
    assert SECRET_MARK in stored and not any(word in stored for word in secret.split()), stored


async def test_the_api_keeps_identifiers_that_look_like_card_numbers(client: TestClient) -> None:
    """A run of digits inside a hex id is no card number: it came back mangled before."""
    fact = "Order id 2fbf4a1c9d8e7f6a4874924115862c0d confirmed, tracking 1Z999AA10123456784."
    response = await client.post("/memories", json={"user_id": "sam", "fact": fact})
    assert response.status == 201 and (await response.json())["fact"] == fact


async def test_mcp_remember_masks_secrets(client: TestClient) -> None:
    async with mcp_client(mcp_url(client)) as mcp:
        stored = structured(await mcp.call_tool("remember", {"fact": "The user's wifi password is hunter2."}))
        refused = await mcp.call_tool("remember", {"fact": "ghp_abcdefghijklmnopqrstuvwxyz0123456789"})
    assert stored["fact"] == f"The user's wifi password is {SECRET_MARK}."
    assert refused.is_error and "secret" in error_text(refused)
    assert_no_secret(await all_text(client, "default"))
    assert "ghp_" not in await all_text(client, "default")


async def test_an_import_masks_secrets_and_skips_a_bullet_that_is_only_one(client: TestClient) -> None:
    files = {
        "MEMORY.md": "# Memory\n\n## Facts\n\n- The wifi password is hunter2.\n- sk-proj-abcdefghijklmnopqrstuvwxyz123456\n"
        "- Sam lives in Porto.\n"
    }
    summary = await import_workspace(client, {"user_id": "sam", "files": files})
    assert (summary["added"], summary["secrets"]) == (2, 1)
    stored = await all_text(client)
    assert_no_secret(stored)
    assert f"The wifi password is {SECRET_MARK}." in stored
    # A second import adds nothing: the masked wording is remembered as the file's.
    again = await import_workspace(client, {"user_id": "sam", "files": files})
    assert again["added"] == again["merged"] == 0
