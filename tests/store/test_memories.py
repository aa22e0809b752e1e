"""store/memories.py on a real SQLite file with every migration, no model: rows in and out, the
list filters and keyset pages, edits, merges, reads, deletes, histories and conversations."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from memory_cortex.records import MemoryFilter, NewMemory
from memory_cortex.store import memories as memory_sql
from memory_cortex.store.db import apply_migrations, connect


@pytest.fixture
def conn(tmp_path: Path) -> sqlite3.Connection:
    conn = connect(tmp_path / "memories.db", read_only=False, busy_timeout_ms=1000)  # the store's pragmas
    apply_migrations(conn)
    return conn


def add(conn: sqlite3.Connection, fact: str, user: str = "u", **fields: object) -> int:
    return memory_sql.insert(conn, NewMemory(user_id=user, fact=fact, **fields))  # type: ignore[arg-type]


def listed(conn: sqlite3.Connection, limit: int = 100, before_id: int | None = None, **where: object) -> list[str]:
    rows = memory_sql.list_memories(conn, MemoryFilter(**where), limit=limit, before_id=before_id)  # type: ignore[arg-type]
    return [row.fact for row in rows]


def test_a_row_comes_back_as_it_was_written(conn: sqlite3.Connection) -> None:
    memory_id = add(
        conn,
        "Sam has an espresso every morning.",
        topic="habits",
        importance=7,
        category="preference",
        source_session="s1",
        source_channel="telegram",
        ref="msg-1",
        metadata={"why": ["said twice"]},
        created_at="2026-01-05T10:00:00.000Z",
        occurred_at="2025-12-31T09:00:00.000Z",
        layer="working",
        kind="turn",
    )
    record = memory_sql.get(conn, memory_id)
    assert record is not None
    assert (record.fact, record.topic, record.importance, record.category) == (
        "Sam has an espresso every morning.",
        "habits",
        7,
        "preference",
    )
    assert (record.source_session, record.source_channel, record.ref) == ("s1", "telegram", "msg-1")
    assert record.metadata == {"why": ["said twice"]}
    assert (record.created_at, record.about_time, record.layer, record.kind) == (
        "2026-01-05T10:00:00.000Z",
        "2025-12-31T09:00:00.000Z",
        "working",
        "turn",
    )
    assert not record.has_embedding and record.access_count == 0
    assert memory_sql.get(conn, memory_id + 1) is None
    assert set(memory_sql.get_many(conn, [memory_id, 999])) == {memory_id}


def test_the_list_filters_combine_and_pages_never_overlap(conn: sqlite3.Connection) -> None:
    for i in range(7):
        add(conn, f"fact {i}", layer="core" if i % 2 else "working", kind="turn" if i < 3 else "fact",
            source_session="s1" if i < 3 else None, importance=i + 1)  # fmt: skip
    add(conn, "someone else's fact", user="other")
    assert listed(conn, user_id="u") == [f"fact {i}" for i in reversed(range(7))]  # newest first
    assert listed(conn, user_id="u", layer="core") == ["fact 5", "fact 3", "fact 1"]
    assert listed(conn, user_id="u", kinds=("turn",)) == ["fact 2", "fact 1", "fact 0"]
    assert listed(conn, user_id="u", source_session="s1", layer="working") == ["fact 2", "fact 0"]
    assert listed(conn, user_id="u", min_importance=4, max_importance=5) == ["fact 4", "fact 3"]
    assert listed(conn, user_id="u", text="FACT 6") == ["fact 6"]  # trigram, any case
    assert listed(conn, user_id="u", text="6") == ["fact 6"]  # too short for trigrams: scanned
    pages, before = [], None
    while True:
        rows = memory_sql.list_memories(conn, MemoryFilter(user_id="u"), limit=3, before_id=before)
        if not rows:
            break
        pages.append([row.fact for row in rows])
        before = rows[-1].id
    assert pages == [["fact 6", "fact 5", "fact 4"], ["fact 3", "fact 2", "fact 1"], ["fact 0"]]


def test_edits_merges_reads_and_deletes(conn: sqlite3.Connection) -> None:
    older = add(conn, "Sam lives in Lyon.", importance=5, layer="archive")
    assert memory_sql.update(conn, older, {"importance": 6, "topic": "home"})
    with pytest.raises(ValueError):
        memory_sql.update(conn, older, {"access_count": 99})  # counters are not editable
    memory_sql.merge_into(conn, older, NewMemory(user_id="u", fact="Sam lives in Lyon, France.", importance=4))
    merged = memory_sql.get(conn, older)
    assert merged is not None
    assert (merged.fact, merged.importance, merged.access_count, merged.layer) == (
        "Sam lives in Lyon, France.",
        6,  # the higher importance stays
        1,  # said again counts as a read
        "core",  # said again, an archived memory comes back
    )
    assert memory_sql.bump_access(conn, {older: 2}) == 1
    assert memory_sql.get(conn, older).access_count == 3  # type: ignore[union-attr]
    newer = add(conn, "Sam moved to Porto.")
    memory_sql.update(conn, older, {"superseded_by": newer})
    assert memory_sql.superseded_by(conn, newer) == [older]
    assert listed(conn, user_id="u") == ["Sam moved to Porto."]
    assert listed(conn, user_id="u", include_superseded=True) == ["Sam moved to Porto.", "Sam lives in Lyon, France."]
    assert memory_sql.delete(conn, newer)
    assert not memory_sql.delete(conn, newer)
    assert memory_sql.get(conn, older).superseded_by is None  # type: ignore[union-attr]  # live again


def test_history_follows_the_chain_within_one_user(conn: sqlite3.Connection) -> None:
    first = add(conn, "v1")
    second = add(conn, "v2")
    third = add(conn, "v3")
    memory_sql.update(conn, first, {"superseded_by": second})
    memory_sql.update(conn, second, {"superseded_by": third})
    record = memory_sql.get(conn, first)
    assert record is not None
    chain = memory_sql.history(conn, record)
    assert [r.fact for r in chain.replaced_by] == ["v2", "v3"]
    assert [r.fact for r in memory_sql.history(conn, memory_sql.get(conn, third)).replaces] == ["v2"]  # type: ignore[arg-type]


def test_conversations_are_listed_by_their_last_activity_with_their_summary(conn: sqlite3.Connection) -> None:
    add(conn, "Tim: hi", kind="turn", source_session="a", created_at="2026-01-01T10:00:00.000Z",
        occurred_at="2025-05-01T10:00:00.000Z")  # fmt: skip
    add(conn, "Tim: bye", kind="turn", source_session="a", created_at="2026-01-01T10:05:00.000Z")
    add(conn, "Tim: later", kind="turn", source_session="b", created_at="2026-01-02T10:00:00.000Z")
    summary = add(conn, "Tim said hello.", source_session="a", category="session_summary")
    add(conn, "Someone: hi", user="other", kind="turn", source_session="a")
    sessions = memory_sql.conversation_sessions(conn, "u")
    assert [(s.session, s.turns, s.summary_id) for s in sessions] == [("b", 1, None), ("a", 2, summary)]
    assert sessions[1].first_said == "2025-05-01T10:00:00.000Z"
    assert [s.session for s in memory_sql.conversation_sessions(conn, "u", newest_first=False)] == ["a", "b"]
    assert [s.session for s in memory_sql.conversation_sessions(conn, "u", limit=1, offset=1)] == ["a"]


def test_an_import_finds_what_the_user_already_has(conn: sqlite3.Connection) -> None:
    kept = add(conn, "Sam plays chess.")
    memory_sql.record_imported_wordings(conn, {kept: ["Sam likes chess."]})
    found = memory_sql.imported_facts(conn, "u", ["Sam plays chess.", "Sam likes chess.", "Sam plays go."])
    assert found == {"Sam plays chess.", "Sam likes chess."}
    assert memory_sql.imported_facts(conn, "other", ["Sam plays chess."]) == set()
    assert memory_sql.live_count(conn, "u") == 1
