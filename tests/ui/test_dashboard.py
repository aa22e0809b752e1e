"""The dashboard in a real headless Chromium against a real, seeded daemon: every page loads without
console errors, and what is done in the page is what the API then says."""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Awaitable, Callable
from urllib.parse import parse_qs, urlsplit

from playwright.async_api import Error, Request, Route, expect

from tests.helpers import Disk, LhmServer
from tests.ui.conftest import TOKEN, Daemon, Dashboard, seed

OpenDashboard = Callable[..., Awaitable[Dashboard]]
PHONE = {"width": 390, "height": 844}


def memory_ids(texts: list[str]) -> list[int]:
    """The ids of an ID column ("#12" → 12)."""
    return [int(text.strip().lstrip("#")) for text in texts]


async def table_ids(dashboard: Dashboard, table: str) -> list[int]:
    """The memory ids of a table's rows, top to bottom (from the links to the memories)."""
    links = dashboard.page.locator(f"{table} tbody tr td > a[href^='#/memories/']")
    return memory_ids(await links.all_inner_texts())


async def wait_for_facts_of_job(daemon: Daemon, job_id: int, timeout: float = 20.0) -> dict:
    """GET /ingest/jobs/{job_id} once the job is done (it may be pending or running before)."""
    deadline = time.monotonic() + timeout
    while (answer := await daemon.get(f"/ingest/jobs/{job_id}"))["job"]["status"] != "done":
        assert answer["job"]["status"] in ("pending", "running"), answer["job"]
        assert time.monotonic() < deadline, f"job {job_id} not done after {timeout}s"
        await asyncio.sleep(0.05)
    return answer


def user_ids_sent(requests: list[Request]) -> list[list[str] | None]:
    """The user_id query parameter of each request (None where it was left out)."""
    return [parse_qs(urlsplit(request.url).query).get("user_id") for request in requests]


async def test_every_page_loads_without_console_errors(dashboard: Dashboard, daemon: Daemon) -> None:
    sam_id = daemon.memories["sam"][-1]["id"]
    await dashboard.open("#/memories")
    await expect(dashboard.page.get_by_role("heading", name=re.compile("^Memories"))).to_be_visible()
    await expect(dashboard.page.locator("main table tbody tr").first).to_be_visible()
    await dashboard.screenshot("memories")
    assert await dashboard.unlabelled_controls() == []
    await dashboard.go(f"#/memories/{sam_id}?user=sam")
    await expect(dashboard.page.locator("blockquote.fact-text")).to_have_text(
        daemon.memories["sam"][-1]["fact"]
    )
    await dashboard.screenshot("detail")
    assert await dashboard.unlabelled_controls() == []
    await dashboard.go("#/search")
    await expect(dashboard.page.get_by_label("Query")).to_be_visible()
    # A new page takes the focus to its heading, so a screen reader announces it.
    await expect(dashboard.page.get_by_role("heading", level=1)).to_be_focused()
    await dashboard.screenshot("search")
    assert await dashboard.unlabelled_controls() == []
    await dashboard.go("#/ingest")
    await expect(dashboard.page.get_by_role("heading", name=re.compile("^Failed"))).to_be_visible()
    await dashboard.screenshot("ingest")
    assert await dashboard.unlabelled_controls() == []
    await dashboard.go("#/lifecycle")
    await expect(dashboard.page.get_by_role("heading", name="Next run (preview)")).to_be_visible()
    await dashboard.screenshot("lifecycle")
    assert await dashboard.unlabelled_controls() == []
    await dashboard.go("#/system")
    await expect(dashboard.page.get_by_role("heading", name="Configuration")).to_be_visible()
    await dashboard.screenshot("system")
    assert await dashboard.unlabelled_controls() == []
    await dashboard.go("#/memories/%E0")  # a malformed % escape is no page, not an exception
    await expect(dashboard.page.get_by_role("heading", name="Page not found")).to_be_visible()
    await dashboard.screenshot()
    dashboard.assert_no_console_errors()


async def test_pages_are_usable_at_phone_width(open_dashboard: OpenDashboard, daemon: Daemon) -> None:
    dashboard = await open_dashboard(daemon, viewport=PHONE)
    page = dashboard.page
    await dashboard.open("#/memories")
    nav_link = page.get_by_role("link", name="Search debug")
    await expect(nav_link).to_be_hidden()  # the navigation collapses behind its button
    menu = page.get_by_role("button", name="Menu")
    await menu.click()
    await expect(menu).to_have_attribute("aria-expanded", "true")
    await expect(nav_link).to_be_visible()
    await dashboard.screenshot("menu", full_page=False)
    await menu.click()
    await expect(nav_link).to_be_hidden()
    # Escape closes it (the focus goes back to its button), and so does the focus leaving it.
    await menu.click()
    await nav_link.focus()
    await page.keyboard.press("Escape")
    await expect(menu).to_have_attribute("aria-expanded", "false")
    await expect(nav_link).to_be_hidden()
    await expect(menu).to_be_focused()
    await menu.click()
    await nav_link.focus()
    await page.get_by_label("User", exact=True).focus()
    await expect(menu).to_have_attribute("aria-expanded", "false")
    await expect(nav_link).to_be_hidden()
    # The page itself never scrolls sideways; wide tables scroll inside their own region.
    assert await page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
    await dashboard.screenshot()
    await dashboard.go(f"#/memories/{daemon.memories['sam'][-2]['id']}?user=sam")
    assert await page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
    await dashboard.screenshot("detail")
    dashboard.assert_no_console_errors()


async def test_an_edit_made_in_the_page_is_what_the_api_returns(dashboard: Dashboard, daemon: Daemon) -> None:
    memory = daemon.memories["sam"][-3]  # the espresso
    page = dashboard.page
    sent: list[Request] = []
    page.on(
        "request",
        lambda request: (
            sent.append(request)
            if request.resource_type == "fetch" and f"/memories/{memory['id']}" in request.url
            else None
        ),
    )
    heading = page.get_by_role("heading", level=1)
    await dashboard.open(f"#/memories/{memory['id']}?user=sam")
    await page.get_by_role("button", name="Edit").click()
    dialog = page.get_by_role("dialog", name=f"Edit memory #{memory['id']}")
    await expect(dialog).to_be_visible()
    await expect(dialog.get_by_label("Fact")).to_be_focused()
    await dialog.get_by_label("Fact").fill("Sam switched to green tea in the morning.")
    await dialog.get_by_label("Importance").fill("9")
    await dashboard.screenshot("dialog")
    await dialog.get_by_role("button", name="Save").click()
    await expect(page.locator("blockquote.fact-text")).to_have_text(
        "Sam switched to green tea in the morning."
    )
    await expect(heading).to_be_focused()  # the page was redrawn: reading resumes at its heading
    stored = await daemon.get(f"/memories/{memory['id']}", user_id="sam")
    assert stored["fact"] == "Sam switched to green tea in the morning." and stored["importance"] == 9

    # An archived memory goes back to the layer the user picks: working or core.
    layer = page.locator(".facts dt:text-is('Layer') + dd")
    for target in ("working", "core"):
        await page.get_by_role("button", name="Archive").click()
        await expect(page.get_by_role("button", name=f"Restore to {target}")).to_be_visible()
        await expect(heading).to_be_focused()
        assert (await daemon.get(f"/memories/{memory['id']}", user_id="sam"))["layer"] == "archive"
        if target == "working":
            await expect(page.get_by_role("button", name="Restore to core")).to_be_visible()
            await dashboard.screenshot("archived")
        await page.get_by_role("button", name=f"Restore to {target}").click()
        await expect(page.get_by_role("button", name="Archive")).to_be_visible()
        await expect(layer).to_contain_text(target)
        await expect(heading).to_be_focused()
        assert (await daemon.get(f"/memories/{memory['id']}", user_id="sam"))["layer"] == target
    # Every read and change of the memory was scoped to the page's user.
    assert {request.method for request in sent} == {"GET", "PATCH"}
    assert user_ids_sent(sent) == [["sam"]] * len(sent)
    await dashboard.screenshot()
    dashboard.assert_no_console_errors()


async def test_delete_asks_for_confirmation_then_the_memory_is_gone(
    dashboard: Dashboard, daemon: Daemon
) -> None:
    memory = daemon.memories["sam"][-1]
    page = dashboard.page
    await dashboard.open(f"#/memories/{memory['id']}?user=sam")
    await page.get_by_role("button", name="Delete…").click()
    confirm = page.get_by_role("dialog", name=f"Delete memory #{memory['id']}?")
    await expect(confirm).to_be_visible()
    # A destructive dialog starts on Cancel: Enter or Space must not delete.
    await expect(confirm.get_by_role("button", name="Cancel")).to_be_focused()
    await page.keyboard.press("Enter")
    await expect(confirm).to_be_hidden()
    await daemon.get(f"/memories/{memory['id']}", user_id="sam")  # cancelled: still there

    await page.get_by_role("button", name="Delete…").click()
    await expect(confirm).to_be_visible()
    await dashboard.screenshot()
    async with page.expect_request(lambda request: request.method == "DELETE") as deleted:
        await confirm.get_by_role("button", name="Delete for good").click()
    assert user_ids_sent([await deleted.value]) == [["sam"]]
    await dashboard.ready("#/memories")
    await daemon.get(f"/memories/{memory['id']}", expect=404, user_id="sam")
    remaining = (await daemon.get("/memories", user_id="sam", limit=50))["memories"]
    await expect(page.get_by_role("heading", name="Memories of sam")).to_be_visible()
    await expect(page.locator("main tbody tr")).to_have_count(len(remaining))
    shown = await table_ids(dashboard, "main")
    assert shown == [m["id"] for m in remaining] and memory["id"] not in shown
    dashboard.assert_no_console_errors()


async def test_another_users_memory_is_not_found_as_this_user(dashboard: Dashboard, daemon: Daemon) -> None:
    ana = daemon.memories["ana"][0]
    page = dashboard.page
    not_found = page.get_by_role("heading", name="Memory not found")
    history = re.compile(rf"/memories/{ana['id']}/history\?")
    async with page.expect_request(history) as asked:
        await dashboard.open(f"#/memories/{ana['id']}?user=sam")
    assert user_ids_sent([await asked.value]) == [["sam"]]
    await expect(not_found).to_be_visible()
    await expect(page.locator("#not-found")).to_contain_text(
        f"no memory #{ana['id']} among the memories of sam"
    )
    await expect(page.locator("blockquote.fact-text")).to_have_count(0)
    await dashboard.screenshot()
    # Without ?user= the picker's user (sam) is the scope: still not found.
    async with page.expect_request(history) as asked:
        await dashboard.go(f"#/memories/{ana['id']}")
    assert user_ids_sent([await asked.value]) == [["sam"]]
    await expect(not_found).to_be_visible()
    # As ana it opens; choosing another user there shows that user's list, not ana's memory.
    await dashboard.go(f"#/memories/{ana['id']}?user=ana")
    await expect(page.locator("blockquote.fact-text")).to_have_text(ana["fact"])
    await page.get_by_label("User", exact=True).select_option("ana")
    await dashboard.ready("#/memories")
    await expect(page.get_by_role("heading", name="Memories of ana")).to_be_visible()
    await expect(page.locator("main tbody tr")).to_have_count(len(daemon.memories["ana"]))
    # The browser logs each 404 answer; nothing else went wrong.
    assert len(dashboard.errors) == 2 and all("404" in error for error in dashboard.errors), dashboard.errors


async def test_filters_narrow_the_table_and_pages_follow_next_before_id(
    dashboard: Dashboard, daemon: Daemon
) -> None:
    page = dashboard.page
    rows = page.locator("main tbody tr")
    await dashboard.open("#/memories")
    await expect(page.get_by_label("User", exact=True)).to_have_value("sam")
    everything = await daemon.get("/memories", user_id="sam", limit=1000)
    assert await table_ids(dashboard, "main") == [m["id"] for m in everything["memories"][:50]]

    await page.get_by_label("Layer").select_option("archive")
    await page.get_by_role("button", name="Apply filters").click()
    await dashboard.list_loaded()
    archive = await daemon.get("/memories", user_id="sam", layer="archive")
    await expect(rows).to_have_count(len(archive["memories"]))
    assert await table_ids(dashboard, "main") == [m["id"] for m in archive["memories"]]

    await page.get_by_label("Layer").select_option("")
    await page.get_by_label("Text contains").fill("espresso")
    await page.get_by_role("button", name="Apply filters").click()
    await dashboard.list_loaded()
    await expect(rows).to_have_count(1)
    await expect(page.locator("main tbody")).to_contain_text("double espresso")

    # Clear reloads too; the Apply right after it aborts that load, so its answer never shows.
    await page.get_by_role("button", name="Clear").click()
    await page.get_by_label("Rows per page").select_option("10")
    await page.get_by_role("button", name="Apply filters").click()
    await dashboard.list_loaded()
    first = await daemon.get("/memories", user_id="sam", limit=10)
    await expect(rows).to_have_count(10)
    assert await table_ids(dashboard, "main") == [m["id"] for m in first["memories"]]
    await page.get_by_role("button", name="Older →").click()
    await dashboard.list_loaded()
    second = await daemon.get("/memories", user_id="sam", limit=10, before_id=first["next_before_id"])
    await expect(page.locator(".page-position")).to_have_text(f"Page 2 · {len(second['memories'])} shown")
    assert await table_ids(dashboard, "main") == [m["id"] for m in second["memories"]]
    await page.get_by_role("button", name="← Newer").click()
    await dashboard.list_loaded()
    await expect(page.locator(".page-position")).to_have_text("Page 1 · 10 shown")
    assert await table_ids(dashboard, "main") == [m["id"] for m in first["memories"]]

    await page.get_by_label("User", exact=True).select_option("ana")
    await dashboard.ready("#/memories")
    await expect(rows).to_have_count(len(daemon.memories["ana"]))
    await page.get_by_label("User", exact=True).select_option(label="Another user…")
    await page.get_by_label("Other user").fill("nobody")
    await page.get_by_label("Other user").press("Enter")
    await expect(page.get_by_role("heading", name="Memories of nobody")).to_be_visible()
    await expect(page.get_by_text("No memory matches these filters.")).to_be_visible()
    await page.get_by_label("User", exact=True).select_option("ana")
    await dashboard.ready("#/memories")
    await dashboard.screenshot()
    dashboard.assert_no_console_errors()


async def test_a_late_answer_never_replaces_a_newer_one(dashboard: Dashboard, daemon: Daemon) -> None:
    page = dashboard.page
    await dashboard.open("#/memories")
    late_answer_sent = asyncio.Event()

    async def hold_back_full_pages(route: Route) -> None:
        """Answers with limit=50 arrive a second late; the others at once."""
        if "limit=50" not in route.request.url:
            await route.continue_()
            return
        try:
            response = await route.fetch()
            await asyncio.sleep(1.0)
            await route.fulfill(response=response)
        except Error:
            pass  # the page aborted the request in the meantime: nobody to answer
        finally:
            late_answer_sent.set()

    await page.route(re.compile(r"/memories\?"), hold_back_full_pages)
    await page.get_by_role("button", name="Clear").click()  # asks for 50 rows: answered late
    await page.get_by_label("Rows per page").select_option("10")
    await page.get_by_role("button", name="Apply filters").click()  # asks for 10: answered at once
    await dashboard.list_loaded()
    await asyncio.wait_for(late_answer_sent.wait(), 10)
    await page.evaluate("() => new Promise((resolve) => setTimeout(resolve, 200))")  # time to (not) draw it

    first = await daemon.get("/memories", user_id="sam", limit=10)
    await expect(page.get_by_label("Rows per page")).to_have_value("10")
    await expect(page.locator("main tbody tr")).to_have_count(10)
    assert await table_ids(dashboard, "main") == [m["id"] for m in first["memories"]]
    await expect(page.locator(".page-position")).to_have_text("Page 1 · 10 shown")
    await dashboard.screenshot()
    dashboard.assert_no_console_errors()


async def test_a_double_click_on_older_moves_one_page(dashboard: Dashboard, daemon: Daemon) -> None:
    page = dashboard.page
    await dashboard.open("#/memories")
    await page.get_by_label("Rows per page").select_option("10")
    await page.get_by_role("button", name="Apply filters").click()
    await dashboard.list_loaded()
    await expect(page.locator("main tbody tr")).to_have_count(10)

    async def slow(route: Route) -> None:
        await asyncio.sleep(0.3)  # the second click lands while the first one's page loads
        await route.continue_()

    await page.route(re.compile(r"/memories\?"), slow)
    await page.get_by_role("button", name="Older →").dblclick()
    await dashboard.list_loaded()
    first = await daemon.get("/memories", user_id="sam", limit=10)
    second = await daemon.get("/memories", user_id="sam", limit=10, before_id=first["next_before_id"])
    await expect(page.locator(".page-position")).to_have_text("Page 2 · 10 shown")
    assert await table_ids(dashboard, "main") == [m["id"] for m in second["memories"]]
    await dashboard.screenshot()
    # One page further, so one page back is the first page again.
    await page.get_by_role("button", name="← Newer").click()
    await dashboard.list_loaded()
    await expect(page.locator(".page-position")).to_have_text("Page 1 · 10 shown")
    assert await table_ids(dashboard, "main") == [m["id"] for m in first["memories"]]
    dashboard.assert_no_console_errors()


async def test_older_still_pages_when_the_row_its_cursor_names_was_deleted(
    dashboard: Dashboard, daemon: Daemon
) -> None:
    page = dashboard.page
    await dashboard.open("#/memories")
    await page.get_by_label("Rows per page").select_option("10")
    await page.get_by_role("button", name="Apply filters").click()
    await dashboard.list_loaded()
    first = await daemon.get("/memories", user_id="sam", limit=10, order="created")
    cursor = {"before_id": first["next_before_id"], "before_created_at": first["next_before_created_at"]}
    second = await daemon.get("/memories", user_id="sam", limit=10, order="created", **cursor)
    # Deleted elsewhere (another tab, a script) while the first page is on screen.
    response = await daemon.client.delete(
        f"/memories/{first['next_before_id']}", json={}, headers=daemon._headers()
    )
    assert response.status == 200, await response.text()
    await page.get_by_role("button", name="Older →").click()
    await dashboard.list_loaded()
    await expect(page.locator(".page-position")).to_have_text("Page 2 · 10 shown")
    assert await table_ids(dashboard, "main") == [m["id"] for m in second["memories"]]
    dashboard.assert_no_console_errors()


async def test_search_debug_ranks_like_hybrid_search(dashboard: Dashboard, daemon: Daemon) -> None:
    page = dashboard.page
    query = "what does Sam drink before work"
    await dashboard.open("#/search")
    await page.get_by_label("Query").fill(query)
    await page.get_by_label("Results").fill("5")
    await page.get_by_role("button", name="Search").click()
    await expect(page.locator("#fused tbody tr").first).to_be_visible()
    hybrid = await daemon.post("/hybrid-search", {"query": query, "user_id": "sam", "limit": 5})
    assert hybrid["results"], "the seeded store should answer this query"
    assert await table_ids(dashboard, "#fused") == [r["id"] for r in hybrid["results"]]
    # FTS-only and vector-only lists beside it, the MATCH expression, the stage timings.
    await expect(page.locator("#fts-only tbody tr").first).to_be_visible()
    await expect(page.locator("#vector-only tbody tr").first).to_be_visible()
    debug = await daemon.post("/search/debug", {"query": query, "user_id": "sam", "limit": 5})
    await expect(page.locator("#fts-match")).to_have_text(debug["fts_match"])
    timings = page.get_by_role("table", name="Time per stage (ms)")
    await expect(timings).to_contain_text("total")
    stages = {stage for parts in debug["timings_ms"].values() for stage in parts}
    await expect(timings.locator("tbody tr")).to_have_count(len(stages))
    for search in debug["timings_ms"]:
        await expect(timings.get_by_role("columnheader", name=search, exact=True)).to_be_visible()
    # What each stage did to each hit's score: the factors the API reports, or a dash.
    factors = page.locator("#fused tbody tr td:nth-child(7)")
    expected = [
        " · ".join(f"{name.replace('_', ' ')} ×" for name in hit["factors"]) or "—" for hit in debug["fused"]
    ]
    await expect(page.locator("#fused thead th").nth(6)).to_have_text("Factors")
    for cell, names in zip(await factors.all_inner_texts(), expected, strict=True):
        assert all(part.split(" ×")[0] in cell for part in names.split(" · ")), (cell, names)
    await dashboard.screenshot()
    dashboard.assert_no_console_errors()


async def test_a_failed_job_shows_its_error_and_can_be_retried(dashboard: Dashboard, daemon: Daemon) -> None:
    failed = (await daemon.get("/ingest/jobs", status="failed"))["jobs"][0]
    page = dashboard.page
    await dashboard.open("#/ingest")
    failed_table = page.get_by_role("table", name="Failed jobs")
    await expect(failed_table).to_contain_text("ggml_assert failed")
    await expect(failed_table).to_contain_text("chat-broken")
    # The recent extraction unfolds the facts it stored.
    facts_button = page.get_by_role("button", name=re.compile(r"^stored \d+$")).first
    await facts_button.click()
    await expect(page.get_by_role("table", name=re.compile("^Facts stored by job"))).to_contain_text("Lisbon")
    await dashboard.screenshot("before-retry")

    async with page.expect_response(re.compile(rf"/ingest/jobs/{failed['id']}/retry$")) as answer:
        await page.get_by_role("button", name=f"Retry job {failed['id']}").click()
    assert await (await answer.value).json() == {"retried": True, "id": failed["id"]}
    retried = await wait_for_facts_of_job(daemon, failed["id"])
    assert [fact["fact"] for fact in retried["facts"]] == ["The user said: I started learning the violin"]
    await expect(page.get_by_role("table", name="Failed jobs")).to_have_count(0)
    await expect(page.get_by_text("No failed job.")).to_be_visible()
    await page.get_by_role("button", name="Refresh").click()
    recent = page.get_by_role("table", name="Recent extractions")
    await expect(recent).to_contain_text("chat-broken")
    await dashboard.screenshot()
    dashboard.assert_no_console_errors()


async def test_lifecycle_preview_renders_and_run_now_adds_a_run(dashboard: Dashboard, daemon: Daemon) -> None:
    page = dashboard.page
    await dashboard.open("#/lifecycle")
    await expect(page.get_by_role("table", name="Stages (preview)")).to_be_visible()
    runs_before = (await daemon.get("/lifecycle/log"))["runs"]
    # "Run now" asks first, naming the scope; cancelled, nothing runs.
    confirm = page.get_by_role("dialog", name="Run the lifecycle now?")
    await page.get_by_role("button", name="Run now").click()
    await expect(confirm).to_contain_text("Scope: the memories of all users.")
    await confirm.get_by_role("button", name="Cancel").click()
    await expect(confirm).to_be_hidden()
    assert len((await daemon.get("/lifecycle/log"))["runs"]) == len(runs_before)

    await page.get_by_label("Scope", exact=True).select_option("sam")
    await page.get_by_role("button", name="Run now").click()
    await expect(confirm).to_contain_text("Scope: only the memories of sam.")
    await dashboard.screenshot("confirm")
    await confirm.get_by_role("button", name="Run now").click()
    log = page.get_by_role("table", name="Lifecycle runs, newest first")
    await expect(log.locator("xpath=./tbody/tr[not(contains(@class, 'sub-row'))]")).to_have_count(
        len(runs_before) + 1
    )
    # The daemon runs it in the background; the page follows it and shows it done in the log.
    await expect(log.locator("xpath=./tbody/tr").first.locator(".status")).to_have_text("done")
    await expect(page.get_by_role("button", name="Run now")).to_be_enabled()
    runs = (await daemon.get("/lifecycle/log"))["runs"]
    assert runs[0]["status"] == "done"
    assert len(runs) == len(runs_before) + 1 and runs[0]["report"]["user_id"] == "sam"
    await expect(log.locator("xpath=./tbody/tr").first).to_contain_text(f"#{runs[0]['id']}")
    await log.get_by_role("button", name=f"Report of run {runs[0]['id']}").click()
    stages = page.get_by_role("table", name=f"Stages (run {runs[0]['id']})")
    await expect(stages).to_be_visible()
    # The report's memory links open each memory as its user (the seeded near-duplicates merge).
    hrefs = await stages.locator("a[href^='#/memories/']").evaluate_all(
        "links => links.map((a) => a.getAttribute('href'))"
    )
    assert hrefs and all(re.fullmatch(r"#/memories/\d+\?user=sam", href) for href in hrefs), hrefs
    await dashboard.screenshot()
    dashboard.assert_no_console_errors()


async def test_a_preview_too_slow_for_a_request_is_planned_by_a_dry_run_in_the_background(
    dashboard: Dashboard, daemon: Daemon
) -> None:
    """The daemon answers 503 ``timeout`` when a store is too large to plan within one request
    (tests/http/test_time_bounds.py); the page then offers the same plan as a dry run it follows."""
    page = dashboard.page
    timeout = {"error": {"code": "timeout", "message": "GET /lifecycle/preview took longer than 20 s"}}

    asked: list[str] = []

    async def too_slow(route: Route) -> None:
        asked.append(route.request.url)
        await route.fulfill(status=503, json=timeout)

    await page.route(re.compile(r"/lifecycle/preview"), too_slow)
    await dashboard.open("#/lifecycle")
    await expect(page.get_by_text(re.compile("all users takes longer than one request may"))).to_be_visible()
    runs_before = (await daemon.get("/lifecycle/log"))["runs"]
    await page.get_by_label("Scope", exact=True).select_option("sam")
    # The page asks again, for sam's preview, and offers sam's plan.
    await expect(page.get_by_text(re.compile("the memories of sam takes longer"))).to_be_visible()
    assert len(asked) == 2 and "user_id=sam" in asked[1], asked
    await page.get_by_role("button", name="Plan in the background").click()
    stages = page.get_by_role("table", name="Stages (preview)")
    await expect(stages).to_be_visible()
    await expect(stages.locator("tbody tr")).to_have_count(6)
    await expect(stages.locator(".status").first).to_have_text("planned")
    runs = (await daemon.get("/lifecycle/log"))["runs"]
    assert len(runs) == len(runs_before) + 1
    assert runs[0]["dry_run"] is True and runs[0]["status"] == "done"
    assert runs[0]["report"]["user_id"] == "sam"  # the scope chosen when the plan was asked for
    await expect(page.get_by_role("table", name="Lifecycle runs, newest first")).to_contain_text("(dry run)")
    await dashboard.screenshot()
    # The only console errors are the browser's own lines for the 503 answers.
    assert dashboard.errors and all("503" in line for line in dashboard.errors), dashboard.errors


async def test_system_page_draws_its_charts(
    open_dashboard: OpenDashboard, start_daemon: Callable[..., Awaitable[Daemon]], lhm_server: LhmServer
) -> None:
    hardware = lhm_server.hardware_config(interval_s=0.2, busy_load_percent=100.0)
    daemon = await seed(await start_daemon(hardware=hardware))
    deadline = time.monotonic() + 20
    while len((await daemon.get("/system/history", minutes=60))["points"]) < 3:
        assert time.monotonic() < deadline, "the hardware poller stored no history"
        await asyncio.sleep(0.1)
    await daemon.post("/hybrid-search", {"query": "espresso", "user_id": "sam"})

    dashboard = await open_dashboard(daemon)
    page = dashboard.page
    await dashboard.open("#/system")
    charts = page.locator("figure.chart svg")
    await expect(charts).to_have_count(4)
    lines = page.locator("figure.chart polyline")
    assert await lines.count() >= 3
    for points in await lines.evaluate_all("lines => lines.map(line => line.getAttribute('points'))"):
        assert len(points.split()) >= 3
    await expect(page.get_by_role("img", name=re.compile("^GPU and CPU load"))).to_be_visible()
    stats = await daemon.get("/stats")
    assert stats["per_layer"]
    layer_rows = page.get_by_role("table", name="Live memories per layer").locator("tbody tr")
    for layer, count in stats["per_layer"].items():
        row = layer_rows.filter(has=page.get_by_role("cell", name=layer, exact=True))
        await expect(row.locator("td")).to_have_text([layer, str(count)])  # whole cells, not substrings
    latency = page.get_by_role("region", name="Search latency")
    await expect(latency.locator("dt:text-is('p95') + dd")).to_have_text(re.compile(r"^\d+(\.\d+)? ms$"))
    # Only the windows the daemon keeps (hardware.chart_hours, 6 by default), at the set interval.
    await expect(page.get_by_label("Window").locator("option")).to_have_text(
        ["Last hour", "Last 3 hours", "Last 6 hours"]
    )
    await expect(
        page.get_by_text(re.compile(r"one every 0\.2 s \(longer while the sensors fail\)"))
    ).to_be_visible()
    await page.get_by_text("server", exact=True).click()
    await dashboard.screenshot()
    dashboard.assert_no_console_errors()


async def test_a_full_disk_shows_a_banner_on_every_page_until_writes_work(
    open_dashboard: OpenDashboard, daemon: Daemon
) -> None:
    disk = Disk(daemon.client.app)
    await disk.fill()
    refused = await daemon.client.post(
        "/memories", json={"fact": "Sam's notes: " + "bees " * 3000, "user_id": "sam"}
    )
    assert refused.status == 507
    dashboard = await open_dashboard(daemon)
    page = dashboard.page
    await page.goto(daemon.ui_url + "#/memories")
    await dashboard.ready()
    banner = page.locator("#health-banner")
    await expect(banner).to_be_visible()
    await expect(banner).to_contain_text("disk that holds the database is full")
    await expect(page.locator("main tbody tr").first).to_be_visible()  # reads still work
    await page.goto(daemon.ui_url + "#/system")
    await dashboard.ready()
    await expect(page.get_by_label("Disk")).to_contain_text("full: writes refused")
    await dashboard.screenshot("disk-full")

    await disk.free()
    await daemon.post("/memories", {"fact": "Sam's bees swarmed.", "user_id": "sam"}, 201)
    await page.reload()
    await dashboard.ready()
    await expect(banner).to_be_hidden()
    await expect(page.get_by_label("Disk")).to_contain_text("writes accepted")
    assert not dashboard.errors


async def test_with_a_token_nothing_loads_until_it_is_entered(
    open_dashboard: OpenDashboard, start_daemon: Callable[..., Awaitable[Daemon]]
) -> None:
    daemon = await seed(await start_daemon(server={"api_token": TOKEN}))
    dashboard = await open_dashboard(daemon)
    page = dashboard.page
    statuses: list[int] = []
    # The data endpoints (the liveness probe /health holds none and needs no token).
    page.on(
        "response",
        lambda response: statuses.append(response.status)
        if "/ui/" not in response.url and not response.url.endswith("/health")
        else None,
    )
    await page.goto(daemon.ui_url + "#/memories")
    token_field = page.get_by_label("API token", exact=True)
    await expect(token_field).to_be_visible()
    await expect(token_field).to_be_focused()
    assert statuses and set(statuses) == {401}
    assert "Sam" not in await page.locator("body").inner_text()
    await dashboard.screenshot("locked")

    await token_field.fill("not-the-token")
    await page.get_by_role("button", name="Unlock").click()
    await expect(page.get_by_text("That token was refused")).to_be_visible()
    assert set(statuses) == {401}

    await token_field.fill(TOKEN)
    await page.get_by_role("button", name="Unlock").click()
    await dashboard.ready()
    await expect(page.locator("main tbody tr").first).to_be_visible()
    await expect(token_field).to_be_hidden()
    await expect(page.locator("main")).to_contain_text("Sam")
    await dashboard.screenshot()
    # Only the expected 401s were reported; nothing else went wrong.
    assert dashboard.errors and all("401" in error for error in dashboard.errors), dashboard.errors


async def test_turns_show_their_session_and_a_fact_links_the_turns_it_came_from(
    dashboard: Dashboard, daemon: Daemon
) -> None:
    page = dashboard.page
    await dashboard.open("#/memories")
    await page.get_by_label("Kind").select_option("turn")
    await page.get_by_role("button", name="Apply filters").click()
    await dashboard.list_loaded()
    turns = await daemon.get("/memories", user_id="sam", kinds="turn")
    assert turns["count"] > 0
    assert await table_ids(dashboard, "main") == [m["id"] for m in turns["memories"]]
    await expect(page.locator("main tbody tr").first).to_contain_text("turn · chat-")

    facts = (await daemon.get("/memories", user_id="sam", kinds="fact", limit=1000))["memories"]
    derived = next(m for m in facts if m["derived_from"])
    await dashboard.open(f"#/memories/{derived['id']}?user=sam")
    source = page.get_by_role("link", name=f"#{derived['derived_from'][0]}")
    await expect(source).to_be_visible()
    await source.click()
    await expect(page.get_by_text("a conversation turn, as said")).to_be_visible()


async def test_a_conversation_reads_as_it_was_said_with_what_was_made_of_it(
    dashboard: Dashboard, daemon: Daemon
) -> None:
    page = dashboard.page
    said = ["I adopted a cat called Miso", "What a lovely name!", "She sleeps on my keyboard all day"]
    messages = [{"role": ("user", "assistant")[i % 2], "content": text} for i, text in enumerate(said)]
    body = {"messages": messages, "session_id": "chat-cat", "user_id": "sam", "debounce": False}
    await daemon.post("/ingest", body, 202)
    deadline = time.monotonic() + 20
    while (listed := await daemon.get("/sessions", user_id="sam"))["sessions"][0]["session"] != "chat-cat":
        assert time.monotonic() < deadline, listed
        await asyncio.sleep(0.05)
    session = listed["sessions"][0]
    assert session["turns"] == 3
    await dashboard.open("#/sessions")
    await expect(page.get_by_role("heading", name=re.compile("^Conversations"))).to_be_visible()
    await expect(page.locator("main tbody tr")).to_have_count(listed["count"])
    assert await dashboard.unlabelled_controls() == []
    await dashboard.screenshot("sessions")

    await page.get_by_role("link", name=session["session"], exact=True).click()
    await expect(page.get_by_role("heading", name=re.compile("^Conversation "))).to_be_visible()
    turns = (await daemon.get("/memories", user_id="sam", session=session["session"], kinds="turn"))[
        "memories"
    ]
    assert len(turns) == session["turns"]
    # Oldest first, as said (the API pages newest first).
    shown = page.locator("ol.transcript li .fact-text")
    await expect(shown).to_have_text([t["fact"] for t in reversed(turns)])
    facts = (await daemon.get("/memories", user_id="sam", session=session["session"], kinds="fact"))[
        "memories"
    ]
    for fact in facts:
        await expect(page.get_by_role("link", name=f"#{fact['id']}", exact=True)).to_be_visible()
    # Each fact stands beside the turn it was read from, not beside the last one (issue 35): the
    # fact about Miso beside the first message, the one about the keyboard beside the third.
    by_text = {turn["fact"].split(": ", 1)[-1]: turn["id"] for turn in turns}
    for said_text in (said[0], said[2]):
        [fact] = [f for f in facts if said_text in f["fact"]]
        beside = page.get_by_label(f"Extracted from turn #{by_text[said_text]}", exact=True)
        await expect(beside).to_contain_text(fact["fact"])
        assert fact["derived_from"] == [by_text[said_text]]
    assert await dashboard.unlabelled_controls() == []
    await dashboard.screenshot("conversation")

    # A turn in the memories table links its conversation.
    await dashboard.go("#/memories")
    await page.get_by_label("Kind").select_option("turn")
    await page.get_by_role("button", name="Apply filters").click()
    await dashboard.list_loaded()
    await page.locator("main tbody tr").first.get_by_role("link", name=re.compile("^chat-")).click()
    await expect(page.get_by_role("heading", name=re.compile("^Conversation "))).to_be_visible()
    dashboard.assert_no_console_errors()


async def test_scope_shows_in_the_table_and_filters_by_visibility_agent_and_channel(
    dashboard: Dashboard, daemon: Daemon
) -> None:
    shared = {"user_id": "sam", "fact": "Sam leads the Thursday climbing group.", "visibility": "shared"}
    work = await daemon.post("/memories", {**shared, "agent_id": "work", "source_channel": "g1"}, 201)
    page = dashboard.page
    rows = page.locator("main tbody tr")
    await dashboard.open("#/memories")

    await page.get_by_label("Visibility").select_option("shared")
    await page.get_by_role("button", name="Apply filters").click()
    await dashboard.list_loaded()
    await expect(rows).to_have_count(1)
    assert await table_ids(dashboard, "main") == [work["id"]]
    await expect(rows.first).to_contain_text("shared in g1 · agent work")

    # As another agent sees them: the work agent's memory is not among them.
    await page.get_by_label("Visibility").select_option("")
    await page.get_by_label("Seen by agent").fill("home")
    await page.get_by_role("button", name="Apply filters").click()
    await dashboard.list_loaded()
    seen_by_home = await daemon.get("/memories", user_id="sam", agent_id="home", limit=50)
    assert work["id"] not in [m["id"] for m in seen_by_home["memories"]]
    assert await table_ids(dashboard, "main") == [m["id"] for m in seen_by_home["memories"]]

    await page.get_by_label("Seen by agent").fill("")
    await page.get_by_label("Channel").fill("g1")
    await page.get_by_role("button", name="Apply filters").click()
    await dashboard.list_loaded()
    assert await table_ids(dashboard, "main") == [work["id"]]
    await rows.first.get_by_role("link").first.click()
    await expect(page.locator(".facts dt:text-is('Agent') + dd")).to_have_text("work")
    await expect(page.locator(".facts dt:text-is('Channel') + dd")).to_have_text("g1")
    dashboard.assert_no_console_errors()


async def test_search_debug_shows_what_the_similarity_floor_leaves_out(
    dashboard: Dashboard, daemon: Daemon
) -> None:
    """An unrelated question: /hybrid-search leaves the vector-only hits out, the debug page shows
    them, each marked, with its cosine to the question as asked."""
    page = dashboard.page
    query = "How do I configure a Kubernetes ingress controller?"
    debug = await daemon.post("/search/debug", {"query": query, "user_id": "sam", "limit": 5})
    floored = [hit for hit in debug["fused"] if hit["below_floor"]]
    assert floored, "the seeded store has nothing about Kubernetes"
    await dashboard.open("#/search")
    await page.get_by_label("Query").fill(query)
    await page.get_by_label("Results").fill("5")
    await page.get_by_role("button", name="Search").click()
    await expect(page.locator("#fused tbody tr").first).to_be_visible()
    await expect(page.locator("#fused thead th").last).to_have_text("In /hybrid-search")
    marks = await page.locator("#fused tbody tr td:last-child").all_inner_texts()
    assert marks.count("no: below the floor") == len(floored)
    await expect(page.get_by_text("Similarity floor")).to_be_visible()
