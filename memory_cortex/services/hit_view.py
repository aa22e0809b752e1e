"""A search hit as the debug views show it: ``POST /search/debug`` and MCP's ``search_debug`` give
the same fields, so the shape lives here, below both transports."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from pydantic import BaseModel, Field

from ..records import Layer
from .search.model import SearchHit


class DebugHit(BaseModel):
    rank: int = Field(description="1-based position in its list.")
    id: int
    topic: str
    fact: str
    layer: Layer
    category: str
    importance: int
    source: str = Field(description='"fts5+vector", "fts5" or "vector".')
    fts_score: float = Field(description="bm25 normalised to the best hit of this query, 0…1.")
    vector_score: float = Field(description="Cosine similarity to the query (0 when unknown).")
    relevance: float = Field(
        description="(fts_weight·fts_score + vector_weight·vector_score) × every factor but ranking + bonus."
    )
    score: float = Field(
        description="What the list is ordered by: relevance × factors.ranking (1 with ranking off), or"
        " the reranker's rank score."
    )
    factors: dict[str, float] = Field(
        description="The multiplier each stage set on this hit, by stage: time (a date the query names),"
        " subject (a speaker it names), length (the length prior), lookup (the current fact of a subject and"
        " attribute the question asks for), said_order (facts of one subject and attribute, newest said"
        " first), someone_else (another person's fact or words, for a question about the user), ranking"
        " (importance, recency, reads). A stage that did not touch the hit is absent (counts 1)."
    )
    bonus: float = Field(description="What session support added after the factors (0 for most hits).")
    query_cosine: float | None = Field(
        None,
        description="Cosine to the question as asked, before feedback re-scored the vector side: what"
        " search.min_similarity judges (null when the memory has no vector).",
    )
    below_floor: bool = Field(
        False,
        description="True for a hit search.min_similarity leaves out of /hybrid-search, /context and /recall"
        " (only the vector side proposed it, its query_cosine is below the floor, and it is not vital);"
        " the debug views search with no floor, so such hits are shown here, marked.",
    )


def debug_hits(
    hits: Sequence[SearchHit], below_floor: Callable[[SearchHit], bool] = lambda hit: False
) -> list[DebugHit]:
    """Search hits as the debug views show them (``POST /search/debug`` and MCP's search_debug);
    ``below_floor`` says which ones the similarity floor would leave out (the views search without
    it, so a user can see what it hides)."""
    return [
        DebugHit(
            rank=rank,
            id=hit.memory.id,
            topic=hit.memory.topic,
            fact=hit.memory.fact,
            layer=hit.memory.layer,  # type: ignore[arg-type]  # the CHECK constraint holds it to Layer
            category=hit.memory.category,
            importance=hit.memory.importance,
            source=hit.source,
            fts_score=round(hit.fts_score, 6),
            vector_score=round(hit.vector_score, 6),
            relevance=round(hit.relevance, 6),
            score=round(hit.score, 6),
            factors={name: round(value, 6) for name, value in hit.factors.items()},
            bonus=round(hit.bonus, 6),
            query_cosine=None if hit.query_cosine is None else round(hit.query_cosine, 6),
            below_floor=below_floor(hit),
        )
        for rank, hit in enumerate(hits, start=1)
    ]
