"""What a new fact does to what the memory believes: the subject, attribute and value it states, and,
inside the write transaction, whether it restates, replaces or is replaced by the current fact of the
same subject and attribute.

The rule (issue 33): for an attribute a subject has one value of at a time (``models.attributes``),
the statement said **later** holds — later by when it was said (``valid_from``: the message's time),
not by when it arrived. The earlier one is kept, superseded by the later, with ``valid_to`` set to
when the later one was said. The same value said again is one fact (it is merged, and holds since it
was first said). An attribute with several values (allergies, likes, pets) adds a value. Only facts
that reach the same requesters (:meth:`Scope.recalled_alike`) replace each other: a group never
rewrites what the owner said in private, nor the other way round.
"""

from __future__ import annotations

import dataclasses
import re
import unicodedata
from dataclasses import dataclass

from ..models.attributes import ENTITY_VALUED, canonical_attribute, canonical_relation, is_single
from ..models.facts import ExtractedFact, is_owner
from ..records import Entity, LinkRef, MemoryRecord, NewMemory, SubjectRef
from ..store import entities as entity_sql
from ..store import memories as memory_sql
from ..store.connection import Connection

# A value that names a person or a pet (the object of a relation): a name, not a description.
_NAME_LIKE = re.compile(r"^[^\W\d_][\w'.-]*(?:\s+[^\W\d_][\w'.-]*){0,3}$")


@dataclass(frozen=True)
class Structure:
    """The structured reading of one fact: whom it is about (None: the owner), the attribute and
    value it states, and the relations it names."""

    subject: SubjectRef | None = None
    attribute: str | None = None
    value: str | None = None
    links: tuple[LinkRef, ...] = ()


def structure_of(fact: ExtractedFact, *, said_by: str | None = None) -> Structure:
    """Read an extracted fact's subject, attribute, value and relations.

    ``subject`` "user" is the owner; "user's father" someone known by their relation to the owner
    (the relation owner -father-> them); "Bob's sister" the same for Bob; a name is that person (with
    ``relation``: the owner -relation-> them). An attribute whose value names a person or a pet
    (``partner`` = "Marco", ``sister`` = "Ana", ``pet`` = "Rex") is a relation from the subject too.

    ``said_by``: the name of the speaker when it was not the owner. A relation said in their words
    ("my husband Tom" → Tom, relation partner) is theirs (Melanie -partner-> Tom), never the owner's.
    """
    subject, links = _subject(fact, said_by)
    attribute = canonical_attribute(fact.attribute)
    value = " ".join(fact.value.split())[:200] if fact.value and fact.value.strip() else None
    if fact.ends:  # "Biscuit passed away": the value that ends (of any attribute, when none is named)
        return Structure(subject, attribute, value, links)
    if attribute is None or value is None:
        attribute = value = None
    if (
        attribute in ENTITY_VALUED
        and value is not None
        and _NAME_LIKE.match(value)
        and not value[0].islower()
    ):
        kind = "pet" if attribute == "pet" else "person"
        links += (LinkRef(attribute, SubjectRef(value, kind), subject),)  # type: ignore[arg-type]
    return Structure(subject, attribute, value, links)


def _subject(fact: ExtractedFact, said_by: str | None) -> tuple[SubjectRef | None, tuple[LinkRef, ...]]:
    if is_owner(fact.subject):
        return None, ()
    name = " ".join(fact.subject.split())
    kind = fact.subject_kind or "person"
    owner_part, sep, relation_word = name.partition("'s ")
    if sep and (relation := canonical_relation(relation_word)) is not None:
        # "user's father" / "Bob's sister": someone known by their relation to another.
        subject = SubjectRef(name if not is_owner(owner_part) else f"user's {relation_word}", kind, relation)  # type: ignore[arg-type]
        of = None if is_owner(owner_part) else SubjectRef(owner_part)
        return subject, (LinkRef(relation, subject, of),)
    relation = canonical_relation(fact.relation) if fact.relation else None
    if said_by and relation is not None:
        # Someone else's husband: related to them, and to the owner not at all.
        subject = SubjectRef(name, kind)  # type: ignore[arg-type]
        return subject, (LinkRef(relation, subject, SubjectRef(said_by)),)
    subject = SubjectRef(name, kind, relation)  # type: ignore[arg-type]
    return subject, (LinkRef(relation, subject, None),) if relation else ()


def same_value(first: str | None, second: str | None) -> bool:
    """Whether two values say the same thing: equal once case, accents' forms, spacing and closing
    punctuation are set aside ("Edinburgh" = "edinburgh!")."""
    return _folded(first) == _folded(second)


def _folded(value: str | None) -> str:
    text = unicodedata.normalize("NFKC", value or "").casefold()
    return " ".join(re.sub(r"[^\w\s'-]+", " ", text).split())


# "he's Mack, not Max", "it's the 14th, not the 12th": the right value, then the wrong one.
_CONTRAST = re.compile(
    r"(?<![\w'])(?:(?:it|he|she|they|that|this)(?:'s|\s+is|\s+are)\s+)?(?P<new>[^\s,;:.!?][^,;:.!?]{0,39}?),\s*not\s+"
    r"(?P<old>[^,;:.!?]{1,40}?)(?:[,;:.!?]|$)",
    re.IGNORECASE,
)


def contrasted(conn: Connection, row: NewMemory, subject_id: int | None) -> tuple[NewMemory, int | None]:
    """A correction that contrasts two values ("Sorry: he's Mack, not Max", "It's pecans I'm
    allergic to, not walnuts") replaces the one live fact of the user, in the same reach, whose value
    is the wrong one — whatever the attribute (a pet's name is corrected, not joined by a second).
    One that states no attribute is read as that fact's attribute, with the right value. Anything
    else (no such fact, or several) is left as it was."""
    if row.kind != "fact" or row.category != "correction":
        return row, subject_id
    match = _CONTRAST.search(row.fact)
    if match is None:
        return _set_right(conn, row, subject_id)
    old, new = match["old"].strip(), match["new"].strip()
    holding = [
        record
        for record in entity_sql.facts_with_value(conn, row.user_id, old)
        if record.scope.recalled_alike(row.scope)
        and record.attribute is not None
        and (row.attribute is None or (record.attribute == row.attribute and record.subject_id == subject_id))
    ]
    if len(holding) != 1 or same_value(old, new) or same_value(old, row.value):
        return row, subject_id
    (record,) = holding
    if row.attribute is not None:
        return dataclasses.replace(row, replaces=record.id), subject_id
    return dataclasses.replace(
        row, attribute=record.attribute, value=new, replaces=record.id
    ), record.subject_id


# "Scratch that, it's Klarna.": the right name, for whatever was just said.
_IT_IS_NAME = re.compile(
    r"(?:^|:\s*)(?:it's|it\s+is|it\s+was)\s+(?:actually\s+)?(?P<new>(?-i:[A-Z])[\w&'.-]*(?:\s+(?-i:[A-Z])[\w&'.-]*){0,3})"
    r"[.!]?$",
    re.IGNORECASE,
)


def _set_right(conn: Connection, row: NewMemory, subject_id: int | None) -> tuple[NewMemory, int | None]:
    """A correction of the owner's that only gives the right name ("Scratch that, it's Klarna.")
    replaces the value of the fact said last before it in the same session and reach that holds a
    name (capitalised): the one it can only mean. Anything else (none, or several said together
    that hold names) is left as it was."""
    match = _IT_IS_NAME.search(row.fact)
    if match is None or row.attribute is not None or subject_id is not None or row.source_session is None:
        return row, subject_id
    said = row.valid_from or row.occurred_at or ""
    before = [
        record
        for record in entity_sql.session_facts(conn, row.user_id, row.source_session)
        if record.scope.recalled_alike(row.scope) and record.said_at <= said
    ]
    # Of what was said last ("a product designer at Spotify": a job and an employer), the one named
    named = [
        record
        for record in before
        if record.said_at == before[0].said_at and (record.value or "")[:1].isupper()
    ]
    right = match["new"].rstrip(".!")
    if len(named) != 1 or same_value(named[0].value, right):
        return row, subject_id
    (record,) = named
    return dataclasses.replace(row, attribute=record.attribute, value=right, replaces=record.id), None


@dataclass(frozen=True)
class BeliefPlan:
    """What a new fact does, decided inside its write transaction: merge into a stored fact (the
    same value said again), replace the facts in ``replaces`` (it is newer), or be stored replaced
    by ``replaced_by`` (it is older than what is believed now)."""

    merge_into: int | None = None
    replaces: tuple[MemoryRecord, ...] = ()
    replaced_by: MemoryRecord | None = None


def plan_belief(conn: Connection, row: NewMemory, subject_id: int | None) -> BeliefPlan:
    """What ``row`` (a fact stating ``row.attribute`` of entity ``subject_id``, None: the owner) does
    against the live facts of the same subject and attribute that reach the same requesters."""
    if row.kind == "fact" and row.ends and row.value:
        return BeliefPlan(replaces=ended_by(conn, row, subject_id))
    if row.kind != "fact" or row.attribute is None:
        return BeliefPlan()
    current = entity_sql.current_facts(conn, row.user_id, subject_id, row.attribute, reach=row.scope)
    for record in current:
        if same_value(record.value, row.value):
            return BeliefPlan(merge_into=record.id)
    if not is_single(row.attribute) or not current:
        return BeliefPlan()
    said = row.valid_from or row.occurred_at or ""
    newer = [record for record in current if record.said_at > said]
    if newer:
        # An older statement arriving after a newer one: it is history from the start.
        return BeliefPlan(replaced_by=min(newer, key=lambda record: record.said_at))
    return BeliefPlan(replaces=tuple(current))


def ended_by(conn: Connection, row: NewMemory, subject_id: int | None) -> tuple[MemoryRecord, ...]:
    """The live facts ``row`` ends ("Biscuit passed away", "I left Deloitte"): those of its subject
    and attribute holding its value, in the same reach. With no attribute named, the one fact of the
    subject that holds the value as a pet's, a partner's or another relation's name (none when
    several do: which one ended is not known). Only facts said before it: an end said earlier than
    the value (a history replayed late) ends nothing."""
    said = row.valid_from or row.occurred_at or ""
    if row.attribute is not None:
        current = entity_sql.current_facts(conn, row.user_id, subject_id, row.attribute, reach=row.scope)
        return tuple(
            record for record in current if same_value(record.value, row.value) and record.said_at <= said
        )
    holding = [
        record
        for record in entity_sql.facts_with_value(conn, row.user_id, row.value or "")
        if record.scope.recalled_alike(row.scope)
        and record.subject_id == subject_id
        and record.attribute in ENTITY_VALUED
        and record.said_at <= said
    ]
    return tuple(holding) if len({record.attribute for record in holding}) == 1 else ()


def end_relations(conn: Connection, row: NewMemory, subject_id: int | None) -> str | None:
    """Where ``row`` ends a value no fact holds, the relation naming it ends instead: one read from
    a fact about the other person ("Paolo (the user's boyfriend) loves food trips" makes Paolo the
    partner, and "Me and Paolo split up" ends that, not his love of food trips). Same rules as
    :func:`ended_by`. Returns the predicate of what ended, or None."""
    if not row.value or (row.attribute is not None and row.attribute not in ENTITY_VALUED):
        return None
    object_id = entity_sql.find_entity(conn, row.user_id, row.value)
    if subject_id is None:
        owner = entity_sql.self_entity(conn, row.user_id)
        subject_id = owner.id if owner is not None else None
    if object_id is None or subject_id is None:
        return None
    said = row.valid_from or row.occurred_at or ""
    ended = entity_sql.end_relations(
        conn,
        row.user_id,
        subject_id,
        object_id,
        [row.attribute] if row.attribute is not None else sorted(ENTITY_VALUED),
        reach=row.scope,
        said_at=said,
    )
    if ended and (other := entity_sql.get_entity(conn, object_id)) is not None:
        _mark_as_said_by_relation(conn, other, row, said)
    return ended[0].predicate if ended else None


# "Paolo (the user's boyfriend) is a chef": the relation a fact about someone names them by.
_NAMED_BY_RELATION = re.compile(r"\((?P<relation>(?:the user's|[^()\s]+'s)\s[^()]{2,40})\)")


def _mark_as_said_by_relation(conn: Connection, other: Entity, row: NewMemory, said: str) -> None:
    """The live facts about ``other`` said before ``said`` that name them by the relation that just
    ended ("Paolo (the user's boyfriend) is a chef") stay true, and say that the relation no longer
    is (``STALE_KEY``, as a fact said with a replaced value does)."""
    for record in entity_sql.entity_facts(conn, other, include_superseded=False):
        named = _NAMED_BY_RELATION.search(record.fact)
        if named is not None and record.said_at <= said and record.scope.recalled_alike(row.scope):
            _mark_stale(conn, record, named["relation"])


STALE_KEY = "no_longer_current"
"""Metadata of a fact said together with one a later statement replaced, and naming its old value:
"I work as a software engineer at Acme" is still the job, but "Acme" is no longer the employer."""


def mark_stated_with(conn: Connection, replaced: MemoryRecord, row: NewMemory) -> list[int]:
    """Mark the facts said in the same breath as ``replaced`` (same subject, same time said, same
    reach) that name its old value: they stay current, and say which part of them no longer is."""
    if not replaced.value or len(replaced.value) < 3:
        return []
    named = re.compile(rf"(?<!\w){re.escape(replaced.value)}(?!\w)", re.IGNORECASE)
    marked = []
    for other in entity_sql.said_with(conn, replaced):
        if other.scope.recalled_alike(row.scope) and named.search(other.fact):
            _mark_stale(conn, other, replaced.value)
            marked.append(other.id)
    return marked


def _mark_stale(conn: Connection, record: MemoryRecord, value: str) -> None:
    """Add ``value`` to what ``record`` names that no longer holds (``STALE_KEY``, the last 5)."""
    stale = [v for v in record.metadata.get(STALE_KEY, []) if isinstance(v, str)]
    memory_sql.update(conn, record.id, {"metadata": {**record.metadata, STALE_KEY: [*stale, value][-5:]}})


def apply_after_insert(
    conn: Connection, plan: BeliefPlan, memory_id: int, said: str | None, row: NewMemory
) -> list[int]:
    """Carry out ``plan`` for the fact just stored as ``memory_id`` (said at ``said``): the facts it
    replaces end when it was said; or it ends when the fact that replaces it was said. Returns the
    ids whose index entry changed."""
    changed: list[int] = []
    for record in plan.replaces:
        memory_sql.update(conn, record.id, {"superseded_by": memory_id, "valid_to": said or None})
        changed.append(record.id)
        mark_stated_with(conn, record, row)
    if plan.replaced_by is not None:
        ends = plan.replaced_by.said_at
        memory_sql.update(conn, memory_id, {"superseded_by": plan.replaced_by.id, "valid_to": ends})
        changed.append(memory_id)
    return changed


def store_links(conn: Connection, row: NewMemory, memory_id: int) -> None:
    """The relations ``row`` names, stored with it as their source (and its scope)."""
    for link in row.links:
        subject_id = (
            entity_sql.ensure_self(conn, row.user_id)
            if link.subject is None
            else entity_sql.ensure_entity(conn, row.user_id, link.subject)
        )
        object_id = entity_sql.ensure_entity(conn, row.user_id, link.object)
        if subject_id != object_id:
            entity_sql.add_relation(
                conn,
                row.user_id,
                subject_id,
                link.predicate,
                object_id,
                scope=row.scope,
                source_memory_id=memory_id,
                said_at=row.valid_from or row.occurred_at,
            )
