"""The people, pets, places and plans a user's memories are about, and the relations between them:
the reads behind ``GET /entities``, ``GET /entities/{id}``, ``GET /relations`` (and MCP's), and the
relations a client writes or deletes.

Every read answers a requester (:class:`~memory_cortex.records.Audience`) with what it may see: an
entity shows only with a fact about it or a relation naming it that the requester may see, and
only those facts and relations come with it. A relation written by hand takes the scope it is
written with, as a memory does.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass

from ..errors import EntityNotFound, InvalidRequest, RelationNotFound
from ..records import Audience, Entity, EntitySummary, MemoryRecord, Relation, Scope, SubjectRef
from ..store import entities as entity_sql
from ..store import memories as memory_sql
from ..store.db import Database


@dataclass(frozen=True)
class EntityView:
    """One entity as its page shows it: its current facts (every live one the requester may see,
    newest said first: a private and a group value of one attribute can both be current), what they replaced (with ``valid_to``), its relations, and the turns the facts were
    read from."""

    entity: Entity
    current: list[MemoryRecord]
    history: list[MemoryRecord]
    relations: list[Relation]
    source_turns: list[MemoryRecord]


MAX_SOURCE_TURNS = 50


class EntityService:
    """Reads entities and relations for a requester; writes and deletes relations."""

    def __init__(self, db: Database) -> None:
        self._db = db

    async def entities(self, user_id: str, *, audience: Audience) -> list[EntitySummary]:
        return await self._db.read(lambda conn: entity_sql.visible_entities(conn, user_id, audience))

    async def entity(self, entity_id: int, *, user_id: str, audience: Audience) -> EntityView:
        """One entity of ``user_id`` with what ``audience`` may see of it (raises
        :class:`EntityNotFound` when none)."""

        def read(conn: sqlite3.Connection) -> EntityView:
            entity = entity_sql.get_entity(conn, entity_id)
            if entity is None or entity.user_id != user_id:
                raise EntityNotFound(entity_id)
            facts = entity_sql.entity_facts(conn, entity, audience)
            relations = entity_sql.relations_of(conn, user_id, entity_id, audience)
            if not facts and not relations:
                raise EntityNotFound(entity_id)
            current = [fact for fact in facts if fact.superseded_by is None]
            history = memory_sql.hide_unseen_replacements(
                conn, [fact for fact in facts if fact.superseded_by is not None], audience
            )
            turn_ids = [
                turn_id
                for fact in facts
                for turn_id in fact.metadata.get("derived_from", [])
                if isinstance(turn_id, int) and not isinstance(turn_id, bool)
            ]
            turns = memory_sql.get_many(conn, list(dict.fromkeys(turn_ids))[:MAX_SOURCE_TURNS])
            source_turns = memory_sql.hide_unseen_replacements(
                conn,
                [turn for turn in turns.values() if turn.user_id == user_id and audience.admits(turn.scope)],
                audience,
            )
            return EntityView(entity, current, history, relations, sorted(source_turns, key=lambda t: t.id))

        return await self._db.read(read)

    async def relations(self, user_id: str, *, entity_id: int | None, audience: Audience) -> list[Relation]:
        return await self._db.read(lambda conn: entity_sql.relations_of(conn, user_id, entity_id, audience))

    async def add_relation(
        self,
        user_id: str,
        subject: int | SubjectRef,
        predicate: str,
        object_: int | SubjectRef,
        *,
        scope: Scope,
        confidence: float,
        audience: Audience,
    ) -> Relation:
        """Store ``subject -predicate-> object`` (each an entity id the requester may see, or a name:
        created when new) in ``scope``; the same relation in the same reach is kept once."""
        predicate = " ".join(predicate.split()).casefold()
        if not predicate:
            raise InvalidRequest("predicate must not be blank")

        def write(conn: sqlite3.Connection) -> Relation:
            subject_id = self._entity_id(conn, user_id, subject, audience)
            object_id = self._entity_id(conn, user_id, object_, audience)
            if subject_id == object_id:
                raise InvalidRequest("a relation joins two different entities")
            relation_id = entity_sql.add_relation(
                conn, user_id, subject_id, predicate, object_id, scope=scope, confidence=confidence
            )
            relation = entity_sql.get_relation(conn, relation_id)
            assert relation is not None
            return relation

        return await self._db.write(write)

    async def delete_relation(self, relation_id: int, *, user_id: str, audience: Audience) -> None:
        """Delete a relation ``audience`` may see (raises :class:`RelationNotFound` otherwise)."""

        def write(conn: sqlite3.Connection) -> None:
            relation = entity_sql.get_relation(conn, relation_id)
            if relation is None or relation.user_id != user_id or not audience.admits(relation.scope):
                raise RelationNotFound(relation_id)
            entity_sql.delete_relation(conn, relation_id)

        await self._db.write(write)

    @staticmethod
    def _entity_id(
        conn: sqlite3.Connection, user_id: str, named: int | SubjectRef, audience: Audience
    ) -> int:
        if isinstance(named, SubjectRef):
            if named.key in ("", "user", "the user"):
                return entity_sql.ensure_self(conn, user_id)
            return entity_sql.ensure_entity(conn, user_id, named)
        entity = entity_sql.get_entity(conn, named)
        visible = entity is not None and entity.user_id == user_id
        if visible and entity is not None and entity.kind != "self" and not audience.unrestricted:
            visible = any(
                item.entity.id == named for item in entity_sql.visible_entities(conn, user_id, audience)
            )
        if not visible:
            raise EntityNotFound(named)
        return named
