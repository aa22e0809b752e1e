"""SearchService's time boost and time candidates, with a fixed query vector and a fixed clock."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pytest

from memory_cortex.config import SearchConfig
from memory_cortex.records import NewMemory
from memory_cortex.services.search import SearchService
from memory_cortex.services.timeparse import MAX_PARSED_CHARS, TimeParser, TimeRange
from memory_cortex.store import memories as memory_sql
from memory_cortex.store.db import Database, connect
from memory_cortex.store.vectors import VectorIndex
from memory_cortex.vectormath import normalize, to_blob
from tests.services.fixed_store import MODEL, FixedEmbedder

NOW = datetime(2023, 10, 20, 12, 0, tzinfo=UTC)
# (fact, user, vector, the time it is about): the query is the x axis.
ROWS = [
    ("near, undated", "u", [1.0, 0.1, 0.0], "2023-01-10T09:00:00.000Z"),
    ("far, in May", "u", [0.2, 1.0, 0.0], "2023-05-08T13:56:00.000Z"),
    ("far, in May, another user", "v", [1.0, 0.0, 0.0], "2023-05-09T13:56:00.000Z"),
]


@pytest.fixture
def store(tmp_path: Path) -> Iterator[tuple[Database, VectorIndex]]:
    db = Database(tmp_path / "time.db", busy_timeout_ms=1000)
    db.open()
    index = VectorIndex(MODEL, 3)
    conn = connect(db.path, read_only=False, busy_timeout_ms=1000)
    with conn:
        for fact, user, vector, when in ROWS:
            unit = normalize(np.array(vector))[0]
            memory_id = memory_sql.insert(
                conn,
                NewMemory(
                    user_id=user,
                    fact=fact,
                    occurred_at=when,
                    embedding=to_blob(unit),
                    embedding_model=MODEL,
                    embedding_dim=3,
                ),
            )
            index.upsert(memory_id, user, unit)
    conn.close()
    yield db, index
    db.close()


async def facts(
    store: tuple[Database, VectorIndex], query: str, limit: int = 2, **settings: object
) -> list[str]:
    db, index = store
    service = SearchService(
        db,
        index,
        FixedEmbedder(),
        SearchConfig(prf_docs=0, min_similarity=0, **settings),
        5.0,
        clock=lambda: NOW,  # type: ignore[arg-type]
    )
    result = await service.search(query, "u", limit, mode="vector")
    return [hit.memory.fact for hit in result.hits]


async def test_the_boost_lifts_the_memory_about_the_named_month(store: tuple[Database, VectorIndex]) -> None:
    assert await facts(store, "what happened in May 2023", time_boost=0) == ["near, undated", "far, in May"]
    assert await facts(store, "what happened in May 2023", time_boost=5) == ["far, in May", "near, undated"]
    # Relative to the clock: "last May" from October 2023 is May 2023.
    assert (await facts(store, "what happened last May", time_boost=5))[0] == "far, in May"


async def test_a_query_without_a_date_is_ranked_as_without_the_boost(
    store: tuple[Database, VectorIndex],
) -> None:
    assert await facts(store, "what happened then", time_boost=5) == ["near, undated", "far, in May"]


async def test_time_candidates_bring_in_memories_the_retrievers_missed(
    store: tuple[Database, VectorIndex],
) -> None:
    # One vector candidate only (limit 1): the May memory is not proposed by the vector side…
    assert await facts(store, "what happened in May 2023", 1, time_boost=5, candidates=1) == ["near, undated"]
    # …unless the memories of the named month join the candidates (never another user's).
    found = await facts(store, "what happened in May 2023", 1, time_boost=5, candidates=1, time_candidates=10)
    assert found == ["far, in May"]


class BrokenParser(TimeParser):
    """A date parser that fails on everything (as dateparser might on some input)."""

    def ranges(self, query: str, now: datetime) -> tuple[TimeRange, ...]:
        raise ValueError("cannot parse")


async def test_a_failing_date_parser_never_fails_the_search(
    store: tuple[Database, VectorIndex], caplog: pytest.LogCaptureFixture
) -> None:
    db, index = store
    config = SearchConfig(prf_docs=0, time_boost=5, min_similarity=0)
    service = SearchService(db, index, FixedEmbedder(), config, 5.0, time_parser=BrokenParser())  # type: ignore[arg-type]
    result = await service.search("what happened in May 2023", "u", 2, mode="vector")
    assert [hit.memory.fact for hit in result.hits] == ["near, undated", "far, in May"]
    assert "date parsing failed" in caplog.text


def test_only_the_start_of_a_long_query_is_searched_for_dates() -> None:
    parser = TimeParser()
    padding = "and then we talked about the hotel " * 20
    assert len(padding) > MAX_PARSED_CHARS
    assert parser.ranges(padding + " in May 2023", NOW) == ()
    assert [r.period for r in parser.ranges("in May 2023 " + padding, NOW)] == ["month"]
