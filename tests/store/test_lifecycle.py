"""store/lifecycle.py on both backends (a real SQLite file, a real PostgreSQL database): the rows the
stages plan from, the guarded moves that apply a plan, the links they leave, the log of runs and the
merge watermark read back from it."""

from __future__ import annotations

import json
import re
import struct
from typing import Any

from memory_cortex.records import Scope
from memory_cortex.store import lifecycle as lifecycle_sql

TIMESTAMP = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")
MODEL = "test-model"


def blob(*values: float) -> bytes:
    """A float32 little-endian vector as the store keeps it (vectormath.to_blob)."""
    return struct.pack(f"<{len(values)}f", *values)


def add(conn: Any, fact: str = "a fact", user: str = "u", **columns: Any) -> int:
    """A memory row written directly (plain SQL both backends share), so these tests depend on no
    other store module; ``metadata`` may be a dict, ``vector`` a tuple of floats."""
    metadata = columns.pop("metadata", {})
    vector = columns.pop("vector", None)
    if vector is not None:
        columns.update(embedding=blob(*vector), embedding_model=MODEL, embedding_dim=len(vector))
    values: dict[str, Any] = {"user_id": user, "fact": fact, "metadata": json.dumps(metadata), **columns}
    names = ", ".join(values)
    marks = ", ".join("?" for _ in values)
    row = conn.execute(
        f"INSERT INTO memories ({names}) VALUES ({marks}) RETURNING id", tuple(values.values())
    )
    return int(row.fetchone()[0])


def column(conn: Any, memory_id: int, name: str) -> Any:
    return conn.execute(f"SELECT {name} FROM memories WHERE id = ?", (memory_id,)).fetchone()[0]


# -- reading what to plan from ----------------------------------------------------------------
def test_users_with_live_rows_are_sorted_by_code_point(any_conn: Any) -> None:
    for user in ("b", "B", "a", "_z", "é", "b"):
        add(any_conn, user=user)
    hidden_only = add(any_conn, user="gone")
    lifecycle_sql.supersede(any_conn, hidden_only, add(any_conn, user="b"))
    assert lifecycle_sql.users_with_live_rows(any_conn) == sorted({"b", "B", "a", "_z", "é"})


def test_a_layers_rows_come_back_with_everything_a_stage_judges(any_conn: Any) -> None:
    first = add(any_conn, "espresso", layer="working", category="preference", importance=7, access_count=2,
                last_accessed="2025-01-02T00:00:00.000Z", layer_since="2025-01-01T00:00:00.000Z",
                created_at="2024-12-31T00:00:00.000Z", updated_at="2025-01-01T12:00:00.000Z",
                metadata={"extractor": "llm"}, kind="turn", agent_id="bot", visibility="shared",
                source_channel="room", topic="health")  # fmt: skip
    plain = add(any_conn, "tea", layer="working", metadata={"extractor": 3})
    add(any_conn, "core row", layer="core")
    add(any_conn, "someone else's", user="v", layer="working")
    lifecycle_sql.supersede(any_conn, add(any_conn, "hidden", layer="working"), plain)
    rows = lifecycle_sql.rows_in_layer(any_conn, "u", "working")
    assert [row.id for row in rows] == [first, plain]
    assert rows[0] == lifecycle_sql.LifecycleRow(
        id=first,
        user_id="u",
        layer="working",
        category="preference",
        importance=7,
        access_count=2,
        last_accessed="2025-01-02T00:00:00.000Z",
        layer_since="2025-01-01T00:00:00.000Z",
        created_at="2024-12-31T00:00:00.000Z",
        updated_at="2025-01-01T12:00:00.000Z",
        extractor="llm",
        compressed_into=None,
        kind="turn",
        scope=Scope("bot", "shared", "room"),
        topic="health",
    )
    second = rows[1]
    assert (second.extractor, second.kind, second.scope, second.topic, second.importance) == (
        "3",  # text on both backends
        "fact",
        Scope(None, "private", None),
        "",
        5,
    )
    assert TIMESTAMP.match(second.created_at) and second.last_accessed is None


def test_live_rows_by_id_leave_out_hidden_and_missing_rows(any_conn: Any) -> None:
    kept, hidden = add(any_conn, "kept"), add(any_conn, "hidden")
    lifecycle_sql.supersede(any_conn, hidden, kept)
    assert lifecycle_sql.live_rows_by_id(any_conn, []) == {}
    found = lifecycle_sql.live_rows_by_id(any_conn, [kept, hidden, 999_999])
    assert list(found) == [kept] and found[kept].extractor is None


def test_vectors_are_read_by_id_model_and_dimension(any_conn: Any) -> None:
    three = add(any_conn, vector=(1.0, -2.5, 0.25))
    two = add(any_conn, vector=(0.5, 0.5))
    add(any_conn)  # no vector
    other = add(any_conn, embedding=blob(1.0), embedding_model="other", embedding_dim=1)
    ids = [three, two, other, 999_999]
    assert lifecycle_sql.vectors_by_id(any_conn, [], MODEL, None) == {}
    assert lifecycle_sql.vectors_by_id(any_conn, ids, MODEL, None) == {
        three: blob(1.0, -2.5, 0.25),
        two: blob(0.5, 0.5),
    }
    assert lifecycle_sql.vectors_by_id(any_conn, ids, MODEL, 2) == {two: blob(0.5, 0.5)}


def test_core_vectors_come_in_keyset_pages(any_conn: Any) -> None:
    ids = [add(any_conn, vector=(float(i), 1.0)) for i in range(5)]
    add(any_conn, layer="working", vector=(9.0, 9.0))
    add(any_conn, user="v", vector=(9.0, 9.0))
    add(any_conn, vector=(1.0, 2.0, 3.0))  # another dimension
    lifecycle_sql.supersede(any_conn, ids[2], ids[0])
    first = lifecycle_sql.core_vector_chunk(any_conn, "u", MODEL, 2, 0, 2)
    assert first == [(ids[0], blob(0.0, 1.0)), (ids[1], blob(1.0, 1.0))]
    rest = lifecycle_sql.core_vector_chunk(any_conn, "u", MODEL, 2, first[-1][0], 10)
    assert [memory_id for memory_id, _ in rest] == [ids[3], ids[4]]
    assert len(lifecycle_sql.core_vector_chunk(any_conn, "u", MODEL, None, 0, 10)) == 5


def test_changed_core_rows_are_new_edited_or_moved_in(any_conn: Any) -> None:
    old = "2025-01-01T00:00:00.000Z"
    since = "2025-06-01T00:00:00.000Z"
    untouched = add(any_conn, updated_at=old, layer_since=old)
    edited = add(any_conn, updated_at=since, layer_since=old)
    moved = add(any_conn, updated_at=old, layer_since="2025-07-01T00:00:00.000Z")
    add(any_conn, layer="working", updated_at=since)
    max_id = lifecycle_sql.max_memory_id(any_conn)
    new = add(any_conn, updated_at=old, layer_since=old)
    assert lifecycle_sql.changed_core_ids(any_conn, "u", max_id, since) == [edited, moved, new]
    assert lifecycle_sql.changed_core_ids(any_conn, "u", new, "9999") == []
    assert untouched in lifecycle_sql.changed_core_ids(any_conn, "u", 0, "9999")  # every id is new


def test_the_store_counts_and_clock(any_conn: Any) -> None:
    assert (lifecycle_sql.max_memory_id(any_conn), lifecycle_sql.total_rows(any_conn)) == (0, 0)
    first, second = add(any_conn), add(any_conn)
    lifecycle_sql.supersede(any_conn, first, second)
    assert (lifecycle_sql.max_memory_id(any_conn), lifecycle_sql.total_rows(any_conn)) == (second, 2)
    assert TIMESTAMP.match(lifecycle_sql.database_now(any_conn))


def test_session_summaries_say_how_far_they_cover(any_conn: Any) -> None:
    covered = add(any_conn, category="session_summary", source_session="s1", metadata={"last_turn_id": 42})
    fresh = add(any_conn, category="session_summary", source_session="s2")
    add(any_conn, category="session_summary", source_session="s3", kind="turn")
    add(any_conn, category="session_summary")  # no session
    add(any_conn, category="session_summary", source_session="s4", user="v", metadata={"last_turn_id": 1})
    lifecycle_sql.supersede(any_conn, add(any_conn, category="session_summary", source_session="s5"), covered)
    as_float = add(any_conn, category="session_summary", source_session="s6", metadata={"last_turn_id": 7.0})
    assert lifecycle_sql.summarised_through(any_conn, "u") == {
        "s1": (covered, 42),
        "s2": (fresh, 0),
        "s6": (as_float, 7),
    }


def test_a_session_transcript_is_in_the_order_said(any_conn: Any) -> None:
    late = add(any_conn, "third", source_session="s", kind="turn", created_at="2025-01-03T00:00:00.000Z")
    early = add(any_conn, "first", source_session="s", kind="turn", created_at="2025-01-05T00:00:00.000Z",
                occurred_at="2025-01-01T00:00:00.000Z")  # fmt: skip
    middle = add(any_conn, "second", source_session="s", kind="turn", created_at="2025-01-02T00:00:00.000Z")
    add(any_conn, "a fact, not a turn", source_session="s")
    add(any_conn, "another session", source_session="t", kind="turn")
    beyond = add(any_conn, "after the summary", source_session="s", kind="turn")
    assert lifecycle_sql.session_transcript(any_conn, "u", "s", beyond - 1) == [
        (early, "2025-01-01T00:00:00.000Z", "first"),
        (middle, "2025-01-02T00:00:00.000Z", "second"),
        (late, "2025-01-03T00:00:00.000Z", "third"),
    ]


# -- applying a plan --------------------------------------------------------------------------
def test_supersede_hides_a_live_row_once(any_conn: Any) -> None:
    old, new, newest = add(any_conn), add(any_conn), add(any_conn)
    assert lifecycle_sql.supersede(any_conn, old, new)
    assert not lifecycle_sql.supersede(any_conn, old, newest)
    assert column(any_conn, old, "superseded_by") == new


def test_a_move_applies_only_to_the_row_the_plan_saw(any_conn: Any) -> None:
    since = "2025-05-05T05:05:05.000Z"
    unread = add(any_conn, layer="working")
    assert lifecycle_sql.move_layer(any_conn, unread, from_layer="working", to_layer="core", since=since,
                                    unread=(0, None))  # fmt: skip
    assert (column(any_conn, unread, "layer"), column(any_conn, unread, "layer_since")) == ("core", since)
    assert not lifecycle_sql.move_layer(
        any_conn, unread, from_layer="working", to_layer="archive", since=since
    )

    read_at = "2025-04-01T00:00:00.000Z"
    read = add(any_conn, layer="core", access_count=1, last_accessed=read_at)
    for seen in [(0, None), (1, None), (1, "2025-03-01T00:00:00.000Z"), (2, read_at)]:
        assert not lifecycle_sql.move_layer(any_conn, read, from_layer="core", to_layer="archive", since=since,
                                            unread=seen)  # fmt: skip
    assert lifecycle_sql.move_layer(any_conn, read, from_layer="core", to_layer="archive", since=since,
                                    unread=(1, read_at))  # fmt: skip
    assert column(any_conn, read, "layer") == "archive"

    hidden = add(any_conn, layer="core")
    lifecycle_sql.supersede(any_conn, hidden, read)
    assert not lifecycle_sql.move_layer(any_conn, hidden, from_layer="core", to_layer="archive", since=since)


def test_a_merge_hides_the_duplicate_and_the_kept_row_absorbs_its_reads(any_conn: Any) -> None:
    run_id = lifecycle_sql.start_run(
        any_conn, trigger="manual", dry_run=False, started_at="2025-01-01T00:00:00.000Z"
    )
    kept, duplicate = add(any_conn, updated_at="2000-01-01T00:00:00.000Z"), add(any_conn)
    lifecycle_sql.hide_merged(any_conn, duplicate, kept, run_id)
    lifecycle_sql.absorb_merged(
        any_conn, kept, importance=9, access_count=4, last_accessed="2025-02-02T00:00:00.000Z"
    )
    assert column(any_conn, duplicate, "superseded_by") == kept
    row = any_conn.execute(
        "SELECT importance, access_count, last_accessed, updated_at FROM memories WHERE id = ?", (kept,)
    ).fetchone()
    assert tuple(row)[:3] == (9, 4, "2025-02-02T00:00:00.000Z")
    assert TIMESTAMP.match(row[3]) and row[3] > "2000-01-01T00:00:00.000Z"
    assert lifecycle_sql.links(any_conn) == [("merged", duplicate, kept, run_id)]


def test_compressed_rows_point_at_their_summary_and_links_are_kept_once(any_conn: Any) -> None:
    summary, archived, other = add(any_conn), add(any_conn, layer="archive"), add(any_conn, layer="archive")
    lifecycle_sql.mark_compressed(any_conn, archived, summary, None)
    lifecycle_sql.mark_compressed(any_conn, other, summary, None)
    lifecycle_sql.add_link(any_conn, "summarised", archived, summary, None)  # again: ignored
    lifecycle_sql.add_link(any_conn, "merged", other, archived, None)
    assert column(any_conn, archived, "compressed_into") == summary
    assert column(any_conn, archived, "superseded_by") is None  # the row stays live
    assert lifecycle_sql.links(any_conn, "summarised") == [
        ("summarised", archived, summary, None),
        ("summarised", other, summary, None),
    ]
    assert lifecycle_sql.links(any_conn) == [
        ("merged", other, archived, None),
        *lifecycle_sql.links(any_conn, "summarised"),
    ]
    assert lifecycle_sql.rows_in_layer(any_conn, "u", "archive")[0].compressed_into == summary


def test_optimize_keeps_full_text_search_working(any_conn: Any) -> None:
    """SQLite merges its FTS5 segments; PostgreSQL's GIN indexes need nothing (a no-op there)."""
    add(any_conn, "the lighthouse keeper")
    lifecycle_sql.optimize_fts(any_conn)
    lifecycle_sql.optimize_fts(any_conn)
    assert lifecycle_sql.total_rows(any_conn) == 1


def test_the_vector_index_entries_are_the_live_rows_of_the_model(any_conn: Any) -> None:
    private = add(any_conn, vector=(1.0,), source_channel="dm", agent_id="bot", kind="turn")
    shared = add(any_conn, user="v", layer="working", vector=(1.0, 2.0), visibility="shared",
                 source_channel="room")  # fmt: skip
    hidden = add(any_conn, vector=(1.0,))
    lifecycle_sql.supersede(any_conn, hidden, private)
    add(any_conn, embedding=blob(1.0), embedding_model="other", embedding_dim=1)
    add(any_conn)
    assert sorted(lifecycle_sql.live_index_entries(any_conn, MODEL)) == [
        (private, "u", "core", "turn", 1, Scope("bot", "private", None)),  # a private row's channel: not kept
        (shared, "v", "working", "fact", 2, Scope(None, "shared", "room")),
    ]


# -- the log of runs --------------------------------------------------------------------------
def test_a_runs_report_is_saved_and_the_run_closed(any_conn: Any) -> None:
    assert lifecycle_sql.recent_runs(any_conn, 10) == []
    run_id = lifecycle_sql.start_run(
        any_conn, trigger="schedule", dry_run=True, started_at="2025-01-01T00:00:00.000Z"
    )
    lifecycle_sql.save_report(any_conn, run_id, {"stages": ["promote"], "note": "ü"})
    (running,) = lifecycle_sql.recent_runs(any_conn, 10)
    assert running == lifecycle_sql.RunRecord(
        run_id,
        "schedule",
        True,
        "running",
        "2025-01-01T00:00:00.000Z",
        None,
        {"stages": ["promote"], "note": "ü"},
    )
    lifecycle_sql.finish_run(
        any_conn, run_id, status="done", report={"ok": 1}, finished_at="2025-01-01T00:01:00.000Z"
    )
    (done,) = lifecycle_sql.recent_runs(any_conn, 10)
    assert (done.status, done.finished_at, done.report, done.dry_run) == (
        "done",
        "2025-01-01T00:01:00.000Z",
        {"ok": 1},
        True,
    )
    assert any_conn.execute("SELECT dry_run FROM lifecycle_runs").fetchone()[0] == 1  # an integer on both


def test_runs_left_running_are_interrupted_and_listed_newest_first(any_conn: Any) -> None:
    started = "2025-01-01T00:00:00.000Z"
    ids = [
        lifecycle_sql.start_run(any_conn, trigger="t", dry_run=False, started_at=started) for _ in range(3)
    ]
    lifecycle_sql.finish_run(any_conn, ids[1], status="failed", report={}, finished_at=started)
    assert lifecycle_sql.interrupt_running(any_conn) == [ids[0], ids[2]]
    assert lifecycle_sql.interrupt_running(any_conn) == []
    runs = lifecycle_sql.recent_runs(any_conn, 2)
    assert [(run.id, run.status, run.dry_run) for run in runs] == [
        (ids[2], "interrupted", False),
        (ids[1], "failed", False),
    ]
    assert runs[0].finished_at is not None and TIMESTAMP.match(runs[0].finished_at)


def test_the_merge_watermark_is_the_last_real_runs(any_conn: Any) -> None:
    assert lifecycle_sql.latest_merge_watermark(any_conn) is None
    started = "2025-01-01T00:00:00.000Z"
    watermark = {"max_id": 7, "since": started, "model": MODEL, "cosine": 0.92}

    def run(report: dict[str, Any], *, dry_run: bool = False) -> None:
        run_id = lifecycle_sql.start_run(any_conn, trigger="t", dry_run=dry_run, started_at=started)
        lifecycle_sql.save_report(any_conn, run_id, report)

    run({"merge_watermark": watermark})
    assert lifecycle_sql.latest_merge_watermark(any_conn) == watermark
    run({"merge_watermark": {**watermark, "max_id": 99}}, dry_run=True)  # a dry run never counts
    run({"merge_watermark": None})  # a run over some users only leaves none
    run({"stages": []})
    assert lifecycle_sql.latest_merge_watermark(any_conn) == watermark
    run({"merge_watermark": {**watermark, "max_id": 8}})
    assert lifecycle_sql.latest_merge_watermark(any_conn) == {**watermark, "max_id": 8}
