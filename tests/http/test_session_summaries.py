"""Quiet sessions are summarised into one fact by the lifecycle; their turns stay (issue 20)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from aiohttp.test_utils import TestClient

from memory_cortex.app import create_app
from memory_cortex.config import LLMConfig
from memory_cortex.models.llm import ChatMessage, LLMHealth
from memory_cortex.records import ConversationSession
from memory_cortex.services.lifecycle import session_summaries
from tests.conftest import make_config
from tests.fakes import MovableClock
from tests.helpers import run_lifecycle, wait_idle

JSON = {"Content-Type": "application/json"}
SESSION = [
    {"role": "user", "content": "I finally booked the flight to Lisbon for my sister's wedding.", "name": "Tim",
     "timestamp": 1747822800000},
    {"role": "assistant", "content": "Congratulations! When is the wedding?", "timestamp": 1747822805000},
    {"role": "user", "content": "On the 14th of June, in Sintra.", "name": "Tim", "timestamp": 1747822810000},
]  # fmt: skip


class SummaryLLM:
    """Extracts nothing (``[]``) and answers every summary request with ``summary``; records the
    summary prompts it was given."""

    backend = "scripted"
    model = "summary-llm"

    def __init__(
        self, summary: str = "Tim booked a flight to Lisbon for his sister's wedding in Sintra."
    ) -> None:
        self.summary = summary
        self.prompts: list[str] = []

    async def start(self) -> None: ...

    async def close(self) -> None: ...

    def health(self) -> LLMHealth:
        return LLMHealth(self.backend, self.model, True)

    async def chat(self, messages: list[ChatMessage], *, json_schema: Any = None, **_: Any) -> str:
        if json_schema is not None:
            return "[]"
        self.prompts.append(messages[-1].content)
        return self.summary


async def start(aiohttp_client: Any, tmp_path: Any, minilm: Any, llm: Any) -> TestClient:
    config = make_config(tmp_path, ingest={"debounce_s": 0})
    clock = MovableClock(datetime.now(UTC))
    client = await aiohttp_client(create_app(config, embedder=minilm, llm=llm, lifecycle_clock=clock))
    client.clock = clock  # type: ignore[attr-defined]
    return client


async def post(client: TestClient, messages: list[dict[str, Any]], session: str) -> None:
    body = {
        "messages": messages,
        "session_id": session,
        "user_id": "tim",
        "channel": "telegram",
        "debounce": False,
    }
    response = await client.post("/ingest", json=body)
    assert response.status == 202, await response.text()
    await wait_idle(client)


async def run(client: TestClient, **params: str) -> dict[str, Any]:
    report = await run_lifecycle(client, **params)
    return next(stage for stage in report["stages"] if stage["name"] == "sessions")


async def listed(client: TestClient, **params: str) -> list[dict[str, Any]]:
    response = await client.get("/memories", params={"user_id": "tim", "limit": "1000", **params})
    return sorted((await response.json())["memories"], key=lambda m: m["id"])


async def test_a_quiet_session_gets_one_summary_and_keeps_its_turns(
    aiohttp_client: Any, tmp_path: Any, minilm: Any
) -> None:
    llm = SummaryLLM()
    client = await start(aiohttp_client, tmp_path, minilm, llm)
    await post(client, SESSION, "trip")
    turns = await listed(client, kinds="turn")
    assert len(turns) == 3

    assert (await run(client))["counts"]["sessions"] == 0  # still going on: nothing is summarised
    assert llm.prompts == []

    client.clock.advance(days=8)  # type: ignore[attr-defined]
    stage = await run(client)
    assert stage["status"] == "done" and stage["counts"]["sessions"] == 1
    (summary_id,) = stage["ids"]["summaries"]
    summary = await (await client.get(f"/memories/{summary_id}")).json()
    assert summary["fact"] == llm.summary
    assert (summary["kind"], summary["category"], summary["layer"]) == ("fact", "session_summary", "core")
    assert (summary["source_session"], summary["source_channel"]) == ("trip", "telegram")
    assert summary["derived_from"] == [t["id"] for t in turns]
    assert summary["occurred_at"] == turns[-1]["occurred_at"]
    # The model read the whole conversation, dated and attributed.
    (prompt,) = llm.prompts
    assert "2025-05-21 Tim: I finally booked the flight to Lisbon" in prompt
    assert "2025-05-21 Assistant: Congratulations!" in prompt
    assert [t["id"] for t in await listed(client, kinds="turn")] == [t["id"] for t in turns]

    assert (await run(client))["counts"]["sessions"] == 0  # summarised once
    assert len(llm.prompts) == 1

    # The conversation goes on later: once quiet again, a new summary replaces the old one.
    await post(client, [*SESSION, {"role": "user", "content": "I also need a suit.", "name": "Tim"}], "trip")
    client.clock.advance(days=8)  # type: ignore[attr-defined]
    stage = await run(client)
    assert stage["counts"]["sessions"] == 1 and stage["ids"]["superseded"] == [summary_id]
    (newer_id,) = stage["ids"]["summaries"]
    assert "Tim: I also need a suit." in llm.prompts[-1]
    assert (await (await client.get(f"/memories/{summary_id}")).json())["superseded_by"] == newer_id
    newer = await (await client.get(f"/memories/{newer_id}")).json()
    assert len(newer["derived_from"]) == 4
    assert [m["id"] for m in await listed(client, kinds="fact")] == [newer_id]


async def test_alike_sessions_keep_a_summary_each(aiohttp_client: Any, tmp_path: Any, minilm: Any) -> None:
    """The merge stage never folds one session's summary into another's."""
    client = await start(aiohttp_client, tmp_path, minilm, SummaryLLM())
    await post(client, SESSION, "first")
    await post(client, SESSION, "second")
    client.clock.advance(days=8)  # type: ignore[attr-defined]
    assert (await run(client))["counts"]["sessions"] == 2
    await run(client)  # the next merge sees both summaries in core, word for word alike
    summaries = await listed(client, kinds="fact")
    assert [(m["source_session"], m["superseded_by"]) for m in summaries] == [
        ("first", None),
        ("second", None),
    ]


async def test_without_a_writer_the_stage_waits_and_says_why(
    aiohttp_client: Any, tmp_path: Any, minilm: Any
) -> None:
    client = await start(aiohttp_client, tmp_path, minilm, None)
    await post(client, SESSION, "trip")
    client.clock.advance(days=8)  # type: ignore[attr-defined]
    preview = await (await client.get("/lifecycle/preview")).json()
    planned = next(stage for stage in preview["stages"] if stage["name"] == "sessions")
    assert planned["status"] == "skipped" and "no LLM" in planned["reason"]
    stage = await run(client)
    assert stage["status"] == "skipped" and "retried next run" in stage["reason"]
    assert stage["counts"]["waiting"] == 1 and stage["counts"]["summaries"] == 0
    assert await listed(client, kinds="fact") == []


async def test_one_user_run_and_dry_run_plan_the_same(
    aiohttp_client: Any, tmp_path: Any, minilm: Any
) -> None:
    llm = SummaryLLM()
    client = await start(aiohttp_client, tmp_path, minilm, llm)
    await post(client, SESSION, "trip")
    client.clock.advance(days=8)  # type: ignore[attr-defined]
    assert (await run(client, user_id="someone-else"))["counts"]["sessions"] == 0
    planned = await run(client, dry_run="true")
    assert planned["status"] == "planned" and planned["counts"]["sessions"] == 1
    assert planned["groups"] == [
        {"user_id": "tim", "into": None, "ids": [], "period": None, "session": "trip"}
    ]
    assert llm.prompts == [] and await listed(client, kinds="fact") == []
    assert (await run(client, user_id="tim"))["counts"]["sessions"] == 1


# -- the parts that need no store ---------------------------------------------------------------
def test_due_sessions_are_quiet_and_have_new_turns() -> None:
    def session(name: str, last_turn_id: int, last_received: str) -> ConversationSession:
        return ConversationSession(
            name, None, 1, "2025-12-01", "2025-12-02", last_received, last_turn_id, None
        )

    sessions = [
        session("old", 10, "2026-01-01T00:00:00.000Z"),
        session("summarised", 20, "2026-01-01T00:00:00.000Z"),
        session("grown", 40, "2026-01-02T00:00:00.000Z"),
        session("live", 50, "2026-01-09T00:00:00.000Z"),
    ]
    summarised = {"summarised": (99, 20), "grown": (98, 30)}
    due = session_summaries.due_sessions(sessions, summarised, "2026-01-05T00:00:00.000Z")
    assert [s.session for s in due] == ["old", "grown"]


def test_a_long_transcript_is_cut_at_turn_bounds() -> None:
    turns = [(i, "2025-05-21T10:00:00.000Z", f"Tim: {'word ' * 30}{i}") for i in range(10)]
    parts = session_summaries.transcript_parts(turns, 1000)
    assert len(parts) > 1 and all(len(part) <= 1000 for part in parts)
    assert "\n".join(parts).splitlines() == [f"2025-05-21 Tim: {'word ' * 30}{i}" for i in range(10)]
    (single,) = session_summaries.transcript_parts([(1, "2025-05-21", "x" * 5000)], 1000)
    assert len(single) == 1000


async def test_parts_are_summarised_then_joined() -> None:
    llm = SummaryLLM("Part summary.")
    text = await session_summaries.write_summary(llm, ["first part", "second part"], max_tokens=64)
    assert text == "Part summary."
    assert len(llm.prompts) == 3
    assert "Part 1: Part summary.\nPart 2: Part summary." in llm.prompts[-1]


def test_only_a_real_model_writes_prose() -> None:
    assert not LLMConfig(backend="llama_cpp").writes_prose  # the packaged Gemma 270M
    assert LLMConfig(backend="llama_cpp", model_path="/models/qwen3-8b.gguf").writes_prose
    assert LLMConfig(backend="openai").writes_prose


async def test_sessions_lists_each_conversation_with_its_summary(
    aiohttp_client: Any, tmp_path: Any, minilm: Any
) -> None:
    client = await start(aiohttp_client, tmp_path, minilm, SummaryLLM())
    await post(client, SESSION, "first")
    await post(client, SESSION[:2], "second")
    first_page = await (await client.get("/sessions", params={"user_id": "tim", "limit": "1"})).json()
    assert [s["session"] for s in first_page["sessions"]] == ["second"]  # most recently active first
    assert first_page["next_offset"] == 1
    rest = await (await client.get("/sessions", params={"user_id": "tim", "offset": "1"})).json()
    assert [s["session"] for s in rest["sessions"]] == ["first"] and rest["next_offset"] is None
    (first,) = rest["sessions"]
    assert (first["channel"], first["turns"], first["summary_id"]) == ("telegram", 3, None)
    assert (first["first_said"], first["last_said"]) == (
        "2025-05-21T10:20:00.000Z",
        "2025-05-21T10:20:10.000Z",
    )
    assert (await (await client.get("/sessions")).json())["sessions"] == []  # the default user has none

    client.clock.advance(days=8)  # type: ignore[attr-defined]
    await run(client)
    listed = await (await client.get("/sessions", params={"user_id": "tim"})).json()
    by_session = {s["session"]: s["summary_id"] for s in listed["sessions"]}
    assert all(by_session.values())
    # GET /memories?session= gives one conversation: its turns and its summary, nobody else's.
    second = await listed_in(client, "second")
    assert {(m["kind"], m["category"]) for m in second} == {
        ("turn", "conversation"),
        ("fact", "session_summary"),
    }
    assert len(second) == 3 and by_session["second"] in [m["id"] for m in second]


async def listed_in(client: TestClient, session: str) -> list[dict[str, Any]]:
    return await listed(client, session=session)


async def test_a_summary_takes_its_sessions_scope_and_a_session_of_mixed_scopes_gets_none(
    aiohttp_client: Any, tmp_path: Any, minilm: Any
) -> None:
    """Issue 22: a summary retells its turns, so it may only reach whom they reached."""
    llm = SummaryLLM()
    client = await start(aiohttp_client, tmp_path, minilm, llm)

    async def say(session: str, messages: list[dict[str, Any]] = SESSION, **scope: Any) -> None:
        body = {"messages": messages, "session_id": session, "user_id": "tim", "debounce": False, **scope}
        assert (await client.post("/ingest", json=body)).status == 202
        await wait_idle(client)

    await say("club", agent_id="home", session_kind="group", channel="telegram:group:-7")
    await say("reused", agent_id="work")
    # The same session id, a new turn from another agent: another reach.
    await say("reused", [*SESSION, {"role": "user", "content": "And a hotel in Sintra."}], agent_id="home")
    client.clock.advance(days=8)  # type: ignore[attr-defined]
    stage = await run(client)
    assert stage["counts"]["sessions"] == 1, stage
    (summary_id,) = stage["ids"]["summaries"]
    summary = await (await client.get(f"/memories/{summary_id}")).json()
    assert summary["source_session"] == "club"
    assert (summary["agent_id"], summary["visibility"], summary["source_channel"]) == (
        "home",
        "shared",
        "telegram:group:-7",
    )
    summaries = [m for m in await listed(client) if m["category"] == "session_summary"]
    assert len(llm.prompts) == 1 and [m["source_session"] for m in summaries] == ["club"]
