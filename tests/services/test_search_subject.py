"""SearchService's subject boost: a transcript turn said by someone the query names ("Melanie: …")
is lifted, with a fixed query vector so the test controls the geometry."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from memory_cortex.config import SearchConfig
from memory_cortex.records import NewMemory
from memory_cortex.services.search import SearchService
from memory_cortex.services.search.lookup import asked, short_names_in
from memory_cortex.store import memories as memory_sql
from memory_cortex.store import retrieval as retrieval_sql
from memory_cortex.store.db import Database, apply_migrations, connect
from memory_cortex.store.vectors import VectorIndex
from memory_cortex.vectormath import normalize, to_blob
from tests.services.fixed_store import MODEL, FixedEmbedder

# (fact, user, vector): the query is the x axis, so the first row is nearest.
ROWS = [
    ("Caroline: I love painting sunsets by the lake.", "u", [1.0, 0.2, 0.0]),
    ("Melanie: Painting calms me down after work.", "u", [0.9, 0.5, 0.0]),
    ("Melanie Ann Smith: I paint on Sundays.", "u", [0.8, 0.6, 0.0]),
    ("Melanie: my painting class starts Monday.", "v", [1.0, 0.0, 0.0]),  # another user
    ("The user's sister Melanie paints.", "u", [0.7, 0.7, 0.0]),  # names her, not said by her
]


@pytest.fixture
def store(tmp_path: Path) -> Iterator[tuple[Database, VectorIndex]]:
    db = Database(tmp_path / "subject.db", busy_timeout_ms=1000)
    db.open()
    index = VectorIndex(MODEL, 3)
    conn = connect(db.path, read_only=False, busy_timeout_ms=1000)
    with conn:
        for fact, user, vector in ROWS:
            unit = normalize(np.array(vector))[0]
            memory_id = memory_sql.insert(
                conn,
                NewMemory(
                    user_id=user, fact=fact, embedding=to_blob(unit), embedding_model=MODEL, embedding_dim=3
                ),
            )
            index.upsert(memory_id, user, unit)
    conn.close()
    yield db, index
    db.close()


async def facts(store: tuple[Database, VectorIndex], query: str, **settings: object) -> list[str]:
    db, index = store
    service = SearchService(db, index, FixedEmbedder(), SearchConfig(prf_docs=0, **settings), 5.0)
    result = await service.search(query, "u", 5, mode="vector")
    return [hit.memory.fact for hit in result.hits]


async def test_turns_of_the_person_named_come_first(store: tuple[Database, VectorIndex]) -> None:
    plain = await facts(store, "What does Melanie like to paint?", subject_boost=0)
    assert plain[0].startswith("Caroline:")
    boosted = await facts(store, "What does Melanie like to paint?", subject_boost=0.5)
    assert boosted[0] == "Melanie: Painting calms me down after work."
    assert (
        boosted[1] == "Caroline: I love painting sunsets by the lake."
    )  # a three-word label needs all three
    assert all("Monday" not in fact for fact in boosted)  # user v's turn never appears


async def test_possessives_and_full_names_count(store: tuple[Database, VectorIndex]) -> None:
    boosted = await facts(store, "Where is Melanie Ann Smith's studio?", subject_boost=0.5)
    assert boosted[:2] == [
        "Melanie: Painting calms me down after work.",
        "Melanie Ann Smith: I paint on Sundays.",
    ]


async def test_a_query_naming_no_one_is_ranked_as_without_the_boost(
    store: tuple[Database, VectorIndex],
) -> None:
    for query in ("what does she like to paint?", "melanie painting"):
        assert await facts(store, query, subject_boost=2) == await facts(store, query, subject_boost=0)


def test_labels_are_capitalised_names_in_any_script(tmp_path: Path) -> None:
    conn = connect(tmp_path / "labels.db", read_only=False, busy_timeout_ms=1000)
    apply_migrations(conn)
    facts = [
        "Élodie: bonjour !",
        "note: lower case is no name",
        "Dr. Ann Lee: hi",
        "Caroline:no space",
        "Bob",
    ]
    ids = [memory_sql.insert(conn, NewMemory(user_id="u", fact=fact)) for fact in facts]
    speakers = {
        memory_id: traits.speaker for memory_id, traits in retrieval_sql.rank_traits(conn, ids).items()
    }
    assert speakers == {ids[0]: "élodie", ids[1]: None, ids[2]: "dr. ann lee", ids[3]: None, ids[4]: None}
    conn.close()


async def test_the_speaker_pool_is_never_smaller_than_the_limit(store: tuple[Database, VectorIndex]) -> None:
    """With a pool of 1 only the nearest turn (Caroline's) would be looked at; asking for 5 results
    looks at all 5, so Melanie's turn is still lifted."""
    boosted = await facts(store, "What does Melanie like to paint?", subject_boost=0.5, subject_pool=1)
    assert boosted[0] == "Melanie: Painting calms me down after work."


def test_a_short_form_of_a_speakers_name_names_them_but_a_question_word_does_not() -> None:
    speakers = {1: "Melanie", 2: "Howard", 3: "Jo"}
    assert short_names_in("How long have Mel and her husband been married?", speakers) == [1]
    assert short_names_in("How is work going?", speakers) == []  # "How" begins the question
    assert short_names_in("Where does Howard work?", speakers) == []  # the whole name: names_in's


def test_a_question_about_pets_asks_the_pet_attribute_by_any_of_its_words() -> None:
    # "pet" is a relation word as well: its own question words are kept.
    for question in ("Do I have a cat?", "What pets do I have?", "What is my dog called?"):
        assert "pet" in asked(question).attributes, question


def test_like_asks_what_someone_likes_only_as_a_verb() -> None:
    for question in ("What does Nate like?", "Does she like sushi?", "What music does Tom like to play?"):
        assert "likes" in asked(question).attributes, question
    for question in (
        "What could Nate do in cool places like Whispering Falls?",
        "What does it feel like to win?",
    ):
        assert "likes" not in asked(question).attributes, question


def test_who_is_someones_relation_asks_about_one_person_not_a_group() -> None:
    assert not asked("Who is my manager?").about_several
    assert not asked("Who is Lukas's girlfriend?").about_several
    assert asked("Who is vegan?").about_several
    assert asked("Who is allergic to nuts?").about_several
