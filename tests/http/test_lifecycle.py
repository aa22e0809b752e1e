"""The lifecycle endpoints through the real server: run, preview, log, dry runs, one user, busy."""

from __future__ import annotations

import asyncio
import time
from datetime import UTC, datetime, timedelta
from typing import Any

from aiohttp.test_utils import TestClient

from memory_cortex.app import create_app
from memory_cortex.config import Config
from memory_cortex.keys import DATABASE, LIFECYCLE_SERVICE
from memory_cortex.models.embedders import SentenceTransformerEmbedder
from memory_cortex.services.lifecycle import iso
from tests.fakes import MovableClock, ScriptedLLM
from tests.helpers import run_lifecycle, search, store

JSON = {"Content-Type": "application/json"}  # every write declares JSON, body or not (http/guard.py)

T0 = datetime(2026, 1, 5, 12, 0, tzinfo=UTC)


async def start(aiohttp_client: Any, config: Config, minilm: SentenceTransformerEmbedder) -> TestClient:
    clock = MovableClock(T0)
    client = await aiohttp_client(
        create_app(config, embedder=minilm, llm=ScriptedLLM(answer="Sam's spring."), lifecycle_clock=clock)
    )
    client.clock = clock  # type: ignore[attr-defined]
    return client


def days_ago(days: float) -> str:
    return iso(T0 - timedelta(days=days))


async def entered_when_created(client: TestClient) -> None:
    """Every stored memory entered its layer when it was created (a write sets ``layer_since`` to
    now, whatever ``created_at`` says: issue 23); as if each had been written on its date."""
    await client.app[DATABASE].write(
        lambda conn: conn.execute("UPDATE memories SET layer_since = created_at")
    )


async def test_preview_run_and_log(
    aiohttp_client: Any, config: Config, minilm: SentenceTransformerEmbedder
) -> None:
    client = await start(aiohttp_client, config, minilm)
    todo, identity, old = await store(
        client,
        {"user_id": "sam", "fact": "Buy a new bicycle pump.", "category": "todo", "created_at": days_ago(50)},
        {
            "user_id": "sam",
            "fact": "Sam was born in Lisbon.",
            "category": "identity",
            "created_at": days_ago(50),
        },
        {"user_id": "sam", "fact": "Sam sold his car.", "layer": "archive", "created_at": days_ago(200)},
    )
    await entered_when_created(client)
    preview = await client.get("/lifecycle/preview")
    assert preview.status == 200
    planned = await preview.json()
    assert planned["dry_run"] is True and planned["run_id"] is None and planned["trigger"] == "preview"
    assert [s["status"] for s in planned["stages"]] == ["planned"] * 6
    assert (await client.get(f"/memories/{todo['id']}")).status == 200
    report = await run_lifecycle(client)
    assert report["status"] == "done" and report["dry_run"] is False
    stages = {s["name"]: s for s in report["stages"]}
    assert stages["decay"]["ids"]["archived"] == [todo["id"]]
    assert stages["compress"]["groups"][0]["ids"] == [old["id"]]
    assert report["rows_after"] == report["rows_before"] + 1  # the summary; nothing removed
    for before, after in zip(planned["stages"], report["stages"], strict=True):
        assert {k: v for k, v in before["ids"].items() if k != "summaries"} == {
            k: v for k, v in after["ids"].items() if k != "summaries"
        }
    moved = await (await client.get(f"/memories/{todo['id']}")).json()
    assert moved["layer"] == "archive" and moved["layer_since"] == iso(T0)
    assert (await (await client.get(f"/memories/{identity['id']}")).json())["layer"] == "core"
    found = await search(client, "bicycle pump", "sam")
    assert todo["id"] not in [r["id"] for r in found["results"]]
    found = await search(client, "bicycle pump", "sam", layers=["archive"])
    assert [r["id"] for r in found["results"]][:1] == [todo["id"]]
    log = await (await client.get("/lifecycle/log")).json()
    assert log["count"] == 1  # the preview is not logged
    (run,) = log["runs"]
    assert run["id"] == report["run_id"] and run["status"] == "done" and run["trigger"] == "api"
    assert run["report"]["stages"][2]["ids"] == stages["decay"]["ids"]
    assert run["report"]["rows_after"] == report["rows_after"]  # stored whole, not before the count


async def test_a_dry_run_is_logged_and_changes_nothing(
    aiohttp_client: Any, config: Config, minilm: SentenceTransformerEmbedder
) -> None:
    client = await start(aiohttp_client, config, minilm)
    (todo,) = await store(
        client, {"fact": "Call the plumber.", "category": "todo", "created_at": days_ago(60)}
    )
    await entered_when_created(client)
    report = await run_lifecycle(client, dry_run="true")
    assert report["dry_run"] is True and report["stages"][2]["ids"]["archived"] == [todo["id"]]
    assert (await (await client.get(f"/memories/{todo['id']}")).json())["layer"] == "core"
    (run,) = (await (await client.get("/lifecycle/log?limit=5")).json())["runs"]
    assert run["dry_run"] is True and run["report"]["run_id"] == run["id"]


async def test_a_run_can_be_limited_to_one_user(
    aiohttp_client: Any, config: Config, minilm: SentenceTransformerEmbedder
) -> None:
    client = await start(aiohttp_client, config, minilm)
    sams, anns = await store(
        client,
        {"user_id": "sam", "fact": "Buy a new bicycle pump.", "category": "todo", "created_at": days_ago(60)},
        {"user_id": "ann", "fact": "Buy new running shoes.", "category": "todo", "created_at": days_ago(60)},
    )
    await entered_when_created(client)
    report = await run_lifecycle(client, user_id="ann")
    assert report["user_id"] == "ann" and report["stages"][2]["ids"]["archived"] == [anns["id"]]
    assert (await (await client.get(f"/memories/{sams['id']}")).json())["layer"] == "core"
    preview = await (await client.get("/lifecycle/preview", params={"user_id": ""})).json()
    assert preview["user_id"] is None and preview["stages"][2]["ids"]["archived"] == [sams["id"]]


async def test_a_second_run_while_one_is_under_way_is_refused(
    aiohttp_client: Any, config: Config, minilm: SentenceTransformerEmbedder
) -> None:
    client = await start(aiohttp_client, config, minilm)
    service = client.app[LIFECYCLE_SERVICE]
    async with service._lock:  # a run under way that has not logged itself yet: no id to name
        response = await client.post("/lifecycle/run", headers=JSON)
        assert response.status == 409
        error = (await response.json())["error"]
        assert error["code"] == "lifecycle_busy" and "run_id" not in error and "None" not in error["message"]
        assert (await client.get("/lifecycle/preview")).status == 200
    assert (await run_lifecycle(client))["status"] == "done"
    # Two starts at the same moment: one run, and the other answer names it.
    first, second = await asyncio.gather(
        client.post("/lifecycle/run", headers=JSON), client.post("/lifecycle/run", headers=JSON)
    )
    statuses = sorted([first.status, second.status])
    assert statuses == [202, 409], statuses
    started = await (first if first.status == 202 else second).json()
    refused = (await (second if first.status == 202 else first).json())["error"]
    assert "None" not in refused["message"] and refused.get("run_id") in (None, started["id"])


async def test_one_dry_run_at_a_time_and_it_never_blocks_a_run(
    aiohttp_client: Any, config: Config, minilm: SentenceTransformerEmbedder
) -> None:
    client = await start(aiohttp_client, config, minilm)
    service = client.app[LIFECYCLE_SERVICE]
    async with service._dry_lock:  # a logged dry run under way
        response = await client.post("/lifecycle/run?dry_run=true", headers=JSON)
        assert response.status == 409 and (await response.json())["error"]["code"] == "lifecycle_busy"
        assert (await run_lifecycle(client))["status"] == "done"  # a real run may go on beside it
    assert (await run_lifecycle(client, dry_run="true"))["dry_run"] is True


async def test_bad_parameters_are_400(
    aiohttp_client: Any, config: Config, minilm: SentenceTransformerEmbedder
) -> None:
    client = await start(aiohttp_client, config, minilm)
    for method, path in (
        ("GET", "/lifecycle/log?limit=0"),
        ("GET", "/lifecycle/log?limit=x"),
        ("POST", "/lifecycle/run?dry_run=perhaps"),
    ):
        response = await client.request(method, path, headers=JSON)
        assert response.status == 400, path
        assert (await response.json())["error"]["code"] == "invalid_request"


class HeldLLM(ScriptedLLM):
    """Writes summaries only once ``release`` is set: a run that cannot end until the test lets it."""

    def __init__(self) -> None:
        super().__init__(answer="Sam's spring.")
        self.asked = asyncio.Event()
        self.release = asyncio.Event()

    async def chat(self, messages: Any, **options: Any) -> str:
        self.asked.set()
        await self.release.wait()
        return await super().chat(messages, **options)


async def test_a_run_answers_at_once_and_is_followed_by_its_id(
    aiohttp_client: Any, config: Config, minilm: SentenceTransformerEmbedder
) -> None:
    llm = HeldLLM()
    client = await aiohttp_client(
        create_app(config, embedder=minilm, llm=llm, lifecycle_clock=MovableClock(T0))
    )
    await store(
        client,
        {"user_id": "sam", "fact": "Sam sold his car.", "layer": "archive", "created_at": days_ago(200)},
    )
    await entered_when_created(client)

    began = time.monotonic()
    response = await client.post("/lifecycle/run", headers=JSON)
    assert response.status == 202, await response.text()
    assert time.monotonic() - began < 1.0
    started = await response.json()
    assert response.headers["Location"] == f"/lifecycle/runs/{started['id']}"
    assert started["status"] == "running" and started["trigger"] == "api" and started["stages_total"] == 6

    # Held in compress, the fifth stage: the four before it have committed and are reported.
    await asyncio.wait_for(llm.asked.wait(), 30)
    run = await (await client.get(response.headers["Location"])).json()
    assert (run["status"], run["stage"], run["stages_done"]) == ("running", "compress", 4)
    assert [s["name"] for s in run["report"]["stages"]] == ["promote", "merge", "decay", "sessions"]
    second = await client.post("/lifecycle/run", headers=JSON)
    assert second.status == 409
    error = (await second.json())["error"]
    assert error["code"] == "lifecycle_busy" and error["run_id"] == started["id"]
    assert f"/lifecycle/runs/{started['id']}" in error["message"]
    # A dry run only reads: it may plan while the run works.
    assert (await client.get("/lifecycle/preview")).status == 200

    llm.release.set()
    deadline = time.monotonic() + 30
    while run["status"] == "running":
        assert time.monotonic() < deadline, run
        await asyncio.sleep(0.05)
        run = await (await client.get(f"/lifecycle/runs/{started['id']}")).json()
    assert (run["status"], run["stage"], run["stages_done"]) == ("done", None, 6)
    assert run["report"]["stages"][4]["counts"]["summaries"] == 1 and run["finished_at"]
    (logged,) = (await (await client.get("/lifecycle/log")).json())["runs"]
    assert logged["id"] == started["id"] and logged["report"] == run["report"]


async def test_an_unknown_run_is_404_and_a_bad_id_400(
    aiohttp_client: Any, config: Config, minilm: SentenceTransformerEmbedder
) -> None:
    client = await start(aiohttp_client, config, minilm)
    missing = await client.get("/lifecycle/runs/999")
    assert missing.status == 404 and (await missing.json())["error"]["code"] == "run_not_found"
    for bad in ("abc", "0", "-1", "99999999999999999999999"):
        response = await client.get(f"/lifecycle/runs/{bad}")
        assert response.status == 400, bad
        assert (await response.json())["error"]["code"] == "invalid_request"


async def test_a_failed_run_says_where_and_why(
    aiohttp_client: Any, config: Config, minilm: SentenceTransformerEmbedder
) -> None:
    client = await aiohttp_client(
        create_app(config, embedder=minilm, llm=ScriptedLLM(mode="broken"), lifecycle_clock=MovableClock(T0))
    )
    await store(
        client,
        {"user_id": "sam", "fact": "Sam sold his car.", "layer": "archive", "created_at": days_ago(200)},
    )
    await entered_when_created(client)
    report = await run_lifecycle(client)
    # A bug (not an outage) in the model stops the run: failed, the stage and the reason in the report.
    assert report["status"] == "failed" and "ggml_assert" in report["error"]
    assert [s["status"] for s in report["stages"]] == ["done"] * 4 + ["failed"]
    assert report["stages"][4]["reason"] == report["error"] and report["finished_at"]
