"""One memory of a write, applied inside the write transaction: merged into the memory it repeats
(the merge planned before the transaction, in write_plan, is checked again here: the memory may
have been deleted or superseded meanwhile), or inserted, ending the facts it replaces (a belief's
older value, a correction's target); its subject entity and belief links are recorded with it."""

from __future__ import annotations

import dataclasses
import sqlite3
from dataclasses import dataclass

from ..records import MemoryRecord, NewMemory
from ..store import entities as entity_sql
from ..store import memories as memory_sql
from .beliefs import apply_after_insert, contrasted, end_relations, plan_belief, store_links


@dataclass(frozen=True)
class WriteOutcome:
    """What happened to one memory of a write: ``created`` or ``merged`` into an existing one;
    ``superseded_id``: the memory it replaced (the first, when a newer statement ended several);
    ``changed``: every other memory the write changed (superseded ones, or this one's own end)."""

    record: MemoryRecord
    action: str
    superseded_id: int | None = None
    changed: tuple[int, ...] = ()


def write_one(
    conn: sqlite3.Connection, row: NewMemory, merge_into: int | None, supersede: int | None
) -> WriteOutcome:
    """Store ``row`` on ``conn`` (inside the write transaction).

    Args:
        conn: the writer's connection, in the write transaction.
        row: the memory, its secrets masked and its vector attached.
        merge_into: the stored memory the plan merges it into, or None; merged only while it is
            live, of the same user and reach, and the same fact (the same value of a belief, or
            neither states an attribute and both are about the same subject).
        supersede: the stored memory the plan says it replaces (a correction's, or the update an
            LLM named), or None; ended only while it is live, of the same user, reach and
            subject, and states no other attribute.
    """
    subject_id = _subject_id(conn, row)
    row, subject_id = contrasted(conn, row, subject_id)
    if row.replaces is not None and supersede is None and merge_into is None:
        supersede = row.replaces  # checked below like a correction's (same user, reach, subject)
    belief = plan_belief(conn, row, subject_id)
    if row.ends:
        # It states no value of its own: what ended is kept in its metadata, and on the ended fact
        # (or relation, where no fact held the value).
        attribute = belief.replaces[0].attribute if belief.replaces else end_relations(conn, row, subject_id)
        ended = {"attribute": attribute or row.attribute, "value": row.value}
        row = dataclasses.replace(
            row, attribute=None, value=None, links=(), metadata={**row.metadata, "ends": ended}
        )
        if belief.replaces:
            merge_into = None  # what it ends ends now: never folded into a fact it only resembles
    if belief.merge_into is not None:
        merge_into, supersede = belief.merge_into, None  # the same value said again
    if merge_into is not None:
        existing = memory_sql.get(conn, merge_into)
        # Re-checked inside the transaction: it may have been deleted or superseded meanwhile. A
        # near-duplicate by wording only merges where neither states an attribute, about the
        # same subject: "lives in Leeds" is close to "lives in York", and is not the same fact.
        if (
            existing is not None
            and live_in_reach(existing, row)
            and (
                belief.merge_into == existing.id
                or (
                    existing.attribute is None and row.attribute is None and existing.subject_id == subject_id
                )
            )
        ):
            memory_sql.merge_into(conn, merge_into, row)
            if row.valid_from is not None and (
                existing.valid_from is None or row.valid_from < existing.valid_from
            ):
                memory_sql.update(conn, merge_into, {"valid_from": row.valid_from})  # true since first said
            store_links(conn, row, merge_into)
            return WriteOutcome(existing, "merged")
    memory_id = memory_sql.insert(conn, row, subject_id=subject_id)
    changed = apply_after_insert(conn, belief, memory_id, row.valid_from or row.occurred_at, row)
    store_links(conn, row, memory_id)
    record = memory_sql.get(conn, memory_id)
    assert record is not None
    if belief.replaces or belief.replaced_by is not None:
        first = belief.replaces[0].id if belief.replaces else None
        return WriteOutcome(record, "created", superseded_id=first, changed=tuple(changed))
    if supersede is not None:
        older = memory_sql.get(conn, supersede)
        if (
            older is not None
            and live_in_reach(older, row)
            # A correction close in wording never ends a fact of another subject or attribute.
            and older.subject_id == subject_id
            and older.attribute in (None, row.attribute)
        ):
            ends = row.valid_from or row.occurred_at
            memory_sql.update(conn, supersede, {"superseded_by": memory_id, "valid_to": ends})
            return WriteOutcome(record, "created", superseded_id=supersede)
    return WriteOutcome(record, "created")


def _subject_id(conn: sqlite3.Connection, row: NewMemory) -> int | None:
    """The entity ``row`` is about (created on first mention); None for the owner, whose own
    entity is made once they have a structured fact (the entities list starts with them)."""
    if row.subject is not None:
        return entity_sql.ensure_entity(conn, row.user_id, row.subject)
    if row.attribute is not None and row.kind == "fact":
        entity_sql.ensure_self(conn, row.user_id)
    return None


def live_in_reach(record: MemoryRecord, row: NewMemory) -> bool:
    """Whether a stored memory may take part in ``row``'s write: still live, of the same user, and
    recalled by the same requesters (re-checked inside the transaction)."""
    return (
        record.user_id == row.user_id
        and record.scope.recalled_alike(row.scope)
        and record.superseded_by is None
    )
