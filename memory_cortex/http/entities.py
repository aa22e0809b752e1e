"""``GET /entities``, ``GET /entities/{id}``, ``GET /relations``, ``POST /relations`` and
``DELETE /relations/{id}``: the people, pets, places and plans the user's memories are about."""

from __future__ import annotations

from aiohttp import web

from ..errors import InvalidRequest
from ..keys import ENTITY_SERVICE
from ..records import Audience, EntitySummary, Relation, Scope, SubjectRef
from .common import int_from_path, parse_body, parse_query, resolve_user
from .entity_schemas import (
    EntityDetailOut,
    EntityListQuery,
    EntityListResponse,
    EntityOut,
    RelationIn,
    RelationListQuery,
    RelationListResponse,
    RelationOut,
)
from .memories import memory_out
from .schemas import DeletedResponse, ScopeQuery


async def list_entities(request: web.Request) -> web.Response:
    query = parse_query(request, EntityListQuery)
    found = await request.app[ENTITY_SERVICE].entities(
        resolve_user(request, query.user_id), audience=query.audience()
    )
    items = [entity_out(item) for item in found]
    return web.json_response(EntityListResponse(entities=items, count=len(items)).model_dump())


async def get_entity(request: web.Request) -> web.Response:
    query = parse_query(request, ScopeQuery)
    view = await request.app[ENTITY_SERVICE].entity(
        int_from_path(request, "entity_id"),
        user_id=resolve_user(request, query.user_id),
        audience=query.audience(),
    )
    entity = view.entity
    body = EntityDetailOut(
        entity=EntityOut(
            id=entity.id,
            name=entity.name,
            kind=entity.kind,  # type: ignore[arg-type]  # held to the kinds by its CHECK constraint
            facts=len(view.current),
            relations=len(view.relations),
        ),
        current=[memory_out(record) for record in view.current],
        history=[memory_out(record) for record in view.history],
        relations=[relation_out(relation) for relation in view.relations],
        source_turns=[memory_out(record) for record in view.source_turns],
    )
    return web.json_response(body.model_dump())


async def list_relations(request: web.Request) -> web.Response:
    query = parse_query(request, RelationListQuery)
    found = await request.app[ENTITY_SERVICE].relations(
        resolve_user(request, query.user_id), entity_id=query.entity, audience=query.audience()
    )
    items = [relation_out(relation) for relation in found]
    return web.json_response(RelationListResponse(relations=items, count=len(items)).model_dump())


async def create_relation(request: web.Request) -> web.Response:
    body = await parse_body(request, RelationIn)
    if body.channel is not None and body.visibility != "shared":
        raise InvalidRequest("channel names the group of a shared relation: send visibility 'shared' with it")
    relation = await request.app[ENTITY_SERVICE].add_relation(
        resolve_user(request, body.user_id),
        _named(body.subject, body.subject_kind),
        body.predicate,
        _named(body.object, body.object_kind),
        scope=Scope(body.agent_id or None, body.visibility, body.channel),
        confidence=body.confidence,
        audience=Audience.of(body.agent_id),
    )
    return web.json_response(relation_out(relation).model_dump(), status=201)


async def delete_relation(request: web.Request) -> web.Response:
    query = parse_query(request, ScopeQuery)
    relation_id = int_from_path(request, "relation_id")
    await request.app[ENTITY_SERVICE].delete_relation(
        relation_id, user_id=resolve_user(request, query.user_id), audience=query.audience()
    )
    return web.json_response(DeletedResponse(deleted=True, id=relation_id).model_dump())


def _named(value: int | str, kind: str) -> int | SubjectRef:
    if isinstance(value, int):
        return value
    if not value.strip():
        raise InvalidRequest("an entity is named by its id or a non-blank name")
    return SubjectRef(value.strip(), kind)  # type: ignore[arg-type]  # held to the kinds by RelationIn


def entity_out(item: EntitySummary) -> EntityOut:
    entity = item.entity
    return EntityOut(
        id=entity.id, name=entity.name, kind=entity.kind, facts=item.facts, relations=item.relations
    )  # type: ignore[arg-type]


def relation_out(relation: Relation) -> RelationOut:
    return RelationOut(
        id=relation.id,
        subject_id=relation.subject_id,
        subject=relation.subject_name,
        predicate=relation.predicate,
        object_id=relation.object_id,
        object=relation.object_name,
        confidence=relation.confidence,
        source_memory_id=relation.source_memory_id,
        agent_id=relation.agent_id,
        visibility=relation.visibility,  # type: ignore[arg-type]  # held by its CHECK constraint
        channel=relation.source_channel,
        created_at=relation.created_at,
        ended=relation.ended,
    )
