"""The lifecycle engine on a real SQLite file, the real MiniLM vectors and an injected clock.

What the issue asks to be shown: an unread old todo is archived before an unread identity fact; a
memory read often is promoted; merges keep ids and links; the lifecycle never lowers the row count;
the preview equals what the run then does. (A run killed mid-way: tests/test_lifecycle_crash.py.)
"""

from __future__ import annotations

import asyncio
import math
import sqlite3
import time
from collections.abc import AsyncIterator, Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from memory_cortex.config import LifecycleConfig
from memory_cortex.errors import LifecycleBusy
from memory_cortex.models.embedders import SentenceTransformerEmbedder
from memory_cortex.models.llm import LLM
from memory_cortex.records import PRIVATE_TO_ALL_AGENTS, NewMemory
from memory_cortex.services.lifecycle import (
    LifecycleReport,
    LifecycleService,
    access_factor,
    days_until_archived,
    decay_strength,
    iso,
    next_daily_run,
    promotion_score,
)
from memory_cortex.services.memories import MemoryService
from memory_cortex.services.search import SearchService
from memory_cortex.store import lifecycle as lifecycle_sql
from memory_cortex.store.db import Database
from memory_cortex.store.lifecycle import LifecycleRow
from memory_cortex.store.vectors import VectorIndex
from tests.fakes import MovableClock, ScriptedLLM

T0 = datetime(2026, 1, 5, 12, 0, tzinfo=UTC)


class Rig:
    """The store, the index, MemoryService and the lifecycle, as ``create_app`` wires them."""

    def __init__(self, path: Path, embedder: SentenceTransformerEmbedder) -> None:
        self.db = Database(path)
        self.index = VectorIndex(embedder.model, embedder.dim)
        self.memories = MemoryService(self.db, self.index, embedder)
        self.embedder = embedder
        self.clock = MovableClock(T0)

    def lifecycle(self, llm: LLM | None = None, **settings: Any) -> LifecycleService:
        return LifecycleService(
            self.db, self.memories, self.index, llm, LifecycleConfig(**settings), clock=self.clock
        )

    async def add(self, fact: str, *, age_days: float = 0.0, dedup: bool = False, **fields: Any) -> int:
        """Store one memory created ``age_days`` before the clock's now."""
        created = iso(self.clock.now - timedelta(days=age_days))
        (outcome,) = await self.memories.create(
            [NewMemory(user_id=fields.pop("user_id", "sam"), fact=fact, created_at=created, **fields)],
            dedup=dedup,
        )
        if outcome.action == "created":  # written age_days ago, it entered its layer then (issue 23)
            await self.sql("UPDATE memories SET layer_since = ? WHERE id = ?", created, outcome.record.id)
        return outcome.record.id

    async def sql(self, statement: str, *params: Any) -> None:
        await self.db.write(lambda conn: conn.execute(statement, params))

    async def read_rows(self) -> dict[int, sqlite3.Row]:
        return await self.db.read(
            lambda conn: {row["id"]: row for row in conn.execute("SELECT * FROM memories").fetchall()}
        )

    async def layer(self, memory_id: int) -> str:
        return (await self.read_rows())[memory_id]["layer"]

    async def count(self) -> int:
        return await self.db.read(lifecycle_sql.total_rows)


@pytest.fixture
async def rig(tmp_path: Path, minilm: SentenceTransformerEmbedder) -> AsyncIterator[Rig]:
    rig = Rig(tmp_path / "memories.db", minilm)
    await asyncio.to_thread(rig.db.open)
    yield rig
    await asyncio.to_thread(rig.db.close)


def plan_of(report: LifecycleReport) -> list[tuple[str, dict[str, int], dict[str, list[int]], list[Any]]]:
    """What a report says was (to be) done, without timings or ids not yet known in a dry run."""
    out = []
    for stage in report.stages:
        counts = {k: v for k, v in stage.counts.items() if k not in ("fts_optimized",)}
        ids = {k: v for k, v in stage.ids.items() if k != "summaries"}
        groups = [
            (g["user_id"], g["ids"], g["period"], g["into"] if stage.name == "merge" else None)
            for g in stage.groups
        ]
        out.append((stage.name, counts, ids, groups))
    return out


# -- the formulas -------------------------------------------------------------------------------
def test_access_factor_gives_unread_memories_half_weight_and_the_most_read_full() -> None:
    assert access_factor(0, 0) == 0.5
    assert access_factor(0, 40) == 0.5
    assert access_factor(40, 40) == 1.0
    assert 0.5 < access_factor(3, 40) < access_factor(10, 40) < 1.0


def test_decay_archives_an_unread_todo_weeks_before_an_unread_identity_fact() -> None:
    config = LifecycleConfig()
    todo, identity = days_until_archived("todo", config), days_until_archived("identity", config)
    assert 30 < todo < 45 < 70 < identity < 90
    assert days_until_archived("context", config) < todo < days_until_archived("fact", config) < identity
    # A category with no base of its own decays like the default.
    assert days_until_archived("hobby", config) == days_until_archived("fact", config)
    # The formula itself: half-life ln 2 / λ ≈ 23 days.
    half = decay_strength("identity", 0, 0, math.log(2) / 0.03, config)
    assert half == pytest.approx(decay_strength("identity", 0, 0, 0, config) / 2)


def row(**fields: Any) -> LifecycleRow:
    values: dict[str, Any] = {
        "id": 1,
        "user_id": "sam",
        "layer": "working",
        "category": "fact",
        "importance": 5,
        "access_count": 0,
        "last_accessed": None,
        "layer_since": None,
        "created_at": iso(T0),
        "updated_at": iso(T0),
        "extractor": None,
        "compressed_into": None,
    }
    return LifecycleRow(**{**values, **fields})


def test_promotion_score_rewards_reads_high_signal_origins_and_novelty() -> None:
    config = LifecycleConfig()
    threshold = config.promote_threshold
    assert promotion_score(row(access_count=3), 0.99, config) >= threshold  # read often: always
    assert promotion_score(row(access_count=1), 0.1, config) < threshold  # read once: not yet
    assert promotion_score(row(access_count=2), 0.1, config) >= threshold  # twice, and new
    assert promotion_score(row(), 0.0, config) < threshold  # new alone is not enough
    for signal in (row(category="identity"), row(importance=9), row(extractor="rules")):
        assert promotion_score(signal, 0.3, config) >= threshold
        assert promotion_score(signal, 0.95, config) < threshold  # core already says it
    assert promotion_score(row(category="preference"), None, config) >= threshold  # no vector: novelty 0.5


def test_next_daily_run_is_the_next_local_time_and_follows_daylight_saving(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("TZ", "Europe/Berlin")
    time.tzset()
    try:
        before = datetime(2026, 3, 28, 1, 0, tzinfo=UTC)  # 02:00 CET
        assert next_daily_run(before, "03:00") == datetime(2026, 3, 28, 2, 0, tzinfo=UTC)
        after = datetime(2026, 3, 28, 2, 30, tzinfo=UTC)  # 03:30 CET: tomorrow, which is summer time
        assert next_daily_run(after, "03:00") == datetime(2026, 3, 29, 1, 0, tzinfo=UTC)
        exactly = datetime(2026, 3, 28, 2, 0, tzinfo=UTC)
        assert next_daily_run(exactly, "03:00") == exactly
        assert next_daily_run(exactly, "03:00", after=exactly) == datetime(2026, 3, 29, 1, 0, tzinfo=UTC)
    finally:
        monkeypatch.delenv("TZ")
        time.tzset()


# -- the stages on a real store -----------------------------------------------------------------
async def test_unread_old_todo_is_archived_before_an_unread_identity_fact(rig: Rig) -> None:
    # Protection off: the decay formula alone (what protection keeps: tests/http/test_nothing_hidden.py).
    lifecycle = rig.lifecycle(protect_importance=11, protected_categories=[])
    todo = await rig.add("Buy a new bicycle pump.", category="todo")
    identity = await rig.add("Sam was born in Lisbon.", category="identity", importance=9)
    rig.clock.advance(days=10)
    await lifecycle.run()
    assert (await rig.layer(todo), await rig.layer(identity)) == ("core", "core")  # fresh: both stay
    rig.clock.advance(days=30)
    report = await lifecycle.run()
    assert (await rig.layer(todo), await rig.layer(identity)) == ("archive", "core")
    assert report.stage("decay").ids["archived"] == [todo]
    rig.clock.advance(days=40)
    await lifecycle.run()
    assert await rig.layer(identity) == "archive"  # 80 days unread: the identity fact goes too
    row = (await rig.read_rows())[todo]
    assert row["superseded_by"] is None and row["layer_since"] == iso(T0 + timedelta(days=40))


async def test_a_read_restarts_the_decay(rig: Rig) -> None:
    lifecycle = rig.lifecycle()
    todo = await rig.add("Call the plumber about the leak.", category="todo")
    rig.clock.advance(days=35)
    await rig.sql(
        "UPDATE memories SET access_count = 2, last_accessed = ? WHERE id = ?", iso(rig.clock.now), todo
    )
    rig.clock.advance(days=10)
    await lifecycle.run()
    assert await rig.layer(todo) == "core"  # 45 days old, but read 10 days ago


async def test_a_memory_read_often_is_promoted_and_an_unread_one_expires_after_its_ttl(rig: Rig) -> None:
    lifecycle = rig.lifecycle()
    await rig.add("Sam's sister is called Ana.", category="relationship")  # some core to compare with
    read = await rig.add("Sam plays the cello on Sundays.", layer="working")
    unread = await rig.add("Sam watched a film about sharks.", layer="working")
    await rig.sql(
        "UPDATE memories SET access_count = 3, last_accessed = ? WHERE id = ?", iso(rig.clock.now), read
    )
    rig.clock.advance(hours=1)
    report = await lifecycle.run()
    assert report.stage("promote").ids == {"promoted": [read], "expired": []}
    assert (await rig.layer(read), await rig.layer(unread)) == ("core", "working")
    rig.clock.advance(hours=47)  # 48 h after it was written: its TTL is over
    report = await lifecycle.run()
    assert report.stage("promote").ids == {"promoted": [], "expired": [unread]}
    assert await rig.layer(unread) == "archive"
    assert rig.index.layers_by_id()[unread] == (
        "sam",
        "archive",
        "fact",
        PRIVATE_TO_ALL_AGENTS,
    )  # the index follows the store


async def test_a_turn_is_never_promoted_and_rests_in_the_archive_after_its_days(rig: Rig) -> None:
    lifecycle = rig.lifecycle(turn_archive_days=30)
    turn = await rig.add("Sam: I play the cello every Sunday!", layer="working", kind="turn", importance=9)
    fact = await rig.add("Sam plays the cello on Sundays.", layer="working", importance=9)
    await rig.sql("UPDATE memories SET access_count = 9, last_accessed = ?", iso(rig.clock.now))
    rig.clock.advance(hours=1)
    report = await lifecycle.run()
    assert report.stage("promote").ids == {"promoted": [fact], "expired": []}  # read as often: only the fact
    rig.clock.advance(days=10)
    assert (await lifecycle.run()).stage("promote").ids == {"promoted": [], "expired": []}  # not 48 h
    rig.clock.advance(days=20)
    assert (await lifecycle.run()).stage("promote").ids == {"promoted": [], "expired": [turn]}
    assert rig.index.layers_by_id()[turn] == ("sam", "archive", "turn", PRIVATE_TO_ALL_AGENTS)
    # Past compress_after_days an archived fact is folded into a history summary; a turn never is.
    old_fact = await rig.add("Sam sold his old car.", age_days=10, layer="archive")
    rig.clock.advance(days=400)
    report = await rig.lifecycle(ScriptedLLM(answer="Sam sold his car."), turn_archive_days=30).run()
    assert [g["ids"] for g in report.stage("compress").groups] == [[old_fact]]
    assert (await rig.read_rows())[turn]["compressed_into"] is None


async def test_high_signal_working_memories_are_promoted_unless_core_already_says_so(rig: Rig) -> None:
    lifecycle = rig.lifecycle()
    await rig.add("Sam's sister is called Ana.", category="relationship")
    preference = await rig.add("Sam prefers green tea to coffee.", category="preference", layer="working")
    echo = await rig.add("Sam has a sister named Ana.", category="identity", layer="working")
    report = await lifecycle.run()
    assert report.stage("promote").ids["promoted"] == [preference]
    assert await rig.layer(echo) == "working"  # cosine 0.98 to a core memory: nothing new


async def test_merge_keeps_the_newest_wording_the_highest_importance_and_links_the_ids(rig: Rig) -> None:
    lifecycle = rig.lifecycle()
    old = await rig.add("Sam lives in Lisbon.", age_days=30, importance=8)
    new = await rig.add("Sam lives in Porto.", age_days=1, importance=4)
    other = await rig.add("Ann has a cat named Miso.", user_id="ann")
    await rig.sql("UPDATE memories SET access_count = 4, last_accessed = ? WHERE id = ?", iso(T0), old)
    await rig.sql("UPDATE memories SET access_count = 1 WHERE id = ?", new)
    before = await rig.count()
    report = await lifecycle.run()
    merge = report.stage("merge")
    assert merge.groups == [{"user_id": "sam", "into": new, "ids": [old], "period": None}]
    rows = await rig.read_rows()
    assert rows[new]["fact"] == "Sam lives in Porto." and rows[new]["importance"] == 8
    assert rows[new]["access_count"] == 5 and rows[new]["last_accessed"] == iso(T0)
    assert rows[old]["superseded_by"] == new and rows[old]["fact"] == "Sam lives in Lisbon."  # kept, hidden
    assert rows[other]["superseded_by"] is None
    links = await rig.db.read(lifecycle_sql.links)
    assert links == [("merged", old, new, report.run_id)]
    assert await rig.count() == before
    assert not rig.index.contains(old) and rig.index.contains(new)
    search = SearchService(rig.db, rig.index, rig.embedder, _search_config(), 10.0)
    found = await search.search("Where does Sam live?", "sam", 5)
    assert [hit.memory.id for hit in found.hits] == [new]


def _search_config() -> Any:
    from memory_cortex.config import SearchConfig

    return SearchConfig()


async def test_merge_is_incremental_after_the_first_run(rig: Rig) -> None:
    lifecycle = rig.lifecycle()
    for fact in ("Sam plays the cello.", "Sam's sister is called Ana.", "Sam drinks espresso."):
        await rig.add(fact)
    rig.clock.advance(hours=1)
    first = await lifecycle.run()
    assert first.stage("merge").counts["compared"] == 3  # no watermark yet: every row
    second = await lifecycle.run()
    assert second.stage("merge").counts["compared"] == 0  # nothing changed since
    echo = await rig.add("Every morning Sam has an espresso.")
    third = await lifecycle.run()
    assert third.stage("merge").counts["compared"] == 1
    assert third.stage("merge").groups[0]["into"] == echo
    # A stricter threshold than the watermark's keeps it valid; a looser one compares everything.
    looser = await rig.lifecycle(merge_cosine=0.8).run()
    assert looser.stage("merge").counts["compared"] == 3


async def test_old_archive_entries_become_a_history_summary_in_core(rig: Rig) -> None:
    llm = ScriptedLLM(answer="In May 2025 Sam repaired the boat and sold the old car.")
    lifecycle = rig.lifecycle(llm, summary_batch_size=2)
    may = [
        await rig.add(fact, age_days=age, layer="archive", importance=imp)
        for fact, age, imp in (
            ("Sam repaired the boat's engine.", 240, 4),
            ("Sam sold his old car.", 238, 6),
            ("Sam painted the boat blue.", 236, 3),
        )
    ]
    recent = await rig.add("Sam visited Porto.", age_days=30, layer="archive")
    before = await rig.count()
    report = await lifecycle.run()
    compress = report.stage("compress")
    assert compress.status == "done" and compress.counts["summaries"] == 2
    assert [g["ids"] for g in compress.groups] == [may[:2], may[2:]]
    summaries = compress.ids["summaries"]
    rows = await rig.read_rows()
    first = rows[summaries[0]]
    assert first["layer"] == "core" and first["category"] == "history_summary"
    assert first["fact"] == "In May 2025 Sam repaired the boat and sold the old car."
    assert first["importance"] == 6 and first["embedding"] is not None
    assert '"sources": [' in first["metadata"] and str(may[0]) in first["metadata"]
    assert [rows[mid]["compressed_into"] for mid in may] == [summaries[0], summaries[0], summaries[1]]
    assert all(rows[mid]["layer"] == "archive" for mid in may)  # the sources stay
    assert rows[recent]["compressed_into"] is None  # 30 days in the archive: not yet
    assert await rig.count() == before + 2
    assert rig.index.layers_by_id()[summaries[0]] == ("sam", "core", "fact", PRIVATE_TO_ALL_AGENTS)
    links = await rig.db.read(lambda conn: lifecycle_sql.links(conn, "summarised"))
    assert len(links) == 3
    assert "Sam repaired the boat's engine." in llm.calls[0][-1].content
    again = await lifecycle.run()
    assert again.stage("compress").counts["summaries"] == 0  # compressed entries are never summarised twice


async def test_compression_is_skipped_while_the_llm_is_down_and_done_by_the_next_run(rig: Rig) -> None:
    llm = ScriptedLLM(mode="down")
    lifecycle = rig.lifecycle(llm)
    old = await rig.add("Sam sold his old car.", age_days=200, layer="archive")
    report = await lifecycle.run()
    compress = report.stage("compress")
    assert compress.status == "skipped" and "LLM unavailable" in (compress.reason or "")
    assert compress.counts["waiting"] == 1 and report.status == "done"
    assert (await rig.read_rows())[old]["compressed_into"] is None
    llm.mode, llm.answer = "ok", "Sam sold his old car."
    report = await lifecycle.run()
    assert report.stage("compress").ids["summarised"] == [old]


async def test_without_an_llm_compression_is_skipped(rig: Rig) -> None:
    await rig.add("Sam sold his old car.", age_days=200, layer="archive")
    report = await rig.lifecycle(None).run()
    assert report.stage("compress").status == "skipped"
    assert "rules" in (report.stage("compress").reason or "")


async def test_preview_equals_what_the_run_then_does(rig: Rig) -> None:
    llm = ScriptedLLM(answer="Sam's old news.")
    lifecycle = rig.lifecycle(llm, summary_batch_size=2)
    await rig.add("Sam lives in Lisbon.", age_days=20)
    # Read often, so promoted; and a near-duplicate of a core memory, so then merged into it: the
    # merge plan must see the promotion the preview did not apply.
    promoted = await rig.add("Sam lives in Porto.", layer="working")
    await rig.sql("UPDATE memories SET access_count = 9, last_accessed = ? WHERE id = ?", iso(T0), promoted)
    await rig.add("Sam watched a film about sharks.", layer="working", age_days=3)  # expires
    await rig.add("Buy a new bicycle pump.", category="todo", age_days=50)  # decays
    await rig.add("Sam's sister is called Ana.", category="identity", age_days=50)  # stays
    for age in (300, 299, 298):
        await rig.add(f"Sam fixed the fence, part {age}.", age_days=age, layer="archive")
    before = await rig.read_rows()
    preview = await lifecycle.preview()
    assert await rig.read_rows() == before  # a preview changes nothing
    assert await lifecycle.log() == []  # and is not logged
    run = await lifecycle.run()
    assert preview.dry_run and not run.dry_run
    assert plan_of(preview) == plan_of(run)
    assert [s.status for s in preview.stages] == ["planned"] * 6
    assert [s.status for s in run.stages] == ["done"] * 6
    assert run.stage("promote").ids["promoted"] == [promoted]
    assert run.stage("merge").groups[0]["into"] == promoted
    assert run.stage("decay").counts["archived"] == 1
    assert run.stage("compress").counts["summaries"] == 2
    # And afterwards there is nothing left to do (but merging the two summaries, which say the same).
    after = await lifecycle.preview()
    for name in ("promote", "decay", "compress"):
        assert not any(after.stage(name).ids.values()), name


async def test_the_lifecycle_never_lowers_the_row_count(rig: Rig) -> None:
    llm = ScriptedLLM(answer="A summary.")
    lifecycle = rig.lifecycle(llm)
    facts = [
        ("Sam lives in Lisbon.", "fact"),
        ("Sam lives in Porto.", "fact"),
        ("Buy milk.", "todo"),
        ("Sam's name is Samuel.", "identity"),
        ("Meeting notes from Tuesday.", "context"),
        ("Sam prefers tea.", "preference"),
    ]
    for i, (fact, category) in enumerate(facts):
        await rig.add(fact, category=category, layer="working" if i % 2 else "core", age_days=i)
    counts = [await rig.count()]
    for _ in range(8):
        rig.clock.advance(days=30)
        report = await lifecycle.run()
        assert report.rows_after is not None and report.rows_after >= report.rows_before
        counts.append(await rig.count())
    assert counts == sorted(counts)
    live_or_linked = await rig.db.read(
        lambda conn: conn.execute(
            "SELECT count(*) FROM memories WHERE superseded_by IS NULL OR id IN"
            " (SELECT from_id FROM memory_links WHERE kind = 'merged')"
        ).fetchone()[0]
    )
    assert live_or_linked == counts[-1]  # every hidden row is accounted for by a link


async def test_a_planned_move_is_dropped_when_the_row_was_read_meanwhile(rig: Rig) -> None:
    todo = await rig.add("Buy a new bicycle pump.", category="todo", age_days=60)

    def move(conn: sqlite3.Connection) -> bool:
        return lifecycle_sql.move_layer(
            conn, todo, from_layer="core", to_layer="archive", since=iso(T0), unread=(0, None)
        )

    await rig.sql("UPDATE memories SET access_count = 1, last_accessed = ? WHERE id = ?", iso(T0), todo)
    assert await rig.db.write(move) is False
    assert await rig.layer(todo) == "core"


async def test_runs_are_logged_and_a_run_left_running_is_marked_interrupted(rig: Rig) -> None:
    lifecycle = rig.lifecycle(enabled=False)
    await rig.add("Sam plays the cello.")
    report = await lifecycle.run()
    dry = await lifecycle.run(dry_run=True)
    await rig.db.write(
        lambda conn: lifecycle_sql.start_run(conn, trigger="schedule", dry_run=False, started_at=iso(T0))
    )
    await lifecycle.start()
    await lifecycle.stop()
    runs = await lifecycle.log()
    assert [(r.trigger, r.dry_run, r.status) for r in runs] == [
        ("schedule", False, "interrupted"),
        ("api", True, "done"),
        ("api", False, "done"),
    ]
    assert runs[2].id == report.run_id and runs[1].id == dry.run_id
    assert LifecycleReport.from_json(runs[2].report).stage("merge").counts == report.stage("merge").counts


async def test_one_run_at_a_time(rig: Rig) -> None:
    llm = ScriptedLLM(mode="slow")
    lifecycle = rig.lifecycle(llm)
    await rig.add("Sam sold his old car.", age_days=200, layer="archive")
    running = asyncio.create_task(lifecycle.run())
    try:
        for _ in range(200):
            if llm.calls:
                break
            await asyncio.sleep(0.02)
        with pytest.raises(LifecycleBusy):
            await lifecycle.run()
        preview = await lifecycle.preview()  # a preview only reads: allowed meanwhile
        assert preview.dry_run
    finally:
        running.cancel()
        with pytest.raises(asyncio.CancelledError):
            await running
    (last,) = await lifecycle.log()
    assert last.status == "interrupted"


async def test_after_run_hooks_get_the_report_and_cannot_break_the_run(rig: Rig) -> None:
    lifecycle = rig.lifecycle()
    seen: list[LifecycleReport] = []

    async def record(report: LifecycleReport) -> None:
        seen.append(report)

    async def broken(report: LifecycleReport) -> None:
        raise RuntimeError("mirror offline")

    lifecycle.on_finished.extend([broken, record])
    report = await lifecycle.run()
    await lifecycle.preview()
    assert seen == [report] and report.status == "done"


async def test_the_daily_schedule_runs_at_the_configured_local_time(rig: Rig) -> None:
    started = time.monotonic()
    base = next_daily_run(T0, "03:00") - timedelta(seconds=0.3)

    def clock() -> datetime:
        return base + timedelta(seconds=time.monotonic() - started)

    busy = ["GPU busy", "GPU busy"]

    def gpu_busy() -> str | None:
        return busy.pop() if busy else None

    lifecycle = LifecycleService(
        rig.db,
        rig.memories,
        rig.index,
        None,
        LifecycleConfig(daily_at="03:00"),
        gpu_busy=gpu_busy,
        gpu_recheck_s=0.05,
        clock=clock,
    )
    await lifecycle.start()
    try:
        runs = await _wait_for(lambda: lifecycle.log(), lambda runs: bool(runs) and runs[0].status == "done")
    finally:
        await lifecycle.stop()
    assert [r.trigger for r in runs] == ["schedule"]
    assert busy == []  # it asked the GPU gate until the card was free
    slot = next_daily_run(T0, "03:00")
    assert lifecycle.next_scheduled == next_daily_run(slot, "03:00", after=slot)  # then tomorrow's


async def _wait_for(read: Callable[[], Any], done: Callable[[Any], bool], timeout: float = 10.0) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = await read()
        if done(value) or time.monotonic() > deadline:
            return value
        await asyncio.sleep(0.05)


async def test_maintain_repairs_a_vector_index_that_drifted_from_the_store(rig: Rig) -> None:
    lifecycle = rig.lifecycle()
    kept = await rig.add("Sam plays the cello.")
    dropped = await rig.add("Sam's sister is called Ana.")
    rig.index.remove(dropped)  # as if an after-commit hook had failed
    rig.index.set_layer(kept, "archive")
    preview = await lifecycle.preview()
    assert preview.stage("maintain").counts["index_missing"] == 1
    assert not rig.index.contains(dropped)  # a preview repairs nothing
    report = await lifecycle.run()
    counts = report.stage("maintain").counts
    assert (counts["index_missing"], counts["index_extra"], counts["index_moved"]) == (1, 0, 1)
    assert counts["fts_optimized"] == 2
    alive = ("sam", "core", "fact", PRIVATE_TO_ALL_AGENTS)
    assert rig.index.layers_by_id() == {kept: alive, dropped: alive}
    again = await lifecycle.run()
    assert again.stage("maintain").counts["index_missing"] == 0


async def test_a_scheduled_run_another_daemon_already_made_tonight_is_not_repeated(rig: Rig) -> None:
    """With several daemons on one PostgreSQL each wakes for the same slot; the one that starts
    first does it for all (here the run is planted as another daemon would have logged it)."""
    started = time.monotonic()
    slot = next_daily_run(T0, "03:00")
    base = slot - timedelta(seconds=0.3)

    def clock() -> datetime:
        return base + timedelta(seconds=time.monotonic() - started)

    await rig.sql(
        "INSERT INTO lifecycle_runs (trigger, dry_run, status, started_at) VALUES ('schedule', 0, 'done', ?)",
        iso(slot + timedelta(seconds=0.1)),
    )
    lifecycle = LifecycleService(
        rig.db, rig.memories, rig.index, None, LifecycleConfig(daily_at="03:00"), clock=clock
    )
    await lifecycle.start()
    try:
        await _wait_for(
            lambda: asyncio.sleep(0, lifecycle.next_scheduled), lambda nxt: nxt is not None and nxt > slot
        )
    finally:
        await lifecycle.stop()
    assert [r.trigger for r in await lifecycle.log()] == ["schedule"]  # only the planted one
