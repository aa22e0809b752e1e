"""All SQL about memories. Nothing else in the package writes SQL for this table.

Every function takes a connection from :class:`~memory_cortex.store.db.Database` (writer or reader), so
transactions stay in the caller's hands; every value is a bound parameter.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from typing import Any

from ..records import (
    EVERYONE,
    Audience,
    ConversationSession,
    MemoryFilter,
    MemoryHistory,
    MemoryRecord,
    NewMemory,
)
from .fts import quote

NOW_SQL = "strftime('%Y-%m-%dT%H:%M:%fZ','now')"


# Columns a caller may set on insert or change on update (never id, timestamps or counters).
EDITABLE_COLUMNS = (
    "user_id",
    "topic",
    "fact",
    "importance",
    "category",
    "source_session",
    "source_channel",
    "ref",
    "metadata",
    "superseded_by",
    "layer",
    "occurred_at",
    "agent_id",
    "visibility",
)

_SELECT = (
    "SELECT id, user_id, topic, fact, importance, category, source_session, source_channel, ref,"
    " metadata, created_at, updated_at, access_count, last_accessed, superseded_by,"
    " embedding_model, embedding_dim, embedding_context, layer, layer_since, compressed_into,"
    " embedding IS NOT NULL AS has_embedding, occurred_at, kind, agent_id, visibility FROM memories"
)


def quote_identifier(name: str) -> str:
    """The one helper that puts an identifier into SQL (only ever with names from this module)."""
    return '"' + name.replace('"', '""') + '"'


def insert(conn: sqlite3.Connection, memory: NewMemory) -> int:
    cursor = conn.execute(
        "INSERT INTO memories (user_id, topic, fact, importance, category, source_session,"
        " source_channel, ref, metadata, created_at, updated_at, embedding, embedding_model,"
        " embedding_dim, embedding_context, layer, occurred_at, kind, agent_id, visibility,"
        " layer_since)"
        f" VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, COALESCE(?, {NOW_SQL}), COALESCE(?, {NOW_SQL}),"
        # layer_since: now, whatever created_at says (a back-dated memory still enters its layer now).
        f" ?, ?, ?, ?, ?, ?, ?, ?, ?, {NOW_SQL})",
        (
            memory.user_id,
            memory.topic,
            memory.fact,
            memory.importance,
            memory.category,
            memory.source_session,
            memory.source_channel,
            memory.ref,
            json.dumps(memory.metadata, ensure_ascii=False),
            memory.created_at,
            memory.created_at,
            memory.embedding,
            memory.embedding_model,
            memory.embedding_dim,
            memory.embedding_context,
            memory.layer,
            memory.occurred_at,
            memory.kind,
            memory.agent_id,
            memory.visibility,
        ),
    )
    return int(cursor.lastrowid or 0)


def get(conn: sqlite3.Connection, memory_id: int) -> MemoryRecord | None:
    row = conn.execute(f"{_SELECT} WHERE id = ?", (memory_id,)).fetchone()
    return MemoryRecord.from_row(row) if row else None


def get_many(conn: sqlite3.Connection, memory_ids: Sequence[int]) -> dict[int, MemoryRecord]:
    """Rows by id (missing ids are absent from the result)."""
    if not memory_ids:
        return {}
    rows = conn.execute(
        f"{_SELECT} WHERE id IN (SELECT value FROM json_each(?))", (json.dumps(list(memory_ids)),)
    )
    return {row["id"]: MemoryRecord.from_row(row) for row in rows}


# The trigram index finds substrings of three characters or more; shorter ones are scanned.
MIN_TRIGRAM_TEXT = 3


def list_memories(
    conn: sqlite3.Connection, where: MemoryFilter, *, limit: int, before_id: int | None
) -> list[MemoryRecord]:
    """Newest first by id, or by created_at then id (``where.order == "created"``), keyset-paginated
    (``before_id``: the last row of the previous page; by date, with ``where.before_created_at``
    its created_at) so deep pages stay fast: both orders read an index in order (migration 012)."""
    clauses, params = [], []  # type: tuple[list[str], list[Any]]
    equal = {
        "user_id": where.user_id,
        "source_session": where.source_session,
        "topic": where.topic,
        "layer": where.layer,
        "category": where.category,
        "agent_id": where.agent_id,
        "visibility": where.visibility,
        "source_channel": where.channel,
    }
    for column, value in equal.items():
        if value is not None:
            clauses.append(f"{column} = ?")
            params.append(value)
    bounds = (
        ("importance >= ?", where.min_importance),
        ("importance <= ?", where.max_importance),
        ("created_at >= ?", where.created_from),
        ("created_at < ?", where.created_before),
    )
    for clause, bound in bounds:
        if bound is not None:
            clauses.append(clause)
            params.append(bound)
    if before_id is not None:
        cursor_sql, cursor_params = _cursor(where, before_id)
        clauses.append(cursor_sql)
        params.extend(cursor_params)
    elif where.before_created_at is not None:  # a date alone: the rows created before it
        clauses.append("created_at < ?")
        params.append(where.before_created_at)
    if not where.include_superseded:
        clauses.append("superseded_by IS NULL")
    if where.audience is not None:
        audience_sql, audience_params = where.audience.sql()
        if audience_sql:
            clauses.append(audience_sql.removeprefix(" AND "))
            params.extend(audience_params)
    if where.kinds is not None:
        clauses.append("kind IN (SELECT value FROM json_each(?))")
        params.append(json.dumps(list(where.kinds)))
    if where.text:
        if len(where.text) >= MIN_TRIGRAM_TEXT:
            # A quoted string is a phrase of trigrams: the rows whose topic or fact contain it.
            clauses.append("id IN (SELECT rowid FROM memories_trigram WHERE memories_trigram MATCH ?)")
            params.append(quote(where.text))
        else:
            # Too short for trigrams: scanned, folded the same way on both sides (Unicode, not ASCII).
            clauses.append("(instr(casefold(fact), ?) > 0 OR instr(casefold(topic), ?) > 0)")
            params.extend([where.text.casefold()] * 2)
    order = "created_at DESC, id DESC" if where.order == "created" else "id DESC"
    sql = f"{_SELECT}{' WHERE ' + ' AND '.join(clauses) if clauses else ''} ORDER BY {order} LIMIT ?"
    return [MemoryRecord.from_row(row) for row in conn.execute(sql, (*params, limit))]


def _cursor(where: MemoryFilter, before_id: int) -> tuple[str, list[Any]]:
    """The rows after ``before_id`` in the list's order. By date, the pair (created_at, id): as the
    client sends it back, or looked up among the listed user's rows for a client that sends the id
    alone (then a deleted row ends the list: nothing to place the cursor by)."""
    if where.order != "created":
        return "id < ?", [before_id]
    if where.before_created_at is not None:
        return "(created_at, id) < (?, ?)", [where.before_created_at, before_id]
    return (
        "(created_at, id) < (SELECT c.created_at, c.id FROM memories AS c WHERE c.id = ?"
        " AND (? IS NULL OR c.user_id = ?))",
        [before_id, where.user_id, where.user_id],
    )


def conversation_sessions(
    conn: sqlite3.Connection,
    user_id: str,
    *,
    newest_first: bool = True,
    limit: int | None = None,
    offset: int = 0,
    audience: Audience = EVERYONE,
) -> list[ConversationSession]:
    """The user's sessions that have turns ``audience`` may see (counted over those turns), by
    their last activity (the (user, session) index)."""
    order = "DESC" if newest_first else "ASC"
    scope, scope_params = audience.sql()
    rows = conn.execute(
        "SELECT source_session, max(source_channel), count(*), min(coalesce(occurred_at, created_at)),"
        " max(coalesce(occurred_at, created_at)), max(created_at), max(id),"
        " (SELECT s.id FROM memories AS s WHERE s.user_id = ? AND s.source_session = t.source_session"
        "  AND s.category = 'session_summary' AND s.kind = 'fact' AND s.superseded_by IS NULL"
        "  ORDER BY s.id DESC LIMIT 1), max(agent_id), min(visibility),"  # 'private' < 'shared'
        # More than one reach among its turns (a session id reused by another agent or group).
        " count(DISTINCT coalesce(agent_id, '') || char(31) || visibility || char(31)"
        "  || CASE WHEN visibility = 'shared' THEN coalesce(source_channel, '') ELSE '' END) > 1"
        f" FROM memories AS t WHERE user_id = ? AND kind = 'turn' AND source_session IS NOT NULL{scope}"
        f" GROUP BY source_session ORDER BY max(created_at) {order}, source_session {order} LIMIT ? OFFSET ?",
        (user_id, user_id, *scope_params, -1 if limit is None else limit, offset),
    )
    return [ConversationSession(*row) for row in rows]


def turn_ids_of(
    conn: sqlite3.Connection, user_id: str, session_id: str | None, digests: Sequence[str]
) -> list[int]:
    """The ids of the session's live turns whose message digest is one of ``digests`` (every part
    of a long message), oldest first."""
    if not digests:
        return []
    session = "source_session IS NULL" if session_id is None else "source_session = ?"
    rows = conn.execute(
        f"SELECT id FROM memories WHERE user_id = ? AND {session} AND kind = 'turn'"
        " AND json_extract(metadata, '$.digest') IN (SELECT value FROM json_each(?)) ORDER BY id",
        (user_id, *([] if session_id is None else [session_id]), json.dumps(list(digests))),
    )
    return [int(row[0]) for row in rows]


def stored_by_job(
    conn: sqlite3.Connection, user_id: str, session_id: str | None, job_id: int
) -> list[MemoryRecord]:
    """The facts an extraction job stored (superseded or not), in the order it stored them (the
    turns it kept are the conversation itself, listed with the session's memories).

    Found through the session index (the job's user and session), then the job id in the metadata.
    """
    session = "source_session IS NULL" if session_id is None else "source_session = ?"
    rows = conn.execute(
        f"{_SELECT} WHERE user_id = ? AND {session} AND json_extract(metadata, '$.ingest_job') = ?"
        " AND kind = 'fact' ORDER BY id",
        (user_id, *([] if session_id is None else [session_id]), job_id),
    )
    return [MemoryRecord.from_row(row) for row in rows]


# Longest supersession chain followed forward (a chain is a list, but never trust a loop).
MAX_CHAIN = 50


def history(conn: sqlite3.Connection, record: MemoryRecord) -> MemoryHistory:
    """The supersession, merge and summary links of ``record``, all within its user's rows."""
    same_user = f"{_SELECT} WHERE user_id = ? AND "
    replaces = conn.execute(
        same_user + "superseded_by = ? ORDER BY id DESC LIMIT ?", (record.user_id, record.id, MAX_CHAIN)
    )
    chain: list[MemoryRecord] = []
    seen = {record.id}
    successor = record.superseded_by
    while successor is not None and successor not in seen and len(chain) < MAX_CHAIN:
        row = get(conn, successor)
        if row is None or row.user_id != record.user_id:
            break
        chain.append(row)
        seen.add(row.id)
        successor = row.superseded_by

    def linked(kind: str, column: str, other: str) -> list[MemoryRecord]:
        # The links first (their own index), then those rows: one IN over memories made SQLite walk
        # the user's whole index (~50 ms at 100k rows).
        ids = [
            row[0]
            for row in conn.execute(
                f"SELECT {other} FROM memory_links WHERE kind = ? AND {column} = ? ORDER BY {other} DESC LIMIT ?",
                (kind, record.id, MAX_CHAIN),
            )
        ]
        rows = get_many(conn, ids)
        return [rows[i] for i in ids if i in rows and rows[i].user_id == record.user_id]

    summary = get(conn, record.compressed_into) if record.compressed_into is not None else None
    return MemoryHistory(
        memory=record,
        replaces=[MemoryRecord.from_row(row) for row in replaces],
        replaced_by=chain,
        merged_from=linked("merged", "to_id", "from_id"),
        merged_into=linked("merged", "from_id", "to_id"),
        summarises=linked("summarised", "to_id", "from_id"),
        summary=summary if summary is not None and summary.user_id == record.user_id else None,
    )


# -- the Markdown mirror --------------------------------------------------------------------
# Metadata key listing imported texts that were merged into a memory (see imported_facts).
IMPORTED_WORDINGS_KEY = "markdown_merged"
MAX_IMPORTED_WORDINGS = 20


def users_in_layers(conn: sqlite3.Connection, layers: Sequence[str]) -> list[str]:
    """Users with live memories in these layers, sorted."""
    rows = conn.execute(
        "SELECT DISTINCT user_id FROM memories WHERE superseded_by IS NULL"
        " AND layer IN (SELECT value FROM json_each(?)) ORDER BY user_id",
        (json.dumps(list(layers)),),
    )
    return [row[0] for row in rows]


def live_in_layers(conn: sqlite3.Connection, user_id: str, layers: Sequence[str]) -> list[MemoryRecord]:
    """One user's live memories in these layers, in id order (the index on user, layer)."""
    rows = conn.execute(
        f"{_SELECT} WHERE user_id = ? AND superseded_by IS NULL"
        " AND layer IN (SELECT value FROM json_each(?)) ORDER BY id",
        (user_id, json.dumps(list(layers))),
    )
    return [MemoryRecord.from_row(row) for row in rows]


def imported_facts(conn: sqlite3.Connection, user_id: str, facts: Sequence[str]) -> set[str]:
    """Which of ``facts`` this user already has: as the text of any memory (live, archived or
    superseded), or among the imported wordings recorded on one (:func:`record_imported_wordings`).

    Exact text, no normalisation: this is what makes a second import of the same files a no-op.
    """
    if not facts:
        return set()
    wanted = json.dumps(list(facts), ensure_ascii=False)
    rows = conn.execute(
        "SELECT fact FROM memories WHERE user_id = ? AND fact IN (SELECT value FROM json_each(?))"
        " UNION SELECT w.value FROM memories m, json_each(m.metadata, ?) w"
        " WHERE m.user_id = ? AND instr(m.metadata, ?) > 0 AND w.value IN (SELECT value FROM json_each(?))",
        (user_id, wanted, f"$.{IMPORTED_WORDINGS_KEY}", user_id, f'"{IMPORTED_WORDINGS_KEY}"', wanted),
    )
    return {row[0] for row in rows}


def record_imported_wordings(conn: sqlite3.Connection, wordings: dict[int, list[str]]) -> None:
    """Remember, on each memory, the imported texts that were merged into it (newest last, at most
    ``MAX_IMPORTED_WORDINGS``), so that importing them again finds them instead of merging again."""
    for memory_id, texts in wordings.items():
        row = conn.execute("SELECT metadata FROM memories WHERE id = ?", (memory_id,)).fetchone()
        if row is None:
            continue
        metadata = json.loads(row[0] or "{}")
        if not isinstance(metadata, dict):
            continue
        known = metadata.get(IMPORTED_WORDINGS_KEY)
        known = [t for t in known if isinstance(t, str)] if isinstance(known, list) else []
        merged = [*[t for t in known if t not in texts], *dict.fromkeys(texts)][-MAX_IMPORTED_WORDINGS:]
        metadata[IMPORTED_WORDINGS_KEY] = merged
        conn.execute(
            "UPDATE memories SET metadata = ? WHERE id = ?",
            (json.dumps(metadata, ensure_ascii=False), memory_id),
        )


def update(conn: sqlite3.Connection, memory_id: int, changes: dict[str, Any]) -> bool:
    """Apply ``changes`` (keys from EDITABLE_COLUMNS or the embedding columns); False if no row."""
    allowed = set(EDITABLE_COLUMNS) | {"embedding", "embedding_model", "embedding_dim"}
    unknown = set(changes) - allowed
    if unknown:
        raise ValueError(f"not updatable: {sorted(unknown)}")
    values = dict(changes)
    if "metadata" in values:
        values["metadata"] = json.dumps(values["metadata"], ensure_ascii=False)
    params = list(values.values())
    assignments = [f"{quote_identifier(col)} = ?" for col in values]
    if "layer" in values:  # a move starts the layer's clock (decay, the working TTL)
        assignments.insert(0, f"layer_since = CASE WHEN layer = ? THEN layer_since ELSE {NOW_SQL} END")
        params.insert(0, values["layer"])
    sets = ", ".join([*assignments, f"updated_at = {NOW_SQL}"])
    cursor = conn.execute(f"UPDATE memories SET {sets} WHERE id = ?", (*params, memory_id))
    return cursor.rowcount > 0


def merge_into(conn: sqlite3.Connection, memory_id: int, newer: NewMemory) -> None:
    """A near-duplicate arrived: keep the newer wording and vector, the higher importance, and count
    the repetition as an access (being said again is a sign the memory matters). Said again, an
    archived memory comes back in the newcomer's layer, and one written to core lands in core."""
    conn.execute(
        "UPDATE memories SET fact = ?, topic = CASE WHEN ? <> '' THEN ? ELSE topic END,"
        " layer_since = CASE WHEN (? = 'core' OR layer = 'archive') AND layer <> ? THEN"
        f" {NOW_SQL} ELSE layer_since END,"
        " layer = CASE WHEN ? = 'core' OR layer = 'archive' THEN ? ELSE layer END,"
        " importance = max(importance, ?), access_count = access_count + 1,"
        f" last_accessed = {NOW_SQL}, updated_at = {NOW_SQL},"
        " embedding = coalesce(?, embedding), embedding_model = coalesce(?, embedding_model),"
        " embedding_dim = coalesce(?, embedding_dim) WHERE id = ?",
        (
            newer.fact,
            newer.topic,
            newer.topic,
            newer.layer,
            newer.layer,
            newer.layer,
            newer.layer,
            newer.importance,
            newer.embedding,
            newer.embedding_model if newer.embedding is not None else None,
            newer.embedding_dim if newer.embedding is not None else None,
            memory_id,
        ),
    )


def bump_access(conn: sqlite3.Connection, reads: dict[int, int]) -> int:
    """Add ``reads[id]`` to each memory's ``access_count`` and stamp ``last_accessed`` now.

    ``updated_at`` stays: being read is not an edit (and the FTS triggers only fire on text).
    Returns the rows that still existed.
    """
    cursor = conn.executemany(
        f"UPDATE memories SET access_count = access_count + ?, last_accessed = {NOW_SQL} WHERE id = ?",
        [(count, memory_id) for memory_id, count in sorted(reads.items())],
    )
    return cursor.rowcount


def delete(conn: sqlite3.Connection, memory_id: int) -> bool:
    return conn.execute("DELETE FROM memories WHERE id = ?", (memory_id,)).rowcount > 0


def superseded_by(conn: sqlite3.Connection, memory_id: int) -> list[int]:
    """Ids of the rows ``memory_id`` supersedes: deleting it makes them live again (ON DELETE SET NULL)."""
    return [row[0] for row in conn.execute("SELECT id FROM memories WHERE superseded_by = ?", (memory_id,))]


def live_in_layer(conn: sqlite3.Connection, user_id: str, layer: str, limit: int) -> list[MemoryRecord]:
    """One user's live memories in ``layer``, most important first, then newest (the profile)."""
    rows = conn.execute(
        f"{_SELECT} WHERE user_id = ? AND layer = ? AND superseded_by IS NULL"
        " ORDER BY importance DESC, id DESC LIMIT ?",
        (user_id, layer, limit),
    )
    return [MemoryRecord.from_row(row) for row in rows]


def live_count(conn: sqlite3.Connection, user_id: str, audience: Audience = EVERYONE) -> int:
    """One user's live memories that ``audience`` may see (an index range, not a table scan)."""
    scope, params = audience.sql()
    return int(
        conn.execute(
            f"SELECT count(*) FROM memories WHERE user_id = ? AND superseded_by IS NULL{scope}",
            (user_id, *params),
        ).fetchone()[0]
    )
