"""``POST /hybrid-search`` and ``POST /search/debug``."""

from __future__ import annotations

from aiohttp import web

from ..errors import InvalidRequest
from ..keys import CONFIG, SEARCH_SERVICE
from ..services.hit_view import debug_hits
from ..services.search import DEFAULT_LAYERS
from .common import parse_body, resolve_user
from .memories import structure_fields
from .schemas import (
    HybridSearchRequest,
    HybridSearchResponse,
    SearchDebugRequest,
    SearchDebugResponse,
    SearchResultItem,
)

# The debug view's lists: the hybrid ranking first, then each retriever alone.
SEARCH_MODES = ("hybrid", "fts", "vector")


async def hybrid_search(request: web.Request) -> web.Response:
    body = await parse_body(request, HybridSearchRequest)
    limit = _limit(request, body.limit)
    user_id = resolve_user(request, body.user_id)
    layers = body.layers if body.layers is not None else DEFAULT_LAYERS
    result = await request.app[SEARCH_SERVICE].find(
        body.query,
        user_id,
        limit,
        body.mode,
        layers,
        body.kinds,
        audience=body.audience(),
        min_similarity=body.min_similarity,
    )
    items = [
        SearchResultItem(
            id=hit.memory.id,
            user_id=hit.memory.user_id,
            topic=hit.memory.topic,
            fact=hit.memory.fact,
            importance=hit.memory.importance,
            score=round(hit.score, 6),
            relevance=round(hit.relevance, 6),
            source=hit.source,
            category=hit.memory.category,
            ref=hit.memory.ref,
            created_at=hit.memory.created_at,
            occurred_at=hit.memory.occurred_at,
            fts_score=round(hit.fts_score, 6),
            vector_score=round(hit.vector_score, 6),
            layer=hit.memory.layer,
            kind=hit.memory.kind,
            agent_id=hit.memory.agent_id,
            visibility=hit.memory.visibility,
            channel=hit.memory.source_channel,
            **structure_fields(hit.memory),
        )
        for hit in result.hits
    ]
    response = HybridSearchResponse(results=items, count=len(items))
    return web.json_response(response.model_dump())


def _limit(request: web.Request, asked: int | None) -> int:
    limits = request.app[CONFIG].search
    limit = limits.default_limit if asked is None else asked
    if not 1 <= limit <= limits.max_limit:
        raise InvalidRequest(f"limit must be between 1 and {limits.max_limit}, got {limit}")
    return limit


async def search_debug(request: web.Request) -> web.Response:
    """The hybrid ranking beside each retriever alone, with the scores' parts and the stage timings.

    The three searches run one after the other, so each one's timings are its own. Nothing here is
    counted as a read or in the latency metrics: looking at a ranking must not change it. They run
    with no similarity floor, each hit the floor would leave out marked ``below_floor``: the view
    shows what ``search.min_similarity`` hides.
    """
    body = await parse_body(request, SearchDebugRequest)
    limit = _limit(request, body.limit)
    user_id = resolve_user(request, body.user_id)
    layers = body.layers if body.layers is not None else DEFAULT_LAYERS
    config = request.app[CONFIG]
    search = request.app[SEARCH_SERVICE]
    results = {
        mode: await search.search(
            body.query, user_id, limit, mode, layers, body.kinds, audience=body.audience(), min_similarity=0
        )
        for mode in SEARCH_MODES
    }
    hybrid = results["hybrid"]
    response = SearchDebugResponse(
        query=body.query,
        user_id=user_id,
        fts_match=hybrid.fts_query.words,
        fts_trigram_match=hybrid.fts_query.trigrams,
        fts_substrings=list(hybrid.fts_query.substrings),
        vector_used=hybrid.vector_used,
        fts_weight=config.search.fts_weight,
        vector_weight=config.search.vector_weight,
        ranking_enabled=config.ranking.enabled,
        rerank=hybrid.rerank,
        min_similarity=config.search.min_similarity,
        fused=debug_hits(hybrid.hits, search.below_floor),
        fts_only=debug_hits(results["fts"].hits, search.below_floor),
        vector_only=debug_hits(results["vector"].hits, search.below_floor),
        timings_ms={mode: result.timings_ms for mode, result in results.items()},
    )
    return web.json_response(response.model_dump())
