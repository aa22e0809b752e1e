"""The FTS query builder: any text becomes MATCH expressions SQLite accepts."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memory_cortex.records import NewMemory
from memory_cortex.store import memories as memory_sql
from memory_cortex.store import retrieval as retrieval_sql
from memory_cortex.store.db import apply_migrations
from memory_cortex.store.fts import build_query, like_pattern, quote, word_terms


@pytest.fixture(scope="module")
def conn(tmp_path_factory: pytest.TempPathFactory) -> sqlite3.Connection:
    path: Path = tmp_path_factory.mktemp("fts") / "fts.db"
    connection = sqlite3.connect(path, isolation_level=None)
    apply_migrations(connection)
    for fact in (
        "Eve writes C++ at work",
        "Café au lait in Montréal",
        "我每天早上喝一杯咖啡",
        "100% sure_thing",
    ):
        memory_sql.insert(connection, NewMemory(user_id="u", fact=fact))
    return connection


def run_all(conn: sqlite3.Connection, text: str) -> dict[int, float]:
    return retrieval_sql.fts_candidates(conn, "u", build_query(text), 10)


def test_operators_and_quotes_are_only_words() -> None:
    query = build_query('what\'s "C++" AND -rust* NEAR(x) col:val ^start')
    assert query.words == '"c" OR "rust" OR "x" OR "col" OR "val" OR "start"'
    assert "AND" not in query.words.replace('" OR "', " ")


def test_stop_words_and_possessives_are_dropped() -> None:
    assert word_terms("What is Caroline's favourite hobby?") == ["caroline", "favourite", "hobby"]


def test_quote_doubles_inner_quotes() -> None:
    assert quote('say "hi"') == '"say ""hi"""'


def test_like_pattern_escapes_wildcards() -> None:
    assert like_pattern("100%_\\") == "%100\\%\\_\\\\%"


def test_cjk_runs_become_trigrams_or_substrings() -> None:
    query = build_query("咖啡 和 我每天早上")
    assert query.substrings == ("咖啡", "和")
    assert query.trigrams.split(" OR ") == ['"我每天"', '"每天早"', '"天早上"']


def test_diacritics_and_stems_match(conn: sqlite3.Connection) -> None:
    assert run_all(conn, "cafe montreal")
    assert run_all(conn, "writing")  # porter: writing → write


@given(st.text(max_size=300))
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_any_text_gives_a_valid_match_or_nothing(conn: sqlite3.Connection, text: str) -> None:
    query = build_query(text)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return  # lone surrogates are refused at the HTTP edge before reaching here
    run_all(conn, text)  # raises sqlite3.OperationalError on a syntax error
    assert query.words == "" or query.words.startswith('"')


def test_a_user_crowded_out_of_the_ranking_window_still_gets_every_match(tmp_path: Path) -> None:
    connection = sqlite3.connect(tmp_path / "crowd.db", isolation_level=None)
    apply_migrations(connection)
    for i in range(300):
        memory_sql.insert(connection, NewMemory(user_id="crowd", fact=f"apple apple apple {i}"))
    mine = [
        memory_sql.insert(
            connection, NewMemory(user_id="me", fact=f"a long note {i} that mentions an apple once")
        )
        for i in range(3)
    ]
    # The claimed share is wrong on purpose (the window then holds only "crowd" rows).
    found = retrieval_sql.fts_candidates(connection, "me", build_query("apple"), 10, user_share=1.0)
    assert sorted(found) == sorted(mine)


def test_common_words_leave_the_query_but_the_two_rarest_always_stay(any_conn: Any) -> None:
    connection = any_conn
    for i in range(200):
        memory_sql.insert(connection, NewMemory(user_id="u", fact=f"home note {i}"))
    quokka = memory_sql.insert(connection, NewMemory(user_id="u", fact="the quokka lives at home"))
    wombat = memory_sql.insert(connection, NewMemory(user_id="u", fact="a wombat digs"))
    query = build_query("home note quokka wombat")
    found = retrieval_sql.fts_candidates(connection, "u", query, 300, common_term_share=0.05)
    assert set(found) == {quokka, wombat}  # "home" and "note" are in nearly every row
    everything = retrieval_sql.fts_candidates(connection, "u", query, 300, common_term_share=1.0)
    assert len(everything) == 202
    # With only common words, the two rarest are kept: the query never becomes empty.
    assert (
        len(
            retrieval_sql.fts_candidates(
                connection, "u", build_query("home note"), 300, common_term_share=0.05
            )
        )
        == 201
    )


def test_the_row_budget_drops_the_commonest_words_first(any_conn: Any) -> None:
    connection = any_conn
    for i in range(120):
        memory_sql.insert(connection, NewMemory(user_id="u", fact=f"garden note {i}"))
    for i in range(30):
        memory_sql.insert(connection, NewMemory(user_id="u", fact=f"tomato plant {i}"))
    quokka = memory_sql.insert(connection, NewMemory(user_id="u", fact="a quokka in the garden"))
    query = build_query("garden tomato quokka")
    # No share cut-off: only the budget decides. 1 + 30 rows fit in 40; "garden" (121 rows) does not.
    found = retrieval_sql.fts_candidates(connection, "u", query, 300, common_term_share=1.0, row_budget=40)
    assert quokka in found and len(found) == 31
    unbounded = retrieval_sql.fts_candidates(
        connection, "u", query, 300, common_term_share=1.0, row_budget=None
    )
    assert len(unbounded) == 151


def test_over_the_budget_only_the_newest_matches_are_ranked(any_conn: Any) -> None:
    """When even the two rarest words match more rows than the budget, the newest rows are ranked."""
    connection = any_conn
    ids = [memory_sql.insert(connection, NewMemory(user_id="u", fact=f"lisbon trip {i}")) for i in range(400)]
    query = build_query("lisbon")
    found = retrieval_sql.fts_candidates(connection, "u", query, 500, common_term_share=1.0, row_budget=100)
    # About the newest quarter of the ids (100 of 400), never an old row.
    assert 90 <= len(found) <= 110
    assert min(found) >= ids[len(ids) - len(found) - 1]
    # A budget the matches fit in ranks them all.
    assert (
        len(retrieval_sql.fts_candidates(connection, "u", query, 500, common_term_share=1.0, row_budget=400))
        == 400
    )


def test_term_row_counts_are_remembered_until_they_are_old() -> None:
    connection = sqlite3.connect(":memory:", isolation_level=None)
    apply_migrations(connection)
    memory_sql.insert(connection, NewMemory(user_id="u", fact="a heron by the river"))
    now = [0.0]
    counts = retrieval_sql.TermRowCounts(max_age_s=60.0, clock=lambda: now[0])
    assert counts.get(connection, '"heron"') == 1
    memory_sql.insert(connection, NewMemory(user_id="u", fact="another heron"))
    now[0] = 59.0
    assert counts.get(connection, '"heron"') == 1  # recent enough: not counted again
    now[0] = 61.0
    assert counts.get(connection, '"heron"') == 2
