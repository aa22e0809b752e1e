"""Stage one of a search, ``gather``: the candidates from both retrievers, fetched side by side.

FTS (a reader thread, with the session followers of each hit credited) and the vector product
(another thread) run at once, the query embedding and the date parse overlap them, and the query
in the words of the one speaker it names is embedded beside the query itself (the local embedder
batches the two into one model call). On two cores a search costs the slower side, not the sum.
"""

from __future__ import annotations

import asyncio
import logging
import sqlite3
import time
from collections.abc import Callable
from datetime import datetime

import numpy as np

from ...config import SearchConfig
from ...errors import EmbedderUnavailable
from ...models.embedders import Embedder
from ...store import retrieval as retrieval_sql
from ...store.db import Database
from ...store.fts import FtsQuery
from ...store.vectors import VectorIndex
from ..index_calls import call_index
from ..perspective import speaker_perspective
from ..timeparse import MAX_PARSED_CHARS, TimeParser, TimeRange, may_hold_date
from .model import Candidate, Pool, SearchRequest, parse_timestamp

log = logging.getLogger(__name__)

# How many users' answers about transcript turns are remembered (see TurnsCache).
_USERS_WITH_TURNS_MAX = 10_000


class TurnsCache:
    """Whether a user has transcript turns (the speaker query and the priors apply to turns only).

    A yes is remembered (turns are rarely all deleted, and then it costs only an unused embedding);
    a no holds while the vector index is unchanged (every stored, deleted or synced row bumps its
    version), so a first turn counts at once and a store of standalone facts asks once, not per
    search.
    """

    def __init__(self, db: Database, index: VectorIndex | None) -> None:
        self._db = db
        self._index = index
        self._with: set[str] = set()
        self._without: dict[str, int] = {}  # user → the index version it was asked at

    async def has_turns(self, user_id: str) -> bool:
        if user_id in self._with:
            return True
        version = self._index.version if self._index is not None else None
        if version is not None and self._without.get(user_id) == version:
            return False
        answer = await self._db.read(lambda conn: retrieval_sql.has_turns(conn, user_id))
        if len(self._with) + len(self._without) >= _USERS_WITH_TURNS_MAX:
            self._with.clear()  # many users: start over rather than grow without bound
            self._without.clear()
        if answer:
            self._with.add(user_id)
        elif version is not None:
            self._without[user_id] = version
        return answer


class Gatherer:
    """Fills a request's pool from FTS5 and the vector index, and starts the side tasks later
    stages await (the date parse, the speaker's form of the query).

    Args:
        time_parser: finds date ranges in queries; None when time-aware search is off.
        clock: "now" for relative dates in queries.
    """

    def __init__(
        self,
        db: Database,
        index: VectorIndex | None,
        embedder: Embedder | None,
        config: SearchConfig,
        query_timeout_s: float,
        turns: TurnsCache,
        time_parser: TimeParser | None,
        clock: Callable[[], datetime],
    ) -> None:
        self._db = db
        self._index = index
        self._embedder = embedder
        self._config = config
        self._query_timeout_s = query_timeout_s
        self._turns = turns
        self._time_parser = time_parser
        self._clock = clock
        self._term_counts = retrieval_sql.TermRowCounts()

    async def gather(self, request: SearchRequest) -> Pool:
        config = self._config
        started = time.perf_counter()
        fts_task = asyncio.ensure_future(self._fts(request, max(config.fts_candidates, request.limit)))
        # The date parse (a thread: dateparser is pure Python) overlaps the query embedding.
        time_task = asyncio.ensure_future(self._time_ranges(request.query, request.user_id))
        request.tasks += [fts_task, time_task]
        request.time_task = time_task
        perspective = (
            speaker_perspective(request.query) if request.mode != "fts" and config.speaker_query > 0 else None
        )
        if perspective is not None:
            request.has_turns = await self._turns.has_turns(request.user_id)
            if request.has_turns:  # no speaker to speak as: a store of standalone facts pays nothing
                request.perspective = perspective
                request.perspective_task = asyncio.ensure_future(self.query_vector(perspective.query))
                request.tasks.append(request.perspective_task)
        query_vector = await self.query_vector(request.query) if request.mode != "fts" else None
        request.query_vector = query_vector
        vector_task = None
        if query_vector is not None and self._index is not None:
            k = max(config.candidates, request.limit)
            vector_task = asyncio.ensure_future(asyncio.to_thread(self._vector_top, request, query_vector, k))
            request.tasks.append(vector_task)
        fts_scores = await fts_task
        after_fts = request.timed("fts_and_embed", started)  # the vector product overlaps it
        vector_scores: dict[int, float] = {}
        vector_candidates: set[int] = set()
        if vector_task is not None:
            assert query_vector is not None and self._index is not None
            request.vector_searched = True
            vector_candidates, vector_scores = await vector_task
            missing = [mid for mid in fts_scores if mid not in vector_scores]
            if config.score_all_candidates and missing:
                # The exact cosine of FTS candidates the vector side did not propose: a keyword
                # hit that is also close in meaning is not penalised for missing the vector top-k.
                vector_scores = {
                    **vector_scores,
                    **await call_index(
                        self._index, self._index.cosines, request.user_id, query_vector, missing
                    ),
                }
        request.timed("vector", after_fts)
        pool = Pool(config.fts_weight, config.vector_weight)
        pool.candidates = [
            Candidate(
                mid,
                fts=fts_scores.get(mid, 0.0),
                cosine=vector_scores.get(mid),
                query_cosine=vector_scores.get(mid),
                in_fts=mid in fts_scores,
                in_vector=mid in vector_candidates,
            )
            for mid in set(fts_scores) | vector_candidates
        ]
        pool.rank()
        return pool

    def _vector_top(
        self, request: SearchRequest, vector: np.ndarray, k: int
    ) -> tuple[set[int], dict[int, float]]:
        """The vector side's candidates and their cosines (runs in a thread)."""
        assert self._index is not None
        top = self._index.search(request.user_id, vector, k, request.layers, request.kinds, request.audience)
        return {hit.memory_id for hit in top}, {hit.memory_id: hit.cosine for hit in top}

    async def _fts(self, request: SearchRequest, k: int) -> dict[int, float]:
        """FTS candidates and their normalised bm25, the session followers of each hit credited."""
        fts_query: FtsQuery = request.fts_query
        if fts_query.empty or not request.layers:
            return {}
        user_id, layers, kinds, audience = request.user_id, request.layers, request.kinds, request.audience
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
                audience=audience,
            )
            if weight <= 0 or count <= 0 or not scores:
                return scores
            # A turn is often answered by the next one ("What did you take from that book?" →
            # "It taught me self-acceptance"), whose own words miss the question's: the turns
            # after a hit get a share of its score, as if their context were indexed with them.
            credited = dict(scores)
            for hit, followers in retrieval_sql.session_followers(
                conn, user_id, list(scores), count, layers, kinds, audience
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

    async def query_vector(self, query: str) -> np.ndarray | None:
        if self._embedder is None or self._index is None or not query.strip():
            return None
        if not self._embedder.available():
            return None
        try:
            return await self._embedder.embed_query(query, timeout=self._query_timeout_s)
        except EmbedderUnavailable as exc:
            log.info("search without vectors", extra={"reason": str(exc)})
            return None
