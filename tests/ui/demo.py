"""A small, invented household for the dashboard's overview tests and the docs' screenshots: a few
weeks of memories written directly (back-dated), and three conversations posted through /ingest,
one of them extracted by the rules because the model was down."""

from __future__ import annotations

import asyncio
import json
import time
from datetime import UTC, datetime, timedelta
from typing import Any

from tests.ui.conftest import Daemon

USER = "robin"

# (days ago, layer, category, topic, importance, fact)
HISTORY = [
    (26, "core", "identity", "family", 9, "Robin lives with Kai and their daughter Juno (6)."),
    (24, "core", "preference", "food", 7, "Robin is vegetarian and loves Thai green curry."),
    (21, "core", "fact", "home", 6, "The house has a small vegetable garden with tomatoes and basil."),
    (19, "archive", "project_state", "home", 5, "Robin was repainting the hallway (finished in spring)."),
    (17, "core", "relationship", "family", 8, "Robin's brother Sami lives in Ghent and visits every December."),
    (15, "working", "todo", "home", 4, "Book the chimney sweep before October."),
    (12, "core", "skill", "hobbies", 6, "Robin bakes sourdough bread every weekend."),
    (10, "core", "preference", "music", 5, "Robin listens to jazz while cooking."),
    (8, "working", "decision", "travel", 6, "The family chose the Dolomites for the summer holiday."),
    (6, "core", "fact", "pets", 7, "The cat, Pixel, is 4 and hates the vacuum cleaner."),
    (5, "archive", "fact", "work", 4, "Robin's old team used Jira for planning."),
    (3, "core", "insight", "health", 6, "Robin sleeps better after an evening walk."),
    (2, "working", "todo", "family", 5, "Buy a birthday present for Juno: she wants a telescope."),
    (1, "core", "preference", "hobbies", 6, "Robin prefers board games to video games."),
]  # fmt: skip

# (session, messages, the facts the (scripted) model extracts, or None: the model is down → rules)
CONVERSATIONS = [
    (
        "kitchen-tablet-1",
        [
            ("user", "We're planning Juno's birthday party for the 14th, in the garden."),
            ("assistant", "Lovely! How many children are coming?"),
            ("user", "About ten kids from her class. Kai will bake a chocolate cake."),
        ],
        [
            {"topic": "family", "fact": "Juno's birthday party is on the 14th, in the garden.", "importance": 7,
             "category": "project_state"},
            {"topic": "family", "fact": "About ten children from Juno's class are invited; Kai bakes a chocolate cake.",
             "importance": 5, "category": "fact"},
        ],
    ),
    (
        "phone-chat-7",
        [
            ("user", "Remind me that the car needs new winter tyres in November."),
            ("assistant", "Noted: winter tyres in November."),
        ],
        [{"topic": "car", "fact": "The car needs new winter tyres in November.", "importance": 6,
          "category": "todo"}],
    ),
    (
        "phone-chat-8",
        [
            ("user", "My name is Robin and I work as a nurse at the city hospital."),
            ("assistant", "Thanks, Robin. Night shifts too?"),
            ("user", "I prefer early shifts, they leave the afternoon for Juno."),
        ],
        None,
    ),
]  # fmt: skip


def _at(days_ago: int, hour: int) -> str:
    moment = datetime.now(UTC).replace(hour=hour, minute=15, second=0, microsecond=0) - timedelta(
        days=days_ago
    )
    return moment.isoformat().replace("+00:00", "Z")


async def fill(daemon: Daemon) -> dict[str, Any]:
    """Fill ``daemon``: the history, the conversations (each extraction waited for), a few searches
    and one lifecycle run. Returns the stored memories and the sessions by name."""
    history = [
        {"user_id": USER, "topic": topic, "fact": fact, "importance": importance, "category": category,
         "layer": layer, "created_at": _at(days_ago, 8 + index % 10)}
        for index, (days_ago, layer, category, topic, importance, fact) in enumerate(HISTORY)
    ]  # fmt: skip
    # Stored in topic order, not date order (as an import would): by id the list would jump in time.
    history.sort(key=lambda memory: memory["topic"])
    stored = (await daemon.post("/memories?dedup=false", {"memories": history}, 201))["memories"]
    for session, messages, facts in CONVERSATIONS:
        if facts is None:
            daemon.llm.mode = "down"
            daemon.llm.answer = None
        else:
            daemon.llm.mode = "ok"
            daemon.llm.answer = json.dumps(facts)
        body = {
            "messages": [{"role": role, "content": text} for role, text in messages],
            "session_id": session,
            "user_id": USER,
            "debounce": False,
        }
        await daemon.post("/ingest", body, 202)
        await _wait_finished(daemon, session)
    daemon.llm.mode = "ok"
    daemon.llm.answer = None
    for query in ("birthday party", "winter tyres", "what does Robin cook", "cat"):
        await daemon.post("/hybrid-search", {"query": query, "user_id": USER})
    run = await daemon.post("/lifecycle/run", {}, 202)
    deadline = time.monotonic() + 60
    while run["status"] == "running":  # the run goes on in the daemon; follow it to its end
        assert time.monotonic() < deadline, run
        await asyncio.sleep(0.05)
        run = await daemon.get(f"/lifecycle/runs/{run['id']}")
    assert run["status"] == "done", run
    return {"history": stored}


async def _wait_finished(daemon: Daemon, session: str) -> None:
    """Until the extraction job of ``session`` is done."""
    deadline = time.monotonic() + 20
    while True:
        jobs = [job for job in (await daemon.get("/ingest/jobs"))["jobs"] if job["session_id"] == session]
        if jobs and jobs[0]["status"] in ("done", "failed"):
            assert jobs[0]["status"] == "done", jobs[0]
            return
        assert time.monotonic() < deadline, jobs
        await asyncio.sleep(0.05)
