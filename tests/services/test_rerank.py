"""The reranker's logic alone: reading the LLM's answer, reordering, and the cool-down clock."""

from __future__ import annotations

from memory_cortex.config import RerankConfig
from memory_cortex.services.search import SearchHit
from memory_cortex.services.search.rerank import LlmReranker, parse_ranking, ranking_schema, reorder
from tests.fakes import ScriptedLLM
from tests.helpers import memory_record


def hits(count: int) -> list[SearchHit]:
    return [
        SearchHit(
            memory_record(id=i + 1, fact=f"fact {i + 1}"), 1 - i / 10, 0.5, 0.5, "fts5+vector", 1 - i / 10
        )
        for i in range(count)
    ]


def test_parse_ranking_keeps_valid_numbers_once_in_order() -> None:
    assert parse_ranking('{"ranking": [2, 1, 2, 0, 7, true, "3", 3]}', 3) == [1, 0, 2]
    assert parse_ranking('{"ranking": []}', 3) == []
    for answer in ("", "[1, 2]", '{"ranking": "1,2"}', "not json", '{"rank": [1]}'):
        assert parse_ranking(answer, 3) is None, answer


def test_reorder_puts_the_listed_first_and_keeps_relevance() -> None:
    ordered = reorder(hits(4), [2, 0])
    assert [hit.memory.id for hit in ordered] == [3, 1, 2, 4]
    assert [hit.score for hit in ordered] == [1.0, 0.75, 0.5, 0.25]
    assert [hit.relevance for hit in ordered] == [0.8, 1.0, 0.9, 0.7]


def test_schema_bounds_the_numbers() -> None:
    items = ranking_schema(5)["properties"]["ranking"]  # type: ignore[index]
    assert items["items"] == {"type": "integer", "minimum": 1, "maximum": 5} and items["maxItems"] == 5


async def test_rests_after_a_failure_until_the_cooldown_ends() -> None:
    now = [100.0]
    llm = ScriptedLLM(mode="down")
    reranker = LlmReranker(llm, RerankConfig(enabled=True, cooldown_s=30), clock=lambda: now[0])
    assert (await reranker.rerank("q", hits(3))).status == "unavailable"
    now[0] += 29
    assert (await reranker.rerank("q", hits(3))).status == "cooling_down"
    assert len(llm.calls) == 1
    now[0] += 2
    llm.mode, llm.answer = "ok", '{"ranking": [2]}'
    outcome = await reranker.rerank("q", hits(3))
    assert outcome.status == "reranked" and [hit.memory.id for hit in outcome.hits] == [2, 1, 3]


async def test_one_hit_or_none_is_not_sent() -> None:
    llm = ScriptedLLM()
    reranker = LlmReranker(llm, RerankConfig(enabled=True))
    assert (await reranker.rerank("q", hits(1))).status == "too_few"
    assert (await reranker.rerank("q", [])).status == "too_few"
    assert llm.calls == []
