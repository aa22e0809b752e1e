"""What each memory of a write is embedded as, read before the write transaction: its topic and
fact and, for a transcript turn written with its session (``embedding_context`` > 0), the turns
of that session before it, so "Melanie: yes, next week" is embedded with what it answers."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

from ..records import NewMemory
from ..store import retrieval as retrieval_sql
from ..store.db import Database
from .memory_text import embedding_text


async def embedding_texts(db: Database, items: Sequence[NewMemory]) -> list[str]:
    """Each item's embedding text, in order; an item with ``embedding_context`` gets its session's
    previous memories (earlier items of this batch first, then stored rows) before it.

    Args:
        db: the store the session's stored turns are read from (one read, only when needed).
        items: the memories of one write, in the order they are written.
    """
    wanted = [(i, item) for i, item in enumerate(items) if item.embedding_context > 0 and item.source_session]
    stored: dict[tuple[str, str], list[tuple[str, str]]] = {}
    if wanted:
        longest = max(item.embedding_context for _, item in wanted)
        sessions = {(item.user_id, str(item.source_session)) for _, item in wanted}

        def read(conn: sqlite3.Connection) -> dict[tuple[str, str], list[tuple[str, str]]]:
            return {key: retrieval_sql.session_context(conn, *key, None, longest) for key in sessions}

        stored = await db.read(read)
    texts: list[str] = []
    said = stored  # built for this call: extended in place as the batch's items are said
    for item in items:
        context: list[tuple[str, str]] = []
        history = said.get((item.user_id, item.source_session or ""))
        if history is not None and item.embedding_context > 0:  # a turn of a session
            context = history[-item.embedding_context :]
            history.append((item.topic, item.fact))
        texts.append(embedding_text(item.topic, item.fact, context))
    return texts
