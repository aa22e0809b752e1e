"""What an extraction job is shown beside its new messages: the earlier messages said where its
own were, and the current facts of the people it names."""

from __future__ import annotations

import dataclasses
import sqlite3

from ..records import EVERYONE
from ..store import entities as entity_sql
from ..store import job_memories as job_sql
from ..store.db import Database
from ..store.ingest import IngestJob
from .extraction import KnownFact
from .messages import Delta, Message
from .speakers import Speaker

# Most current facts an extraction LLM is shown beside the new messages.
MAX_KNOWN_FACTS = 40


async def known_facts(
    db: Database, job: IngestJob, new: list[Message], said_by: dict[int, Speaker]
) -> list[KnownFact]:
    """The current facts an extraction LLM is shown: those of the owner and of the people who
    speak or are named in the new messages, of the conversation's own reach only (what this
    conversation's requesters may see; never another scope's), newest said first."""
    names = {speaker.name for m in new if (speaker := said_by[id(m)]).name and not speaker.owner}
    text = " ".join(message.text for message in new).casefold()

    def read(conn: sqlite3.Connection) -> list[KnownFact]:
        subjects: dict[int | None, str] = {None: "user"}
        for entity_id, name in entity_sql.subject_names(conn, job.user_id).items():
            if name in names or (len(name) >= 2 and name.casefold() in text):
                subjects[entity_id] = name
        records = entity_sql.facts_of_subjects(
            conn, job.user_id, list(subjects), None, EVERYONE, MAX_KNOWN_FACTS * 4
        )
        reach = job.scope
        return [
            KnownFact(
                record.id,
                subjects.get(record.subject_id, "user"),
                record.attribute,
                record.fact,
                record.said_at,
            )
            for record in records
            if record.scope.recalled_alike(reach)
        ][:MAX_KNOWN_FACTS]

    return await db.read(read)


async def same_reach_context(db: Database, job: IngestJob, delta: Delta) -> Delta:
    """``delta`` with only the context messages said where this job's are: a stored turn of each
    has the job's reach. A session id used first in private and then by a group (OpenClaw's
    ``groupScope: "main"``) would otherwise show the group's extraction the private words, and
    what it read from them would be stored as shared. A message with no stored turn (deleted, or
    ``ingest.store_turns`` off) is left out: where it was said is not known."""
    if not delta.context:
        return delta
    digests = list(dict.fromkeys(message.digest for message in delta.context))
    scopes = await db.read(
        lambda conn: job_sql.turn_scopes_by_digest(conn, job.user_id, job.session_id, digests)
    )
    kept = [
        message
        for message in delta.context
        if any(scope.recalled_alike(job.scope) for scope in scopes.get(message.digest, ()))
    ]
    return dataclasses.replace(delta, context=kept) if len(kept) < len(delta.context) else delta
