"""Browser fixtures for the dashboard: Debian's headless Chromium driven by Playwright against the
real daemon (real SQLite file, real MiniLM, a real loopback port), seeded through its own API.

Each page collects its console errors and uncaught exceptions; tests assert there are none. Each
test saves full-page screenshots under test-output/ui/ for a reviewer to look at.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from aiohttp.test_utils import TestClient
from playwright.async_api import Browser, ConsoleMessage, Error, Page, async_playwright

from memory_cortex.app import create_app
from memory_cortex.models.embedders import SentenceTransformerEmbedder
from tests.conftest import make_config
from tests.fakes import ScriptedLLM

CHROMIUM = Path("/usr/bin/chromium")
# Without these Chromium phones home (updates, sync, field trials): the network is closed here.
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
# Read at import: the autouse fixture in tests/conftest.py hides MEMORY_CORTEX_* from the tests.
SKIP_BROWSER_TESTS = os.environ.get("MEMORY_CORTEX_SKIP_BROWSER_TESTS") == "1"
SCREENSHOTS = Path(__file__).resolve().parents[2] / "test-output" / "ui"
TOKEN = "dashboard-test-token"

# The seeded store: two users; sam has enough rows for three pages of 12.
SAM_TOPICS = ["coffee", "family", "work", "travel", "music"]
SAM_LAYERS = ["core", "working", "archive"]
SAM_CATEGORIES = ["fact", "preference", "identity", "decision"]
SAM_MEMORIES = [
    {
        "user_id": "sam",
        "topic": SAM_TOPICS[i % len(SAM_TOPICS)],
        "fact": f"Sam note {i:02d}: {SAM_TOPICS[i % len(SAM_TOPICS)]} detail number {i}.",
        "importance": 1 + i % 10,
        "category": SAM_CATEGORIES[i % len(SAM_CATEGORIES)],
        "layer": SAM_LAYERS[i % len(SAM_LAYERS)],
        "source_session": "telegram-42",
        "source_channel": "telegram",
    }
    for i in range(30)
] + [
    {"user_id": "sam", "topic": "coffee", "fact": "Sam drinks a double espresso every morning before work.",
     "importance": 7, "category": "preference", "source_session": "telegram-42", "source_channel": "telegram"},
    {"user_id": "sam", "topic": "family", "fact": "Sam's sister Ana lives in Porto and teaches the cello.",
     "importance": 8, "category": "relationship", "source_session": "web-7", "source_channel": "web"},
    {"user_id": "sam", "topic": "pets", "fact": "Sam's dog Rex is afraid of thunderstorms.",
     "importance": 6, "category": "fact", "layer": "working"},
]  # fmt: skip
ANA_MEMORIES = [
    {"user_id": "ana", "topic": "music", "fact": "Ana plays the cello in a string quartet.", "importance": 7,
     "category": "identity"},
    {"user_id": "ana", "topic": "food", "fact": "Ana is vegetarian since 2019.", "importance": 8,
     "category": "preference"},
    {"user_id": "ana", "topic": "work", "fact": "Ana teaches music at a school in Porto.", "importance": 6,
     "category": "fact", "layer": "working"},
]  # fmt: skip


@dataclass
class Daemon:
    """The real app on a loopback port, with the scripted LLM it extracts with."""

    client: TestClient
    llm: ScriptedLLM
    token: str | None = None
    memories: dict[str, list[dict[str, Any]]] = field(default_factory=dict)

    @property
    def ui_url(self) -> str:
        return str(self.client.make_url("/ui/"))

    def _headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"} if self.token else {}

    async def get(self, path: str, expect: int = 200, **params: Any) -> Any:
        response = await self.client.get(path, params=params, headers=self._headers())
        assert response.status == expect, await response.text()
        return await response.json()

    async def post(self, path: str, body: Any = None, expect: int = 200) -> Any:
        response = await self.client.post(path, json=body, headers=self._headers())
        assert response.status == expect, await response.text()
        return await response.json()

    async def wait_for_job(self, status: str, timeout: float = 20.0) -> dict[str, Any]:
        """The newest job with ``status``, once there is one."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            jobs = (await self.get("/ingest/jobs", status=status))["jobs"]
            if jobs:
                return jobs[0]
            await asyncio.sleep(0.05)
        raise AssertionError(f"no {status} ingest job after {timeout}s")


@pytest.fixture
def start_daemon(
    aiohttp_client: Any, tmp_path: Path, minilm: SentenceTransformerEmbedder
) -> Callable[..., Awaitable[Daemon]]:
    """Start the app; ``sections`` override config sections (server, hardware…)."""

    async def start(**sections: Any) -> Daemon:
        llm = ScriptedLLM()
        # One attempt: a broken extraction fails the job at once (retryable from the dashboard).
        ingest = {"debounce_s": 0.0, "max_attempts": 1, "retry_backoff_s": 0.05, **sections.pop("ingest", {})}
        config = make_config(tmp_path, ingest=ingest, **sections)
        client = await aiohttp_client(create_app(config, embedder=minilm, llm=llm))
        token = (sections.get("server") or {}).get("api_token")
        return Daemon(client, llm, token)

    return start


async def seed(daemon: Daemon) -> Daemon:
    """Memories of two users, one finished extraction with its facts, and one failed extraction."""
    for user, memories in (("sam", SAM_MEMORIES), ("ana", ANA_MEMORIES)):
        body = await daemon.post("/memories?dedup=false", {"memories": memories}, 201)
        daemon.memories[user] = body["memories"]
    messages = [{"role": "user", "content": "I moved to Lisbon last spring"}]
    await daemon.post(
        "/ingest", {"messages": messages, "session_id": "chat-ok", "user_id": "sam", "debounce": False}, 202
    )
    await daemon.wait_for_job("done")
    daemon.llm.mode = "broken"
    messages = [{"role": "user", "content": "I started learning the violin"}]
    await daemon.post(
        "/ingest",
        {"messages": messages, "session_id": "chat-broken", "user_id": "sam", "debounce": False},
        202,
    )
    await daemon.wait_for_job("failed")
    daemon.llm.mode = "ok"
    return daemon


@pytest.fixture
async def daemon(start_daemon: Callable[..., Awaitable[Daemon]]) -> Daemon:
    """A daemon seeded with two users' memories, a done job and a failed job."""
    return await seed(await start_daemon())


@pytest.fixture
def chromium() -> Path:
    """Debian's Chromium. Missing → the test fails (CI must not pass without a browser)."""
    if SKIP_BROWSER_TESTS:
        pytest.skip("MEMORY_CORTEX_SKIP_BROWSER_TESTS=1: the dashboard's browser tests were NOT run")
    if not CHROMIUM.exists():
        pytest.fail(
            f"the dashboard's browser tests need Debian's Chromium at {CHROMIUM}: scripts/test.sh installs it"
            " (apt-get install chromium); MEMORY_CORTEX_SKIP_BROWSER_TESTS=1 skips these tests instead",
            pytrace=False,
        )
    return CHROMIUM


@pytest.fixture
async def browser(chromium: Path) -> AsyncIterator[Browser]:
    """Chromium, headless, through Playwright (never a browser Playwright downloads)."""
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(
            executable_path=str(chromium), headless=True, args=CHROMIUM_ARGS
        )
        try:
            yield browser
        finally:
            await browser.close()


@dataclass
class Dashboard:
    """One browser page on the dashboard, with what its console reported."""

    page: Page
    daemon: Daemon
    name: str
    errors: list[str] = field(default_factory=list)

    async def open(self, route: str = "#/memories") -> None:
        """Load the dashboard at ``route`` and wait until the page has drawn its data."""
        await self.page.goto(self.daemon.ui_url + route)
        await self.ready(route)

    async def go(self, route: str) -> None:
        """Follow an in-page link (hash change) and wait for the new page."""
        await self.page.evaluate("route => { window.location.hash = route; }", route)
        await self.ready(route)

    async def ready(self, route: str | None = None) -> None:
        """Wait until main has drawn ``route`` (app.js sets data-route to the hash it drew and
        aria-busy to false when a page is done), so the old page can never pass for the new one;
        without ``route``, until the page in progress is done."""
        await self.page.wait_for_function(
            """route => {
                const main = document.getElementById("main");
                return main.getAttribute("aria-busy") === "false" && main.dataset.route !== undefined
                    && (route === null || main.dataset.route === route);
            }""",
            arg=route,
        )

    async def list_loaded(self) -> None:
        """Wait until the memory list's last load is drawn (its results region is no longer busy)."""
        await self.page.wait_for_selector("main .results[aria-busy='false']")

    async def screenshot(self, suffix: str = "", *, full_page: bool = True) -> Path:
        """The page (whole, or what the viewport shows) as test-output/ui/<test name>[-suffix].png."""
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        path = SCREENSHOTS / f"{self.name}{'-' + suffix if suffix else ''}.png"
        await self.page.screenshot(path=str(path), full_page=full_page)
        return path

    async def unlabelled_controls(self) -> list[str]:
        """Form controls and buttons a screen reader could not name (should be none)."""
        return await self.page.evaluate(
            """() => [...document.querySelectorAll("input, select, textarea, button")]
                .filter((control) => !(control.labels?.length || control.getAttribute("aria-label")
                    || control.getAttribute("aria-labelledby") || (control.tagName === "BUTTON"
                    && control.textContent.trim())))
                .map((control) => control.outerHTML.slice(0, 120))"""
        )

    def assert_no_console_errors(self) -> None:
        assert self.errors == [], f"console errors on the dashboard: {self.errors}"


@pytest.fixture
def open_dashboard(browser: Browser, request: pytest.FixtureRequest) -> Callable[..., Awaitable[Dashboard]]:
    """A new browser page (own session storage) on ``daemon``; ``viewport`` e.g. a phone's, and
    ``device`` more of Playwright's context options to emulate one (is_mobile, device_scale_factor…)."""

    async def open_page(daemon: Daemon, viewport: dict[str, int] | None = None, **device: Any) -> Dashboard:
        context = await browser.new_context(viewport=viewport or {"width": 1400, "height": 900}, **device)
        page = await context.new_page()
        page.set_default_timeout(15_000)
        dashboard = Dashboard(page, daemon, request.node.name)

        def on_console(message: ConsoleMessage) -> None:
            if message.type == "error":
                dashboard.errors.append(f"{message.text} ({message.location.get('url', '')})")

        def on_page_error(error: Error) -> None:
            dashboard.errors.append(f"uncaught: {error.message}")

        page.on("console", on_console)
        page.on("pageerror", on_page_error)
        return dashboard

    return open_page


@pytest.fixture
async def dashboard(open_dashboard: Callable[..., Awaitable[Dashboard]], daemon: Daemon) -> Dashboard:
    """A browser page on the seeded daemon, not yet navigated."""
    return await open_dashboard(daemon)
