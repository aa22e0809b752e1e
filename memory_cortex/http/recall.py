"""``POST /recall`` and ``POST /context``."""

from __future__ import annotations

from aiohttp import web

from ..keys import RECALL_SERVICE
from ..services.search import DEFAULT_LAYERS
from .common import parse_body, resolve_user
from .schemas import ContextRequest, ContextResponse, RecallRequest, RecallResponse


async def recall(request: web.Request) -> web.Response:
    body = await parse_body(request, RecallRequest)
    answer = await request.app[RECALL_SERVICE].recall(
        body.query,
        resolve_user(request, body.user_id),
        layers=body.layers if body.layers is not None else DEFAULT_LAYERS,
        kinds=body.kinds,
        audience=body.audience(),
    )
    response = RecallResponse(
        response=answer.response,
        memories_searched=answer.memories_searched,
        memories_used=answer.memories_used,
        degraded=answer.degraded,
        cached=answer.cached,
        answer_kind=answer.kind,
    )
    return web.json_response(response.model_dump())


async def context(request: web.Request) -> web.Response:
    body = await parse_body(request, ContextRequest)
    block = await request.app[RECALL_SERVICE].context(
        body.query,
        resolve_user(request, body.user_id),
        max_tokens=body.max_tokens,
        max_facts=body.max_facts,
        layers=body.layers if body.layers is not None else DEFAULT_LAYERS,
        kinds=body.kinds,
        audience=body.audience(),
        min_similarity=body.min_similarity,
        budget_s=None if body.budget_ms is None else body.budget_ms / 1000,
    )
    response = ContextResponse(
        context=block.text, facts=len(block.memory_ids), degraded=block.degraded, profile=block.profile
    )
    return web.json_response(response.model_dump())
