"""Full-text candidates on PostgreSQL (``tsvector`` words, ``LIKE`` pieces for CJK text), through the
store's own entry point ``retrieval.fts_candidates``, on a real server; the simple cases also on
SQLite, where the same row must rank first."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import psycopg
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memory_cortex.records import Scope
from memory_cortex.store import retrieval
from memory_cortex.store.fts import FtsQuery, build_query
from memory_cortex.store.postgres import search as postgres_search
from memory_cortex.store.postgres.connection import PgConnection, configure
from memory_cortex.store.postgres.db import apply_migrations
from tests.store.rows import add_memory
from tests.store.scopes import AUDIENCES, SCOPES


@pytest.fixture
def pg(postgres_url: str) -> Iterator[PgConnection]:
    """A PostgreSQL connection with every migration applied, in autocommit."""
    raw = psycopg.connect(postgres_url, autocommit=True)
    configure(raw)
    apply_migrations(raw)
    yield PgConnection(raw)
    raw.close()


def search(conn: Any, text: str, limit: int = 10, user_id: str = "u", **filters: Any) -> dict[int, float]:
    return retrieval.fts_candidates(conn, user_id, build_query(text), limit, **filters)


def supersede(conn: Any, old: int, new: int) -> None:
    conn.execute("UPDATE memories SET superseded_by = ? WHERE id = ?", (new, old))


# -- words ----------------------------------------------------------------------------------------
def test_stems_match_and_scores_are_normalised_by_the_best_row(pg: PgConnection) -> None:
    runs = add_memory(pg, fact="She runs along the river every morning")
    run = add_memory(pg, fact="A long run in the rain, then running shoes dried by the fire")
    cat = add_memory(pg, fact="The cat sleeps on the sofa", topic="pets")
    add_memory(pg, fact="Nothing to see here")

    found = search(pg, "running")
    assert set(found) == {runs, run}
    assert max(found.values()) == 1.0
    assert all(0 < score <= 1 for score in found.values())
    assert list(found.values()) == sorted(found.values(), reverse=True)  # best first
    assert search(pg, "sleeping cats") == {cat: 1.0}
    assert search(pg, "pets") == {cat: 1.0}  # the topic is searched too
    # More query words matched rank higher; every matching row is a candidate.
    found = search(pg, "running river morning")
    assert next(iter(found)) == runs and found[runs] == 1.0 and 0 < found[run] < 1


def test_a_short_row_outranks_a_long_one_with_the_same_match(any_conn: Any) -> None:
    """On both backends (bm25 on SQLite, ts_rank normalised by length on PostgreSQL)."""
    short = add_memory(any_conn, fact="Tom bought a kayak")
    add_memory(
        any_conn,
        fact="On the long drive north past the lakes and the quiet villages and the old mill, Tom"
        " talked about work, the weather, his garden, the neighbours and, once, a kayak",
    )
    found = search(any_conn, "kayak")
    assert len(found) == 2 and next(iter(found)) == short and found[short] == 1.0


@pytest.mark.parametrize(
    ("query", "best"),
    [
        ("What did Melanie paint?", "Melanie painted a sunrise over the lake"),
        ("sunrise painting", "Melanie painted a sunrise over the lake"),
        ("Caroline support group", "Caroline went to the LGBTQ support group"),
        ("adoption agencies", "Caroline is researching adoption agencies"),
        ("camping in the mountains", "The family went camping in the mountains last summer, a great trip"),
        ("咖啡", "我每天早上喝一杯咖啡"),
        ("早上喝咖啡", "我每天早上喝一杯咖啡"),
        ("東京の天気", "明日の東京の天気は晴れです"),
    ],
)
def test_both_backends_rank_the_same_row_first(any_conn: Any, query: str, best: str) -> None:
    rows = [
        "Melanie painted a sunrise over the lake",
        "Caroline went to the LGBTQ support group",
        "Caroline is researching adoption agencies",
        "The family went camping in the mountains last summer, a great trip",
        "Melanie's kids love the camping trip stories about painting",
        "我每天早上喝一杯咖啡",
        "他喜欢喝茶",
        "明日の東京の天気は晴れです",
        "Tom has a new group of friends at work",
    ]
    ids = {fact: add_memory(any_conn, fact=fact) for fact in rows}
    found = search(any_conn, query)
    assert found, query
    assert next(iter(found)) == ids[best], (query, found)
    assert found[ids[best]] == 1.0
    assert all(0 < score <= 1 for score in found.values())


def test_only_the_users_live_rows_in_scope_are_candidates(pg: PgConnection) -> None:
    mine = add_memory(pg, fact="Grandma grows tomatoes in the garden 花园里的番茄")
    theirs = add_memory(pg, user_id="v", fact="Grandma grows tomatoes in the garden 花园里的番茄")
    old = add_memory(pg, fact="Grandma grew tomatoes in her old garden 花园里的番茄")
    newer = add_memory(pg, fact="Grandma moved to a flat")
    supersede(pg, old, newer)
    for text in ("tomatoes garden", "花园里的番茄", "番茄", "花园"):
        assert set(search(pg, text)) == {mine}, text
        assert set(search(pg, text, user_id="v")) == {theirs}, text
        assert search(pg, text, user_id="nobody") == {}, text
    pg.execute("DELETE FROM memories WHERE id = ?", (newer,))  # the successor goes: the old row is live again
    assert set(search(pg, "tomatoes")) == {mine, old}


def test_layers_kinds_and_audiences_filter_every_part(pg: PgConnection) -> None:
    """Words, trigram pieces and short CJK runs all obey the filters."""
    rows: dict[int, tuple[str, str, Scope]] = {}
    for n in range(42):
        layer = ("working", "core", "archive")[n % 3]
        kind = ("fact", "turn")[n // 3 % 2]
        scope = SCOPES[n // 6 % len(SCOPES)]
        memory_id = add_memory(
            pg,
            fact=f"Row {n}: the violin lesson 小提琴课",
            layer=layer,
            kind=kind,
            agent_id=scope.agent_id,
            visibility=scope.visibility,
            source_channel=scope.channel,
        )
        rows[memory_id] = (layer, kind, scope)
    for text in ("violin lessons", "小提琴课", "提琴"):
        assert set(search(pg, text, limit=100)) == set(rows), text
        assert set(search(pg, text, limit=100, layers=["core", "working"])) == {
            m for m, (layer, _, _) in rows.items() if layer != "archive"
        }
        assert set(search(pg, text, limit=100, kinds=["turn"])) == {
            m for m, (_, kind, _) in rows.items() if kind == "turn"
        }
        assert set(search(pg, text, limit=100, layers=["archive"], kinds=["fact"])) == {
            m for m, (layer, kind, _) in rows.items() if layer == "archive" and kind == "fact"
        }
        assert search(pg, text, limit=100, layers=[]) == {}
        assert search(pg, text, limit=100, kinds=[]) == {}
        for audience in AUDIENCES:
            found = set(search(pg, text, limit=100, audience=audience))
            assert found == {m for m, (_, _, scope) in rows.items() if audience.admits(scope)}, (
                text,
                audience,
            )


def test_the_limit_keeps_the_best(pg: PgConnection) -> None:
    best = add_memory(pg, fact="harbour lighthouse keeper")
    for n in range(30):
        add_memory(pg, fact=f"a lighthouse, number {n}, and " + "other words " * (n % 5))
    found = search(pg, "harbour lighthouse keeper", limit=5)
    assert len(found) == 5 and next(iter(found)) == best
    cjk = [add_memory(pg, fact=f"灯塔看守人{n}") for n in range(8)]
    assert len(search(pg, "灯塔看守人", limit=3)) == 3
    assert set(search(pg, "灯塔看守人", limit=100)) == set(cjk)


# -- scripts without spaces -------------------------------------------------------------------------
def test_cjk_pieces_score_the_share_of_the_query_a_row_holds(pg: PgConnection) -> None:
    both = add_memory(pg, fact="我每天早上喝一杯咖啡")
    first = add_memory(pg, fact="每天早上跑步")
    neither = add_memory(pg, fact="他喜欢喝茶")
    japanese = add_memory(pg, fact="東京タワーに行きました")
    korean = add_memory(pg, fact="서울에서 커피를 마셨다")
    in_topic = add_memory(pg, topic="咖啡店", fact="The café on the corner")
    split = add_memory(pg, topic="红茶", fact="店里很安静")

    # Trigrams 每天早 天早上 早上喝 上喝咖 喝咖啡: the best row holds three (1.0, as SQLite normalises
    # trigram hits by the best), the next two.
    found = search(pg, "每天早上喝咖啡")
    assert found == {both: 1.0, first: pytest.approx(2 / 3)}
    assert search(pg, "早上喝咖啡") == {both: 1.0}  # one of three pieces, but the best row
    # Short runs score the share of them a row holds (SQLite's rule), not normalised by the best.
    assert search(pg, "咖啡") == {both: 1.0, in_topic: 1.0}  # a two-character run: substring match
    assert search(pg, "喝") == {both: 1.0, neither: 1.0}  # one character
    assert search(pg, "咖啡 茶") == {both: 0.5, in_topic: 0.5, neither: 0.5, split: 0.5}
    assert search(pg, "東京タワー") == {japanese: 1.0}
    assert search(pg, "서울") == {korean: 1.0}
    assert search(pg, "コーヒー") == {}
    # Topic and fact are one text with a line break between: no piece spans the two.
    assert search(pg, "红茶店里") == {}
    assert search(pg, "茶店") == {}
    assert search(pg, "店里很") == {split: 1.0}
    # Words and CJK pieces in one query: a row keeps its best part.
    mixed = search(pg, "café 咖啡")
    assert mixed[in_topic] == 1.0 and mixed[both] == 1.0


# -- nothing to search, and hostile input ---------------------------------------------------------
@pytest.mark.parametrize(
    "text",
    ["", "   ", "the of and a", "what is it?", "?!...;:", "— … « » ¿", "--", "''", '""', "s t d"],
)
def test_stop_words_and_punctuation_find_nothing_without_error(any_conn: Any, text: str) -> None:
    add_memory(any_conn, fact="What is it? The answer, and the question, will now be here.")
    assert search(any_conn, text) == {}


HOSTILE = [
    "it's \"quoted\" 'single' run",
    "back\\slash \\' \\\" run\\",
    "100% _under_ %% __ %_% run",
    "key:value run:* :* a:b:c",
    "tom & jerry && || ! !! !run (run) <-> <2> run",
    "run | walk & !swim",
    '"unclosed phrase run',
    "run -minus +plus ~tilde ^caret *star",
    "nul\x00byte run\x00",
    "OR AND NOT NEAR run",
    "$$ $tag$ run $$",
    "E'\\n' run",
    "; DROP TABLE memories; -- run",
    "run " * 200,
    "x" * 3000 + " run",
    "😀 emoji run 👍🏽",
    "咖啡%_\\ 100%咖啡 _咖啡_",
    "\u200b\u200dzero width run\ufeff",
]


@pytest.mark.parametrize("text", HOSTILE)
def test_hostile_text_never_raises(any_conn: Any, text: str) -> None:
    runner = add_memory(any_conn, fact="She runs 100% of the way: no _shortcuts_, no \\ tricks")
    add_memory(any_conn, fact="我喝咖啡")
    found = search(any_conn, text)
    assert all(0 < score <= 1 for score in found.values())
    if "run" in text:
        assert runner in found


def test_query_parts_that_reach_postgresql_are_only_text(pg: PgConnection) -> None:
    """Whatever an ``FtsQuery`` holds (not only what ``build_query`` makes), PostgreSQL reads it as
    words and literal text: tsquery operators do nothing, LIKE wildcards match only themselves."""
    percent = add_memory(pg, fact="it is 100% done")
    plain = add_memory(pg, fact="it is 100 done")
    underscore = add_memory(pg, fact="snake_case name")
    backslash = add_memory(pg, fact="a \\ backslash")
    add_memory(pg, fact="snakeXcase name")

    def raw_query(**parts: Any) -> dict[int, float]:
        return retrieval.fts_candidates(pg, "u", FtsQuery(**parts), 10)

    assert raw_query(substrings=("100%",)) == {percent: 1.0}
    assert raw_query(substrings=("%",)) == {percent: 1.0}
    assert raw_query(substrings=("e_c",)) == {underscore: 1.0}
    assert raw_query(substrings=("\\",)) == {backslash: 1.0}
    assert raw_query(trigrams='"100%" OR "0% "') == {percent: 1.0}
    words = ['"done:*"', '"!done"', '"a & b"', '"say ""hi"""', '"<->"', '"("', '"\\"', '"\'"']
    found = raw_query(words=" OR ".join(words), terms=tuple(words))
    assert set(found) <= {percent, plain}
    assert raw_query(words='"or"', terms=('"or"',)) == {}
    # "-" is no negation (which would match every row without the word, at a rank of 0).
    assert raw_query(words='"-done"', terms=('"-done"',)) == {percent: 1.0, plain: 1.0}
    assert raw_query(words='"say ""done"""', terms=('"say ""done"""',)) == {}  # a phrase, as in FTS5


@given(st.text(max_size=200))
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_any_text_is_a_valid_search(pg: PgConnection, text: str) -> None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return  # lone surrogates are refused at the HTTP edge before reaching here
    if not pg.execute("SELECT 1 FROM memories LIMIT 1").fetchone():
        add_memory(pg, fact="Alice likes tea and 咖啡 100% _always_")
    found = search(pg, text)
    assert all(0 < score <= 1 for score in found.values())


def test_accents_are_folded_as_on_sqlite(pg: PgConnection) -> None:
    cafe = add_memory(pg, fact="Café au lait in Montréal")
    assert set(search(pg, "cafe montreal")) == {cafe}


def test_words_only_postgresql_calls_stop_words_are_found(pg: PgConnection) -> None:
    will = add_memory(pg, fact="Will can fix the old tin can now")
    assert set(search(pg, "Will")) == {will}
    assert set(search(pg, "now")) == {will}


def test_common_words_are_counted_from_the_planners_statistics(
    pg: PgConnection, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A word the planner expects in many rows takes its estimate (no count of every row); a rare
    word is counted exactly, so a word in no row at all is known to be absent."""
    pg.execute(
        "INSERT INTO memories (user_id, fact, created_at, updated_at)"
        " SELECT 'u', 'garden note ' || i, cortex_now(), cortex_now() FROM generate_series(1, 3000) AS i"
    )
    quokka = add_memory(pg, fact="a quokka in the garden")
    pg.execute("ANALYZE memories")
    counted: list[str] = []
    exact = postgres_search.WORD_QUERY
    original = pg.execute

    def watched(sql: str, parameters: Any = (), /) -> Any:
        if sql.startswith("SELECT count(*)") and exact in sql:
            counted.append(parameters[0])
        return original(sql, parameters)

    monkeypatch.setattr(pg, "execute", watched)
    estimate = postgres_search._count_rows_with(pg, "garden")
    assert 2700 <= estimate <= 3300 and counted == []  # the planner's estimate, nothing counted
    assert postgres_search._count_rows_with(pg, "quokka") == 1 and counted == ["quokka"]
    assert postgres_search._count_rows_with(pg, "wombat") == 0
    # The budget then keeps the rare word and drops the common one, as with exact counts.
    found = search(pg, "garden quokka wombat", limit=50, common_term_share=1.0, row_budget=100)
    assert set(found) == {quokka}
