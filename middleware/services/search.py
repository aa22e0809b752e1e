"""Hybrid search: FTS5 candidates + vector candidates → one fused, user-scoped ranking.

Method (``score = w_fts·fts_norm + w_vec·cosine``, weights 0.4/0.6 by default as in the seed):

1. Gather candidates from both sides at once: bm25 over the word and trigram indexes (the query
   embedding is computed meanwhile), and the top cosines over *all* of the user's vectors.
2. ``fts_norm`` is ``-bm25`` divided by the best ``-bm25`` of this query, so it lies in (0, 1].
3. Unlike the seed, the cosine of an FTS-only candidate is not taken as 0: the exact cosine of
   every candidate is read from the in-memory matrix (it is one small product), so a keyword hit
   that is also semantically close is not penalised for missing the vector top-k. ``source`` still
   says which retriever(s) proposed the memory.
4. When the embedder is down (or slower than ``query_timeout_s``) the search is FTS-only and every
   result says ``source: "fts5"``; search never waits on extraction or on a dead model.
5. Optional time-aware search (``search.time_boost``): the date ranges a query names ("last May",
   "in 2023") are found by dateparser (:mod:`.timeparse`) and every candidate about a time inside
   one scores ``× (1 + time_boost)``; with ``search.time_candidates`` the user's memories in the
   range join the candidates. A boost, never a filter: a query whose date matches nothing still
   gets its best results.
6. Subject-aware search (``search.subject_boost``): a transcript turn said by someone the query
   names ("Melanie: …") scores ``× (1 + subject_boost)``; session followers
   (``search.follower_weight``): the next turns after an FTS hit share its FTS score.
7. Speaker-perspective query (``search.speaker_query``, :mod:`.perspective`): a query naming one
   speaker is also embedded in their first person, and the candidates are scored against both.
8. Pseudo-relevance feedback (``search.prf_docs``): the query vector moves toward the best few
   results and the candidates are scored again.
9. Length prior and session support (``search.length_prior``, ``search.session_support``): among
   the best ``prior_pool`` results, transcript turns that say little lose up to 15 %, and the turns
   of a session that holds other good results gain a share of their scores.
10. Optional multi-factor ranking (``ranking.enabled``): the best ``limit × pool`` by relevance are
   re-ordered by relevance × a multiplier from importance, recency and reads, so that, among
   comparably relevant memories, "I moved to Porto" (new) outranks "I live in Lyon" (a year old).
   See :class:`~middleware.config.RankingConfig` for the formula.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import math
import sqlite3
import time
from collections.abc import Callable, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import numpy as np

from ..config import RankingConfig, SearchConfig
from ..errors import EmbedderUnavailable
from ..models.embedders import Embedder
from ..records import MemoryRecord, RankTraits
from ..store import memories as memory_sql
from ..store import retrieval as retrieval_sql
from ..store.db import Database
from ..store.fts import FtsQuery, build_query
from ..store.vectors import KINDS, VectorIndex
from ..vectormath import normalize
from .perspective import WORD, speaker_perspective
from .timeparse import MAX_PARSED_CHARS, TimeParser, TimeRange, may_hold_date

log = logging.getLogger(__name__)


# The length prior's ln(chars / pivot) is held to ±1.5: ×(1 ± 0.15) at most with the default 0.1.
_LENGTH_LOG_CLAMP = 1.5

# How many users' answers about transcript turns are remembered (see SearchService._has_turns).
_USERS_WITH_TURNS_MAX = 10_000

# What a search covers unless it asks otherwise: the archive is kept but not searched.
DEFAULT_LAYERS = ("core", "working")


@dataclass(frozen=True)
class SearchHit:
    """One fused result: the memory and how it scored.

    ``relevance`` is the hybrid score ``w_fts·fts_norm + w_vec·cosine`` with the boosts and priors
    that apply to the memory (none for a standalone fact that no date or name of the query
    matches); ``score`` is what the results are ordered by: the relevance itself, or with ranking
    on, relevance × the multiplier.
    """

    memory: MemoryRecord
    score: float
    fts_score: float
    vector_score: float
    source: str
    relevance: float


def ranking_multiplier(memory: MemoryRecord, now: datetime, config: RankingConfig) -> float:
    """The multi-factor part of the ranking (see :class:`~middleware.config.RankingConfig`): between
    ``1 − W`` for an old, unimportant memory never read and 1 for a fresh, vital, well-read one."""
    total = config.importance_weight + config.recency_weight + config.access_weight
    importance = (memory.importance - 1) / 9
    age_days = max((now - parse_timestamp(memory.created_at)).total_seconds() / 86400, 0.0)
    recency = 0.5 ** (age_days / config.recency_half_life_days)
    reads = min(1.0, math.log1p(memory.access_count) / math.log1p(config.access_saturation))
    return (
        1
        - total
        + config.importance_weight * importance
        + config.recency_weight * recency
        + config.access_weight * reads
    )


def parse_timestamp(text: str) -> datetime:
    """A stored timestamp (ISO 8601, ``Z`` for UTC) as an aware datetime."""
    moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


@dataclass(frozen=True)
class SearchResult:
    hits: list[SearchHit]
    fts_query: FtsQuery
    vector_used: bool
    timings_ms: dict[str, float]
    # What the LLM reranker did (services/rerank.py): "off", "reranked", "timeout", "unavailable"…
    rerank: str = "off"


class SearchService:
    """Runs hybrid searches for one user at a time.

    Args:
        db: the store.
        index: the in-memory vector matrices (live model only).
        embedder: turns the query into a vector; may be down.
        config: weights and candidate counts.
        query_timeout_s: longest wait for the query vector before going FTS-only.
        ranking: the optional multi-factor ranking (off unless ``ranking.enabled``).
        clock: "now" for the recency factor and for relative dates in queries (tests move it).
        time_parser: finds date ranges in queries (used only when ``config.time_boost`` is on; made
            here if not given).
    """

    def __init__(
        self,
        db: Database,
        index: VectorIndex | None,
        embedder: Embedder | None,
        config: SearchConfig,
        query_timeout_s: float,
        ranking: RankingConfig | None = None,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
        time_parser: TimeParser | None = None,
    ) -> None:
        self._ranking = ranking if ranking is not None else RankingConfig()
        self._clock = clock
        self._db = db
        self._index = index
        self._embedder = embedder
        self._config = config
        self._query_timeout_s = query_timeout_s
        self._term_counts = retrieval_sql.TermRowCounts()
        self._users_with_turns: set[str] = set()  # see _has_turns
        self._users_without_turns: dict[str, int] = {}  # user → the index version it was asked at
        self._time_parser = (time_parser or TimeParser()) if config.time_boost > 0 else None

    def warm_up(self) -> None:
        """Load what the first search would otherwise load (dateparser's data, when time-aware
        search is on). Blocking: call it from a thread at start-up."""
        if self._time_parser is not None:
            self._time_parser.warm_up()

    async def search(
        self,
        query: str,
        user_id: str,
        limit: int,
        mode: str = "hybrid",
        layers: Sequence[str] = DEFAULT_LAYERS,
        kinds: Sequence[str] | None = None,
    ) -> SearchResult:
        """The best ``limit`` live memories of ``user_id`` for ``query``.

        ``mode`` ``"fts"`` or ``"vector"`` runs one retriever alone (for benchmarks and debugging):
        the other part of the fused score is 0, and the boosts and priors apply as in hybrid mode
        (the speaker query needs a query vector, so not in ``"fts"``). ``layers``: only memories in
        these layers (default working and core; the archive only when asked for). ``kinds``: only
        memories of these kinds, ``fact`` and/or ``turn`` (``None``: both).
        """
        # The side tasks (FTS read, date parse, vector product, the rewritten query's embedding)
        # are cancelled if the search ends early (an error, a client gone): none runs on unread.
        tasks: list[asyncio.Future[Any]] = []
        try:
            return await self._search(query, user_id, limit, mode, layers, kinds, tasks)
        finally:
            for task in tasks:
                if not task.done():
                    task.cancel()

    async def _search(
        self,
        query: str,
        user_id: str,
        limit: int,
        mode: str,
        layers: Sequence[str],
        kinds: Sequence[str] | None,
        tasks: list[asyncio.Future[Any]],
    ) -> SearchResult:
        layers = tuple(sorted(set(layers)))
        kinds = None if kinds is None or set(kinds) >= set(KINDS) else tuple(sorted(set(kinds)))
        started = time.perf_counter()
        query = query[: self._config.max_query_chars]
        fts_query = build_query(query) if mode != "vector" else FtsQuery()
        k = max(self._config.candidates, limit)

        # FTS (a reader thread) and the matrix product (another thread) run side by side: on two
        # cores the search costs the slower of the two, not their sum.
        fts_task = asyncio.ensure_future(
            self._fts(user_id, fts_query, max(self._config.fts_candidates, limit), layers, kinds)
        )
        # The date parse (a thread: dateparser is pure Python) overlaps the query embedding.
        time_task = asyncio.ensure_future(self._time_ranges(query, user_id))
        tasks += [fts_task, time_task]
        # The query in the words of the one person it names (services/perspective.py) is embedded
        # beside the query itself: the local embedder batches concurrent queries into one model
        # call (an HTTP embedder gets a second, concurrent request).
        perspective = speaker_perspective(query) if mode != "fts" and self._config.speaker_query > 0 else None
        has_turns = await self._has_turns(user_id) if perspective is not None else None
        if not has_turns:
            perspective = None  # no speaker to speak as: a store of standalone facts pays nothing
        perspective_task = None
        if perspective is not None:
            perspective_task = asyncio.ensure_future(self._query_vector(perspective.query))
            tasks.append(perspective_task)
        query_vector = await self._query_vector(query) if mode != "fts" else None
        vector_task = None
        if query_vector is not None and self._index is not None:
            vector_task = asyncio.ensure_future(
                asyncio.to_thread(self._vector_top, user_id, query_vector, k, layers, kinds)
            )
            tasks.append(vector_task)
        fts_scores = await fts_task
        after_fts = time.perf_counter()

        vector_scores: dict[int, float] = {}
        vector_candidates: set[int] = set()
        if vector_task is not None:
            assert query_vector is not None
            vector_candidates, vector_scores = await vector_task
            vector_scores = self._score_fts_candidates(user_id, query_vector, fts_scores, vector_scores)
        after_vector = time.perf_counter()

        time_ranges = await time_task
        in_range: set[int] = set()
        if time_ranges:
            extra = await self._time_candidates(user_id, time_ranges, layers, kinds)
            if extra and query_vector is not None and self._index is not None:
                missing = [mid for mid in extra if mid not in vector_scores]
                vector_scores = {**vector_scores, **self._index.cosines(user_id, query_vector, missing)}
            vector_candidates |= {mid for mid in extra if mid in vector_scores}
            in_range = await self._in_range(list(set(fts_scores) | vector_candidates), time_ranges)
        fused = self._fuse(fts_scores, vector_scores, vector_candidates, in_range)
        # Only the best few can reach the results with a ×1.3: only their speaker labels are read
        # (never fewer than the results asked for).
        pool = max(self._config.subject_pool, limit)
        # What the boosts and priors read of a candidate (speaker, length, session), read once.
        traits: dict[int, RankTraits] = {}
        speakers = await self._speakers_named(
            query,
            [item[3] for item in fused[:pool]],
            traits,
            wanted=self._config.subject_boost > 0 or perspective is not None,
        )
        about = set(speakers) if self._config.subject_boost > 0 else set()
        if about:
            fused = self._fuse(fts_scores, vector_scores, vector_candidates, in_range, about)
        if perspective_task is not None:
            assert perspective is not None
            # Only when the one person the query names is the only speaker it names among the best
            # candidates ("Melanie said what about Caroline?" names two); else the rewrite is
            # dropped unread (cancelled: it leaves the embedder's waiting batch).
            named_speaker = query_vector is not None and set(speakers.values()) == {
                perspective.name.casefold()
            }
            perspective_vector = await perspective_task if named_speaker else None
            if not named_speaker:
                perspective_task.cancel()
            if perspective_vector is not None and query_vector is not None:
                # Every candidate is scored against q + speaker_query · p (normalised): a few
                # hundred rows, like the feedback below; an FTS-only candidate only when
                # score_all_candidates lets it have a cosine at all.
                query_vector = self._perspective_query(query_vector, perspective_vector)
                assert self._index is not None
                rescored = [
                    item[3] for item in fused if self._config.score_all_candidates or item[3] in vector_scores
                ]
                vector_scores = self._index.cosines(user_id, query_vector, rescored)
                fused = self._fuse(fts_scores, vector_scores, vector_candidates, in_range, about)
        after_time = time.perf_counter()

        if vector_task is not None and self._config.prf_docs > 0 and fused:
            # Pseudo-relevance feedback (Rocchio) on the vector side: every candidate is scored
            # again against the query moved toward the best few results, which pulls up what they
            # share with the question (LoCoMo r@10 0.695 → 0.707, see README). Re-scoring the
            # candidates found the same as a second search over the whole matrix, at a fraction
            # of the cost: a few hundred rows, no model call.
            assert query_vector is not None
            feedback = [item[3] for item in fused[: self._config.prf_docs]]
            rescored = self._feedback_scores(user_id, query_vector, feedback, [item[3] for item in fused])
            if rescored is not None:
                fused = self._fuse(fts_scores, rescored, vector_candidates, in_range, about)
        after_prf = time.perf_counter()

        if has_turns is None and (self._config.length_prior > 0 or self._config.session_support > 0):
            has_turns = await self._has_turns(user_id)
        if has_turns:  # the priors re-score transcript turns only
            fused = await self._with_priors(fused, limit, traits)
        after_priors = time.perf_counter()

        ranked = self._ranking.enabled
        fused = fused[: limit * self._ranking.pool] if ranked else fused[:limit]

        records = await self._db.read(lambda conn: memory_sql.get_many(conn, [item[3] for item in fused]))
        hits = [
            SearchHit(records[mid], score, fts_norm, cosine, source, score)
            for score, fts_norm, cosine, mid, source in fused
            # A row deleted, superseded or moved to another layer between the two reads is
            # dropped, never shown stale.
            if mid in records
            and records[mid].superseded_by is None
            and records[mid].user_id == user_id
            and records[mid].layer in layers
            and (kinds is None or records[mid].kind in kinds)
        ]
        if ranked:
            now = self._clock()
            hits = [
                dataclasses.replace(
                    hit, score=hit.relevance * ranking_multiplier(hit.memory, now, self._ranking)
                )
                for hit in hits
            ]
            hits.sort(key=lambda hit: (-hit.score, -hit.memory.id))
            hits = hits[:limit]
        done = time.perf_counter()
        return SearchResult(
            hits=hits,
            fts_query=fts_query,
            vector_used=query_vector is not None,
            timings_ms={
                "fts_and_embed": round((after_fts - started) * 1000, 2),  # the vector product overlaps it
                "vector": round((after_vector - after_fts) * 1000, 2),
                "time": round((after_time - after_vector) * 1000, 2),
                "prf": round((after_prf - after_time) * 1000, 2),
                "priors": round((after_priors - after_prf) * 1000, 2),
                "hydrate": round((done - after_priors) * 1000, 2),
                "total": round((done - started) * 1000, 2),
            },
        )

    def _vector_top(
        self, user_id: str, vector: np.ndarray, k: int, layers: tuple[str, ...], kinds: tuple[str, ...] | None
    ) -> tuple[set[int], dict[int, float]]:
        """The vector side's candidates and their cosines (runs in a thread)."""
        assert self._index is not None
        top = self._index.search(user_id, vector, k, layers, kinds)
        return {hit.memory_id for hit in top}, {hit.memory_id: hit.cosine for hit in top}

    def _score_fts_candidates(
        self, user_id: str, vector: np.ndarray, fts_scores: dict[int, float], vector_scores: dict[int, float]
    ) -> dict[int, float]:
        """Add the exact cosine of FTS candidates the vector side did not propose."""
        missing = [mid for mid in fts_scores if mid not in vector_scores]
        if not (self._config.score_all_candidates and missing and self._index is not None):
            return vector_scores
        return {**vector_scores, **self._index.cosines(user_id, vector, missing)}

    def _fuse(
        self,
        fts_scores: dict[int, float],
        vector_scores: dict[int, float],
        vector_candidates: set[int],
        in_range: AbstractSet[int] = frozenset(),
        about: AbstractSet[int] = frozenset(),
    ) -> list[tuple[float, float, float, int, str]]:
        """``(score, fts_norm, cosine, id, source)`` of every candidate, best first; a candidate in
        ``in_range`` (about a time the query names) gets the time boost, one in ``about`` (said
        by someone the query names) the subject boost."""
        fused: list[tuple[float, float, float, int, str]] = []
        boost = 1.0 + self._config.time_boost
        subject_boost = 1.0 + self._config.subject_boost
        for memory_id in set(fts_scores) | vector_candidates:
            fts_norm = fts_scores.get(memory_id, 0.0)
            cosine = max(vector_scores.get(memory_id, 0.0), 0.0)
            score = self._config.fts_weight * fts_norm + self._config.vector_weight * cosine
            if memory_id in in_range:
                score *= boost
            if memory_id in about:
                score *= subject_boost
            in_fts, in_vec = memory_id in fts_scores, memory_id in vector_candidates
            source = "fts5+vector" if in_fts and in_vec else ("fts5" if in_fts else "vector")
            fused.append((score, fts_norm, cosine, memory_id, source))
        fused.sort(key=lambda item: (-item[0], -item[3]))
        return fused

    async def _with_priors(
        self,
        fused: list[tuple[float, float, float, int, str]],
        limit: int,
        traits: dict[int, RankTraits],
    ) -> list[tuple[float, float, float, int, str]]:
        """``fused`` with the transcript turns among its best ``prior_pool`` (at least ``limit``)
        re-scored by the length prior and session support, best first again. A turn has a
        speaker label and session context (see ``rank_traits``); a standalone fact is written to
        say one thing whatever its length, and keeps the documented fused score.

        Length prior: a turn scores × (1 + ``length_prior`` · ln(chars / ``length_pivot_chars``)),
        the log clamped to ±1.5: bm25 favours short rows and a short greeting that names the
        person asked about is close to any question on them, yet "Bye!" answers nothing.
        Session support: a turn gains ``session_support`` × the (length-weighed) scores of the
        two best *other* turns of its session in the pool, so the turns of the one exchange a
        question is about rise together. Results outside the pool keep their score.
        """
        length_prior, support = self._config.length_prior, self._config.session_support
        pool = fused[: max(self._config.prior_pool, limit)]
        if (length_prior <= 0 and support <= 0) or not pool:
            return fused
        traits = await self._read_traits([item[3] for item in pool], traits)
        turns = {item[3]: traits[item[3]] for item in pool if item[3] in traits and traits[item[3]].session}
        pivot = self._config.length_pivot_chars
        weighed = {}
        for score, _, _, memory_id, _ in pool:
            if memory_id in turns and length_prior > 0:
                log_ratio = math.log(max(turns[memory_id].chars, 1) / pivot)
                score *= 1.0 + length_prior * min(max(log_ratio, -_LENGTH_LOG_CLAMP), _LENGTH_LOG_CLAMP)
            weighed[memory_id] = score
        by_session: dict[str | None, list[float]] = {}
        for memory_id, turn in turns.items():
            by_session.setdefault(turn.session, []).append(weighed[memory_id])
        for scores in by_session.values():
            scores.sort(reverse=True)  # once per session, not once per turn
        rescored = []
        for _, fts_norm, cosine, memory_id, source in pool:
            score = weighed[memory_id]
            if memory_id in turns and support > 0:
                others = list(by_session[turns[memory_id].session])
                others.remove(score)  # itself, once (the rest stay best first)
                score += support * sum(others[:2])
            rescored.append((score, fts_norm, cosine, memory_id, source))
        rescored += fused[len(pool) :]
        rescored.sort(key=lambda item: (-item[0], -item[3]))
        return rescored

    async def _has_turns(self, user_id: str) -> bool:
        """Whether the user has transcript turns. A yes is remembered (turns are rarely all
        deleted, and then it costs only an unused embedding); a no holds while the vector index
        is unchanged (every stored, deleted or synced row bumps its version), so a first turn
        counts at once and a store of standalone facts asks once, not per search."""
        if user_id in self._users_with_turns:
            return True
        version = self._index.version if self._index is not None else None
        if version is not None and self._users_without_turns.get(user_id) == version:
            return False
        answer = await self._db.read(lambda conn: retrieval_sql.has_turns(conn, user_id))
        if len(self._users_with_turns) + len(self._users_without_turns) >= _USERS_WITH_TURNS_MAX:
            self._users_with_turns.clear()  # many users: start over rather than grow without bound
            self._users_without_turns.clear()
        if answer:
            self._users_with_turns.add(user_id)
        elif version is not None:
            self._users_without_turns[user_id] = version
        return answer

    async def _read_traits(
        self, memory_ids: list[int], known: dict[int, RankTraits]
    ) -> dict[int, RankTraits]:
        """``known`` with the traits of those of ``memory_ids`` it lacks, read in one query."""
        missing = [memory_id for memory_id in memory_ids if memory_id not in known]
        if missing:
            known.update(await self._db.read(lambda conn: retrieval_sql.rank_traits(conn, missing)))
        return known

    def _feedback_scores(
        self, user_id: str, query: np.ndarray, feedback_ids: list[int], candidates: list[int]
    ) -> dict[int, float] | None:
        """Cosines of ``candidates`` to Rocchio's query ``q/|q| + prf_weight · mean(feedback vectors)``
        (None when no feedback memory has a vector)."""
        assert self._index is not None
        feedback = self._index.vectors_of(user_id, feedback_ids)
        if feedback.shape[0] == 0:
            return None
        expanded = normalize(normalize(query)[0] + self._config.prf_weight * feedback.mean(axis=0))[0]
        return self._index.cosines(user_id, expanded, candidates)

    async def _speakers_named(
        self, query: str, candidates: list[int], traits: dict[int, RankTraits], *, wanted: bool
    ) -> dict[int, str]:
        """The candidates said by someone the query names, with that speaker label (casefolded):
        their text starts with a label ("Melanie: …") made of capitalised words of the query.
        Empty when not ``wanted`` (subject boost and speaker query off) or the query has no
        capitalised word. (Its first word counts: "Melanie said…" names her, and a "What" matches
        no speaker label.) The traits read land in ``traits``."""
        if not wanted or not candidates:
            return {}
        names = {word.casefold() for word in WORD.findall(query) if word[0].isupper()}
        if not names:
            return {}
        traits = await self._read_traits(candidates, traits)
        return {
            memory_id: speaker
            for memory_id in candidates
            if memory_id in traits
            and (speaker := traits[memory_id].speaker) is not None
            and set(speaker.split()) <= names
        }

    def _perspective_query(self, query: np.ndarray, perspective: np.ndarray) -> np.ndarray:
        """``q/|q| + speaker_query · p/|p|``, normalised: the question and its first-person form."""
        return normalize(normalize(query)[0] + self._config.speaker_query * normalize(perspective)[0])[0]

    async def _fts(
        self,
        user_id: str,
        fts_query: FtsQuery,
        k: int,
        layers: tuple[str, ...],
        kinds: tuple[str, ...] | None,
    ) -> dict[int, float]:
        """FTS candidates and their normalised bm25, the session followers of each hit credited."""
        if fts_query.empty or not layers:
            return {}
        share = self._index.share_of(user_id) if self._index is not None else 1.0
        weight, count = self._config.follower_weight, self._config.followers

        def read(conn: sqlite3.Connection) -> dict[int, float]:
            scores = retrieval_sql.fts_candidates(
                conn,
                user_id,
                fts_query,
                k,
                user_share=share,
                common_term_share=self._config.common_term_share,
                row_budget=self._config.fts_row_budget,
                term_counts=self._term_counts,
                layers=layers,
                kinds=kinds,
            )
            if weight <= 0 or count <= 0 or not scores:
                return scores
            # A turn is often answered by the next one ("What did you take from that book?" →
            # "It taught me self-acceptance"), whose own words miss the question's: the turns
            # after a hit get a share of its score, as if their context were indexed with them.
            credited = dict(scores)
            for hit, followers in retrieval_sql.session_followers(
                conn, user_id, list(scores), count, layers, kinds
            ).items():
                for follower in followers:
                    credited[follower] = max(credited.get(follower, 0.0), weight * scores[hit])
            return credited

        return await self._db.read(read)

    async def _time_ranges(self, query: str, user_id: str) -> tuple[TimeRange, ...]:
        """The date ranges the query names (none when time-aware search is off or it names none)."""
        if self._time_parser is None or not may_hold_date(query[:MAX_PARSED_CHARS]):
            return ()
        now = self._clock()
        if self._config.time_anchor == "newest_memory":
            newest = await self._db.read(lambda conn: retrieval_sql.newest_about_time(conn, user_id))
            if newest is not None:
                now = parse_timestamp(newest)
        try:
            return await asyncio.to_thread(self._time_parser.ranges, query, now)
        except Exception:
            # A boost is never worth a failed search: whatever dateparser trips on, search goes on.
            log.exception("date parsing failed; searching without a date range")
            return ()

    async def _time_candidates(
        self,
        user_id: str,
        ranges: Sequence[TimeRange],
        layers: tuple[str, ...],
        kinds: tuple[str, ...] | None,
    ) -> list[int]:
        """Up to ``time_candidates`` of the user's memories in each range (newest first)."""
        count = self._config.time_candidates
        if count <= 0 or not layers:
            return []

        def read(conn: sqlite3.Connection) -> list[int]:
            found: dict[int, None] = {}
            for time_range in ranges:
                start, end = time_range.bounds()
                found.update(
                    dict.fromkeys(retrieval_sql.in_time_range(conn, user_id, start, end, count, layers, kinds))
                )
            return list(found)

        return await self._db.read(read)

    async def _in_range(self, candidates: list[int], ranges: Sequence[TimeRange]) -> set[int]:
        """The candidates about a time inside one of ``ranges``."""
        bounds = [time_range.bounds() for time_range in ranges]
        times = await self._db.read(lambda conn: retrieval_sql.about_times(conn, candidates))
        return {
            memory_id
            for memory_id, moment in times.items()
            if any(start <= moment < end for start, end in bounds)
        }

    async def _query_vector(self, query: str) -> np.ndarray | None:
        if self._embedder is None or self._index is None or not query.strip():
            return None
        if not self._embedder.available():
            return None
        try:
            return await self._embedder.embed_query(query, timeout=self._query_timeout_s)
        except EmbedderUnavailable as exc:
            log.info("search without vectors", extra={"reason": str(exc)})
            return None
