"""store/memories.py on both backends (a real SQLite file and a real PostgreSQL database, every
migration, no model): rows in and out, the list filters and keyset pages, edits, merges, reads,
deletes, histories, conversations and the Markdown import's look-ups."""

from __future__ import annotations

import struct
from typing import Any

import pytest

from memory_cortex.records import Audience, MemoryFilter, NewMemory
from memory_cortex.store import job_memories as job_sql
from memory_cortex.store import memories as memory_sql
from memory_cortex.store.connection import Connection


@pytest.fixture
def conn(any_conn: Connection) -> Connection:
    """Every test here runs once on SQLite and once on PostgreSQL (tests/store/conftest.py)."""
    return any_conn


def add(conn: Connection, fact: str, user: str = "u", **fields: object) -> int:
    return memory_sql.insert(conn, NewMemory(user_id=user, fact=fact, **fields))  # type: ignore[arg-type]


def listed(conn: Connection, limit: int = 100, before_id: int | None = None, **where: object) -> list[str]:
    rows = memory_sql.list_memories(conn, MemoryFilter(**where), limit=limit, before_id=before_id)  # type: ignore[arg-type]
    return [row.fact for row in rows]


def test_a_row_comes_back_as_it_was_written(conn: Connection) -> None:
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


def test_the_list_filters_combine_and_pages_never_overlap(conn: Connection) -> None:
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


def test_edits_merges_reads_and_deletes(conn: Connection) -> None:
    older = add(conn, "Sam lives in Lyon.", importance=5, layer="archive")
    assert memory_sql.update(conn, older, {"importance": 6, "topic": "home"})
    with pytest.raises(ValueError):
        memory_sql.update(conn, older, {"access_count": 99})  # counters are not editable
    memory_sql.merge_into(
        conn, older, NewMemory(user_id="u", fact="Sam lives in Lyon, France.", importance=4)
    )
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
    assert listed(conn, user_id="u", include_superseded=True) == [
        "Sam moved to Porto.",
        "Sam lives in Lyon, France.",
    ]
    assert memory_sql.delete(conn, newer)
    assert not memory_sql.delete(conn, newer)
    assert memory_sql.get(conn, older).superseded_by is None  # type: ignore[union-attr]  # live again


def test_history_follows_the_chain_within_one_user(conn: Connection) -> None:
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


def test_conversations_are_listed_by_their_last_activity_with_their_summary(conn: Connection) -> None:
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


def test_an_import_finds_what_the_user_already_has(conn: Connection) -> None:
    kept = add(conn, "Sam plays chess.")
    memory_sql.record_imported_wordings(conn, {kept: ["Sam likes chess."]})
    found = memory_sql.imported_facts(conn, "u", ["Sam plays chess.", "Sam likes chess.", "Sam plays go."])
    assert found == {"Sam plays chess.", "Sam likes chess."}
    assert memory_sql.imported_facts(conn, "other", ["Sam plays chess."]) == set()
    assert memory_sql.live_count(conn, "u") == 1


def test_an_embedded_row_says_so_and_ids_count_up(conn: Connection) -> None:
    blob = struct.pack("<3f", 0.25, -1.0, 3.5)  # what vectormath.to_blob writes
    first = add(conn, "with a vector", embedding=blob, embedding_model="m", embedding_dim=3)
    second = add(conn, "without")
    assert second > first > 0
    record = memory_sql.get(conn, first)
    assert record is not None and record.has_embedding is True
    assert (record.embedding_model, record.embedding_dim) == ("m", 3)
    assert memory_sql.get(conn, second).has_embedding is False  # type: ignore[union-attr]
    assert record.created_at.endswith("Z") and record.layer_since is not None  # the stored format


def test_the_text_filter_ignores_case_in_any_script_but_keeps_accents(conn: Connection) -> None:
    add(conn, "Ärger über die École", topic="Größe")
    add(conn, "plain ascii", topic="misc")
    add(conn, "100% sure, snake_case")
    assert listed(conn, user_id="u", text="ÄRGER ÜBER") == ["Ärger über die École"]  # trigram, folded
    assert listed(conn, user_id="u", text="école") == ["Ärger über die École"]
    assert listed(conn, user_id="u", text="ecole") == []  # accents are not folded
    assert listed(conn, user_id="u", text="GRÖSSE") == []  # nor is ß expanded
    assert listed(conn, user_id="u", text="größe") == ["Ärger über die École"]  # the topic too
    assert listed(conn, user_id="u", text="Ü") == ["Ärger über die École"]  # short: scanned, folded
    assert listed(conn, user_id="u", text="MI") == ["plain ascii"]  # a short one finds the topic
    # Pattern characters are plain text.
    assert listed(conn, user_id="u", text="0% s") == ["100% sure, snake_case"]
    assert listed(conn, user_id="u", text="%") == ["100% sure, snake_case"]
    assert listed(conn, user_id="u", text="e_c") == ["100% sure, snake_case"]
    assert listed(conn, user_id="u", text="_") == ["100% sure, snake_case"]
    assert listed(conn, user_id="u", text='"quoted"') == []


def test_pages_by_creation_date_hold_with_or_without_the_date(conn: Connection) -> None:
    ids = [
        add(conn, f"m{i}", created_at=f"2026-01-0{day}T10:00:00.000Z")
        for i, day in enumerate([3, 1, 3, 2, 1])  # ties on the date are broken by id
    ]
    add(conn, "someone else's", user="other", created_at="2026-01-02T12:00:00.000Z")
    order = ["m2", "m0", "m3", "m4", "m1"]
    assert listed(conn, user_id="u", order="created") == order
    by_fact = {f"m{i}": memory_id for i, memory_id in enumerate(ids)}
    for position, fact in enumerate(order):
        after = order[position + 1 :]
        assert listed(conn, user_id="u", order="created", before_id=by_fact[fact]) == after  # looked up
        created = memory_sql.get(conn, by_fact[fact]).created_at  # type: ignore[union-attr]
        assert (
            listed(conn, user_id="u", order="created", before_id=by_fact[fact], before_created_at=created)
            == after
        )
    assert listed(conn, user_id="u", order="created", before_created_at="2026-01-02T10:00:00.000Z") == [
        "m4",
        "m1",
    ]
    assert listed(
        conn, user_id="u", created_from="2026-01-02T00:00:00.000Z", created_before="2026-01-03T00:00:00.000Z"
    ) == ["m3"]
    assert listed(conn, order="created", before_id=by_fact["m0"]) == ["someone else's", "m3", "m4", "m1"]


def test_the_list_filters_on_scope_and_audience(conn: Connection) -> None:
    add(conn, "private to all agents")
    add(conn, "agent a's", agent_id="a")
    add(conn, "shared in g1", visibility="shared", source_channel="g1")
    add(conn, "shared everywhere", visibility="shared", category="preference", topic="t")
    assert listed(conn, user_id="u", agent_id="a") == ["agent a's"]
    assert listed(conn, user_id="u", visibility="shared", channel="g1") == ["shared in g1"]
    assert listed(conn, user_id="u", category="preference", topic="t") == ["shared everywhere"]
    assert listed(conn, user_id="u", audience=Audience.of("b")) == [
        "shared everywhere",
        "shared in g1",
        "private to all agents",
    ]
    assert listed(conn, user_id="u", audience=Audience.of(None, "group", "g2")) == ["shared everywhere"]
    assert listed(conn, user_id="u", kinds=()) == []
    assert memory_sql.live_count(conn, "u") == 4
    assert memory_sql.live_count(conn, "u", Audience.of("b", "group", "g1")) == 2


def test_a_layer_move_restarts_its_clock_and_a_merge_keeps_the_higher_importance(conn: Connection) -> None:
    memory_id = add(conn, "Sam likes tea.", importance=3, layer="working")
    conn.execute("UPDATE memories SET layer_since = ? WHERE id = ?", ("2020-01-01T00:00:00.000Z", memory_id))
    assert memory_sql.update(conn, memory_id, {"layer": "working", "metadata": {"k": "ü"}})
    kept = memory_sql.get(conn, memory_id)
    assert kept is not None and kept.layer_since == "2020-01-01T00:00:00.000Z"  # same layer: same clock
    assert kept.metadata == {"k": "ü"} and kept.updated_at > "2020"
    memory_sql.update(conn, memory_id, {"layer": "core"})
    assert memory_sql.get(conn, memory_id).layer_since > "2020-01-01T00:00:00.000Z"  # type: ignore[union-attr]
    assert not memory_sql.update(conn, memory_id + 100, {"importance": 4})
    memory_sql.merge_into(
        conn, memory_id, NewMemory(user_id="u", fact="Sam loves tea.", topic="", importance=8)
    )
    merged = memory_sql.get(conn, memory_id)
    assert merged is not None
    assert (merged.fact, merged.topic, merged.importance, merged.layer, merged.has_embedding) == (
        "Sam loves tea.",
        "",
        8,
        "core",
        False,
    )
    blob = struct.pack("<2f", 1.0, 2.0)
    memory_sql.merge_into(
        conn,
        memory_id,
        NewMemory(user_id="u", fact="Sam loves green tea.", topic="drinks", importance=2, layer="working",
                  embedding=blob, embedding_model="m", embedding_dim=2),
    )  # fmt: skip
    merged = memory_sql.get(conn, memory_id)
    assert merged is not None
    assert (merged.topic, merged.importance, merged.layer, merged.embedding_dim, merged.access_count) == (
        "drinks",
        8,
        "core",  # a working newcomer leaves a core memory in core
        2,
        2,
    )
    assert memory_sql.bump_access(conn, {memory_id: 1, memory_id + 100: 5}) == 1  # the missing id counts 0
    assert memory_sql.get(conn, memory_id).last_accessed is not None  # type: ignore[union-attr]


def test_history_lists_merges_and_summaries(conn: Connection) -> None:
    kept = add(conn, "kept")
    folded = add(conn, "folded")
    summary = add(conn, "summary")
    archived = add(conn, "archived", layer="archive")
    stranger = add(conn, "another user's", user="other")
    for kind, source, target in [
        ("merged", folded, kept),
        ("merged", stranger, kept),
        ("summarised", archived, summary),
    ]:
        conn.execute(
            "INSERT INTO memory_links (kind, from_id, to_id) VALUES (?, ?, ?)", (kind, source, target)
        )
    memory_sql.update(conn, archived, {})
    conn.execute("UPDATE memories SET compressed_into = ? WHERE id = ?", (summary, archived))
    of_kept = memory_sql.history(conn, memory_sql.get(conn, kept))  # type: ignore[arg-type]
    assert [r.fact for r in of_kept.merged_from] == ["folded"]  # never another user's rows
    assert [r.fact for r in memory_sql.history(conn, memory_sql.get(conn, folded)).merged_into] == ["kept"]  # type: ignore[arg-type]
    assert [r.fact for r in memory_sql.history(conn, memory_sql.get(conn, summary)).summarises] == [
        "archived"
    ]  # type: ignore[arg-type]
    of_archived = memory_sql.history(conn, memory_sql.get(conn, archived))  # type: ignore[arg-type]
    assert of_archived.summary is not None and of_archived.summary.fact == "summary"
    assert memory_sql.get_many(conn, []) == {}


def test_conversations_say_whether_their_turns_reach_the_same_requesters(conn: Connection) -> None:
    add(conn, "A: hi", kind="turn", source_session="one", agent_id="a", created_at="2026-01-01T10:00:00.000Z")
    add(
        conn, "A: bye", kind="turn", source_session="one", agent_id="a", created_at="2026-01-01T10:01:00.000Z"
    )
    add(conn, "B: hi", kind="turn", source_session="two", visibility="shared", source_channel="g1",
        created_at="2026-01-02T10:00:00.000Z")  # fmt: skip
    add(conn, "B: hi again", kind="turn", source_session="two", visibility="shared", source_channel="g2",
        created_at="2026-01-02T10:01:00.000Z")  # fmt: skip
    add(conn, "not a turn", source_session="three")
    sessions = {s.session: s for s in memory_sql.conversation_sessions(conn, "u")}
    assert set(sessions) == {"one", "two"}
    assert sessions["one"].mixed_scope is False and sessions["two"].mixed_scope is True
    assert (sessions["one"].agent_id, sessions["one"].visibility, sessions["one"].turns) == (
        "a",
        "private",
        2,
    )
    assert (sessions["two"].channel, sessions["two"].visibility) == ("g2", "shared")
    assert isinstance(sessions["one"].turns, int) and isinstance(sessions["one"].last_turn_id, int)
    in_g1 = memory_sql.conversation_sessions(conn, "u", audience=Audience.of(None, "group", "g1"))
    assert [(s.session, s.turns, s.mixed_scope) for s in in_g1] == [("two", 1, False)]
    assert [s.session for s in memory_sql.conversation_sessions(conn, "u", audience=Audience.of("b"))] == [
        "two"
    ]
    assert [s.session for s in memory_sql.conversation_sessions(conn, "u", limit=1)] == ["two"]
    assert memory_sql.conversation_sessions(conn, "u", offset=2) == []


def test_an_ingest_job_finds_its_turns_and_facts_by_their_metadata(conn: Connection) -> None:
    first = add(conn, "A: one", kind="turn", source_session="s", metadata={"digest": "d1"})
    second = add(conn, "A: two", kind="turn", source_session="s", metadata={"digest": "d2"})
    add(conn, "A: elsewhere", kind="turn", source_session="t", metadata={"digest": "d1"})
    loose = add(conn, "A: no session", kind="turn", metadata={"digest": "d1"})
    add(conn, "a fact, not a turn", source_session="s", metadata={"digest": "d1"})
    part = add(conn, "A: two, second part", kind="turn", source_session="s", metadata={"digest": "d2"})
    assert job_sql.turns_by_digest(conn, "u", "s", ["d2", "d1", "d9"]) == {
        "d1": [first],
        "d2": [second, part],
    }
    assert job_sql.turns_by_digest(conn, "u", None, ["d1"]) == {"d1": [loose]}
    assert job_sql.turns_by_digest(conn, "u", "s", []) == {}
    stored = add(conn, "Sam plays go.", source_session="s", metadata={"ingest_job": 12})
    add(conn, "another job's", source_session="s", metadata={"ingest_job": 120})
    add(conn, "job 12's turn", kind="turn", source_session="s", metadata={"ingest_job": 12})
    no_session = add(conn, "no session", metadata={"ingest_job": 12})
    assert [r.id for r in job_sql.stored_by_job(conn, "u", "s", 12)] == [stored]
    assert [r.id for r in job_sql.stored_by_job(conn, "u", None, 12)] == [no_session]
    assert job_sql.stored_by_job(conn, "other", "s", 12) == []


def test_the_mirror_reads_live_rows_by_layer(conn: Connection) -> None:
    core = add(conn, "core fact", user="b")
    add(conn, "working fact", user="a", layer="working")
    archived = add(conn, "archived", user="c", layer="archive")
    old = add(conn, "old core", user="b")
    memory_sql.update(conn, old, {"superseded_by": core})
    assert memory_sql.users_in_layers(conn, ["core", "working"]) == ["a", "b"]
    assert memory_sql.users_in_layers(conn, []) == []
    assert [r.fact for r in memory_sql.live_in_layers(conn, "b", ["core"])] == ["core fact"]
    assert [r.id for r in memory_sql.live_in_layers(conn, "c", ["archive", "core"])] == [archived]
    add(conn, "more important", user="b", importance=9)
    assert [r.fact for r in memory_sql.live_in_layer(conn, "b", "core", 1)] == ["more important"]


def test_an_import_finds_recorded_wordings_only_as_strings(conn: Connection) -> None:
    kept = add(conn, "Sam plays chess.")
    memory_sql.record_imported_wordings(conn, {kept: ["Sam likes chess.", "Sam enjoys chess."], 999: ["x"]})
    memory_sql.record_imported_wordings(conn, {kept: ["Sam likes chess.", "Sam loves chess."]})
    recorded = memory_sql.get(conn, kept)
    assert recorded is not None
    assert recorded.metadata[memory_sql.IMPORTED_WORDINGS_KEY] == [
        "Sam enjoys chess.",
        "Sam likes chess.",  # said again: moves to the end
        "Sam loves chess.",
    ]
    # Metadata written by hand: a lone string counts, other values never match a text.
    weird: list[dict[str, Any]] = [
        {memory_sql.IMPORTED_WORDINGS_KEY: "Sam owns a board."},
        {memory_sql.IMPORTED_WORDINGS_KEY: [7, None, {"a": "b"}, "Sam reads."]},
        {"note": f'mentions "{memory_sql.IMPORTED_WORDINGS_KEY}" in a value'},
        {memory_sql.IMPORTED_WORDINGS_KEY: {"x": 1}},
    ]
    for metadata in weird:
        add(conn, "hand-made", metadata=metadata)
    wanted = ["Sam loves chess.", "Sam owns a board.", "Sam reads.", "7", "b", "Ünïcode fact", "hand-made"]
    assert memory_sql.imported_facts(conn, "u", wanted) == {
        "Sam loves chess.",
        "Sam owns a board.",
        "Sam reads.",
        "hand-made",
    }
    add(conn, "Ünïcode fact")
    assert "Ünïcode fact" in memory_sql.imported_facts(conn, "u", wanted)
    assert memory_sql.imported_facts(conn, "u", []) == set()


def test_names_sort_by_code_point_as_sqlite_sorts_them(conn: Connection) -> None:
    for user in ["b", "é", "B", "a"]:
        add(conn, "a fact", user=user)
    assert memory_sql.users_in_layers(conn, ["core"]) == ["B", "a", "b", "é"]
    same_time = "2026-01-01T10:00:00.000Z"
    for session, channel in [("b", "g0"), ("B", "G1"), ("a", "g0"), ("a", "G1")]:
        add(conn, "T: hi", kind="turn", source_session=session, source_channel=channel, created_at=same_time)
    sessions = memory_sql.conversation_sessions(conn, "u", newest_first=False)
    assert [(s.session, s.channel) for s in sessions] == [("B", "G1"), ("a", "g0"), ("b", "g0")]
