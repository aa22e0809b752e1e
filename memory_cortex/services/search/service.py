"""The search service: ``gather`` → the configured stages → ``hydrate`` → ``ranking`` → ``rerank``.

The stages are built once, from the config; each search runs them in order over one pool and
records each one's time. What a result's score is made of travels with it (``SearchHit.factors``
and ``bonus``), so ``/search/debug`` can show it.
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime

from ...config import LifecycleConfig, RankingConfig, SearchConfig
from ...models.embedders import Embedder
from ...records import EVERYONE, Audience, MemoryRecord
from ...store import memories as memory_sql
from ...store.db import Database
from ...store.fts import FtsQuery, build_query
from ...store.vectors import KINDS, VectorIndex
from ..access import AccessTracker
from ..metrics import Metrics
from ..protection import protected_because
from ..timeparse import TimeParser
from .gather import Gatherer, TurnsCache
from .model import (
    DEFAULT_LAYERS,
    Candidate,
    Pool,
    SearchHit,
    SearchRequest,
    SearchResult,
    cancel_pending,
    parse_timestamp,
)
from .rerank import LlmReranker
from .stages import build_stages, run_stage


def ranking_multiplier(memory: MemoryRecord, now: datetime, config: RankingConfig) -> float:
    """The multi-factor part of the ranking (see :class:`~memory_cortex.config.RankingConfig`): between
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


class SearchService:
    """Runs hybrid searches for one user at a time.

    Args:
        db: the store.
        index: the in-memory vector matrices (live model only).
        embedder: turns the query into a vector; may be down.
        config: weights, candidate counts, which stages run.
        query_timeout_s: longest wait for the query vector before going FTS-only.
        ranking: the optional multi-factor ranking (off unless ``ranking.enabled``).
        clock: "now" for the recency factor and for relative dates in queries (tests move it).
        time_parser: finds date ranges in queries (used only when ``config.time_boost`` is on; made
            here if not given).
        reranker: reorders the best ``rerank_candidates`` of hybrid searches (``rerank.enabled``).
        access: counts what :meth:`find` returns as read (the ranking and the lifecycle use reads).
        metrics: times :meth:`find` for ``/metrics`` and ``/stats``.
        protection: what the similarity floor never leaves out (``lifecycle.protect_importance``,
            ``protected_categories``, ``protected_topics``; the defaults when not given).
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
        reranker: LlmReranker | None = None,
        rerank_candidates: int = 0,
        access: AccessTracker | None = None,
        metrics: Metrics | None = None,
        protection: LifecycleConfig | None = None,
    ) -> None:
        self._protection = protection if protection is not None else LifecycleConfig()
        self._ranking = ranking if ranking is not None else RankingConfig()
        self._clock = clock
        self._db = db
        self._config = config
        self._time_parser = (time_parser or TimeParser()) if config.time_boost > 0 else None
        turns = TurnsCache(db, index)
        self._gatherer = Gatherer(
            db, index, embedder, config, query_timeout_s, turns, self._time_parser, clock
        )
        self._stages = build_stages(db, index, config, turns, time_aware=self._time_parser is not None)
        self._reranker = reranker
        self._rerank_candidates = rerank_candidates
        self._access = access
        self._metrics = metrics

    def warm_up(self) -> None:
        """Load what the first search would otherwise load (dateparser's data, when time-aware
        search is on). Blocking: call it from a thread at start-up."""
        if self._time_parser is not None:
            self._time_parser.warm_up()

    async def find(
        self,
        query: str,
        user_id: str,
        limit: int,
        mode: str = "hybrid",
        layers: Sequence[str] = DEFAULT_LAYERS,
        kinds: Sequence[str] | None = None,
        *,
        audience: Audience,
        min_similarity: float | None = None,
    ) -> SearchResult:
        """A search someone reads (``/hybrid-search``, MCP ``search_memory``): :meth:`search`, then
        timed in the metrics and every hit counted as read. The debug view and recall's own lookups
        call :meth:`search` and count nothing themselves (recall counts what it used)."""
        started = time.perf_counter()
        result = await self.search(
            query, user_id, limit, mode, layers, kinds, audience=audience, min_similarity=min_similarity
        )
        if self._metrics is not None:
            self._metrics.observe_search(mode, time.perf_counter() - started, vector_used=result.vector_used)
        if self._access is not None:
            self._access.record(hit.memory.id for hit in result.hits)
        return result

    async def search(
        self,
        query: str,
        user_id: str,
        limit: int,
        mode: str = "hybrid",
        layers: Sequence[str] = DEFAULT_LAYERS,
        kinds: Sequence[str] | None = None,
        *,
        audience: Audience = EVERYONE,
        rerank: bool = True,
        min_similarity: float | None = None,
    ) -> SearchResult:
        """The best ``limit`` live memories of ``user_id`` for ``query``.

        ``mode`` ``"fts"`` or ``"vector"`` runs one retriever alone (for benchmarks and debugging):
        the other part of the fused score is 0, and the stages apply as in hybrid mode (the speaker
        query needs a query vector, so not in ``"fts"``; the reranker runs on hybrid searches
        only). ``layers``: only memories in these layers (default working and core; the archive
        only when asked for). ``kinds``: only memories of these kinds, ``fact`` and/or ``turn``
        (``None``: both). ``audience``: only memories the requester may see (its agent, a private
        or group session, its channel: :class:`~memory_cortex.records.Audience`); every retriever
        applies it, so a memory it may not see neither shows nor lends its score to another.
        ``rerank=False``: the fused order, as the reranker would get it. ``min_similarity``: hits only
        the vector side proposed whose cosine to the question is below it are left out (None:
        ``search.min_similarity``; 0: none),
        so a query unrelated to every memory finds nothing rather than the least unrelated ones;
        a protected memory (an allergy, importance 9+…) is never left out (:meth:`below_floor`).
        """
        reranking = rerank and self._reranker is not None and mode == "hybrid"
        query = query[: self._config.max_query_chars]
        request = SearchRequest(
            query=query,
            user_id=user_id,
            limit=max(limit, self._rerank_candidates) if reranking else limit,
            mode=mode,
            layers=tuple(sorted(set(layers))),
            kinds=None if kinds is None or set(kinds) >= set(KINDS) else tuple(sorted(set(kinds))),
            fts_query=build_query(query) if mode != "vector" else FtsQuery(),
            audience=audience,
        )
        started = time.perf_counter()
        # The side tasks (FTS read, date parse, vector product, the rewritten query's embedding)
        # are cancelled if the search ends early (an error, a client gone): none runs on unread.
        try:
            pool = await self._gatherer.gather(request)
            for stage in self._stages:
                await run_stage(stage, request, pool)
            hits = await self._hydrate(request, pool)
            hits = [hit for hit in hits if not self.below_floor(hit, min_similarity)]
        finally:
            cancel_pending(request.tasks)
        rerank = "off"
        if reranking:
            assert self._reranker is not None
            outcome = await self._reranker.rerank(query, hits)
            hits = outcome.hits if outcome.status == "reranked" else hits
            request.timings_ms["rerank"] = outcome.elapsed_ms
            rerank = outcome.status
        request.timings_ms["total"] = round((time.perf_counter() - started) * 1000, 2)
        return SearchResult(
            hits=hits[:limit],
            fts_query=request.fts_query,
            vector_used=request.query_vector is not None,
            timings_ms=request.timings_ms,
            rerank=rerank,
        )

    async def _hydrate(self, request: SearchRequest, pool: Pool) -> list[SearchHit]:
        """The best candidates as hits (their rows read in one query), then the ranking multiplier."""
        started = time.perf_counter()
        ranked = self._ranking.enabled
        best = pool.top(request.limit * self._ranking.pool if ranked else request.limit)
        records = await self._db.read(lambda conn: memory_sql.get_many(conn, pool.ids(best)))
        hits = [
            self._hit(records[c.id], c, pool)
            for c in best
            # A row deleted, superseded or moved to another layer between the two reads is
            # dropped, never shown stale.
            if c.id in records
            and records[c.id].superseded_by is None
            and records[c.id].user_id == request.user_id
            and records[c.id].layer in request.layers
            and (request.kinds is None or records[c.id].kind in request.kinds)
            and request.audience.admits(records[c.id].scope)
        ]
        after = request.timed("hydrate", started)
        if ranked:
            now = self._clock()
            hits = [self._ranked(hit, ranking_multiplier(hit.memory, now, self._ranking)) for hit in hits]
            hits.sort(key=lambda hit: (-hit.score, -hit.memory.id))
            hits = hits[: request.limit]
            request.timed("ranking", after)
        return hits

    def below_floor(self, hit: SearchHit, floor: float | None = None) -> bool:
        """Whether the similarity floor leaves ``hit`` out (``floor`` None: ``search.min_similarity``).

        Only a hit the vector side alone proposed is judged, and by its cosine to the question as
        asked (:attr:`SearchHit.query_cosine`): in a small store the nearest vectors are whatever
        there is, and an unrelated question would get them all. A shared keyword is evidence of
        its own. The fused relevance is not the measure: feedback and session support lift every
        memory of a small store toward the question (a Kubernetes question scored "Assistant:
        Noted!" 0.24 fused, 0.07 as asked). A memory vital to keep (see
        :func:`~memory_cortex.services.protection.protected_because`, importance and safety topics)
        is never left out: "Any dietary restrictions?" shares no word with "…allergic to
        peanuts…", and a weak cosine must not hide a safety fact.
        """
        floor = self._config.min_similarity if floor is None else floor
        return (
            floor > 0
            and hit.source == "vector"
            and (hit.query_cosine or 0.0) < floor
            and protected_because(hit.memory, self._protection, by_category=False) is None
        )

    @staticmethod
    def _hit(record: MemoryRecord, candidate: Candidate, pool: Pool) -> SearchHit:
        relevance = pool.relevance(candidate)
        return SearchHit(
            record,
            relevance,
            candidate.fts,
            candidate.vector_score,
            candidate.source,
            relevance,
            factors=dict(candidate.factors),
            bonus=candidate.bonus,
            query_cosine=candidate.query_cosine,
        )

    @staticmethod
    def _ranked(hit: SearchHit, multiplier: float) -> SearchHit:
        return dataclasses.replace(
            hit, score=hit.relevance * multiplier, factors={**hit.factors, "ranking": multiplier}
        )
