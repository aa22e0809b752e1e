"""What the dashboard's ingestion page reads: one job with the memories it stored, a failed job's
error, and its retry, through the real server, worker and SQLite journal."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from aiohttp.test_utils import TestClient

from memory_cortex.app import create_app
from tests.conftest import make_config
from tests.fakes import ScriptedLLM

JSON = {"Content-Type": "application/json"}  # every write declares JSON, body or not (http/guard.py)


async def _job(client: TestClient, status: str, timeout: float = 20.0) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        jobs = (await (await client.get("/ingest/jobs", params={"status": status})).json())["jobs"]
        if jobs:
            return jobs[0]
        await asyncio.sleep(0.05)
    raise AssertionError(f"no {status} job after {timeout}s")


async def test_failed_job_shows_its_error_and_a_retry_stores_its_facts(
    aiohttp_client: Any, tmp_path: Any, minilm: Any
) -> None:
    llm = ScriptedLLM(mode="broken")
    config = make_config(tmp_path, ingest={"debounce_s": 0.05, "retry_backoff_s": 0.01, "max_attempts": 2})
    client = await aiohttp_client(create_app(config, embedder=minilm, llm=llm))
    messages = [
        {"role": "user", "content": "I moved to Porto last spring"},
        {"role": "assistant", "content": "Nice city!"},
    ]
    body = {"messages": messages, "session_id": "s7", "channel": "telegram", "user_id": "ann"}
    assert (await client.post("/ingest", json=body)).status == 202

    failed = await _job(client, "failed")
    assert failed["attempts"] == 2 and failed["session_id"] == "s7"
    assert "RuntimeError" in failed["last_error"]
    detail = await (await client.get(f"/ingest/jobs/{failed['id']}")).json()
    assert detail["job"]["status"] == "failed" and detail["facts"] == []

    llm.mode = "ok"
    retried = await client.post(f"/ingest/jobs/{failed['id']}/retry", headers=JSON)
    assert (await retried.json()) == {"retried": True, "id": failed["id"]}
    done = await _job(client, "done")
    assert done["id"] == failed["id"]
    detail = await (await client.get(f"/ingest/jobs/{done['id']}")).json()
    # The LLM's fact, and the rules extractor's where it recognises one.
    assert len(detail["facts"]) == done["facts_stored"] >= 1
    assert detail["facts"][0]["fact"] == "The user said: I moved to Porto last spring"
    fact = detail["facts"][0]
    assert (fact["user_id"], fact["source_session"], fact["source_channel"]) == ("ann", "s7", "telegram")
    # The detail view links the memory back to the job.
    history = await (await client.get(f"/memories/{fact['id']}/history")).json()
    assert history["ingest_job"] == done["id"]
    # A job that is not failed cannot be retried; an unknown one is 404.
    assert (await client.post(f"/ingest/jobs/{done['id']}/retry", headers=JSON)).status == 404
    assert (await client.get("/ingest/jobs/424242")).status == 404


async def test_a_job_shows_only_what_it_stored(aiohttp_client: Any, tmp_path: Any, minilm: Any) -> None:
    config = make_config(tmp_path, ingest={"debounce_s": 0.05})
    client = await aiohttp_client(create_app(config, embedder=minilm, llm=ScriptedLLM()))
    history: list[dict[str, str]] = []
    ids = []
    for text in ("I keep bees on the roof", "I started learning the cello"):
        history.append({"role": "user", "content": text})
        await client.post("/ingest", json={"messages": history, "session_id": "s1", "user_id": "ann"})
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            jobs = (await (await client.get("/ingest/jobs", params={"status": "done"})).json())["jobs"]
            if len(jobs) == len(ids) + 1:
                break
            await asyncio.sleep(0.05)
        ids.append(jobs[0]["id"])
    first, second = [await (await client.get(f"/ingest/jobs/{i}")).json() for i in ids]
    assert "The user said: I keep bees on the roof" in [f["fact"] for f in first["facts"]]
    assert "The user said: I started learning the cello" in [f["fact"] for f in second["facts"]]
    assert not {f["id"] for f in first["facts"]} & {f["id"] for f in second["facts"]}
    assert all(f["metadata"]["ingest_job"] == ids[1] for f in second["facts"])


async def test_a_job_is_shown_only_to_a_requester_of_its_reach(
    aiohttp_client: Any, tmp_path: Any, minilm: Any
) -> None:
    """Issue 34: GET /ingest/jobs/{id} showed every agent's private and every group's shared facts."""
    from tests.http.test_beliefs import ingest, said

    client = await aiohttp_client(create_app(make_config(tmp_path), embedder=minilm))
    group = {"session_kind": "group", "channel": "telegram:group:-100", "session_id": "g1"}
    await ingest(
        client, [said("I live in Leeds.", "2026-03-01T10:00:00Z", name="Priya", owner=True)], **group
    )
    await ingest(
        client, [said("I work at Stripe.", "2026-03-01T11:00:00Z")], session_id="p1", agent_id="coach"
    )
    jobs = (await (await client.get("/ingest/jobs")).json())["jobs"]  # the owner's own tools: every job
    by_session = {job["session_id"]: job["id"] for job in jobs}

    async def facts(job_id: int, **who: str) -> list[str] | int:
        response = await client.get(f"/ingest/jobs/{job_id}", params={"user_id": "priya", **who})
        return (
            response.status
            if response.status != 200
            else [f["fact"] for f in (await response.json())["facts"]]
        )

    assert any("Leeds" in fact for fact in await facts(by_session["g1"]))  # type: ignore[union-attr]
    assert any(
        "Leeds" in fact
        for fact in await facts(by_session["g1"], session_kind="group", channel="telegram:group:-100")
    )  # type: ignore[union-attr]
    assert await facts(by_session["g1"], session_kind="group", channel="discord:other") == 404
    assert await facts(by_session["p1"], session_kind="group", channel="telegram:group:-100") == 404
    assert await facts(by_session["p1"], agent_id="another-agent") == 404
    assert any("Stripe" in fact for fact in await facts(by_session["p1"], agent_id="coach"))  # type: ignore[union-attr]
    assert (
        await client.get(f"/ingest/jobs/{by_session['p1']}", params={"user_id": "someone-else"})
    ).status == 404


async def test_a_long_job_runs_in_steps_behind_the_jobs_due_before_them(
    aiohttp_client: Any, tmp_path: Any, minilm: Any
) -> None:
    """Issue 34: one /ingest of 20,000 messages held extraction for everyone for minutes. A job of
    more new messages than ingest.max_messages_per_step goes back to the queue after each step, so
    another session's job is done in between; every message is still stored and read once."""
    config = make_config(tmp_path, ingest={"debounce_s": 0, "max_messages_per_step": 2})
    client = await aiohttp_client(create_app(config, embedder=minilm))
    long = [
        {"role": "user", "content": f"My {n}th favourite city is Porto number {n}."} for n in range(1, 11)
    ]
    await client.post(
        "/ingest", json={"messages": long, "session_id": "long", "user_id": "ann", "debounce": False}
    )
    short = [{"role": "user", "content": "I live in Leeds."}]
    await client.post(
        "/ingest", json={"messages": short, "session_id": "short", "user_id": "ann", "debounce": False}
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        queue = (await (await client.get("/stats")).json())["ingest"]
        if queue["pending"] == 0 and queue["running"] == 0:
            break
        await asyncio.sleep(0.05)
    jobs = {job["session_id"]: job for job in (await (await client.get("/ingest/jobs")).json())["jobs"]}
    assert jobs["long"]["status"] == jobs["short"]["status"] == "done"
    assert jobs["short"]["finished_at"] < jobs["long"]["finished_at"]  # not behind all ten messages
    turns = (
        await (
            await client.get("/memories", params={"user_id": "ann", "kinds": "turn", "limit": "100"})
        ).json()
    )["memories"]
    assert sorted(t["fact"] for t in turns if t["source_session"] == "long") == sorted(
        f"User: {m['content']}" for m in long
    )
