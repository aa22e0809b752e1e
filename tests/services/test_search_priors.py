"""SearchService's length prior and session support: transcript turns that say something, and the
turns of the exchange a question is about, move up; standalone facts keep the documented score.
A fixed query vector (the x axis) lets the test control the geometry."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from memory_cortex.config import SearchConfig
from memory_cortex.services.search import SearchService
from memory_cortex.store.db import Database
from memory_cortex.store.vectors import VectorIndex
from memory_cortex.vectormath import normalize
from tests.services.fixed_store import FixedEmbedder, Row, open_store


async def ranked(store: tuple[Database, VectorIndex], **settings: object) -> list[tuple[str, float]]:
    db, index = store
    config = SearchConfig(prf_docs=0, subject_boost=0, **settings)
    result = await SearchService(db, index, FixedEmbedder(), config, 5.0).search(
        "anything", "u", 10, mode="vector"
    )
    return [(hit.memory.fact, hit.score) for hit in result.hits]


SHORT_TURN = "Jon: Bye!"
LONG_TURN = "Jon: I opened my dance studio downtown, and the first class was full."
SHORT_FACT = "Likes tea."
LONG_FACT = "Keeps a list of the dance classes he wants to try this winter."


@pytest.fixture
def lengths(tmp_path: Path) -> Iterator[tuple[Database, VectorIndex]]:
    db, index = open_store(
        tmp_path / "priors.db",
        [
            Row(SHORT_TURN, (1.0, 0.1, 0.0), session="s1"),
            Row(LONG_TURN, (1.0, 0.3, 0.0), session="s2"),
            Row(SHORT_FACT, (1.0, 0.15, 0.0)),
            Row(LONG_FACT, (1.0, 0.35, 0.0)),
        ],
    )
    yield db, index
    db.close()


async def test_a_turn_that_says_something_outranks_a_closer_goodbye(
    lengths: tuple[Database, VectorIndex],
) -> None:
    plain = [fact for fact, _ in await ranked(lengths, length_prior=0, session_support=0)]
    assert plain == [SHORT_TURN, SHORT_FACT, LONG_TURN, LONG_FACT]
    weighed = await ranked(lengths, length_prior=0.1, session_support=0)
    assert [fact for fact, _ in weighed] == [LONG_TURN, SHORT_FACT, LONG_FACT, SHORT_TURN]
    scores = dict(weighed)
    cosine = float(normalize(np.array([1.0, 0.3, 0.0]))[0][0])
    expected = 0.6 * cosine * (1 + 0.1 * np.log(len(LONG_TURN) / 40))
    assert scores[LONG_TURN] == pytest.approx(expected, abs=1e-6)
    # ln(9 / 40) = -1.49: inside the ±1.5 clamp; a pivot of 1000 characters hits it.
    clamped = dict(await ranked(lengths, length_prior=0.1, session_support=0, length_pivot_chars=1000))
    short_cosine = float(normalize(np.array([1.0, 0.1, 0.0]))[0][0])
    assert clamped[SHORT_TURN] == pytest.approx(0.6 * short_cosine * (1 - 0.15), abs=1e-6)


async def test_standalone_facts_keep_the_documented_score(lengths: tuple[Database, VectorIndex]) -> None:
    scores = dict(await ranked(lengths, length_prior=0.5, session_support=1.0))
    for fact, vector in ((SHORT_FACT, (1.0, 0.15, 0.0)), (LONG_FACT, (1.0, 0.35, 0.0))):
        assert scores[fact] == pytest.approx(0.6 * float(normalize(np.array(vector))[0][0]), abs=1e-6)


async def test_a_fact_stored_with_a_session_but_no_speaker_is_no_turn(tmp_path: Path) -> None:
    """What an agent stores with its session key (OpenClaw's memory_store) is embedded with session
    context but has no speaker label: neither prior touches it."""
    facts = [
        Row("Likes tea.", (1.0, 0.1, 0.0), session="s1"),
        Row("Keeps a list of the dance classes he wants to try.", (1.0, 0.3, 0.0), session="s1"),
    ]
    store = open_store(tmp_path / "priors.db", facts)
    try:
        scores = dict(await ranked(store, length_prior=0.5, session_support=1.0))
        for row in facts:
            assert scores[row.fact] == pytest.approx(
                0.6 * float(normalize(np.array(row.vector))[0][0]), abs=1e-6
            )
    finally:
        store[0].close()


CAMPING = "Mel: We went camping at the lake."
MUSEUM = "Mel: The museum trip was fun for everyone."
TENT = "Mel: The kids loved the tent by the lake."


FIRE = "Mel: We lit a fire and sang."
GOODNIGHT = "Mel: Good night, everyone!"


def fused(vector: tuple[float, float, float]) -> float:
    return 0.6 * float(normalize(np.array(vector))[0][0])


async def test_turns_of_the_same_exchange_rise_together(tmp_path: Path) -> None:
    rows = {
        CAMPING: (1.0, 0.5, 0.0),
        MUSEUM: (1.0, 0.45, 0.0),
        TENT: (1.0, 0.2, 0.0),
        FIRE: (1.0, 0.3, 0.0),
        GOODNIGHT: (1.0, 0.9, 0.0),
    }
    sessions = {CAMPING: "s1", MUSEUM: "s2", TENT: "s1", FIRE: "s1", GOODNIGHT: "s1"}
    store = open_store(
        tmp_path / "priors.db", [Row(fact, vector, session=sessions[fact]) for fact, vector in rows.items()]
    )
    try:
        plain = [fact for fact, _ in await ranked(store, length_prior=0, session_support=0)]
        assert plain == [TENT, FIRE, MUSEUM, CAMPING, GOODNIGHT]
        supported = dict(await ranked(store, length_prior=0, session_support=0.05))
        assert supported[CAMPING] > supported[MUSEUM]
        # The two best *other* turns of its session, not all three, and never itself.
        assert supported[CAMPING] == pytest.approx(
            fused(rows[CAMPING]) + 0.05 * (fused(rows[TENT]) + fused(rows[FIRE])), abs=1e-6
        )
        assert supported[TENT] == pytest.approx(
            fused(rows[TENT]) + 0.05 * (fused(rows[FIRE]) + fused(rows[CAMPING])), abs=1e-6
        )
        assert supported[MUSEUM] == pytest.approx(fused(rows[MUSEUM]), abs=1e-6)  # alone in s2
    finally:
        store[0].close()


async def test_support_comes_only_from_live_turns_of_the_same_user_and_session(tmp_path: Path) -> None:
    store = open_store(
        tmp_path / "priors.db",
        [
            Row(CAMPING, (1.0, 0.5, 0.0), session="s1"),
            Row(MUSEUM, (1.0, 0.45, 0.0), session="s2"),
            Row("Mel: another user's turn, same session name.", (1.0, 0.0, 0.0), session="s1", user="v"),
            Row("Mel likes lakes (extracted from s1).", (1.0, 0.05, 0.0), session="s1", fact_of_session=True),
            Row("Mel: an old wording, superseded.", (1.0, 0.02, 0.0), session="s1", superseded=True),
            Row("Mel: a turn of another session.", (1.0, 0.1, 0.0), session="s3"),
        ],
    )
    try:
        plain = await ranked(store, length_prior=0, session_support=0)
        supported = await ranked(store, length_prior=0, session_support=0.5)
        assert supported == plain  # no turn has another turn of its own session to lean on
        assert all("another user" not in fact for fact, _ in supported)
    finally:
        store[0].close()


async def test_the_pool_is_never_smaller_than_the_limit(tmp_path: Path) -> None:
    """With a pool of 1 only the best turn would be re-scored (a 44-character one: ×1.01) and stay
    first; asking for 10 re-scores the second too, whose 180 characters lift it (×1.15) past."""
    first = "Jon: I opened my dance studio downtown today."
    second = "Jon: " + " ".join(["The first class was full, and the second one too."] * 4)[:175]
    store = open_store(
        tmp_path / "priors.db",
        [Row(first, (1.0, 0.25, 0.0), session="s1"), Row(second, (1.0, 0.3, 0.0), session="s2")],
    )
    try:
        assert [fact for fact, _ in await ranked(store, length_prior=0, session_support=0)] == [first, second]
        weighed = await ranked(store, length_prior=0.1, session_support=0, prior_pool=1)
        assert [fact for fact, _ in weighed] == [second, first]
    finally:
        store[0].close()
