"""Full-text candidates on PostgreSQL: the ``tsvector`` index for words, pg_trgm for CJK text.

What SQLite's FTS5 path gives (``store/retrieval.py``), PostgreSQL gives this way:
- words: the generated ``search_words`` column (English stemming without stop words and diacritics
  folded, as FTS5's porter/unicode61 tokenizer) and its GIN index, each word of the query a phrase
  (never a syntax error, never an operator), OR-ed; a row ranks by the sum over its words of BM25's
  IDF times ``ts_rank`` normalised by length (as bm25 favours short rows), and the commonest words
  are left out as on SQLite;
- scripts without spaces (Chinese, Japanese): each three-character piece of the query, and each
  shorter run, is a ``LIKE`` on topic and fact (an index search where pg_trgm is installed); a row
  is ranked by the share of the pieces it contains.

Scores are in (0, 1] as on SQLite, so fusion weights mean the same on both backends: words and
three-character pieces are normalised by the best row of the query (the best scores 1.0), short runs
score the share of them a row holds (SQLite scores them so too).
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from typing import Any

from ...records import Audience
from ..dialect import POSTGRES
from ..fts import FtsQuery, like_pattern
from ..retrieval import in_scope_sql, newest_ids_start

# The text the trigram index covers (migration 001): one expression, so LIKE can use the index.
INDEXED_TEXT = "(topic || E'\\n' || fact)"

# ts_rank normalisation 1: divide by 1 + log(length), so a short row that matches outranks a long one.
RANK_NORMALISATION = 1


def fts_candidates(
    conn: Any,
    user_id: str,
    query: FtsQuery,
    limit: int,
    layers: Sequence[str] | None,
    kinds: Sequence[str] | None,
    audience: Audience,
    *,
    common_term_share: float = 1.0,
    row_budget: int | None = None,
    term_counts: Any = None,
) -> dict[int, float]:
    """Best candidates of one user as ``{id: score}``, score in (0, 1] (see the module docstring).

    ``common_term_share``, ``row_budget`` and ``term_counts`` drop the commonest words as on SQLite
    (``retrieval.fts_candidates``); the two rarest always stay.
    """
    scope, scope_params = in_scope_sql(layers, kinds, audience=audience, dialect=POSTGRES)
    scores: dict[int, float] = {}
    words = [_unquoted(term) for term in query.terms]
    if words:
        _keep_best(
            scores,
            _ranked_words(
                conn, user_id, words, limit, scope, scope_params, common_term_share, row_budget, term_counts
            ),
            normalise=True,
        )
    # Three-character pieces are normalised by the best row as SQLite normalises their bm25: a
    # query whose every piece no row holds still has a best row, which scores 1.0.
    trigrams = _share_of_pieces(conn, user_id, _split_or(query.trigrams), limit, scope, scope_params)
    _keep_best(scores, trigrams, normalise=True)
    substrings = _share_of_pieces(conn, user_id, list(query.substrings), limit, scope, scope_params)
    _keep_best(scores, substrings, normalise=False)
    return dict(sorted(scores.items(), key=lambda item: -item[1])[:limit])


# One word of the query as a tsquery: a phrase (never an operator), folded as the indexed text is.
WORD_QUERY = "phraseto_tsquery('cortex_english', cortex_fold(?))"


def _ranked_words(
    conn: Any,
    user_id: str,
    words: list[str],
    limit: int,
    scope: str,
    scope_params: tuple[Any, ...],
    common_term_share: float,
    row_budget: int | None,
    term_counts: Any,
) -> dict[int, float]:
    """``{id: rank}``: the sum over the query's words of BM25's IDF times ``ts_rank`` of that word.

    Why the IDF: ``ts_rank`` alone weighs every word alike, so a row matching only "user" (in every
    other memory) ranked beside one matching the rare word the question is about; FTS5's bm25 gives
    such a word almost nothing. The per-word row counts are exact for rare words and the planner's
    estimate for common ones (see ``EXACT_COUNT_MAX_ROWS``), remembered for a minute as on SQLite.
    """
    total = int(conn.execute("SELECT coalesce(max(id), 0) FROM memories").fetchone()[0])
    counted = sorted((_rows_with(conn, word, term_counts), word) for word in dict.fromkeys(words))
    common = max(common_term_share * total, 50)
    kept: list[tuple[int, str]] = []
    ranked = 0
    for position, (count, word) in enumerate(counted):
        affordable = row_budget is None or ranked + count <= row_budget
        if count > 0 and (position < 2 or (count <= common and affordable)):
            kept.append((count, word))
            ranked += count
    if not kept:
        return {}
    # As on SQLite: when even the rarest words match more rows than the budget, rank only the
    # newest rows (ids grow with time), so a name found in 5 % of a million rows costs what the
    # budget allows; the vector side still sees every memory.
    newest = ""
    newest_params: tuple[int, ...] = ()
    if row_budget is not None and ranked > row_budget:
        newest, newest_params = " AND id >= ?", (newest_ids_start(conn, row_budget / ranked),)
    weighted = " + ".join(f"? * ts_rank(search_words, {WORD_QUERY}, {RANK_NORMALISATION})" for _ in kept)
    matches = " || ".join(WORD_QUERY for _ in kept)
    weights = [(_idf(count, total), word) for count, word in kept]
    rows = conn.execute(
        f"SELECT id, {weighted} AS rank FROM memories"
        f" WHERE user_id = ? AND superseded_by IS NULL AND search_words @@ ({matches}){newest}{scope}"
        " ORDER BY rank DESC, id DESC LIMIT ?",
        (
            *(value for pair in weights for value in pair),
            user_id,
            *(word for _, word in kept),
            *newest_params,
            *scope_params,
            limit,
        ),
    ).fetchall()
    return {int(memory_id): float(rank) for memory_id, rank in rows}


def _idf(rows_with_word: int, total_rows: int) -> float:
    """BM25's inverse document frequency (always > 0)."""
    n = min(rows_with_word, total_rows)
    return math.log(1 + (total_rows - n + 0.5) / (n + 0.5))


def _rows_with(conn: Any, word: str, term_counts: Any) -> int:
    """Rows (of every user) holding ``word``: from ``term_counts`` when it remembers it."""
    if term_counts is not None:
        return int(term_counts.get(conn, word, count=_count_rows_with))
    return _count_rows_with(conn, word)


# Words the planner expects in at most this many rows are counted exactly; commoner ones take its
# estimate. Why: an exact count(*) walks every row holding the word (a name in 5 % of a million
# rows: 50k rows, hundreds of milliseconds when they are not cached), while the estimate comes from
# the column's statistics (ANALYZE keeps the frequency of the commonest thousand lexemes) in a
# fraction of a millisecond. A common word's count only decides that it is common and how little
# its IDF weighs, and the estimate is within about a tenth of the truth for such words; a rare
# word's IDF and whether it is in any row at all need its exact count, which is cheap.
EXACT_COUNT_MAX_ROWS = 500


def _count_rows_with(conn: Any, word: str) -> int:
    estimate = _estimated_rows_with(conn, word)
    if estimate > EXACT_COUNT_MAX_ROWS:
        return estimate
    row = conn.execute(
        f"SELECT count(*) FROM memories WHERE search_words @@ {WORD_QUERY}", (word,)
    ).fetchone()
    return int(row[0])


def _estimated_rows_with(conn: Any, word: str) -> int:
    """The planner's estimate of the rows holding ``word`` (``EXPLAIN``, nothing is read)."""
    plan = conn.execute(
        f"EXPLAIN (FORMAT JSON) SELECT 1 FROM memories WHERE search_words @@ {WORD_QUERY}", (word,)
    ).fetchone()[0]
    if isinstance(plan, str):
        plan = json.loads(plan)
    return int(plan[0]["Plan"]["Plan Rows"])


def websearch_words(words: Sequence[str]) -> str:
    """``websearch_to_tsquery`` text OR-ing ``words``: each one in double quotes, a phrase whose
    characters are never operators (``-`` not, ``or``, a quote, ``:*``), as FTS5 reads the quoted
    tokens of ``fts.build_query``; a word of several lexemes ("say hi") is a phrase there too."""
    return " or ".join('"' + word.replace('"', " ") + '"' for word in words)


def _keep_best(scores: dict[int, float], found: dict[int, float], *, normalise: bool) -> None:
    """Fold ``found`` (``{id: rank}``) into ``scores``, each row keeping its best part; with
    ``normalise`` a rank is divided by the best of ``found``. A rank of 0 is no match."""
    best = max(found.values(), default=0.0) if normalise else 1.0
    if best <= 0:
        return
    for memory_id, rank in found.items():
        if rank > 0:
            scores[memory_id] = max(scores.get(memory_id, 0.0), min(1.0, rank / best))


def _share_of_pieces(
    conn: Any, user_id: str, pieces: list[str], limit: int, scope: str, scope_params: tuple[Any, ...]
) -> dict[int, float]:
    """``{id: share of pieces its text contains}`` for the user's live rows holding any piece."""
    if not pieces:
        return {}
    patterns = [like_pattern(piece) for piece in pieces]
    found = " + ".join(f"(CASE WHEN {INDEXED_TEXT} LIKE ? ESCAPE '\\' THEN 1 ELSE 0 END)" for _ in patterns)
    any_of = " OR ".join(f"{INDEXED_TEXT} LIKE ? ESCAPE '\\'" for _ in patterns)
    rows = conn.execute(
        f"SELECT id, {found} AS hits FROM memories WHERE user_id = ? AND superseded_by IS NULL"
        f" AND ({any_of}){scope} ORDER BY hits DESC, id DESC LIMIT ?",
        (*patterns, user_id, *patterns, *scope_params, limit),
    ).fetchall()
    return {int(memory_id): int(hits) / len(pieces) for memory_id, hits in rows}


def _unquoted(term: str) -> str:
    """An FTS5 string token (``"word"``, see ``fts.quote``) back to its text."""
    return term[1:-1].replace('""', '"') if len(term) >= 2 and term[0] == term[-1] == '"' else term


def _split_or(expression: str) -> list[str]:
    """The tokens of an FTS5 ``"a" OR "b"`` expression built by ``fts.build_query``."""
    return [_unquoted(part) for part in expression.split(" OR ") if part] if expression else []
