"""All SQL about entities, relations and the structured side of facts (migration 015), on SQLite and
PostgreSQL alike.

An entity is someone or something a user's facts are about; it has no scope of its own. Who may see
it follows from its evidence: an entity is listed to a requester only when that requester may see a
live fact about it or a relation that names it (``Audience.sql``), so a name said in one group never
shows in another. The owner's own facts keep ``subject_id`` NULL; the owner's entity (kind ``self``)
exists for the relations that start or end at them.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ..records import (
    EVERYONE,
    Audience,
    Entity,
    EntitySummary,
    MemoryRecord,
    Relation,
    Scope,
    SubjectRef,
    entity_key,
)
from .connection import Connection, dialect_of
from .memories import RECORD_COLUMNS

_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff]")
# The name of every user's own entity (kind "self"); its key is empty, which no other name has.
SELF_NAME = "User"
SELF_KEY = ""

_ENTITY_COLUMNS = "id, user_id, name, kind, created_at"
# A relation ends when a later statement replaced the fact it was read from, and that fact stated
# the relation itself (the user's manager is Paul: a new manager ends it); a fact about its object
# ("my daughter Mia is 11", replaced by "Mia turned 12") leaves the relation as it is. A statement
# that it ended ("Me and Paolo split up") ends it too (``ended_at``, migration 016).
_RELATION_COLUMNS = (
    "r.id, r.user_id, r.subject_id, r.predicate, r.object_id, r.confidence, r.source_memory_id,"
    " r.agent_id, r.visibility, r.source_channel, r.created_at, s.name, o.name,"
    " COALESCE(r.ended_at, CASE WHEN m.attribute = r.predicate THEN m.valid_to END)"
)
_RELATION_FROM = (
    " FROM relations AS r JOIN entities AS s ON s.id = r.subject_id JOIN entities AS o ON o.id = r.object_id"
    " LEFT JOIN memories AS m ON m.id = r.source_memory_id"
)


def ensure_entity(conn: Connection, user_id: str, ref: SubjectRef) -> int:
    """The id of ``user_id``'s entity named ``ref`` (created on first mention, with ``ref.kind``).

    A plan named by one word ("the trip", "the dentist") is the one plan of the user whose name
    begins or ends with it ("lisbon trip", "dentist appointment"), when there is exactly one; else a
    plan of its own."""
    key = ref.key
    if not key:
        return ensure_self(conn, user_id)
    if ref.kind == "plan" and (" " not in key or _CJK.search(key)):
        rows = conn.execute(
            "SELECT id, name_key FROM entities WHERE user_id = ? AND kind = 'plan'", (user_id,)
        ).fetchall()
        exact = [int(row[0]) for row in rows if row[1] == key]
        cjk = _CJK.search(key) is not None  # CJK names have no spaces: "歯医者" is "歯医者の予約"
        named = [
            int(row[0])
            for row in rows
            if row[1].endswith(f" {key}")
            or row[1].startswith(f"{key} ")
            or (cjk and row[1] != key and (row[1].startswith(key) or row[1].endswith(key)))
        ]
        if not exact and len(named) == 1:
            return named[0]
    return _ensure(conn, user_id, " ".join(ref.name.split())[:200], key[:200], ref.kind)


def ensure_self(conn: Connection, user_id: str) -> int:
    """The id of ``user_id``'s own entity (kind ``self``)."""
    return _ensure(conn, user_id, SELF_NAME, SELF_KEY, "self")


def _ensure(conn: Connection, user_id: str, name: str, key: str, kind: str) -> int:
    find = "SELECT id FROM entities WHERE user_id = ? AND name_key = ?"
    row = conn.execute(find, (user_id, key)).fetchone()
    if row is None:  # looked up first: an insert that conflicts would still use up an id
        conn.execute(
            "INSERT INTO entities (user_id, name, name_key, kind) VALUES (?, ?, ?, ?)"
            " ON CONFLICT (user_id, name_key) DO NOTHING",  # another daemon may have just made it
            (user_id, name, key, kind),
        )
        row = conn.execute(find, (user_id, key)).fetchone()
    return int(row[0])


def find_entity(conn: Connection, user_id: str, name: str) -> int | None:
    """The id of ``user_id``'s entity called ``name`` (any case), or None."""
    row = conn.execute(
        "SELECT id FROM entities WHERE user_id = ? AND name_key = ?", (user_id, entity_key(name))
    ).fetchone()
    return None if row is None else int(row[0])


def get_entity(conn: Connection, entity_id: int) -> Entity | None:
    row = conn.execute(f"SELECT {_ENTITY_COLUMNS} FROM entities WHERE id = ?", (entity_id,)).fetchone()
    return None if row is None else Entity(*row)


def self_entity(conn: Connection, user_id: str) -> Entity | None:
    row = conn.execute(
        f"SELECT {_ENTITY_COLUMNS} FROM entities WHERE user_id = ? AND name_key = ?", (user_id, SELF_KEY)
    ).fetchone()
    return None if row is None else Entity(*row)


def visible_entities(conn: Connection, user_id: str, audience: Audience = EVERYONE) -> list[EntitySummary]:
    """``user_id``'s entities that ``audience`` may see evidence of (a live fact about one, or a
    relation naming one), the owner first, then by name."""
    facts_scope, facts_params = audience.sql("m.")
    relation_scope, relation_params = audience.sql("r.")
    rows = conn.execute(
        f"SELECT {', '.join('e.' + c for c in _ENTITY_COLUMNS.split(', '))},"
        " (SELECT count(*) FROM memories AS m WHERE m.user_id = e.user_id AND m.superseded_by IS NULL"
        "  AND m.kind = 'fact' AND ((e.kind = 'self' AND m.subject_id IS NULL AND m.attribute IS NOT NULL)"
        f"   OR m.subject_id = e.id){facts_scope}),"
        " (SELECT count(*) FROM relations AS r WHERE r.user_id = e.user_id"
        f"  AND (r.subject_id = e.id OR r.object_id = e.id){relation_scope})"
        " FROM entities AS e WHERE e.user_id = ?",
        (*facts_params, *relation_params, user_id),
    ).fetchall()
    found = [EntitySummary(Entity(*row[:5]), int(row[5]), int(row[6])) for row in rows]
    visible = [item for item in found if item.facts or item.relations]
    return sorted(visible, key=lambda item: (item.entity.kind != "self", item.entity.name.casefold()))


def entity_facts(
    conn: Connection, entity: Entity, audience: Audience = EVERYONE, *, include_superseded: bool = True
) -> list[MemoryRecord]:
    """The facts about ``entity`` that ``audience`` may see (the owner's: those with an attribute),
    newest said first; superseded ones too unless ``include_superseded`` is False."""
    scope, params = audience.sql()
    subject = "subject_id IS NULL AND attribute IS NOT NULL" if entity.kind == "self" else "subject_id = ?"
    subject_params: tuple[object, ...] = () if entity.kind == "self" else (entity.id,)
    live = "" if include_superseded else " AND superseded_by IS NULL"
    rows = conn.execute(
        f"SELECT {RECORD_COLUMNS} FROM memories WHERE user_id = ? AND kind = 'fact' AND {subject}{live}{scope}"
        " ORDER BY coalesce(valid_from, occurred_at, created_at) DESC, id DESC LIMIT 500",
        (entity.user_id, *subject_params, *params),
    )
    return [MemoryRecord.from_row(row) for row in rows]


def current_facts(
    conn: Connection, user_id: str, subject_id: int | None, attribute: str, *, reach: Scope | None = None
) -> list[MemoryRecord]:
    """The live facts stating ``attribute`` of a subject (None: the owner), newest said first; with
    ``reach``, only those recalled alike (:meth:`Scope.recalled_alike`)."""
    subject = "subject_id IS NULL" if subject_id is None else "subject_id = ?"
    rows = conn.execute(
        f"SELECT {RECORD_COLUMNS} FROM memories WHERE user_id = ? AND attribute = ? AND {subject}"
        " AND superseded_by IS NULL AND kind = 'fact'"
        " ORDER BY coalesce(valid_from, occurred_at, created_at) DESC, id DESC",
        (user_id, attribute, *(() if subject_id is None else (subject_id,))),
    )
    records = [MemoryRecord.from_row(row) for row in rows]
    return [r for r in records if reach is None or r.scope.recalled_alike(reach)]


def subject_names(conn: Connection, user_id: str) -> dict[int, str]:
    """Every entity of ``user_id`` by id, its name (search reads which ones a question names)."""
    rows = conn.execute("SELECT id, name FROM entities WHERE user_id = ? AND kind <> 'self'", (user_id,))
    return {int(row[0]): row[1] for row in rows}


def facts_of_subjects(
    conn: Connection,
    user_id: str,
    subjects: Sequence[int | None],
    attributes: Sequence[str] | None,
    audience: Audience,
    limit: int,
) -> list[MemoryRecord]:
    """Live facts about these subjects (None: the owner) stating one of ``attributes`` (None: any
    attribute), that ``audience`` may see, newest said first."""
    if not subjects:
        return []
    d = dialect_of(conn)
    ids = [s for s in subjects if s is not None]
    parts = []
    params: list[object] = [user_id]
    if None in subjects:
        parts.append("subject_id IS NULL")
    if ids:
        parts.append(d.in_list("subject_id"))
        params.append(d.list_param(ids))
    where = f"({' OR '.join(parts)})"
    if attributes is not None:
        where += f" AND {d.in_list('attribute')}"
        params.append(d.list_param(attributes))
    scope, scope_params = audience.sql()
    rows = conn.execute(
        f"SELECT {RECORD_COLUMNS} FROM memories WHERE user_id = ? AND {where} AND attribute IS NOT NULL"
        f" AND superseded_by IS NULL AND kind = 'fact'{scope}"
        " ORDER BY coalesce(valid_from, occurred_at, created_at) DESC, id DESC LIMIT ?",
        (*params, *scope_params, limit),
    )
    return [MemoryRecord.from_row(row) for row in rows]


def add_relation(
    conn: Connection,
    user_id: str,
    subject_id: int,
    predicate: str,
    object_id: int,
    *,
    scope: Scope,
    confidence: float = 1.0,
    source_memory_id: int | None = None,
    said_at: str | None = None,
) -> int:
    """Store a relation; one that already holds between the same two entities with the same
    predicate and reach is kept instead (its id returned), taking the higher confidence. One said
    to have ended holds again when said again after its end (``said_at``: when this was said)."""
    d = dialect_of(conn)
    existing = conn.execute(
        "SELECT id, agent_id, visibility, source_channel, confidence, ended_at FROM relations WHERE user_id = ?"
        " AND subject_id = ? AND predicate = ? AND object_id = ?",
        (user_id, subject_id, predicate, object_id),
    ).fetchall()
    for row in existing:
        if Scope(row[1], row[2], row[3]).recalled_alike(scope):  # type: ignore[arg-type]
            if confidence > float(row[4]):
                conn.execute("UPDATE relations SET confidence = ? WHERE id = ?", (confidence, row[0]))
            if row[5] is not None and said_at is not None and said_at > str(row[5]):
                conn.execute(
                    "UPDATE relations SET ended_at = NULL, source_memory_id = ? WHERE id = ?",
                    (source_memory_id, row[0]),
                )
            return int(row[0])
    row = conn.execute(
        "INSERT INTO relations (user_id, subject_id, predicate, object_id, confidence, source_memory_id,"
        f" agent_id, visibility, source_channel, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, {d.now})"
        " RETURNING id",
        (
            user_id,
            subject_id,
            predicate,
            object_id,
            confidence,
            source_memory_id,
            scope.agent_id,
            scope.visibility,
            scope.channel,
        ),
    ).fetchone()
    return int(row[0])


def get_relation(conn: Connection, relation_id: int) -> Relation | None:
    row = conn.execute(
        f"SELECT {_RELATION_COLUMNS}{_RELATION_FROM} WHERE r.id = ?", (relation_id,)
    ).fetchone()
    return None if row is None else Relation(*row)


def relations_of(
    conn: Connection, user_id: str, entity_id: int | None, audience: Audience = EVERYONE, limit: int = 500
) -> list[Relation]:
    """``user_id``'s relations (those naming ``entity_id`` when given) that ``audience`` may see,
    newest first."""
    scope, params = audience.sql("r.")
    naming = " AND (r.subject_id = ? OR r.object_id = ?)" if entity_id is not None else ""
    rows = conn.execute(
        f"SELECT {_RELATION_COLUMNS}{_RELATION_FROM} WHERE r.user_id = ?{naming}{scope} ORDER BY r.id DESC LIMIT ?",
        (user_id, *(() if entity_id is None else (entity_id, entity_id)), *params, limit),
    )
    return [Relation(*row) for row in rows]


def end_relations(
    conn: Connection,
    user_id: str,
    subject_id: int,
    object_id: int,
    predicates: Sequence[str],
    *,
    reach: Scope,
    said_at: str,
) -> list[Relation]:
    """End, as of ``said_at``, ``user_id``'s live relations ``subject_id`` -(one of ``predicates``)->
    ``object_id`` recalled alike with ``reach`` and said before ``said_at`` (the fact they were read
    from, else when they were written); none when they hold under several predicates (which one
    ended is not known). Returns them as they were."""
    rows = conn.execute(
        f"SELECT {_RELATION_COLUMNS}, COALESCE(m.valid_from, m.occurred_at, r.created_at){_RELATION_FROM}"
        " WHERE r.user_id = ? AND r.subject_id = ? AND r.object_id = ?",
        (user_id, subject_id, object_id),
    ).fetchall()
    live = [Relation(*row[:-1]) for row in rows if row[-1] is not None and str(row[-1]) <= said_at]
    ended = [
        relation
        for relation in live
        if relation.ended is None
        and relation.predicate in predicates
        and relation.scope.recalled_alike(reach)
    ]
    if len({relation.predicate for relation in ended}) != 1:
        return []
    for relation in ended:
        conn.execute("UPDATE relations SET ended_at = ? WHERE id = ?", (said_at, relation.id))
    return ended


def delete_relation(conn: Connection, relation_id: int) -> bool:
    return conn.execute("DELETE FROM relations WHERE id = ?", (relation_id,)).rowcount > 0


def forget_orphans(conn: Connection) -> int:
    """Delete the entities nothing refers to any more (their facts and relations were forgotten), so
    a name the user had removed does not stay behind; returns how many."""
    return conn.execute(
        "DELETE FROM entities WHERE kind <> 'self'"
        " AND NOT EXISTS (SELECT 1 FROM memories AS m WHERE m.subject_id = entities.id)"
        " AND NOT EXISTS (SELECT 1 FROM relations AS r WHERE r.subject_id = entities.id OR r.object_id = entities.id)"
    ).rowcount


def session_facts(conn: Connection, user_id: str, session: str, limit: int = 20) -> list[MemoryRecord]:
    """The live facts about the owner that state an attribute, read from session ``session``, newest
    said first."""
    rows = conn.execute(
        f"SELECT {RECORD_COLUMNS} FROM memories WHERE user_id = ? AND source_session = ? AND subject_id IS NULL"
        " AND attribute IS NOT NULL AND superseded_by IS NULL AND kind = 'fact'"
        " ORDER BY coalesce(valid_from, occurred_at, created_at) DESC, id DESC LIMIT ?",
        (user_id, session, limit),
    )
    return [MemoryRecord.from_row(row) for row in rows]


def facts_with_value(conn: Connection, user_id: str, value: str, limit: int = 5) -> list[MemoryRecord]:
    """The user's live facts whose value is ``value`` (any case)."""
    rows = conn.execute(
        f"SELECT {RECORD_COLUMNS} FROM memories WHERE user_id = ? AND attribute IS NOT NULL"
        f" AND {dialect_of(conn).fold('value')} = ? AND superseded_by IS NULL AND kind = 'fact' LIMIT ?",
        (user_id, value.casefold(), limit),
    )
    return [MemoryRecord.from_row(row) for row in rows]


def said_with(conn: Connection, record: MemoryRecord) -> list[MemoryRecord]:
    """The other live facts about the same subject said in the same breath as ``record`` (the same
    ``valid_from``): "I work as a nurse at St Mary's" is a job and an employer."""
    if record.valid_from is None:
        return []
    subject = "subject_id IS NULL" if record.subject_id is None else "subject_id = ?"
    rows = conn.execute(
        f"SELECT {RECORD_COLUMNS} FROM memories WHERE user_id = ? AND valid_from = ? AND {subject}"
        " AND id <> ? AND superseded_by IS NULL AND kind = 'fact'",
        (
            record.user_id,
            record.valid_from,
            *(() if record.subject_id is None else (record.subject_id,)),
            record.id,
        ),
    )
    return [MemoryRecord.from_row(row) for row in rows]


def belief_keys(conn: Connection, memory_ids: Sequence[int]) -> dict[int, tuple[int | None, str, str]]:
    """``{id: (subject_id, attribute, when said)}`` of those of these memories that state an
    attribute (the others are absent)."""
    if not memory_ids:
        return {}
    d = dialect_of(conn)
    rows = conn.execute(
        "SELECT id, subject_id, attribute, coalesce(valid_from, occurred_at, created_at) FROM memories"
        f" WHERE {d.in_list('id')} AND attribute IS NOT NULL",
        (d.list_param(memory_ids),),
    )
    return {int(row[0]): (row[1], row[2], row[3]) for row in rows}


def related(conn: Connection, user_id: str, subject_id: int, predicates: Sequence[str]) -> list[int]:
    """The entities ``subject_id`` is related to by one of ``predicates`` (the user's sister: Ana)."""
    if not predicates:
        return []
    d = dialect_of(conn)
    rows = conn.execute(
        f"SELECT DISTINCT object_id FROM relations WHERE user_id = ? AND subject_id = ? AND {d.in_list('predicate')}",
        (user_id, subject_id, d.list_param(predicates)),
    )
    return [int(row[0]) for row in rows]


def owner_profile(
    conn: Connection, user_id: str, audience: Audience, limit: int, *, vital_importance: int = 9
) -> list[MemoryRecord]:
    """The user's own live facts a profile is made of, that ``audience`` may see: those stating an
    attribute, identities of importance 8 or more, and any of ``vital_importance`` or more (facts
    written before attributes existed, or through POST /memories); most important first, then
    newest said."""
    scope, params = audience.sql()
    rows = conn.execute(
        f"SELECT {RECORD_COLUMNS} FROM memories WHERE user_id = ? AND subject_id IS NULL AND kind = 'fact'"
        " AND superseded_by IS NULL AND layer <> 'archive'"
        " AND (attribute IS NOT NULL OR (category = 'identity' AND importance >= 8) OR importance >= ?)"
        f"{scope} ORDER BY importance DESC, coalesce(valid_from, occurred_at, created_at) DESC, id DESC LIMIT ?",
        (user_id, vital_importance, *params, limit),
    )
    return [MemoryRecord.from_row(row) for row in rows]


def said_by_others(conn: Connection, memory_ids: Sequence[int]) -> dict[int, str]:
    """Which of these memories are about someone other than the user, or said by someone other than
    the user: a fact with a subject, a turn of a person marked not the owner (``metadata.owner``), an
    assistant's turn (what it said is not the user's statement). Each with whom it is of or by: the
    subject's name for a fact, the speaker's name (the turn's text before its first ``": "``) for a
    turn; ``""`` when unknown."""
    if not memory_ids:
        return {}
    d = dialect_of(conn)
    owner = d.json_text("m.metadata", "owner")
    role = d.json_text("m.metadata", "role")
    rows = conn.execute(
        "SELECT m.id, m.kind, m.fact, e.name FROM memories AS m LEFT JOIN entities AS e ON e.id = m.subject_id"
        f" WHERE {d.in_list('m.id')} AND ((m.kind = 'fact' AND m.subject_id IS NOT NULL)"
        f" OR (m.kind = 'turn' AND ({owner} IN ('0', 'false') OR {role} = 'assistant')))",
        (d.list_param(memory_ids),),
    )
    found: dict[int, str] = {}
    for memory_id, kind, fact, name in rows:
        if kind == "turn":
            speaker, colon, _ = str(fact).partition(": ")
            name = speaker if colon else ""
        found[int(memory_id)] = str(name or "")
    return found
