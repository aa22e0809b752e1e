"""``POST /hybrid-search``."""

from __future__ import annotations

import time

from aiohttp import web

from ..errors import InvalidRequest
from ..keys import ACCESS_TRACKER, CONFIG, METRICS, SEARCH_SERVICE
from ..services.search import DEFAULT_LAYERS
from .common import parse_body, resolve_user
from .schemas import HybridSearchRequest, HybridSearchResponse, SearchResultItem


async def hybrid_search(request: web.Request) -> web.Response:
    body = await parse_body(request, HybridSearchRequest)
    limits = request.app[CONFIG].search
    limit = limits.default_limit if body.limit is None else body.limit
    if not 1 <= limit <= limits.max_limit:
        raise InvalidRequest(f"limit must be between 1 and {limits.max_limit}, got {limit}")
    user_id = resolve_user(request, body.user_id)
    started = time.perf_counter()
    layers = body.layers if body.layers is not None else DEFAULT_LAYERS
    result = await request.app[SEARCH_SERVICE].search(body.query, user_id, limit, body.mode, layers)
    request.app[METRICS].observe_search(
        body.mode, time.perf_counter() - started, vector_used=result.vector_used
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
        )
        for hit in result.hits
    ]
    request.app[ACCESS_TRACKER].record(hit.memory.id for hit in result.hits)
    response = HybridSearchResponse(results=items, count=len(items))
    return web.json_response(response.model_dump())
