"""All SQL about memories. Nothing else in the package writes SQL for this table.

Every function takes a connection from :class:`~memory_cortex.store.db.Database` (writer or reader), so
transactions stay in the caller's hands; every value is a bound parameter. The SQL is shared by SQLite
and PostgreSQL; where they differ, the connection's dialect (``store/dialect.py``) gives the fragment,
and the two queries that differ too much for fragments (the text filter, imported wordings) have one
version per backend here.
"""

from __future__ import annotations

import dataclasses
import json
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
from .connection import Connection, dialect_of
from .dialect import SQLITE_NOW, Dialect
from .fts import like_pattern, quote

# SQLite's current timestamp, for the store modules not yet written for both backends (they import
# it from here). This module uses the connection's dialect (``dialect_of(conn).now``) instead.
NOW_SQL = SQLITE_NOW


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
    "subject_id",
    "attribute",
    "value",
    "valid_from",
    "valid_to",
)

# Every column of a MemoryRecord (the store's own SELECTs elsewhere name them with this).
RECORD_COLUMNS = (
    "id, user_id, topic, fact, importance, category, source_session, source_channel, ref,"
    " metadata, created_at, updated_at, access_count, last_accessed, superseded_by,"
    " embedding_model, embedding_dim, embedding_context, layer, layer_since, compressed_into,"
    " embedding IS NOT NULL AS has_embedding, occurred_at, kind, agent_id, visibility,"
    " subject_id, attribute, value, valid_from, valid_to"
)
_SELECT = f"SELECT {RECORD_COLUMNS} FROM memories"


def quote_identifier(name: str) -> str:
    """The one helper that puts an identifier into SQL (only ever with names from this module)."""
    return '"' + name.replace('"', '""') + '"'


def insert(conn: Connection, memory: NewMemory, *, subject_id: int | None = None) -> int:
    """Store ``memory`` (about entity ``subject_id``; None: its user); its new id (``RETURNING``:
    PostgreSQL has no ``lastrowid``)."""
    now = dialect_of(conn).now
    cursor = conn.execute(
        "INSERT INTO memories (user_id, topic, fact, importance, category, source_session,"
        " source_channel, ref, metadata, created_at, updated_at, embedding, embedding_model,"
        " embedding_dim, embedding_context, layer, occurred_at, kind, agent_id, visibility,"
        " subject_id, attribute, value, valid_from, layer_since)"
        f" VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, COALESCE(?, {now}), COALESCE(?, {now}),"
        # layer_since: now, whatever created_at says (a back-dated memory still enters its layer now).
        f" ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, {now}) RETURNING id",
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
            subject_id,
            memory.attribute,
            memory.value,
            memory.valid_from,
        ),
    )
    return int(cursor.fetchone()[0])


def get(conn: Connection, memory_id: int) -> MemoryRecord | None:
    row = conn.execute(f"{_SELECT} WHERE id = ?", (memory_id,)).fetchone()
    return MemoryRecord.from_row(row) if row else None


def get_many(conn: Connection, memory_ids: Sequence[int]) -> dict[int, MemoryRecord]:
    """Rows by id (missing ids are absent from the result)."""
    if not memory_ids:
        return {}
    d = dialect_of(conn)
    rows = conn.execute(f"{_SELECT} WHERE {d.in_list('id')}", (d.list_param(memory_ids),))
    return {row["id"]: MemoryRecord.from_row(row) for row in rows}


def hide_unseen_replacements(
    conn: Connection, records: Sequence[MemoryRecord], audience: Audience
) -> list[MemoryRecord]:
    """``records`` as ``audience`` may see them: where ``superseded_by`` names a memory it may not
    see, that id is hidden (``replacement_hidden``): the record still reads as replaced, and the
    other memory's existence is not told."""
    named = {record.superseded_by for record in records if record.superseded_by is not None}
    if audience.unrestricted or not named:
        return list(records)
    replacements = get_many(conn, sorted(named))
    seen = {mid for mid, record in replacements.items() if audience.admits(record.scope)}
    return [
        dataclasses.replace(record, replacement_hidden=True)
        if record.superseded_by is not None and record.superseded_by not in seen
        else record
        for record in records
    ]


# The trigram index finds substrings of three characters or more; shorter ones are scanned.
MIN_TRIGRAM_TEXT = 3


def list_memories(
    conn: Connection, where: MemoryFilter, *, limit: int, before_id: int | None
) -> list[MemoryRecord]:
    """Newest first by id, or by created_at then id (``where.order == "created"``), keyset-paginated
    (``before_id``: the last row of the previous page; by date, with ``where.before_created_at``
    its created_at) so deep pages stay fast: both orders read an index in order (migration 012)."""
    d = dialect_of(conn)
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
        clauses.append(d.in_list("kind"))
        params.append(d.list_param(where.kinds))
    if where.text:
        text_sql, text_params = _text_filter(d, where.text)
        clauses.append(text_sql)
        params.extend(text_params)
    order = "created_at DESC, id DESC" if where.order == "created" else "id DESC"
    sql = f"{_SELECT}{' WHERE ' + ' AND '.join(clauses) if clauses else ''} ORDER BY {order} LIMIT ?"
    return [MemoryRecord.from_row(row) for row in conn.execute(sql, (*params, limit))]


def _text_filter(d: Dialect, text: str) -> tuple[str, list[Any]]:
    """The rows whose topic or fact contain ``text``, case-insensitively (Unicode case, accents
    kept: what SQLite's trigram tokenizer does)."""
    if d.name == "postgres":
        # ILIKE folds both sides with lower(); the pg_trgm index on this expression serves it (a
        # text too short for trigrams is filtered, folded the same way, so one rule for every length).
        return "(topic || E'\\n' || fact) ILIKE ? ESCAPE '\\'", [like_pattern(text)]
    if len(text) >= MIN_TRIGRAM_TEXT:
        # A quoted string is a phrase of trigrams: the rows whose topic or fact contain it.
        return "id IN (SELECT rowid FROM memories_trigram WHERE memories_trigram MATCH ?)", [quote(text)]
    # Too short for trigrams: scanned, folded the same way on both sides (Unicode, not ASCII).
    return "(instr(casefold(fact), ?) > 0 OR instr(casefold(topic), ?) > 0)", [text.casefold()] * 2


def _cursor(where: MemoryFilter, before_id: int) -> tuple[str, list[Any]]:
    """The rows after ``before_id`` in the list's order. By date, the pair (created_at, id): as the
    client sends it back, or looked up among the listed user's rows for a client that sends the id
    alone (then a deleted row ends the list: nothing to place the cursor by)."""
    if where.order != "created":
        return "id < ?", [before_id]
    if where.before_created_at is not None:
        return "(created_at, id) < (?, ?)", [where.before_created_at, before_id]
    # Looked up only among the rows the requester may see: a hidden row ends the list as a missing
    # one does, so the cursor never tells whether it exists.
    scope, scope_params = where.audience.sql("c.") if where.audience is not None else ("", ())
    return (
        "(created_at, id) < (SELECT c.created_at, c.id FROM memories AS c WHERE c.id = ?"
        f" AND (? IS NULL OR c.user_id = ?){scope})",
        [before_id, where.user_id, where.user_id, *scope_params],
    )


def conversation_sessions(
    conn: Connection,
    user_id: str,
    *,
    newest_first: bool = True,
    limit: int | None = None,
    offset: int = 0,
    audience: Audience = EVERYONE,
) -> list[ConversationSession]:
    """The user's sessions that have turns ``audience`` may see (counted over those turns), by
    their last activity (the (user, session) index). Names are compared by code point on both
    backends (``bytewise``), so the channel and agent picked and the order of ties agree."""
    d = dialect_of(conn)
    order = "DESC" if newest_first else "ASC"
    scope, scope_params = audience.sql()
    summary_scope, summary_params = audience.sql("s.")  # a summary the requester may see, or none
    unit = d.char(31)  # between the parts of a reach: a character no name contains
    session = d.bytewise("source_session")
    rows = conn.execute(
        f"SELECT source_session, max({d.bytewise('source_channel')}), count(*),"
        " min(coalesce(occurred_at, created_at)),"
        " max(coalesce(occurred_at, created_at)), max(created_at), max(id),"
        " (SELECT s.id FROM memories AS s WHERE s.user_id = ? AND s.source_session = t.source_session"
        f"  AND s.category = 'session_summary' AND s.kind = 'fact' AND s.superseded_by IS NULL{summary_scope}"
        f"  ORDER BY s.id DESC LIMIT 1), max({d.bytewise('agent_id')}), min(visibility),"  # 'private' < 'shared'
        # More than one reach among its turns (a session id reused by another agent or group).
        f" count(DISTINCT coalesce(agent_id, '') || {unit} || visibility || {unit}"
        "  || CASE WHEN visibility = 'shared' THEN coalesce(source_channel, '') ELSE '' END) > 1"
        f" FROM memories AS t WHERE user_id = ? AND kind = 'turn' AND source_session IS NOT NULL{scope}"
        f" GROUP BY source_session ORDER BY max(created_at) {order}, {session} {order} LIMIT ? OFFSET ?",
        (user_id, *summary_params, user_id, *scope_params, d.unlimited if limit is None else limit, offset),
    )
    return [_session(row) for row in rows]


def _session(row: Sequence[Any]) -> ConversationSession:
    """A row of :func:`conversation_sessions`; its last column is a comparison, which SQLite gives
    as 0 or 1 and PostgreSQL as a bool."""
    *fields, mixed_scope = row
    return ConversationSession(*fields, mixed_scope=bool(mixed_scope))


# Longest supersession chain followed forward (a chain is a list, but never trust a loop).
MAX_CHAIN = 50


def history(conn: Connection, record: MemoryRecord) -> MemoryHistory:
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


def users_in_layers(conn: Connection, layers: Sequence[str]) -> list[str]:
    """Users with live memories in these layers, sorted by code point (as SQLite sorts text)."""
    d = dialect_of(conn)
    rows = conn.execute(
        f"SELECT DISTINCT {d.bytewise('user_id')} AS user_id FROM memories"
        f" WHERE superseded_by IS NULL AND {d.in_list('layer')} ORDER BY user_id",
        (d.list_param(layers),),
    )
    return [row[0] for row in rows]


def live_in_layers(conn: Connection, user_id: str, layers: Sequence[str]) -> list[MemoryRecord]:
    """One user's live memories in these layers, in id order (the index on user, layer)."""
    d = dialect_of(conn)
    rows = conn.execute(
        f"{_SELECT} WHERE user_id = ? AND superseded_by IS NULL AND {d.in_list('layer')} ORDER BY id",
        (user_id, d.list_param(layers)),
    )
    return [MemoryRecord.from_row(row) for row in rows]


def imported_facts(conn: Connection, user_id: str, facts: Sequence[str]) -> set[str]:
    """Which of ``facts`` this user already has: as the text of any memory (live, archived or
    superseded), or among the imported wordings recorded on one (:func:`record_imported_wordings`).

    Exact text, no normalisation: this is what makes a second import of the same files a no-op.
    """
    if not facts:
        return set()
    d = dialect_of(conn)
    wanted = d.list_param(facts)
    marker = f'"{IMPORTED_WORDINGS_KEY}"'  # a cheap text test before the JSON is parsed
    if d.name == "postgres":
        sql, params = _IMPORTED_POSTGRES, (user_id, marker, user_id, wanted, wanted)
    else:
        sql, params = (
            _IMPORTED_SQLITE,
            (user_id, wanted, f"$.{IMPORTED_WORDINGS_KEY}", user_id, marker, wanted),
        )
    return {row[0] for row in conn.execute(sql, params)}


_IMPORTED_SQLITE = (
    "SELECT fact FROM memories WHERE user_id = ? AND fact IN (SELECT value FROM json_each(?))"
    " UNION SELECT w.value FROM memories m, json_each(m.metadata, ?) w"
    " WHERE m.user_id = ? AND instr(m.metadata, ?) > 0 AND w.value IN (SELECT value FROM json_each(?))"
)
# json_each(metadata, '$.key') yields an array's elements, or a lone value itself, and nothing (no
# error) when the key is absent; lax JSON path's [*] does the same. Only strings can equal a fact.
# The rows that name the key are picked first (MATERIALIZED: before any JSON is parsed), leaving out
# metadata jsonb cannot read (a NUL escape, valid JSON that SQLite reads).
_IMPORTED_POSTGRES = (
    "WITH named AS MATERIALIZED (SELECT metadata FROM memories WHERE user_id = ? AND strpos(metadata, ?) > 0"
    "  AND strpos(metadata, '\\u0000') = 0)"
    " SELECT fact FROM memories WHERE user_id = ? AND fact = ANY(?)"
    " UNION SELECT w.value #>> '{}' FROM named m,"
    f" jsonb_path_query((m.metadata)::jsonb, 'lax $.{IMPORTED_WORDINGS_KEY}[*] ? (@.type() == \"string\")')"
    " AS w(value)"
    " WHERE (w.value #>> '{}') = ANY(?)"
)


def record_imported_wordings(conn: Connection, wordings: dict[int, list[str]]) -> None:
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


def update(conn: Connection, memory_id: int, changes: dict[str, Any]) -> bool:
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
    now = dialect_of(conn).now
    if "layer" in values:  # a move starts the layer's clock (decay, the working TTL)
        assignments.insert(0, f"layer_since = CASE WHEN layer = ? THEN layer_since ELSE {now} END")
        params.insert(0, values["layer"])
    sets = ", ".join([*assignments, f"updated_at = {now}"])
    cursor = conn.execute(f"UPDATE memories SET {sets} WHERE id = ?", (*params, memory_id))
    return cursor.rowcount > 0


def merge_into(conn: Connection, memory_id: int, newer: NewMemory) -> None:
    """A near-duplicate arrived: keep the newer wording and vector, the higher importance, and count
    the repetition as an access (being said again is a sign the memory matters). Said again, an
    archived memory comes back in the newcomer's layer, and one written to core lands in core."""
    d = dialect_of(conn)
    conn.execute(
        "UPDATE memories SET fact = ?, topic = CASE WHEN ? <> '' THEN ? ELSE topic END,"
        " layer_since = CASE WHEN (? = 'core' OR layer = 'archive') AND layer <> ? THEN"
        f" {d.now} ELSE layer_since END,"
        " layer = CASE WHEN ? = 'core' OR layer = 'archive' THEN ? ELSE layer END,"
        f" importance = {d.greatest('importance', '?')}, access_count = access_count + 1,"
        f" last_accessed = {d.now}, updated_at = {d.now},"
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


def bump_access(conn: Connection, reads: dict[int, int]) -> int:
    """Add ``reads[id]`` to each memory's ``access_count`` and stamp ``last_accessed`` now.

    ``updated_at`` stays: being read is not an edit (and the FTS triggers only fire on text).
    Returns the rows that still existed.
    """
    cursor = conn.executemany(
        f"UPDATE memories SET access_count = access_count + ?, last_accessed = {dialect_of(conn).now}"
        " WHERE id = ?",
        [(count, memory_id) for memory_id, count in sorted(reads.items())],
    )
    return cursor.rowcount


def delete(conn: Connection, memory_id: int) -> bool:
    return conn.execute("DELETE FROM memories WHERE id = ?", (memory_id,)).rowcount > 0


def superseded_by(conn: Connection, memory_id: int) -> list[int]:
    """Ids of the rows ``memory_id`` supersedes: deleting it makes them live again (ON DELETE SET NULL)."""
    return [row[0] for row in conn.execute("SELECT id FROM memories WHERE superseded_by = ?", (memory_id,))]


def live_in_layer(conn: Connection, user_id: str, layer: str, limit: int) -> list[MemoryRecord]:
    """One user's live memories in ``layer``, most important first, then newest (the profile)."""
    rows = conn.execute(
        f"{_SELECT} WHERE user_id = ? AND layer = ? AND superseded_by IS NULL"
        " ORDER BY importance DESC, id DESC LIMIT ?",
        (user_id, layer, limit),
    )
    return [MemoryRecord.from_row(row) for row in rows]


def live_count(conn: Connection, user_id: str, audience: Audience = EVERYONE) -> int:
    """One user's live memories that ``audience`` may see (an index range, not a table scan)."""
    scope, params = audience.sql()
    return int(
        conn.execute(
            f"SELECT count(*) FROM memories WHERE user_id = ? AND superseded_by IS NULL{scope}",
            (user_id, *params),
        ).fetchone()[0]
    )
