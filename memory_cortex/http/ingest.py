"""``POST /ingest`` and the job list/retry endpoints."""

from __future__ import annotations

from aiohttp import web

from ..errors import InvalidRequest, JobNotFound
from ..keys import CONFIG, INGEST_SERVICE
from ..services.ingest import IngestRequest
from .common import int_from_path, parse_json, parse_query, raw_json_body, resolve_user
from .memories import memory_out
from .schemas import (
    IngestAccepted,
    IngestJobDetail,
    IngestJobOut,
    IngestJobsQuery,
    IngestJobsResponse,
    IngestRequestBody,
    RetryResponse,
    ScopeQuery,
)


async def ingest(request: web.Request) -> web.Response:
    """Validated, then journaled by the ingest service (only what its worker reads, secrets masked).
    The bytes are parsed by the same parser the worker reads the journal with, so a body it could
    not read (an integer of thousands of digits in an extra key) is refused here, never journaled."""
    raw = await raw_json_body(request)
    data = parse_json(raw)
    if not isinstance(data, dict):
        raise InvalidRequest("request body must be a JSON object")
    body = IngestRequestBody.model_validate(data)
    limit = request.app[CONFIG].ingest.max_messages
    if len(body.messages) > limit:
        raise InvalidRequest(f"at most {limit} messages per request, got {len(body.messages)}")
    session_id = None if body.session_id is None else str(body.session_id)
    pending = await request.app[INGEST_SERVICE].submit(
        IngestRequest(
            user_id=resolve_user(request, body.user_id),
            session_id=session_id,
            channel=body.channel,
            body=data,
            message_count=len(body.messages),
            debounce=body.debounce,
        )
    )
    accepted = IngestAccepted(status="queued", session_id=session_id, pending=pending)
    return web.json_response(accepted.model_dump(), status=202)


async def list_jobs(request: web.Request) -> web.Response:
    query = parse_query(request, IngestJobsQuery)
    jobs = await request.app[INGEST_SERVICE].jobs(status=query.status, limit=query.limit)
    items = [IngestJobOut.model_validate(job, from_attributes=True) for job in jobs]
    return web.json_response(IngestJobsResponse(jobs=items, count=len(items)).model_dump())


async def get_job(request: web.Request) -> web.Response:
    scope = parse_query(request, ScopeQuery)
    owner = None if scope.user_id is None else resolve_user(request, scope.user_id)
    job, facts = await request.app[INGEST_SERVICE].job(
        int_from_path(request, "job_id"), user_id=owner, audience=scope.audience()
    )
    body = IngestJobDetail(
        job=IngestJobOut.model_validate(job, from_attributes=True), facts=[memory_out(f) for f in facts]
    )
    return web.json_response(body.model_dump())


async def retry_job(request: web.Request) -> web.Response:
    job_id = int_from_path(request, "job_id")
    if not await request.app[INGEST_SERVICE].retry(job_id):
        raise JobNotFound(job_id)
    return web.json_response(RetryResponse(retried=True, id=job_id).model_dump())
