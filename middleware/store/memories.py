"""All SQL about memories. Nothing else in the package writes SQL for this table.

Every function takes a connection from :class:`~middleware.store.db.Database` (writer or reader), so
transactions stay in the caller's hands; every value is a bound parameter.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from ..records import (
    ConversationSession,
    MemoryFilter,
    MemoryHistory,
    MemoryRecord,
    NewMemory,
    RankTraits,
    speaker_label,
)
from .fts import FtsQuery, like_pattern, quote

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
)

_SELECT = (
    "SELECT id, user_id, topic, fact, importance, category, source_session, source_channel, ref,"
    " metadata, created_at, updated_at, access_count, last_accessed, superseded_by,"
    " embedding_model, embedding_dim, embedding_context, layer, layer_since, compressed_into,"
    " embedding IS NOT NULL AS has_embedding, occurred_at, kind FROM memories"
)


def quote_identifier(name: str) -> str:
    """The one helper that puts an identifier into SQL (only ever with names from this module)."""
    return '"' + name.replace('"', '""') + '"'


def insert(conn: sqlite3.Connection, memory: NewMemory) -> int:
    cursor = conn.execute(
        "INSERT INTO memories (user_id, topic, fact, importance, category, source_session,"
        " source_channel, ref, metadata, created_at, updated_at, embedding, embedding_model,"
        f" embedding_dim, embedding_context, layer, occurred_at, kind) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?,"
        f" COALESCE(?, {NOW_SQL}), COALESCE(?, {NOW_SQL}), ?, ?, ?, ?, ?, ?, ?)",
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
        ),
    )
    return int(cursor.lastrowid or 0)


def session_context(
    conn: sqlite3.Connection, user_id: str, source_session: str, before_id: int | None, count: int
) -> list[tuple[str, str]]:
    """``(topic, fact)`` of the ``count`` live turns of this session just before ``before_id``
    (turns: rows stored with session context; a standalone fact of the session is no context).

    Oldest first, as they were said. ``before_id`` None: the latest ones (for a row not yet
    inserted, every existing row is earlier).
    """
    if count <= 0:
        return []
    rows = conn.execute(
        "SELECT topic, fact FROM memories WHERE user_id = ? AND source_session = ? AND superseded_by IS NULL"
        " AND embedding_context > 0 AND id < ? ORDER BY id DESC LIMIT ?",
        (user_id, source_session, before_id if before_id is not None else 2**63 - 1, count),
    ).fetchall()
    return [(str(topic), str(fact)) for topic, fact in reversed(rows)]


def in_scope_sql(
    layers: Sequence[str] | None, kinds: Sequence[str] | None, alias: str = ""
) -> tuple[str, tuple[Any, ...]]:
    """`` AND …`` keeping rows in ``layers`` and of ``kinds`` (``None``: any), and its parameters.

    ``alias``: the table's alias in the query (``"m."``), or nothing.
    """
    layer_json = json.dumps(list(layers)) if layers is not None else None
    kind_json = json.dumps(list(kinds)) if kinds is not None else None
    sql = (
        f" AND (? IS NULL OR {alias}layer IN (SELECT value FROM json_each(?)))"
        f" AND (? IS NULL OR {alias}kind IN (SELECT value FROM json_each(?)))"
    )
    return sql, (layer_json, layer_json, kind_json, kind_json)


def session_followers(
    conn: sqlite3.Connection,
    user_id: str,
    memory_ids: Sequence[int],
    count: int,
    layers: Sequence[str],
    kinds: Sequence[str] | None = None,
) -> dict[int, list[int]]:
    """For each of these memories that is a turn of a session (stored with session context), the
    ids of the next ``count`` live turns of that session in ``layers`` (and ``kinds``), in order."""
    if count <= 0 or not memory_ids:
        return {}
    turns = conn.execute(
        "SELECT id, source_session FROM memories WHERE id IN (SELECT value FROM json_each(?))"
        " AND user_id = ? AND source_session IS NOT NULL AND embedding_context > 0",
        (json.dumps(list(memory_ids)), user_id),
    ).fetchall()
    scope, scope_params = in_scope_sql(layers, kinds)
    found: dict[int, list[int]] = {}
    for memory_id, session in turns:
        rows = conn.execute(
            "SELECT id FROM memories WHERE user_id = ? AND source_session = ? AND id > ?"
            f" AND superseded_by IS NULL AND embedding_context > 0{scope} ORDER BY id LIMIT ?",
            (user_id, session, memory_id, *scope_params, count),
        )
        found[int(memory_id)] = [int(row[0]) for row in rows]
    return found


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


def has_turns(conn: sqlite3.Connection, user_id: str) -> bool:
    """Whether the user has any transcript turn (a row stored with session context): one step
    down the partial index ``memories_user_turns``."""
    row = conn.execute(
        "SELECT EXISTS (SELECT 1 FROM memories WHERE user_id = ? AND embedding_context > 0)", (user_id,)
    ).fetchone()
    return bool(row[0])


def rank_traits(conn: sqlite3.Connection, memory_ids: Sequence[int]) -> dict[int, RankTraits]:
    """The :class:`RankTraits` of these memories (missing ids are absent). A transcript turn is a
    row stored with session context whose text starts with a speaker label ("Melanie: …"): a fact
    an agent stored with its session key (OpenClaw's ``memory_store``) has no label and is none."""
    if not memory_ids:
        return {}
    rows = conn.execute(
        "SELECT id, substr(fact, 1, 80), length(fact), CASE WHEN embedding_context > 0 THEN source_session END"
        " FROM memories WHERE id IN (SELECT value FROM json_each(?))",
        (json.dumps(list(memory_ids)),),
    )
    found = {}
    for memory_id, head, chars, session in rows:
        label = speaker_label(head)
        speaker = label.casefold() if label is not None else None
        found[int(memory_id)] = RankTraits(speaker, int(chars), session if speaker is not None else None)
    return found


def list_memories(
    conn: sqlite3.Connection, where: MemoryFilter, *, limit: int, before_id: int | None
) -> list[MemoryRecord]:
    """Newest first, keyset-paginated by id (``before_id``) so deep pages stay fast."""
    clauses, params = [], []  # type: tuple[list[str], list[Any]]
    equal = {
        "user_id": where.user_id,
        "source_session": where.source_session,
        "topic": where.topic,
        "layer": where.layer,
        "category": where.category,
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
        ("id < ?", before_id),
    )
    for clause, bound in bounds:
        if bound is not None:
            clauses.append(clause)
            params.append(bound)
    if not where.include_superseded:
        clauses.append("superseded_by IS NULL")
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
    sql = f"{_SELECT}{' WHERE ' + ' AND '.join(clauses) if clauses else ''} ORDER BY id DESC LIMIT ?"
    return [MemoryRecord.from_row(row) for row in conn.execute(sql, (*params, limit))]


def conversation_sessions(
    conn: sqlite3.Connection,
    user_id: str,
    *,
    newest_first: bool = True,
    limit: int | None = None,
    offset: int = 0,
) -> list[ConversationSession]:
    """The user's sessions that have turns, by their last activity (the (user, session) index)."""
    order = "DESC" if newest_first else "ASC"
    rows = conn.execute(
        "SELECT source_session, max(source_channel), count(*), min(coalesce(occurred_at, created_at)),"
        " max(coalesce(occurred_at, created_at)), max(created_at), max(id),"
        " (SELECT s.id FROM memories AS s WHERE s.user_id = ? AND s.source_session = t.source_session"
        "  AND s.category = 'session_summary' AND s.kind = 'fact' AND s.superseded_by IS NULL"
        "  ORDER BY s.id DESC LIMIT 1)"
        " FROM memories AS t WHERE user_id = ? AND kind = 'turn' AND source_session IS NOT NULL"
        f" GROUP BY source_session ORDER BY max(created_at) {order}, source_session {order} LIMIT ? OFFSET ?",
        (user_id, user_id, -1 if limit is None else limit, offset),
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


def set_embedding(conn: sqlite3.Connection, memory_id: int, blob: bytes, model: str, dim: int) -> bool:
    """Store a vector without touching ``updated_at`` (the memory itself did not change)."""
    cursor = conn.execute(
        "UPDATE memories SET embedding = ?, embedding_model = ?, embedding_dim = ? WHERE id = ?",
        (blob, model, dim, memory_id),
    )
    return cursor.rowcount > 0


# -- search ---------------------------------------------------------------------------------
# The time a memory is about; memories_by_time (migration 006) indexes exactly this expression.
ABOUT_TIME_SQL = "coalesce(occurred_at, created_at)"


def about_times(conn: sqlite3.Connection, memory_ids: Sequence[int]) -> dict[int, str]:
    """``{id: the time it is about}`` of these rows (missing ids are absent)."""
    if not memory_ids:
        return {}
    rows = conn.execute(
        f"SELECT id, {ABOUT_TIME_SQL} FROM memories WHERE id IN (SELECT value FROM json_each(?))",
        (json.dumps(list(memory_ids)),),
    )
    return {int(row[0]): str(row[1]) for row in rows}


def newest_about_time(conn: sqlite3.Connection, user_id: str) -> str | None:
    """The latest time any live memory of ``user_id`` is about (a walk down memories_by_time)."""
    row = conn.execute(
        f"SELECT {ABOUT_TIME_SQL} FROM memories WHERE user_id = ? AND superseded_by IS NULL"
        f" ORDER BY {ABOUT_TIME_SQL} DESC LIMIT 1",
        (user_id,),
    ).fetchone()
    return str(row[0]) if row else None


def in_time_range(
    conn: sqlite3.Connection,
    user_id: str,
    start: str,
    end: str,
    limit: int,
    layers: Sequence[str] | None = None,
    kinds: Sequence[str] | None = None,
) -> list[int]:
    """Ids of up to ``limit`` live memories of ``user_id`` about a time in ``[start, end)``, newest
    first (``start``/``end`` in the stored format; an index range on memories_by_time)."""
    scope, scope_params = in_scope_sql(layers, kinds)
    rows = conn.execute(
        f"SELECT id FROM memories WHERE user_id = ? AND {ABOUT_TIME_SQL} >= ? AND {ABOUT_TIME_SQL} < ?"
        f" AND superseded_by IS NULL{scope}"
        f" ORDER BY {ABOUT_TIME_SQL} DESC, id DESC LIMIT ?",
        (user_id, start, end, *scope_params, limit),
    )
    return [int(row[0]) for row in rows]


def fts_candidates(
    conn: sqlite3.Connection,
    user_id: str,
    query: FtsQuery,
    limit: int,
    *,
    user_share: float = 1.0,
    common_term_share: float = 1.0,
    row_budget: int | None = None,
    term_counts: TermRowCounts | None = None,
    layers: Sequence[str] | None = None,
    kinds: Sequence[str] | None = None,
) -> dict[int, float]:
    """Best FTS candidates of one user as ``{id: fts_norm}`` with ``fts_norm`` in (0, 1].

    ``fts_norm`` is the seed's ``-bm25 / best -bm25 of this query``. (Normalising instead by the
    sum of the query terms' IDF, so that a row matching one minor word scores low, was tried: on
    LoCoMo it lowered hybrid recall@10 from 0.640 to 0.626, so it is not offered.)

    ``common_term_share``: a word found in more than this share of all rows is left out of the
    MATCH when rarer words remain (at least the two rarest words are always kept). FTS5 must rank
    every row that contains any query word, so one common word ("home", "work") makes the query
    rank a tenth of the store; such a word also carries little bm25 weight, and the vector side
    still sees the whole question.

    ``row_budget``: FTS5 computes bm25 for every row holding any query word, so the cost of a
    query is the sum of its words' row counts. The commonest words are left out (rarest kept
    first) until the words kept match at most this many rows; again the two rarest always stay.
    When even those match more rows than the budget (a name or a city found in 5 % of 100k
    memories), only the newest rows are ranked: the id range is cut so about ``row_budget`` of
    their matches fall inside it (ids grow with time; FTS5 seeks to a rowid bound). Among that
    many rows sharing a common word, the newer is the better tie-break, and the vector side still
    sees every memory. At 100k memories this bounds the FTS side to a few milliseconds; in a
    small store the budget never binds.

    ``term_counts`` remembers those per-word row counts across queries (see :class:`TermRowCounts`).

    ``layers``, ``kinds``: only rows in these layers and of these kinds (``None``: any).

    ``user_share`` (the user's fraction of all rows, known to the caller from the vector index)
    sizes the ranking window so the user filter rarely needs the slow exact path.

    Trigram hits (scripts without spaces) are normalised by their best hit, and short CJK
    substrings score the fraction of them a row contains; a row keeps its best part.
    """
    scores: dict[int, float] = {}
    if query.words:
        match, min_rowid = query.words, None
        if common_term_share < 1.0 or row_budget is not None:
            match, ranked = _affordable_terms(conn, query.terms, common_term_share, row_budget, term_counts)
            if row_budget is not None and ranked > row_budget:
                min_rowid = _newest_rowids(conn, row_budget / ranked)
        rows = _ranked_for_user(
            conn, "memories_fts", match, user_id, limit, user_share, min_rowid, layers, kinds
        )
        best = -rows[0][1] if rows else 0.0
        for memory_id, rank in rows:
            scores[memory_id] = -rank / best if best > 0 else 0.0
    if query.trigrams:
        rows = _ranked_for_user(
            conn, "memories_trigram", query.trigrams, user_id, limit, user_share, None, layers, kinds
        )
        best = -rows[0][1] if rows else 0.0
        for memory_id, rank in rows:
            share = -rank / best if best > 0 else 0.0
            scores[memory_id] = max(scores.get(memory_id, 0.0), share)
    if query.substrings:
        scope, scope_params = in_scope_sql(layers, kinds)
        found: dict[int, int] = {}
        for substring in query.substrings:
            pattern = like_pattern(substring)
            for (memory_id,) in conn.execute(
                "SELECT id FROM memories WHERE user_id = ? AND superseded_by IS NULL"
                " AND (fact LIKE ? ESCAPE '\\' OR topic LIKE ? ESCAPE '\\')"
                f"{scope} ORDER BY id DESC LIMIT ?",
                (user_id, pattern, pattern, *scope_params, limit),
            ):
                found[memory_id] = found.get(memory_id, 0) + 1
        for memory_id, hits in found.items():
            share = hits / len(query.substrings)
            scores[memory_id] = max(scores.get(memory_id, 0.0), share)
    return dict(sorted(scores.items(), key=lambda item: -item[1])[:limit])


class TermRowCounts:
    """How many rows hold each FTS term, remembered for ``max_age_s``.

    Why: the row budget needs every query word's row count, and counting a common word walks its
    whole posting list (up to ~2 ms at 100k rows). The counts only decide which words a query
    keeps, so a count a minute old serves as well as a fresh one. Shared by the reader threads;
    at ``max_terms`` entries the table starts over rather than track ages.
    """

    def __init__(
        self, max_age_s: float = 60.0, max_terms: int = 20_000, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self._max_age_s = max_age_s
        self._max_terms = max_terms
        self._clock = clock
        self._counts: dict[str, tuple[int, float]] = {}
        self._lock = threading.Lock()

    def get(self, conn: sqlite3.Connection, term: str) -> int:
        """Rows matching ``term`` (an FTS5 string token), from memory when recent enough."""
        now = self._clock()
        with self._lock:
            cached = self._counts.get(term)
        if cached is not None and now - cached[1] <= self._max_age_s:
            return cached[0]
        count = _term_rows(conn, term)
        with self._lock:
            if len(self._counts) >= self._max_terms:
                self._counts.clear()
            self._counts[term] = (count, now)
        return count


def _term_rows(conn: sqlite3.Connection, term: str) -> int:
    return conn.execute("SELECT count(*) FROM memories_fts WHERE memories_fts MATCH ?", (term,)).fetchone()[0]


def _affordable_terms(
    conn: sqlite3.Connection,
    terms: Sequence[str],
    share: float,
    row_budget: int | None,
    term_counts: TermRowCounts | None = None,
) -> tuple[str, int]:
    """The OR expression of ``terms`` minus the common ones (see :func:`fts_candidates`), and
    the rows it can match at most (the sum of its words' row counts).

    A word is dropped when it is in more than ``share`` of all rows, or when keeping it would
    push the rows to rank past ``row_budget``; the two rarest words are always kept. The total is
    ``max(id)``, read from the primary key in O(log n): an upper bound after deletions, which
    only makes the share test more lenient (``count(*)`` would walk every row).
    """
    total = conn.execute("SELECT coalesce(max(id), 0) FROM memories").fetchone()[0]
    common = max(share * total, 50)
    rows_of = term_counts.get if term_counts is not None else _term_rows
    counted = sorted((rows_of(conn, term), term) for term in terms)
    kept: set[str] = set()
    ranked = 0
    for position, (count, term) in enumerate(counted):
        affordable = row_budget is None or ranked + count <= row_budget
        if position < 2 or (count <= common and affordable):
            kept.add(term)
            ranked += count
    return " OR ".join(term for term in terms if term in kept), ranked


def _newest_rowids(conn: sqlite3.Connection, fraction: float) -> int:
    """The id above which lie the newest ``fraction`` of the ids in use (ids grow with time)."""
    # Two subqueries: min() and max() in one SELECT would scan the table instead of reading
    # each end of the primary key.
    low, high = conn.execute(
        "SELECT coalesce((SELECT min(id) FROM memories), 0), coalesce((SELECT max(id) FROM memories), 0)"
    ).fetchone()
    return int(high - (high - low) * fraction)


# The FTS table names this module may put into SQL (never user text).
_FTS_TABLES = frozenset({"memories_fts", "memories_trigram"})
OVERFETCH = 4


def _ranked_for_user(
    conn: sqlite3.Connection,
    table: str,
    match: str,
    user_id: str,
    limit: int,
    user_share: float,
    min_rowid: int | None = None,
    layers: Sequence[str] | None = None,
    kinds: Sequence[str] | None = None,
) -> list[tuple[int, float]]:
    """``(id, bm25)`` of the user's live rows matching ``match``, best first.

    ``min_rowid``: rank only rows from this id on (see ``row_budget`` in :func:`fts_candidates`).
    ``layers``, ``kinds``: only rows in these layers and of these kinds (``None``: all).

    Fast path: FTS5 ranks the whole index alone (its ``ORDER BY rank`` path is about a third
    cheaper than ranking through a join) and the user filter is applied to the top
    ``OVERFETCH × limit``. When other users' rows crowd that window and leave fewer than ``limit``,
    the exact join query runs instead, so a user never gets fewer results than exist.
    """
    assert table in _FTS_TABLES
    name = quote_identifier(table)
    window = int(limit * OVERFETCH / min(1.0, max(user_share, 0.02)))
    lowest = min_rowid if min_rowid is not None else -(2**63)
    in_scope, scope_params = in_scope_sql(layers, kinds, "m.")
    rows = conn.execute(
        f"SELECT f.rowid, f.rank FROM (SELECT rowid, rank FROM {name} WHERE {name} MATCH ? AND rowid >= ?"
        "  ORDER BY rank LIMIT ?) AS f JOIN memories m ON m.id = f.rowid"
        f" WHERE m.user_id = ? AND m.superseded_by IS NULL{in_scope} ORDER BY f.rank LIMIT ?",
        (match, lowest, window, user_id, *scope_params, limit),
    ).fetchall()
    if len(rows) >= limit:
        return [(int(r[0]), float(r[1])) for r in rows]
    total = conn.execute(
        f"SELECT count(*) FROM {name} WHERE {name} MATCH ? AND rowid >= ?", (match, lowest)
    ).fetchone()[0]
    if total <= window:
        return [(int(r[0]), float(r[1])) for r in rows]  # the window held every match: complete
    rows = conn.execute(
        f"SELECT m.id, {name}.rank FROM {name} JOIN memories m ON m.id = {name}.rowid"
        f" WHERE {name} MATCH ? AND {name}.rowid >= ? AND m.user_id = ? AND m.superseded_by IS NULL"
        f"{in_scope} ORDER BY {name}.rank LIMIT ?",
        (match, lowest, user_id, *scope_params, limit),
    ).fetchall()
    return [(int(r[0]), float(r[1])) for r in rows]


def iter_embeddings(conn: sqlite3.Connection, model: str) -> Iterator[tuple[int, str, bytes, int, str, str]]:
    """``(id, user_id, blob, dim, layer, kind)`` of every live row embedded by ``model``: the index's source."""
    yield from conn.execute(
        "SELECT id, user_id, embedding, embedding_dim, layer, kind FROM memories"
        " WHERE embedding IS NOT NULL AND embedding_model = ? AND superseded_by IS NULL",
        (model,),
    )


def embedding_counts(conn: sqlite3.Connection, model: str) -> dict[str, int]:
    """Live rows embedded by ``model``, per user (to size the vector matrices at start-up)."""
    return dict(
        conn.execute(
            "SELECT user_id, count(*) FROM memories"
            " WHERE embedding IS NOT NULL AND embedding_model = ? AND superseded_by IS NULL GROUP BY user_id",
            (model,),
        ).fetchall()
    )


def needing_embedding(
    conn: sqlite3.Connection,
    model: str,
    *,
    user_id: str | None,
    after_id: int,
    limit: int,
) -> list[tuple[int, str, str]]:
    """``(id, topic, fact)`` of rows with no vector or one from another model, by id."""
    params: list[Any] = [model, after_id]
    user_clause = ""
    if user_id is not None:
        user_clause = " AND user_id = ?"
        params.append(user_id)
    rows = conn.execute(
        "SELECT id, topic, fact FROM memories"
        " WHERE (embedding IS NULL OR embedding_model IS NOT ? OR embedding_model IS NULL)"
        f" AND id > ?{user_clause} ORDER BY id LIMIT ?",
        (*params, limit),
    )
    return [(r[0], r[1], r[2]) for r in rows]


def count_needing_embedding(conn: sqlite3.Connection, model: str, user_id: str | None) -> int:
    params: list[Any] = [model]
    user_clause = ""
    if user_id is not None:
        user_clause = " AND user_id = ?"
        params.append(user_id)
    return int(
        conn.execute(
            "SELECT count(*) FROM memories WHERE (embedding IS NULL OR embedding_model IS NOT ?)"
            f"{user_clause}",
            params,
        ).fetchone()[0]
    )


@dataclass(frozen=True)
class StoreCounts:
    total: int
    live: int
    superseded: int
    per_user: dict[str, int]
    per_layer: dict[str, int]  # live rows of every user
    embedded: int
    stale_embeddings: int
    unembedded: int


def live_in_layer(conn: sqlite3.Connection, user_id: str, layer: str, limit: int) -> list[MemoryRecord]:
    """One user's live memories in ``layer``, most important first, then newest (the profile)."""
    rows = conn.execute(
        f"{_SELECT} WHERE user_id = ? AND layer = ? AND superseded_by IS NULL"
        " ORDER BY importance DESC, id DESC LIMIT ?",
        (user_id, layer, limit),
    )
    return [MemoryRecord.from_row(row) for row in rows]


def live_count(conn: sqlite3.Connection, user_id: str) -> int:
    """One user's live memories (an index range, not a table scan)."""
    return int(
        conn.execute(
            "SELECT count(*) FROM memories WHERE user_id = ? AND superseded_by IS NULL", (user_id,)
        ).fetchone()[0]
    )


def counts(conn: sqlite3.Connection, model: str) -> StoreCounts:
    """Numbers for /stats in one pass over the table."""
    row = conn.execute(
        "SELECT count(*),"
        " coalesce(sum(superseded_by IS NULL), 0),"
        " coalesce(sum(embedding IS NOT NULL AND embedding_model = ?), 0),"
        " coalesce(sum(embedding IS NOT NULL AND embedding_model IS NOT ?), 0),"
        " coalesce(sum(embedding IS NULL), 0)"
        " FROM memories",
        (model, model),
    ).fetchone()
    per_user = dict(
        conn.execute(
            "SELECT user_id, count(*) FROM memories WHERE superseded_by IS NULL GROUP BY user_id"
        ).fetchall()
    )
    per_layer = {"working": 0, "core": 0, "archive": 0}
    per_layer.update(
        conn.execute(
            "SELECT layer, count(*) FROM memories WHERE superseded_by IS NULL GROUP BY layer"
        ).fetchall()
    )
    total, live, embedded, stale, unembedded = (int(v) for v in row)
    return StoreCounts(
        total=total,
        live=live,
        superseded=total - live,
        per_user=per_user,
        per_layer=per_layer,
        embedded=embedded,
        stale_embeddings=stale,
        unembedded=unembedded,
    )


@dataclass(frozen=True)
class VectorRow:
    """What the vector index needs to know about one row."""

    memory_id: int
    user_id: str | None
    blob: bytes | None
    model: str | None
    dim: int | None
    superseded_by: int | None
    layer: str | None
    kind: str | None


def vector_rows(conn: sqlite3.Connection, memory_ids: Sequence[int]) -> list[VectorRow]:
    """The embedding columns of these rows; a deleted row comes back with everything None."""
    found = {
        row[0]: VectorRow(*row)
        for row in conn.execute(
            "SELECT id, user_id, embedding, embedding_model, embedding_dim, superseded_by, layer, kind"
            " FROM memories WHERE id IN (SELECT value FROM json_each(?))",
            (json.dumps(list(memory_ids)),),
        )
    }
    return [found.get(mid, VectorRow(mid, None, None, None, None, None, None, None)) for mid in memory_ids]
