"""Speaker-perspective queries: the rewrite rules, and search scoring a speaker's turns against the
question asked in their words (a fake embedder gives each text a known vector)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np
import pytest

from memory_cortex.config import SearchConfig
from memory_cortex.errors import EmbedderUnavailable
from memory_cortex.models.embedders import EmbedderHealth, SentenceTransformerEmbedder
from memory_cortex.records import NewMemory
from memory_cortex.services.perspective import Perspective, speaker_perspective
from memory_cortex.services.search import SearchService
from memory_cortex.services.search.stages import FeedbackStage
from memory_cortex.store import memories as memory_sql
from memory_cortex.store.db import Database, connect
from memory_cortex.store.vectors import VectorIndex
from memory_cortex.vectormath import normalize, to_blob
from tests.services.fixed_store import MODEL, Row, open_store


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("What has Melanie done with her family?", Perspective("Melanie", "What has I done with my family?")),
        ("What is Caroline's identity?", Perspective("Caroline", "What is my identity?")),
        ("Why did Jon say he gave him up himself?", Perspective("Jon", "Why did I say I gave me up myself?")),
        ("How did Jon’s studio open?", Perspective("Jon", "How did my studio open?")),
    ],
)
def test_the_one_person_named_speaks_in_the_first_person(query: str, expected: Perspective) -> None:
    assert speaker_perspective(query) == expected


@pytest.mark.parametrize(
    "query",
    [
        "what does she like to paint?",  # no name
        "Melanie likes to paint what?",  # the first word is not read as a name
        "What did I tell Melanie?",  # the first person is taken: whose "I" would the rewrite's be?
        "What did Melanie tell me?",
        "I wonder what Melanie likes",
        "When did Melanie go to Paris?",  # two names
        "",
    ],
)
def test_no_rewrite_unless_exactly_one_person_is_named(query: str) -> None:
    assert speaker_perspective(query) is None


# What the fake embedder answers: the question points one way, its first-person form another.
QUERY = "What did Mel enjoy at the lake?"
FIRST_PERSON = "What did I enjoy at the lake?"
VECTORS = {QUERY: [1.0, 0.0, 0.0], FIRST_PERSON: [0.0, 1.0, 0.0]}


class TextEmbedder:
    """Each query text has the vector of ``VECTORS`` (unknown text: the x axis); records calls.
    A text in ``failing`` raises as a timed-out embedding does."""

    backend = "fixed"
    model = MODEL
    dim = 3

    def __init__(self, failing: frozenset[str] = frozenset()) -> None:
        self.queries: list[str] = []
        self.failing = failing

    async def start(self) -> None: ...

    async def close(self) -> None: ...

    async def embed_documents(self, texts: Sequence[str], *, background: bool = False) -> np.ndarray:
        raise NotImplementedError

    async def embed_query(self, text: str, *, timeout: float | None = None) -> np.ndarray:
        self.queries.append(text)
        if text in self.failing:
            raise EmbedderUnavailable("embedding took longer than 0.15s")
        return np.array(VECTORS.get(text, [1.0, 0.0, 0.0]), dtype=np.float32)

    def available(self) -> bool:
        return True

    def health(self) -> EmbedderHealth:
        return EmbedderHealth(backend=self.backend, model=MODEL, ok=True, dim=3)


NEAR_QUESTION = "Mel: The lake trip was long."
NEAR_FIRST_PERSON = "Mel: I loved swimming there."


@pytest.fixture
def store(tmp_path: Path) -> Iterator[tuple[Database, VectorIndex]]:
    db, index = open_store(
        tmp_path / "perspective.db",
        [
            Row(NEAR_QUESTION, (1.0, 0.5, 0.0), session="s1"),
            Row(NEAR_FIRST_PERSON, (0.55, 1.0, 0.0), session="s1"),
            Row("Ann: I loved the lake too.", (0.0, 1.0, 0.0), session="s1", user="v"),  # another user
        ],
    )
    yield db, index
    db.close()


async def facts(
    store: tuple[Database, VectorIndex],
    query: str,
    embedder: TextEmbedder | None = None,
    mode: str = "vector",
    **settings: object,
) -> list[str]:
    db, index = store
    config = SearchConfig(prf_docs=0, subject_boost=0, length_prior=0, session_support=0, **settings)
    service = SearchService(db, index, embedder or TextEmbedder(), config, 5.0)  # type: ignore[arg-type]
    result = await service.search(query, "u", 5, mode=mode)
    return [hit.memory.fact for hit in result.hits]


async def test_a_speakers_turns_are_scored_against_the_question_in_their_words(
    store: tuple[Database, VectorIndex],
) -> None:
    assert await facts(store, QUERY, speaker_query=0) == [NEAR_QUESTION, NEAR_FIRST_PERSON]
    assert await facts(store, QUERY, speaker_query=1.0) == [NEAR_FIRST_PERSON, NEAR_QUESTION]


async def test_a_name_that_is_no_speaker_here_changes_nothing(store: tuple[Database, VectorIndex]) -> None:
    """ "Ann" speaks only in user v's memories: for user u the query is scored as it is."""
    query = "What did Ann enjoy at the lake?"
    assert speaker_perspective(query) == Perspective("Ann", FIRST_PERSON)  # the vector that lifts
    assert await facts(store, query, speaker_query=1.0) == await facts(store, query, speaker_query=0)


async def test_a_store_without_transcript_turns_never_embeds_the_rewrite(tmp_path: Path) -> None:
    """Standalone facts have no speaker to speak as: the query is embedded alone (no model time
    spent on a rewrite that could not be used)."""
    db, index = open_store(tmp_path / "facts.db", [Row(NEAR_QUESTION, (1.0, 0.5, 0.0))])
    try:
        embedder = TextEmbedder()
        service = SearchService(db, index, embedder, SearchConfig(speaker_query=1.0), 5.0)  # type: ignore[arg-type]
        await service.search(QUERY, "u", 5)
        assert embedder.queries == [QUERY]
    finally:
        db.close()


async def test_the_first_turn_of_a_user_counts_at_once(tmp_path: Path) -> None:
    """ "No turns" is remembered only while nothing is stored: the next search after a first turn
    embeds the rewrite."""
    db, index = open_store(tmp_path / "first.db", [Row("Likes tea.", (1.0, 0.5, 0.0))])
    try:
        embedder = TextEmbedder()
        service = SearchService(db, index, embedder, SearchConfig(), 5.0)  # type: ignore[arg-type]
        await service.search(QUERY, "u", 5)
        await service.search(QUERY, "u", 5)
        assert embedder.queries == [QUERY, QUERY]
        conn = connect(db.path, read_only=False, busy_timeout_ms=1000)
        with conn:
            unit = normalize(np.array([0.55, 1.0, 0.0]))[0]
            turn = NewMemory(
                user_id="u",
                fact=NEAR_FIRST_PERSON,
                source_session="s1",
                embedding_context=2,
                embedding=to_blob(unit),
                embedding_model=MODEL,
                embedding_dim=3,
            )
            index.upsert(memory_sql.insert(conn, turn), "u", unit)
        conn.close()
        await service.search(QUERY, "u", 5)
        assert sorted(embedder.queries[2:]) == sorted([QUERY, FIRST_PERSON])
    finally:
        db.close()


async def test_hybrid_search_uses_it_too(store: tuple[Database, VectorIndex]) -> None:
    """The vector part of a hybrid score is the cosine to the normalised q + p."""
    db, index = store
    for weight, query_vector in ((0.0, [1.0, 0.0, 0.0]), (1.0, [1.0, 1.0, 0.0])):
        config = SearchConfig(
            prf_docs=0, subject_boost=0, length_prior=0, session_support=0, speaker_query=weight
        )
        service = SearchService(db, index, TextEmbedder(), config, 5.0)  # type: ignore[arg-type]
        hits = {hit.memory.fact: hit for hit in (await service.search(QUERY, "u", 5)).hits}
        expected = float(normalize(np.array(query_vector))[0] @ normalize(np.array([0.55, 1.0, 0.0]))[0])
        assert hits[NEAR_FIRST_PERSON].vector_score == pytest.approx(expected, abs=1e-6)


async def test_fts_mode_embeds_nothing(store: tuple[Database, VectorIndex]) -> None:
    embedder = TextEmbedder()
    await facts(store, QUERY, embedder, mode="fts", speaker_query=1.0)
    assert embedder.queries == []


async def test_a_rewrite_that_cannot_be_embedded_leaves_the_search_as_without_it(
    store: tuple[Database, VectorIndex],
) -> None:
    embedder = TextEmbedder(failing=frozenset({FIRST_PERSON}))
    assert await facts(store, QUERY, embedder, speaker_query=1.0) == [NEAR_QUESTION, NEAR_FIRST_PERSON]
    assert FIRST_PERSON in embedder.queries


async def test_a_query_naming_two_speakers_is_not_rewritten_for_either(tmp_path: Path) -> None:
    """ "Ann said what about Mel?" names Ann too (its first word), and Ann speaks here: the rewrite
    (as Mel) is dropped, not guessed."""
    query = "Ann said what at the lake about Mel?"
    VECTORS_TWO = {query: [1.0, 0.0, 0.0], "Ann said what at the lake about I?": [0.0, 1.0, 0.0]}
    db, index = open_store(
        tmp_path / "two.db",
        [
            Row(NEAR_QUESTION, (1.0, 0.5, 0.0), session="s1"),
            Row(NEAR_FIRST_PERSON, (0.55, 1.0, 0.0), session="s1"),
            Row("Ann: The lake was cold.", (1.0, 0.9, 0.0), session="s1"),
        ],
    )
    VECTORS.update(VECTORS_TWO)
    try:
        assert speaker_perspective(query) == Perspective("Mel", "Ann said what at the lake about I?")
        on = await facts((db, index), query, speaker_query=1.0)
        assert on == await facts((db, index), query, speaker_query=0)
    finally:
        for text in VECTORS_TWO:
            del VECTORS[text]
        db.close()


async def test_feedback_starts_from_both_forms_of_the_question(
    store: tuple[Database, VectorIndex], monkeypatch: pytest.MonkeyPatch
) -> None:
    db, index = store
    started_from: list[np.ndarray] = []
    expand = FeedbackStage.expanded_query

    def spy(self: FeedbackStage, query: np.ndarray, feedback: np.ndarray) -> np.ndarray:
        started_from.append(query)
        return expand(self, query, feedback)

    monkeypatch.setattr(FeedbackStage, "expanded_query", spy)
    service = SearchService(
        db,
        index,
        TextEmbedder(),
        SearchConfig(prf_docs=1, subject_boost=0, length_prior=0, session_support=0),
        5.0,
    )  # type: ignore[arg-type]
    await service.search(QUERY, "u", 5, mode="vector")
    assert len(started_from) == 1
    expected = normalize(np.array([1.0, 1.0, 0.0]))[0]  # x and y, each normalised, summed (weight 1)
    np.testing.assert_allclose(started_from[0], expected, atol=1e-6)


async def test_both_forms_of_the_question_take_one_model_call(
    tmp_path: Path, minilm: SentenceTransformerEmbedder
) -> None:
    db = Database(tmp_path / "batch.db", busy_timeout_ms=1000)
    db.open()
    index = VectorIndex(minilm.model, None)
    conn = connect(db.path, read_only=False, busy_timeout_ms=1000)
    turns = ["Mel: I loved swimming in the lake.", "Ann: The museum was closed."]
    with conn:
        for fact, vector in zip(turns, await minilm.embed_documents(turns), strict=True):
            memory_id = memory_sql.insert(
                conn,
                NewMemory(
                    user_id="u",
                    fact=fact,
                    source_session="s1",
                    embedding_context=2,
                    embedding=to_blob(vector),
                    embedding_model=minilm.model,
                    embedding_dim=384,
                ),
            )
            index.upsert(memory_id, "u", vector)
    conn.close()
    calls: list[list[str]] = []
    encode = minilm._encode

    def counting(texts: list[str]) -> np.ndarray:
        calls.append(list(texts))
        return encode(texts)

    minilm._encode = counting  # type: ignore[method-assign]
    try:
        service = SearchService(db, index, minilm, SearchConfig(), 5.0)
        result = await service.search(QUERY, "u", 2)
    finally:
        minilm._encode = encode  # type: ignore[method-assign]
        db.close()
    assert sorted(map(sorted, calls)) == [sorted([QUERY, FIRST_PERSON])]
    assert result.hits[0].memory.fact == turns[0]
