"""On a phone the dashboard shows first what was asked for (issue 35): the memory list before its
filters, which fold behind a "Filters" button that counts the active ones, and the search results
before the query's stage timings. On a desktop the filters and the timings stay where they were.

The phone is Chromium's emulation of one (390 × 844 CSS px, mobile, touch, 2× pixels), filled with
the invented household of tests/ui/demo.py. Each test saves what the first screen shows under
test-output/ui/. ``MEMORY_CORTEX_PHONE_SHOTS=before`` (or ``after``; read at import) also writes the
phone's as docs/img/memories-phone-<that>.png and docs/img/search-phone-<that>.png, the images of
"On a phone" in docs/guides/dashboard.md:

    MEMORY_CORTEX_PHONE_SHOTS=after .venv/bin/python -m pytest -q tests/ui/test_phone_layout.py
"""

from __future__ import annotations

import os
import re
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from playwright.async_api import Locator, expect

from tests.ui.conftest import Daemon, Dashboard
from tests.ui.demo import fill

OpenDashboard = Callable[..., Awaitable[Dashboard]]
StartDaemon = Callable[..., Awaitable[Daemon]]
PHONE = {"width": 390, "height": 844}
PHONE_DEVICE: dict[str, Any] = {"is_mobile": True, "has_touch": True, "device_scale_factor": 2}
DESKTOP = {"width": 1280, "height": 800}
QUERY = "birthday party"  # the household has memories about it: the search has results
DOCS_IMAGES = Path(__file__).resolve().parents[2] / "docs" / "img"
PHONE_SHOTS = os.environ.get("MEMORY_CORTEX_PHONE_SHOTS", "")
NO_SIDEWAYS_SCROLL = "document.documentElement.scrollWidth <= window.innerWidth"
# Whether the first search result is drawn above the timings table (as ``first``: true or false).
RESULTS_FIRST = """first => {
    const result = document.querySelector("#fused tbody tr");
    const timings = document.querySelector(".table-scroll[aria-label='Time per stage (ms)']");
    return !!result && !!timings
        && (result.getBoundingClientRect().top < timings.getBoundingClientRect().top) === first;
}"""


async def demo(start_daemon: StartDaemon) -> Daemon:
    daemon = await start_daemon()
    await fill(daemon)
    return daemon


async def first_screen(dashboard: Dashboard, name: str) -> None:
    """Save what the top of the page shows, without scrolling (test-output/ui/<test>-<name>.png),
    and with MEMORY_CORTEX_PHONE_SHOTS=before|after as docs/img/<name>-phone-<before|after>.png."""
    await dashboard.page.evaluate("window.scrollTo(0, 0)")
    path = await dashboard.screenshot(name, full_page=False)
    if PHONE_SHOTS in ("before", "after"):
        DOCS_IMAGES.mkdir(parents=True, exist_ok=True)
        (DOCS_IMAGES / f"{name}-phone-{PHONE_SHOTS}.png").write_bytes(path.read_bytes())


async def top_of(locator: Locator) -> float:
    """Where ``locator`` starts, in CSS px from the top of the page (the page is not scrolled)."""
    box = await locator.bounding_box()
    assert box is not None, f"{locator} is not displayed"
    return box["y"]


async def run_search(dashboard: Dashboard, query: str = QUERY) -> None:
    page = dashboard.page
    await dashboard.open("#/search")
    await page.get_by_label("Query").fill(query)
    await page.get_by_role("button", name="Search").click()
    await expect(page.locator("#fused tbody tr").first).to_be_visible()


async def test_on_a_phone_the_memory_list_comes_before_its_filters(
    open_dashboard: OpenDashboard, start_daemon: StartDaemon
) -> None:
    daemon = await demo(start_daemon)
    phone = await open_dashboard(daemon, viewport=PHONE, **PHONE_DEVICE)
    page = phone.page
    await phone.open("#/memories")
    await phone.list_loaded()
    await first_screen(phone, "memories")
    first_row = page.locator("main .results tbody tr").first
    assert await top_of(first_row) < PHONE["height"], "the first memory is below the first screen"
    # The whole first memory, not just its top, is on the first screen.
    box = await first_row.bounding_box()
    assert box is not None and box["y"] + box["height"] <= PHONE["height"], "the first memory is cut off"
    # The filters are folded behind a real button that says whether they are open.
    form = page.locator("main form[aria-label='Filter memories']")  # by role, a hidden form is not found
    toggle = page.get_by_role("button", name="Filters", exact=True)
    await expect(form).to_be_attached()
    await expect(form).to_be_hidden()
    await expect(toggle).to_have_attribute("aria-expanded", "false")
    await expect(toggle).to_have_attribute("aria-controls", await form.get_attribute("id") or "")
    await toggle.click()
    await expect(toggle).to_have_attribute("aria-expanded", "true")
    await expect(form).to_be_visible()
    await phone.screenshot("filters-open", full_page=False)
    # Applied, the button counts the active filters (the rows per page are no filter).
    await form.get_by_label("Topic").fill("family")
    await form.get_by_label("Layer").select_option("core")
    await form.get_by_label("Rows per page").select_option("10")
    await form.get_by_role("button", name="Apply filters").click()
    await phone.list_loaded()
    toggle = page.get_by_role("button", name=re.compile("^Filters"))
    await expect(toggle).to_have_text("Filters (2 active)")
    topics = await page.locator("main .results td[data-label='Topic']").all_inner_texts()
    assert topics and {topic.strip() for topic in topics} == {"family"}, topics
    await form.get_by_role("button", name="Clear").click()
    await phone.list_loaded()
    await expect(toggle).to_have_text("Filters")
    await toggle.click()
    await expect(form).to_be_hidden()
    await expect(toggle).to_have_attribute("aria-expanded", "false")
    await expect(toggle).to_be_focused()
    # The state of the fold outlives a visit to a memory.
    await toggle.click()
    await page.locator("main .results tbody tr td > a[href^='#/memories/']").first.click()
    await phone.ready()
    await page.go_back()
    await phone.ready("#/memories")
    await expect(page.get_by_role("form", name="Filter memories")).to_be_visible()
    await expect(page.get_by_role("button", name="Filters", exact=True)).to_have_attribute(
        "aria-expanded", "true"
    )
    assert await page.evaluate(NO_SIDEWAYS_SCROLL)
    assert await phone.unlabelled_controls() == []
    phone.assert_no_console_errors()


async def test_on_a_phone_search_results_come_before_the_timings(
    open_dashboard: OpenDashboard, start_daemon: StartDaemon
) -> None:
    daemon = await demo(start_daemon)
    phone = await open_dashboard(daemon, viewport=PHONE, **PHONE_DEVICE)
    page = phone.page
    await run_search(phone)
    await first_screen(phone, "search")
    first_result = page.locator("#fused tbody tr").first
    timings = page.get_by_role("table", name="Time per stage (ms)")
    first_timing = timings.locator("tbody tr").first
    assert await top_of(first_result) < await top_of(first_timing), "a timing card comes before the results"
    assert await top_of(first_result) < PHONE["height"], "the first result is below the first screen"
    # The timings are still all there, after every list of hits.
    assert await top_of(page.locator("#vector-only")) < await top_of(first_timing)
    await expect(timings).to_contain_text("total")
    await first_timing.scroll_into_view_if_needed()
    await expect(first_timing).to_be_in_viewport()
    assert await page.evaluate(NO_SIDEWAYS_SCROLL)
    assert await phone.unlabelled_controls() == []
    phone.assert_no_console_errors()


async def test_on_a_desktop_the_filters_and_timings_stay_in_place(
    open_dashboard: OpenDashboard, start_daemon: StartDaemon
) -> None:
    daemon = await demo(start_daemon)
    desktop = await open_dashboard(daemon, viewport=DESKTOP)
    page = desktop.page
    await desktop.open("#/memories")
    await desktop.list_loaded()
    form = page.get_by_role("form", name="Filter memories")
    await expect(form).to_be_visible()
    await expect(form.get_by_label("Topic")).to_be_visible()
    await expect(form.get_by_role("button", name="Apply filters")).to_be_in_viewport()
    await expect(page.get_by_role("button", name=re.compile("^Filters"))).to_be_hidden()  # no fold here
    assert await top_of(form) < await top_of(page.locator("main .results tbody tr").first)
    await desktop.screenshot("memories", full_page=False)
    await run_search(desktop)
    timings = page.get_by_role("table", name="Time per stage (ms)")
    first_result = page.locator("#fused tbody tr").first
    # As before: how the query was run (its MATCH and timings) above the hits.
    assert await top_of(timings) < await top_of(first_result)
    await desktop.screenshot("search", full_page=False)
    # Narrowed to a phone's width and back (a window resized, a tablet turned), the page follows.
    await page.set_viewport_size(PHONE)
    await page.wait_for_function(RESULTS_FIRST, arg=True)
    await page.set_viewport_size(DESKTOP)
    await page.wait_for_function(RESULTS_FIRST, arg=False)
    await desktop.go("#/memories")
    await expect(form).to_be_visible()
    desktop.assert_no_console_errors()
