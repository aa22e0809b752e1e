"""``/memories``: create (one or a batch), list, get, patch, delete; ``/sessions``: the conversations."""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta
from typing import Any

from aiohttp import web
from pydantic import TypeAdapter

from ..errors import InvalidRequest
from ..keys import MEMORY_SERVICE
from ..records import Audience, MemoryFilter, MemoryRecord, NewMemory, stored_timestamp
from .common import int_from_path, json_body, parse_body, parse_query, resolve_user
from .schemas import (
    MAX_BATCH,
    DeletedResponse,
    MemoryBatchIn,
    MemoryBatchResponse,
    MemoryCreateQuery,
    MemoryHistoryOut,
    MemoryIn,
    MemoryListQuery,
    MemoryListResponse,
    MemoryOut,
    MemoryPatch,
    ScopeQuery,
    SessionListQuery,
    SessionListResponse,
    SessionOut,
    VisibleRequest,
    VisibleResponse,
)

_BATCH_LIST = TypeAdapter(list[MemoryIn])


def memory_out(
    record: MemoryRecord, *, action: str | None = None, superseded: int | None = None
) -> MemoryOut:
    return MemoryOut(
        action=action,
        superseded=superseded,
        id=record.id,
        user_id=record.user_id,
        topic=record.topic,
        fact=record.fact,
        importance=record.importance,
        category=record.category,
        source_session=record.source_session,
        source_channel=record.source_channel,
        ref=record.ref,
        metadata=record.metadata,
        created_at=record.created_at,
        occurred_at=record.occurred_at,
        updated_at=record.updated_at,
        access_count=record.access_count,
        last_accessed=record.last_accessed,
        superseded_by=None if record.replacement_hidden else record.superseded_by,
        replaced=record.superseded_by is not None,
        layer=record.layer,  # type: ignore[arg-type]  # the CHECK constraint holds it to Layer
        kind=record.kind,  # type: ignore[arg-type]  # held to Kind by its CHECK constraint
        agent_id=record.agent_id,
        visibility=record.visibility,  # type: ignore[arg-type]  # held by its CHECK constraint
        derived_from=_ids(record.metadata.get("derived_from")),
        layer_since=record.layer_since,
        compressed_into=record.compressed_into,
        embedded=record.has_embedding,
        embedding_model=record.embedding_model,
        **structure_fields(record),
    )


def structure_fields(record: MemoryRecord) -> dict[str, Any]:
    """The structured side of a memory (migration 015), as every shape that shows one carries it."""
    return {
        "subject_id": record.subject_id,
        "attribute": record.attribute,
        "value": record.value,
        "valid_from": record.valid_from,
        "valid_to": record.valid_to,
    }


def _new_memory(request: web.Request, item: MemoryIn) -> NewMemory:
    return request.app[MEMORY_SERVICE].written(
        resolve_user(request, item.user_id),
        item.fact,
        topic=item.topic,
        importance=item.importance,
        category=item.category,
        source_session=item.source_session,
        source_channel=item.source_channel,
        agent_id=item.agent_id,
        visibility=item.visibility,
        ref=item.ref,
        metadata=item.metadata,
        layer=item.layer,
        created_at=item.created_at,
        occurred_at=item.occurred_at,
    )


def _ids(value: object) -> list[int]:
    """The ids in a metadata list (metadata is free-form: anything else is ignored)."""
    if not isinstance(value, list):
        return []
    return [item for item in value if isinstance(item, int) and not isinstance(item, bool)]


async def create_memories(request: web.Request) -> web.Response:
    """Body: one memory object, ``{"memories": [...]}``, or a JSON array of memories."""
    data = await json_body(request)
    single = isinstance(data, dict) and "memories" not in data
    if single:
        items = [MemoryIn.model_validate(data)]
    elif isinstance(data, dict):
        items = MemoryBatchIn.model_validate(data).memories
    elif isinstance(data, list):
        if not data:
            raise InvalidRequest("empty batch: send at least one memory")
        items = _BATCH_LIST.validate_python(data)
    else:
        raise InvalidRequest("body must be a memory object, a list of them, or {memories: [...]}")
    if len(items) > MAX_BATCH:
        raise InvalidRequest(f"at most {MAX_BATCH} memories per request, got {len(items)}")
    options = parse_query(request, MemoryCreateQuery)
    outcomes = await request.app[MEMORY_SERVICE].create(
        [_new_memory(request, item) for item in items], dedup=options.dedup
    )
    created = [memory_out(o.record, action=o.action, superseded=o.superseded_id) for o in outcomes]
    if single:
        return web.json_response(created[0].model_dump(), status=201)
    body = MemoryBatchResponse(memories=created, count=len(created))
    return web.json_response(body.model_dump(), status=201)


async def list_memories(request: web.Request) -> web.Response:
    query = parse_query(request, MemoryListQuery)
    where = MemoryFilter(
        user_id=query.user_id,
        topic=query.topic,
        layer=query.layer,
        category=query.category,
        min_importance=query.min_importance,
        max_importance=query.max_importance,
        created_from=_time_bound("since", query.since, end_of_day=False),
        created_before=_time_bound("until", query.until, end_of_day=True),
        text=query.q.strip() or None if query.q is not None else None,
        include_superseded=query.include_superseded,
        kinds=tuple(query.kinds.split(",")) if query.kinds else None,
        source_session=query.session,
        visibility=query.visibility,
        channel=query.source_channel,
        audience=query.audience(),
        order=query.order,
        before_created_at=query.before_created_at,
    )
    # One row more than the page: the cursor is null on the last page, even when it is exactly full.
    records = await request.app[MEMORY_SERVICE].list_memories(
        where, limit=query.limit + 1, before_id=query.before_id
    )
    more = len(records) > query.limit
    records = records[: query.limit]
    body = MemoryListResponse(
        memories=[memory_out(r) for r in records],
        count=len(records),
        next_before_id=records[-1].id if more else None,
        next_before_created_at=records[-1].created_at if more else None,
    )
    return web.json_response(body.model_dump())


async def list_sessions(request: web.Request) -> web.Response:
    query = parse_query(request, SessionListQuery)
    user_id = resolve_user(request, query.user_id)
    # One row more than the page: the cursor is null on the last page, even when it is exactly full.
    found = await request.app[MEMORY_SERVICE].sessions(
        user_id, limit=query.limit + 1, offset=query.offset, audience=query.audience()
    )
    page = found[: query.limit]
    body = SessionListResponse(
        sessions=[SessionOut.model_validate(s, from_attributes=True) for s in page],
        count=len(page),
        next_offset=query.offset + len(page) if len(found) > query.limit else None,
    )
    return web.json_response(body.model_dump())


def _time_bound(name: str, text: str | None, *, end_of_day: bool) -> str | None:
    """A ``since``/``until`` parameter as a stored timestamp to compare ``created_at`` with.

    ``until`` is inclusive: a bare date covers that whole day (the bound is the next midnight), a
    date-time covers up to and including its millisecond (the bound is the millisecond after).
    """
    if text is None or not text.strip():
        return None
    text = text.strip()
    try:
        if len(text) == 10:
            day = date.fromisoformat(text)
            moment = datetime.combine(day + timedelta(days=1) if end_of_day else day, time(), tzinfo=UTC)
        else:
            moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
            if end_of_day:
                moment += timedelta(milliseconds=1)
        return stored_timestamp(moment)
    except OverflowError:
        # A valid bound past what datetime holds (9999-12-31 inclusive, or a zone that moves year 1
        # or 9999 over the edge): it lies before or after every stored time, as these strings do.
        return "0000" if text.startswith("0001") else "9999-99"
    except ValueError:
        raise InvalidRequest(f"{name}: not an ISO 8601 date or date-time: {text[:40]!r}") from None


async def memory_history(request: web.Request) -> web.Response:
    owner, audience = _owner(request)
    history = await request.app[MEMORY_SERVICE].history(
        int_from_path(request, "memory_id"), user_id=owner, audience=audience
    )
    job = history.memory.metadata.get("ingest_job")
    body = MemoryHistoryOut(
        memory=memory_out(history.memory),
        replaces=[memory_out(r) for r in history.replaces],
        replaced_by=[memory_out(r) for r in history.replaced_by],
        merged_from=[memory_out(r) for r in history.merged_from],
        merged_into=[memory_out(r) for r in history.merged_into],
        summarises=[memory_out(r) for r in history.summarises],
        summary=memory_out(history.summary) if history.summary is not None else None,
        ingest_job=job if isinstance(job, int) and not isinstance(job, bool) else None,
    )
    return web.json_response(body.model_dump())


def _owner(request: web.Request) -> tuple[str | None, Audience]:
    """The owner check of ``?user_id=``: absent → none; blank → the default user, as in bodies (a
    client that leaves the user to the daemon, e.g. the OpenClaw plugin, can still scope its calls);
    and the requester (``agent_id``, ``session_kind``, ``channel``) the memory must be visible to."""
    scope = parse_query(request, ScopeQuery)
    return None if scope.user_id is None else resolve_user(request, scope.user_id), scope.audience()


async def get_memory(request: web.Request) -> web.Response:
    owner, audience = _owner(request)
    record = await request.app[MEMORY_SERVICE].get(
        int_from_path(request, "memory_id"), user_id=owner, audience=audience
    )
    return web.json_response(memory_out(record).model_dump())


async def visible_memories(request: web.Request) -> web.Response:
    body = await parse_body(request, VisibleRequest)
    user_id = resolve_user(request, body.user_id)
    ids = await request.app[MEMORY_SERVICE].visible(body.ids, user_id, body.audience())
    return web.json_response(VisibleResponse(ids=ids).model_dump())


async def patch_memory(request: web.Request) -> web.Response:
    owner, audience = _owner(request)
    patch = await parse_body(request, MemoryPatch)
    changes = patch.model_dump(exclude_unset=True)
    for field in ("fact", "topic", "importance", "category", "metadata", "layer", "visibility"):
        if field in changes and changes[field] is None:
            raise InvalidRequest(f"{field} cannot be null")
    if "fact" in changes:
        if not changes["fact"].strip():
            raise InvalidRequest("fact must not be blank")
        changes["fact"] = changes["fact"].strip()
    if changes.get("occurred_at") is not None:
        changes["occurred_at"] = stored_timestamp(changes["occurred_at"])
    if "agent_id" in changes:
        changes["agent_id"] = changes["agent_id"] or None  # blank: every agent, as null
    record = await request.app[MEMORY_SERVICE].update(
        int_from_path(request, "memory_id"), changes, user_id=owner, audience=audience
    )
    return web.json_response(memory_out(record).model_dump())


async def delete_memory(request: web.Request) -> web.Response:
    owner, audience = _owner(request)
    memory_id = int_from_path(request, "memory_id")
    await request.app[MEMORY_SERVICE].delete(memory_id, user_id=owner, audience=audience)
    return web.json_response(DeletedResponse(deleted=True, id=memory_id).model_dump())
