"""The text of a memory as the model and the store see it: what is embedded (topic, fact and, for
a transcript turn, the turns before it) and every new row with its secrets masked."""

from __future__ import annotations

import dataclasses
import sqlite3
from collections.abc import Sequence
from typing import Any

from ..errors import OnlyASecret
from ..records import MemoryRecord, NewMemory
from ..redaction import is_only_secrets, redact
from ..store import retrieval as retrieval_sql


def embedding_text(topic: str, fact: str, context: Sequence[tuple[str, str]] = ()) -> str:
    """The text a memory is embedded as: its topic gives a short fact its context.

    ``context``: the ``(topic, fact)`` of the memories said just before it in the same session,
    oldest first. A short turn ("Yes, in Lisbon!") means little alone; embedded after the turns
    it answers, its vector lands near the questions about it. Only the vector sees the context:
    the memory returned, its FTS entry and its dedup are its own text.
    """
    return "\n".join(f"{t}: {f}" if t else f for t, f in [*context, (topic, fact)])


def stored_embedding_text(conn: sqlite3.Connection, record: MemoryRecord) -> str:
    """The text to (re-)embed an existing row with, using the context it was first embedded with."""
    context: list[tuple[str, str]] = []
    if record.embedding_context > 0 and record.source_session:
        context = retrieval_sql.session_context(
            conn, record.user_id, record.source_session, record.id, record.embedding_context
        )
    return embedding_text(record.topic, record.fact, context)


def without_secrets(item: NewMemory) -> NewMemory:
    """``item`` with every secret in its fact, topic, ref and metadata (keys too) masked (the one
    place every new row passes: extraction, the API, MCP, imports and the lifecycle's summaries
    alike). Its names (session, channel, agent) are refused at the API when they hold one.

    Raises :class:`OnlyASecret` when nothing but a secret is left of the fact.
    """
    fact = redact(item.fact).text
    if is_only_secrets(fact):
        raise OnlyASecret()
    return dataclasses.replace(
        item,
        fact=fact,
        topic=redact(item.topic).text,
        ref=None if item.ref is None else redact(item.ref).text,
        metadata=redacted_json(item.metadata),
    )


def redacted_json(value: Any) -> Any:
    """Free-form metadata with its strings redacted, keys too, structure kept."""
    if isinstance(value, str):
        return redact(value).text
    if isinstance(value, dict):
        return {redact(key).text: redacted_json(item) for key, item in value.items()}
    if isinstance(value, list):
        return [redacted_json(item) for item in value]
    return value
