"""A search hit as the debug views show it: ``POST /search/debug`` and MCP's ``search_debug`` give
the same fields, so the shape lives here, below both transports."""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, Field

from ..records import Layer
from .search import SearchHit


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
    relevance: float = Field(description="fts_weight·fts_score + vector_weight·vector_score.")
    score: float = Field(description="What the list is ordered by (relevance unless ranking is on).")


def debug_hits(hits: Sequence[SearchHit]) -> list[DebugHit]:
    """Search hits as the debug views show them (``POST /search/debug`` and MCP's search_debug)."""
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
        )
        for rank, hit in enumerate(hits, start=1)
    ]
