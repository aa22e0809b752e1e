"""The dashboard a home-lab user would rather look at than read, in a real Chromium against a real
daemon filled through /memories and /ingest: the overview's charts, facts beside their turns, badges
that tell the truth, readable durations, the list by date, and cards on a phone.

``MEMORY_CORTEX_DOCS_IMAGES=1`` (read at import, like the skip switch) makes
``test_docs_screenshots`` write docs/img/*.png too."""

from __future__ import annotations

import os
import re
import socket
from collections.abc import Awaitable, Callable
from pathlib import Path

from playwright.async_api import expect

from tests.ui.conftest import Daemon, Dashboard
from tests.ui.demo import USER, fill

OpenDashboard = Callable[..., Awaitable[Dashboard]]
StartDaemon = Callable[..., Awaitable[Daemon]]
PHONE = {"width": 390, "height": 844}
DOCS_IMAGES = Path(__file__).resolve().parents[2] / "docs" / "img"
WRITE_DOCS_IMAGES = os.environ.get("MEMORY_CORTEX_DOCS_IMAGES") == "1"

# Every pair of label boxes of one chart that overlap (should be none).
OVERLAPPING_LABELS = """() => [...document.querySelectorAll("figure.chart svg")].flatMap((chart) => {
    const boxes = [...chart.querySelectorAll("text")].map((text) => [text.textContent, text.getBoundingClientRect()]);
    const overlaps = [];
    boxes.forEach(([a, p], i) => boxes.slice(i + 1).forEach(([b, q]) => {
        if (p.left < q.right - 0.5 && q.left < p.right - 0.5 && p.top < q.bottom - 0.5 && q.top < p.bottom - 0.5)
            overlaps.push(`${chart.getAttribute("aria-labelledby")}: "${a}" overlaps "${b}"`);
    }));
    return overlaps;
})"""


async def demo(start_daemon: StartDaemon, **sections: object) -> Daemon:
    daemon = await start_daemon(**sections)
    await fill(daemon)
    return daemon


async def test_the_overview_is_the_landing_page_and_charts_what_was_ingested(
    open_dashboard: OpenDashboard, start_daemon: StartDaemon
) -> None:
    daemon = await demo(start_daemon)
    dashboard = await open_dashboard(daemon)
    page = dashboard.page
    await page.goto(daemon.ui_url)  # no route: the overview
    await dashboard.ready("#/overview")
    await expect(page.get_by_role("heading", name=f"Overview of {USER}")).to_be_visible()
    await expect(page.get_by_role("link", name="Overview")).to_have_attribute("aria-current", "page")
    overview = await daemon.get("/stats/overview", user_id=USER, days=30)
    kinds = overview["days"][-1]["live_by_kind"]
    tiles = page.get_by_role("list", name="At a glance")
    await expect(tiles.get_by_role("listitem").filter(has_text="Facts")).to_contain_text(str(kinds["fact"]))
    await expect(tiles.get_by_role("listitem").filter(has_text="Conversation turns")).to_contain_text(
        str(kinds["turn"])
    )
    for title in (
        "Memories by layer",
        "Memories by kind",
        "Extraction backlog",
        "Extraction latency",
        "Search latency per minute",
    ):
        chart = page.locator("figure.chart").filter(has=page.get_by_text(title, exact=True))
        await expect(chart.locator("polyline, circle").first).to_be_attached()  # a flat line has no height
    # Facts per day: the model's and the rules' (the model was down for one conversation).
    facts = page.locator("figure.chart").filter(
        has=page.get_by_text("Facts per day, by extraction method", exact=True)
    )
    legend = await facts.locator(".legend-item").all_inner_texts()
    assert {"LLM", "rules", "written directly"} <= set(legend), legend
    assert await facts.locator("rect.chart-bar").count() >= 3
    # The search chart says where its numbers live.
    await expect(page.get_by_text(re.compile("starts empty again when the daemon restarts"))).to_be_visible()
    runs = page.locator("figure.chart").filter(has=page.get_by_text("Lifecycle moves per run", exact=True))
    await expect(runs.locator("svg")).to_be_visible()
    categories = page.get_by_role("img", name=re.compile("^Categories:"))
    await expect(categories).to_be_visible()
    assert await categories.locator("rect").count() == len(overview["categories"])
    assert await page.evaluate(OVERLAPPING_LABELS) == []
    assert await dashboard.unlabelled_controls() == []
    await dashboard.screenshot()
    # The same page on a phone: nothing overlaps and nothing scrolls sideways.
    phone = await open_dashboard(daemon, viewport=PHONE)
    await phone.open("#/overview")
    assert await phone.page.evaluate(OVERLAPPING_LABELS) == []
    assert await phone.page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
    await phone.screenshot("phone")
    dashboard.assert_no_console_errors()
    phone.assert_no_console_errors()


async def test_facts_stand_beside_the_turns_they_were_extracted_from(
    open_dashboard: OpenDashboard, start_daemon: StartDaemon
) -> None:
    daemon = await demo(start_daemon)
    dashboard = await open_dashboard(daemon)
    page = dashboard.page
    session = "kitchen-tablet-1"
    turns = (await daemon.get("/memories", user_id=USER, session=session, kinds="turn"))["memories"]
    facts = (await daemon.get("/memories", user_id=USER, session=session, kinds="fact"))["memories"]
    assert facts and all(fact["derived_from"] for fact in facts)
    await dashboard.open(f"#/sessions/{session}?user={USER}")
    shown_turns = {turn["id"] for turn in turns}
    for fact in facts:
        beside = [turn_id for turn_id in fact["derived_from"] if turn_id in shown_turns][-1]
        aside = page.locator(f"li.turn[data-turn='{beside}'] aside.extracted")
        await expect(aside).to_contain_text(fact["fact"])
        await expect(aside.get_by_role("link", name=f"#{fact['id']}", exact=True)).to_be_visible()
    # The transcript still reads oldest first, as said.
    await expect(page.locator("ol.transcript .said .fact-text")).to_have_text(
        [t["fact"] for t in reversed(turns)]
    )
    await expect(page.get_by_role("heading", name="Other facts from it")).to_have_count(0)
    await dashboard.screenshot()
    dashboard.assert_no_console_errors()


async def test_the_memory_list_is_newest_first_by_date(
    open_dashboard: OpenDashboard, start_daemon: StartDaemon
) -> None:
    daemon = await demo(start_daemon)
    dashboard = await open_dashboard(daemon)
    page = dashboard.page
    await dashboard.open("#/memories")
    await dashboard.list_loaded()
    await expect(page.locator("main th[aria-sort='descending']")).to_have_text(re.compile("^Created"))
    await expect(page.locator("#list-order")).to_contain_text("Newest first")
    stamps = await page.locator("main tbody td[data-label='Created'] time").evaluate_all(
        "times => times.map((t) => t.getAttribute('datetime'))"
    )
    assert len(stamps) > 10 and stamps == sorted(stamps, reverse=True)
    # The back-dated history was stored before the conversations: by id it would come first.
    newest = await daemon.get("/memories", user_id=USER, order="created", limit=50)
    ids = await page.locator("main tbody tr td > a[href^='#/memories/']").all_inner_texts()
    assert [int(text.lstrip("#")) for text in ids] == [m["id"] for m in newest["memories"]]
    dashboard.assert_no_console_errors()


async def test_durations_are_read_as_minutes_and_seconds(
    open_dashboard: OpenDashboard, start_daemon: StartDaemon
) -> None:
    daemon = await demo(start_daemon)
    dashboard = await open_dashboard(daemon)
    page = dashboard.page
    await dashboard.open("#/ingest")
    took = page.locator("main td[data-label='Took']")
    await expect(took.first).to_have_text(re.compile(r"^\d+(\.\d)? (ms|s)$|^\d+ min( \d+ s)?$"))
    written = await page.evaluate(
        """() => import("./static/dom.js").then(({ duration }) =>
            [137445, 850, 4200, 3903000].map(duration))"""
    )
    assert written == ["2 min 17 s", "850 ms", "4.2 s", "1 h 5 min"]
    dashboard.assert_no_console_errors()


async def test_the_llm_badge_says_a_failed_last_call_not_ok(dashboard: Dashboard, daemon: Daemon) -> None:
    await dashboard.open("#/system")
    badges = await dashboard.page.evaluate(
        """() => import("./static/system.js").then(({ llmBadge }) => [
            {backend: "openai", ok: true, last_call: "failed", last_error: "no reply within 10.0s"},
            {backend: "openai", ok: true, last_call: "ok", last_error: "no reply within 10.0s"},
            {backend: "openai", ok: true, last_call: null, last_error: null},
            {backend: "rules", ok: true, last_call: null, last_error: null},
        ].map((llm) => llmBadge(llm).textContent))"""
    )
    assert badges == [
        "✗ last call failed",
        "✓ last call answered",
        "reachable, not called yet",
        "rules only, no model",
    ]


async def test_without_a_sensor_the_hardware_panel_explains_instead_of_a_red_error(
    open_dashboard: OpenDashboard, start_daemon: StartDaemon
) -> None:
    with socket.socket() as probe:  # a port nothing listens on: LibreHardwareMonitor is not there
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    hardware = {"enabled": True, "lhm_host": "127.0.0.1", "lhm_port": port, "interval_s": 0.2,
                "use_pyamdgpuinfo": False}  # fmt: skip
    daemon = await start_daemon(hardware=hardware)
    dashboard = await open_dashboard(daemon)
    page = dashboard.page
    await dashboard.open("#/system")
    sensors = page.get_by_role("region", name="Sensors")
    await expect(sensors.locator(".badge")).to_have_text("no GPU sensor")
    await expect(sensors.locator(".badge-bad")).to_have_count(0)
    await expect(sensors).to_contain_text("hardware.lhm_host")
    # Only the host's charts: no empty GPU charts.
    await expect(page.get_by_role("img", name=re.compile("^(GPU|VRAM)"))).to_have_count(0)
    await expect(page.locator("figure.chart strong")).to_have_text(["CPU load", "Host memory"])
    await dashboard.screenshot()
    dashboard.assert_no_console_errors()


async def test_a_memory_of_another_user_says_so_and_can_switch_the_picker(
    dashboard: Dashboard, daemon: Daemon
) -> None:
    ana = daemon.memories["ana"][0]
    page = dashboard.page
    await dashboard.open("#/memories")
    picker = page.get_by_label("User", exact=True)
    await expect(picker).to_have_value("sam")
    await dashboard.go(f"#/memories/{ana['id']}?user=ana")
    note = page.locator("#other-user")
    await expect(note).to_contain_text("This memory belongs to ana; the user picker shows sam")
    await note.get_by_role("button", name="Show ana's memories").click()
    await expect(picker).to_have_value("ana")
    await expect(note).to_have_count(0)
    await expect(page.locator("blockquote.fact-text")).to_have_text(ana["fact"])
    dashboard.assert_no_console_errors()


async def test_tables_become_cards_on_a_phone(open_dashboard: OpenDashboard, daemon: Daemon) -> None:
    dashboard = await open_dashboard(daemon, viewport=PHONE)
    page = dashboard.page
    for route in ("#/memories", "#/ingest", "#/sessions"):
        await dashboard.open(route)
        rows = page.locator("main .table-scroll tbody tr")
        await expect(rows.first).to_be_visible()
        header = await page.locator("main .table-scroll thead").first.bounding_box()
        assert header is not None and header["height"] <= 1  # kept for screen readers, not shown
        assert await rows.first.evaluate("row => getComputedStyle(row).display") == "block"
        # No sideways scrolling, neither of the page nor inside a table's region.
        assert await page.evaluate(
            """() => document.documentElement.scrollWidth <= window.innerWidth
                && [...document.querySelectorAll(".table-scroll")].every((r) => r.scrollWidth <= r.clientWidth + 1)"""
        ), route
        await dashboard.screenshot(route.strip("#/"))
    dashboard.assert_no_console_errors()


async def test_docs_screenshots(open_dashboard: OpenDashboard, start_daemon: StartDaemon) -> None:
    """The PNGs of docs/guides/dashboard.md (written there with MEMORY_CORTEX_DOCS_IMAGES=1)."""
    with socket.socket() as probe:  # no LibreHardwareMonitor: the system page explains what to set
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    daemon = await demo(start_daemon, hardware={"enabled": True, "lhm_host": "127.0.0.1", "lhm_port": port})
    desktop = await open_dashboard(daemon, viewport={"width": 1280, "height": 900})
    phone = await open_dashboard(daemon, viewport=PHONE)
    shots = [
        (desktop, "#/overview", "overview.png", True, None),
        (phone, "#/overview", "overview-phone.png", False, None),
        (desktop, "#/sessions/kitchen-tablet-1?user=robin", "conversation.png", True, None),
        (desktop, "#/memories", "memories.png", False, "#list-order"),
        (phone, "#/memories", "memories-phone.png", False, None),  # the list is first there, filters folded
        (desktop, "#/system", "system.png", False, None),
    ]
    for dashboard, route, name, full_page, scroll_to in shots:
        await dashboard.open(route)
        if scroll_to:  # the list, not the filter form above it (on a desktop)
            await dashboard.page.locator(scroll_to).evaluate("node => node.scrollIntoView()")
        path = await dashboard.screenshot(name.removesuffix(".png"), full_page=full_page)
        if WRITE_DOCS_IMAGES:
            DOCS_IMAGES.mkdir(parents=True, exist_ok=True)
            (DOCS_IMAGES / name).write_bytes(path.read_bytes())
    desktop.assert_no_console_errors()
    phone.assert_no_console_errors()
