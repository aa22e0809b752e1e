"""MCP's reads of the people, pets, places and plans the user's memories are about: the same answers
as ``GET /entities``, ``GET /entities/{id}`` and ``GET /relations``, for the acting user only.

No ``from __future__ import annotations``: the SDK reads each tool's signature to build its schema
(see ``server.py``)."""

from typing import Annotated, Any

from mcp.server import MCPServer
from mcp_types import ToolAnnotations
from pydantic import BaseModel, Field

from ..records import Audience, MemoryRecord, Relation
from ..services.entities import EntityService
from .tool_errors import tool_errors

LIST_DESCRIPTION = """\
List the people, pets, places and plans the user's memories are about (the user first), each with an
id (for get_entity) and how many facts and relations are known of it. Use it to see whom the user
talks about before a structured question, or to find an entity's id."""

ENTITY_DESCRIPTION = """\
What is known about one entity (an id from list_entities): its current facts (home, job, age,
allergies, …), what later statements replaced (with valid_to: until when it held), and its
relations to other entities. Use it for a structured question ("when is Marco's birthday?")."""

RELATIONS_DESCRIPTION = """\
The relations between the user's entities (subject -predicate-> object, e.g. User -partner-> Marco,
User -sister-> Ana), newest first; with entity_id, only those naming that entity. A relation whose
statement was replaced by a later one has ended set (when)."""


class EntityItem(BaseModel):
    id: int
    name: str
    kind: str = Field(description="self (the user), person, pet, place, plan, organisation or thing.")
    facts: int
    relations: int


class EntityList(BaseModel):
    entities: list[EntityItem]
    count: int


class EntityFact(BaseModel):
    id: int = Field(description="The memory's id.")
    fact: str
    attribute: str | None
    value: str | None
    valid_from: str | None = Field(description="When it was said.")
    valid_to: str | None = Field(description="When a later statement replaced it (null: current).")


class RelationItem(BaseModel):
    id: int
    subject: str
    predicate: str
    object: str
    confidence: float
    ended: str | None = Field(description="When the statement it was read from was replaced (null: holds).")


class RelationList(BaseModel):
    relations: list[RelationItem]
    count: int


class EntityDetail(BaseModel):
    entity: EntityItem
    current: list[EntityFact]
    history: list[EntityFact]
    relations: list[RelationItem]


def _fact(record: MemoryRecord) -> EntityFact:
    return EntityFact(
        id=record.id,
        fact=record.fact,
        attribute=record.attribute,
        value=record.value,
        valid_from=record.valid_from,
        valid_to=record.valid_to,
    )


def _relation(relation: Relation) -> RelationItem:
    return RelationItem(
        id=relation.id,
        subject=relation.subject_name,
        predicate=relation.predicate,
        object=relation.object_name,
        confidence=relation.confidence,
        ended=relation.ended,
    )


def register_entity_tools(
    server: MCPServer,
    entities: EntityService,
    user_id: str,
    *,
    agent_type: Any,
    session_kind_type: Any,
    channel_type: Any,
) -> None:
    """Add ``list_entities``, ``get_entity`` and ``list_relations`` to ``server``, each answering the
    requester its scope arguments describe (as the other read tools)."""
    read_only = ToolAnnotations(read_only_hint=True, open_world_hint=False)
    EntityId = Annotated[int, Field(ge=1, le=2**63 - 1, description="The entity's id, from list_entities.")]

    @server.tool(
        name="list_entities", title="People and things", description=LIST_DESCRIPTION, annotations=read_only
    )
    async def list_entities(
        agent_id: agent_type = None, session_kind: session_kind_type = "private", channel: channel_type = None
    ) -> EntityList:
        found = await entities.entities(user_id, audience=Audience.of(agent_id, session_kind, channel))
        items = [
            EntityItem(
                id=i.entity.id, name=i.entity.name, kind=i.entity.kind, facts=i.facts, relations=i.relations
            )
            for i in found
        ]
        return EntityList(entities=items, count=len(items))

    @server.tool(
        name="get_entity", title="One person or thing", description=ENTITY_DESCRIPTION, annotations=read_only
    )
    async def get_entity(
        entity_id: EntityId,
        agent_id: agent_type = None,
        session_kind: session_kind_type = "private",
        channel: channel_type = None,
    ) -> EntityDetail:
        with tool_errors():
            view = await entities.entity(
                entity_id, user_id=user_id, audience=Audience.of(agent_id, session_kind, channel)
            )
        item = EntityItem(
            id=view.entity.id,
            name=view.entity.name,
            kind=view.entity.kind,
            facts=len(view.current),
            relations=len(view.relations),
        )
        return EntityDetail(
            entity=item,
            current=[_fact(r) for r in view.current],
            history=[_fact(r) for r in view.history],
            relations=[_relation(r) for r in view.relations],
        )

    @server.tool(
        name="list_relations", title="Relations", description=RELATIONS_DESCRIPTION, annotations=read_only
    )
    async def list_relations(
        entity_id: Annotated[
            int | None, Field(ge=1, le=2**63 - 1, description="Only those naming it.")
        ] = None,
        agent_id: agent_type = None,
        session_kind: session_kind_type = "private",
        channel: channel_type = None,
    ) -> RelationList:
        found = await entities.relations(
            user_id, entity_id=entity_id, audience=Audience.of(agent_id, session_kind, channel)
        )
        items = [_relation(r) for r in found]
        return RelationList(relations=items, count=len(items))
