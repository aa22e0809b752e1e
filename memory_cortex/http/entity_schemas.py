"""Request and response shapes of the entities and relations endpoints (issue 33)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

from .schemas import (
    MAX_ID,
    NOT_BLANK,
    AgentId,
    MemoryOut,
    RowId,
    SessionName,
    UserId,
    Visibility,
    _AudienceFields,
    _Request,
)

# A name that says something: not blank, as long as an extracted subject at most (a new name is
# a new entity).
EntityName = Annotated[str, Field(min_length=1, max_length=120, json_schema_extra={"pattern": NOT_BLANK})]
EntityKind = Literal["self", "person", "pet", "place", "plan", "organisation", "thing"]


class EntityListQuery(_AudienceFields):
    """``GET /entities``: the user's entities the requester may see evidence of."""

    model_config = ConfigDict(strict=False, extra="ignore")

    user_id: UserId | None = None


class EntityOut(BaseModel):
    id: int
    name: str = Field(
        description='As first said ("Bob", "user\'s father", "lisbon trip"); "User" for the user.'
    )
    kind: EntityKind = Field(description="self (the user), person, pet, place, plan, organisation or thing.")
    facts: int = Field(description="Live facts about it that the requester may see.")
    relations: int = Field(description="Relations naming it that the requester may see.")


class EntityListResponse(BaseModel):
    entities: list[EntityOut] = Field(description="The user first, then by name.")
    count: int


class RelationOut(BaseModel):
    id: int
    subject_id: int
    subject: str = Field(description="The subject entity's name.")
    predicate: str = Field(
        description="partner, sister, manager, pet, friend, … or any word written by hand."
    )
    object_id: int
    object: str = Field(description="The object entity's name.")
    confidence: float
    source_memory_id: int | None = Field(description="The memory it was read from; null: written by hand.")
    agent_id: str | None
    visibility: Visibility
    channel: str | None
    created_at: str
    ended: str | None = Field(
        description="When the memory it was read from was replaced by a later statement (null: it holds)."
    )


class EntityDetailOut(BaseModel):
    """``GET /entities/{id}``: what is believed about it now, what was believed before, how it
    relates to others, and the turns the facts were read from."""

    entity: EntityOut
    current: list[MemoryOut] = Field(description="Its live facts, newest said first.")
    history: list[MemoryOut] = Field(
        description="Facts later statements replaced, newest said first: each with valid_to (until when)."
    )
    relations: list[RelationOut]
    source_turns: list[MemoryOut] = Field(description="The conversation turns its facts were read from.")


class RelationListQuery(_AudienceFields):
    """``GET /relations``: the user's relations (naming one entity, with ``entity``)."""

    model_config = ConfigDict(strict=False, extra="ignore")

    user_id: UserId | None = None
    # A query string is text: the id is read from it (RowId is strict, for JSON bodies).
    entity: int | None = Field(
        None, ge=1, le=MAX_ID, description="Only the relations this entity is the subject or object of."
    )


class RelationListResponse(BaseModel):
    relations: list[RelationOut]
    count: int


class RelationIn(_Request):
    """``POST /relations``: ``subject -predicate-> object``, each an entity id or a name (a new name
    is a new entity; "user" is the user themself)."""

    model_config = ConfigDict(strict=True, extra="forbid")

    user_id: UserId | None = None
    subject: RowId | EntityName = Field(description="An entity id, or a name (e.g. 'Rosa').")
    predicate: str = Field(
        min_length=1,
        max_length=60,
        description="What the subject is to the object (partner, sister, manager, …; not blank).",
        json_schema_extra={"pattern": NOT_BLANK},
    )
    object: RowId | EntityName = Field(description="An entity id, or a name (e.g. 'Marco').")
    subject_kind: Literal["person", "pet", "place", "plan", "organisation", "thing"] = "person"
    object_kind: Literal["person", "pet", "place", "plan", "organisation", "thing"] = "person"
    confidence: float = Field(1.0, ge=0, le=1)
    agent_id: AgentId | None = Field(
        None, description="The agent it belongs to; absent → every agent of the user."
    )
    visibility: Visibility = Field("private", description="private, or shared (also in group sessions).")
    channel: SessionName | None = Field(None, description="A shared relation's group; absent → every group.")
