"""The dashboard's People & things page in a real Chromium against a real daemon: the entities of
what was said through /ingest, what is believed now, what it replaced and until when, and the
relations drawn as a small graph."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from typing import Any

from playwright.async_api import expect

from tests.ui.conftest import Daemon, Dashboard

OpenDashboard = Callable[..., Awaitable[Dashboard]]
StartDaemon = Callable[..., Awaitable[Daemon]]
USER = "priya"


def home(city: str) -> str:
    """The scripted model's answer: one fact of the user's home, read from message 1."""
    fact = {
        "fact": f"The user lives in {city}.",
        "topic": "home",
        "importance": 8,
        "category": "identity",
        "subject": "user",
        "attribute": "home",
        "value": city,
        "source": [1],
        "action": "add",
    }
    return json.dumps({"facts": [fact]})


async def say(daemon: Daemon, text: str, session: str, when: str) -> None:
    messages = [{"role": "user", "content": text, "timestamp": when}]
    body: dict[str, Any] = {"messages": messages, "session_id": session, "user_id": USER, "debounce": False}
    await daemon.post("/ingest", body, 202)
    for _ in range(400):
        queue = (await daemon.get("/stats"))["ingest"]
        if queue["pending"] == 0 and queue["running"] == 0:
            return
        await asyncio.sleep(0.05)
    raise AssertionError("the ingest jobs did not finish")


async def test_an_entity_shows_what_is_believed_now_what_it_replaced_and_its_relations(
    open_dashboard: OpenDashboard, start_daemon: StartDaemon
) -> None:
    daemon = await start_daemon()
    daemon.llm.answer = home("Manchester")
    await say(daemon, "I live in Manchester", "chat-1", "2026-03-01T10:00:00Z")
    daemon.llm.answer = home("Edinburgh")
    await say(daemon, "we finally moved to Edinburgh last weekend", "chat-2", "2026-05-01T10:00:00Z")
    await daemon.post(
        "/relations", {"user_id": USER, "subject": "user", "predicate": "partner", "object": "Marco"}, 201
    )
    dashboard = await open_dashboard(daemon)
    page = dashboard.page
    await dashboard.open("#/people")
    await expect(page.get_by_role("heading", name=f"People & things of {USER}")).to_be_visible()
    listed = page.get_by_role("table", name=f"People and things of {USER}")
    await expect(listed.get_by_role("row").filter(has_text="Marco")).to_contain_text("person")
    await listed.get_by_role("link", name="User").click()
    await dashboard.ready()
    current = page.get_by_role("table", name="Current facts of User")
    await expect(current).to_contain_text("Edinburgh")
    await expect(current).not_to_contain_text("Manchester")
    earlier = page.get_by_role("table", name="Earlier facts of User")
    manchester = earlier.get_by_role("row").filter(has_text="Manchester")
    await expect(manchester.locator('time[datetime^="2026-05-01"]')).to_have_count(1)  # until Edinburgh
    graph = page.get_by_role("img", name="User and the 1 entities it is related to")
    await expect(graph).to_contain_text("partner")
    await expect(graph).to_contain_text("Marco")
    await expect(page.get_by_role("table", name="Turns the facts of User were read from")).to_contain_text(
        "moved to Edinburgh"
    )
    assert await dashboard.unlabelled_controls() == []
    dashboard.assert_no_console_errors()
