"""The SQL search reads: full-text candidates within a row budget, the time index, a turn's session
context and followers, and the traits the ranking stages read. Reads only; nothing here writes."""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

from ..records import EVERYONE, Audience, RankTraits, speaker_label
from .connection import dialect_of
from .dialect import SQLITE, Dialect
from .fts import FtsQuery, like_pattern
from .memories import quote_identifier


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
    layers: Sequence[str] | None,
    kinds: Sequence[str] | None,
    alias: str = "",
    audience: Audience = EVERYONE,
    dialect: Dialect = SQLITE,
) -> tuple[str, tuple[Any, ...]]:
    """`` AND …`` keeping rows in ``layers`` and of ``kinds`` (``None``: any) that ``audience``
    may see, and its parameters.

    ``alias``: the table's alias in the query (``"m."``), or nothing.
    """
    layer_list = dialect.list_param(layers) if layers is not None else None
    kind_list = dialect.list_param(kinds) if kinds is not None else None
    sql = (
        f" AND (? IS NULL OR {dialect.in_list(alias + 'layer')})"
        f" AND (? IS NULL OR {dialect.in_list(alias + 'kind')})"
    )
    audience_sql, audience_params = audience.sql(alias)
    return sql + audience_sql, (layer_list, layer_list, kind_list, kind_list, *audience_params)


def session_followers(
    conn: sqlite3.Connection,
    user_id: str,
    memory_ids: Sequence[int],
    count: int,
    layers: Sequence[str],
    kinds: Sequence[str] | None = None,
    audience: Audience = EVERYONE,
) -> dict[int, list[int]]:
    """For each of these memories that is a turn of a session (stored with session context), the
    ids of the next ``count`` live turns of that session in ``layers`` (and ``kinds``) that
    ``audience`` may see, in order."""
    if count <= 0 or not memory_ids:
        return {}
    d = dialect_of(conn)
    turns = conn.execute(
        f"SELECT id, source_session FROM memories WHERE {d.in_list('id')}"
        " AND user_id = ? AND source_session IS NOT NULL AND embedding_context > 0",
        (d.list_param(memory_ids), user_id),
    ).fetchall()
    scope, scope_params = in_scope_sql(layers, kinds, audience=audience, dialect=d)
    found: dict[int, list[int]] = {}
    for memory_id, session in turns:
        rows = conn.execute(
            "SELECT id FROM memories WHERE user_id = ? AND source_session = ? AND id > ?"
            f" AND superseded_by IS NULL AND embedding_context > 0{scope} ORDER BY id LIMIT ?",
            (user_id, session, memory_id, *scope_params, count),
        )
        found[int(memory_id)] = [int(row[0]) for row in rows]
    return found


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
    d = dialect_of(conn)
    rows = conn.execute(
        "SELECT id, substr(fact, 1, 80), length(fact), CASE WHEN embedding_context > 0 THEN source_session END"
        f" FROM memories WHERE {d.in_list('id')}",
        (d.list_param(memory_ids),),
    )
    found = {}
    for memory_id, head, chars, session in rows:
        label = speaker_label(head)
        speaker = label.casefold() if label is not None else None
        found[int(memory_id)] = RankTraits(speaker, int(chars), session if speaker is not None else None)
    return found


# -- search ---------------------------------------------------------------------------------
# The time a memory is about; memories_by_time (migration 006) indexes exactly this expression.
ABOUT_TIME_SQL = "coalesce(occurred_at, created_at)"


def about_times(conn: sqlite3.Connection, memory_ids: Sequence[int]) -> dict[int, str]:
    """``{id: the time it is about}`` of these rows (missing ids are absent)."""
    if not memory_ids:
        return {}
    d = dialect_of(conn)
    rows = conn.execute(
        f"SELECT id, {ABOUT_TIME_SQL} FROM memories WHERE {d.in_list('id')}", (d.list_param(memory_ids),)
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
    audience: Audience = EVERYONE,
) -> list[int]:
    """Ids of up to ``limit`` live memories of ``user_id`` that ``audience`` may see about a time in
    ``[start, end)``, newest first (``start``/``end`` in the stored format; an index range on
    memories_by_time)."""
    scope, scope_params = in_scope_sql(layers, kinds, audience=audience, dialect=dialect_of(conn))
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
    audience: Audience = EVERYONE,
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

    ``layers``, ``kinds``: only rows in these layers and of these kinds (``None``: any), and only
    rows ``audience`` may see.

    ``user_share`` (the user's fraction of all rows, known to the caller from the vector index)
    sizes the ranking window so the user filter rarely needs the slow exact path.

    Trigram hits (scripts without spaces) are normalised by their best hit, and short CJK
    substrings score the fraction of them a row contains; a row keeps its best part.
    """
    if dialect_of(conn).name == "postgres":
        from .postgres import search as postgres_search  # here: it imports this module

        return postgres_search.fts_candidates(
            conn,
            user_id,
            query,
            limit,
            layers,
            kinds,
            audience,
            common_term_share=common_term_share,
            row_budget=row_budget,
            term_counts=term_counts,
        )
    scores: dict[int, float] = {}
    if query.words:
        match, min_rowid = query.words, None
        if common_term_share < 1.0 or row_budget is not None:
            match, ranked = _affordable_terms(conn, query.terms, common_term_share, row_budget, term_counts)
            if row_budget is not None and ranked > row_budget:
                min_rowid = newest_ids_start(conn, row_budget / ranked)
        rows = _ranked_for_user(
            conn, "memories_fts", match, user_id, limit, user_share, min_rowid, layers, kinds, audience
        )
        best = -rows[0][1] if rows else 0.0
        for memory_id, rank in rows:
            scores[memory_id] = -rank / best if best > 0 else 0.0
    if query.trigrams:
        rows = _ranked_for_user(
            conn,
            "memories_trigram",
            query.trigrams,
            user_id,
            limit,
            user_share,
            None,
            layers,
            kinds,
            audience,
        )
        best = -rows[0][1] if rows else 0.0
        for memory_id, rank in rows:
            share = -rank / best if best > 0 else 0.0
            scores[memory_id] = max(scores.get(memory_id, 0.0), share)
    if query.substrings:
        scope, scope_params = in_scope_sql(layers, kinds, audience=audience)
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

    def get(self, conn: Any, term: str, count: Callable[[Any, str], int] | None = None) -> int:
        """Rows matching ``term`` (an FTS5 string token; ``count``: another backend's way to count
        them), from memory when recent enough."""
        now = self._clock()
        with self._lock:
            cached = self._counts.get(term)
        if cached is not None and now - cached[1] <= self._max_age_s:
            return cached[0]
        found = (count or _term_rows)(conn, term)
        with self._lock:
            if len(self._counts) >= self._max_terms:
                self._counts.clear()
            self._counts[term] = (found, now)
        return found


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


def newest_ids_start(conn: Any, fraction: float) -> int:
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
    audience: Audience = EVERYONE,
) -> list[tuple[int, float]]:
    """``(id, bm25)`` of the user's live rows matching ``match``, best first.

    ``min_rowid``: rank only rows from this id on (see ``row_budget`` in :func:`fts_candidates`).
    ``layers``, ``kinds``: only rows in these layers and of these kinds (``None``: all), and only
    rows ``audience`` may see.

    Fast path: FTS5 ranks the whole index alone (its ``ORDER BY rank`` path is about a third
    cheaper than ranking through a join) and the user filter is applied to the top
    ``OVERFETCH × limit``. When other users' rows crowd that window and leave fewer than ``limit``,
    the exact join query runs instead, so a user never gets fewer results than exist.
    """
    assert table in _FTS_TABLES
    name = quote_identifier(table)
    window = int(limit * OVERFETCH / min(1.0, max(user_share, 0.02)))
    lowest = min_rowid if min_rowid is not None else -(2**63)
    in_scope, scope_params = in_scope_sql(layers, kinds, "m.", audience)
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
