"""What a search passes from stage to stage: the candidates with their raw signals and the named
factors that make their score, the request, and the result.

A candidate's relevance is always computed from its parts, in one place (:meth:`Candidate.relevance`):

    relevance = (fts_weight · fts + vector_weight · max(cosine, 0)) × Π factors + bonus

``factors`` are multiplied in the order the stages set them (time, subject, length); ``bonus`` is
what session support adds. A hit's ``score`` is the relevance × the ranking multiplier (1 with
ranking off), or, after the LLM reranker reordered the list, its new rank's score.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import numpy as np

from ...records import EVERYONE, Audience, MemoryRecord, RankTraits
from ...store.fts import FtsQuery
from ..perspective import Perspective
from ..timeparse import TimeRange

# What a search covers unless it asks otherwise: the archive is kept but not searched.
DEFAULT_LAYERS = ("core", "working")


@dataclass
class Candidate:
    """One memory a retriever proposed, and everything its score is made of.

    Attributes:
        fts: bm25 normalised to the best hit of the query, 0…1 (a session follower: its share of
            the hit it follows); 0 when full-text search did not find it.
        cosine: the vector signal (the last stage that re-scored the vector side wins); None when
            there is none (no query vector, no stored vector, or not scored).
        query_cosine: the cosine to the question as asked, before any stage re-scored the vector
            side (feedback pulls the query toward the best results, and in a small store those are
            whatever there is); what the similarity floor judges. None when not scored.
        in_fts / in_vector: which retriever proposed it (``source``).
        factors: named multipliers, in the order they were set.
        bonus: added after the factors (session support).
    """

    id: int
    fts: float = 0.0
    cosine: float | None = None
    query_cosine: float | None = None
    in_fts: bool = False
    in_vector: bool = False
    factors: dict[str, float] = field(default_factory=dict)
    bonus: float = 0.0

    def base(self, fts_weight: float, vector_weight: float) -> float:
        return fts_weight * self.fts + vector_weight * self.vector_score

    @property
    def vector_score(self) -> float:
        """The cosine as it counts: never below 0, 0 without one."""
        return max(self.cosine or 0.0, 0.0)

    def weighed(self, fts_weight: float, vector_weight: float) -> float:
        """The base score with every factor applied, before the bonus."""
        score = self.base(fts_weight, vector_weight)
        for factor in self.factors.values():
            score *= factor
        return score

    def relevance(self, fts_weight: float, vector_weight: float) -> float:
        return self.weighed(fts_weight, vector_weight) + self.bonus

    @property
    def source(self) -> str:
        if self.in_fts and self.in_vector:
            return "fts5+vector"
        return "fts5" if self.in_fts else "vector"


@dataclass
class Pool:
    """The candidates of one search, kept best first (ties: the newer id first)."""

    fts_weight: float
    vector_weight: float
    candidates: list[Candidate] = field(default_factory=list)

    def relevance(self, candidate: Candidate) -> float:
        return candidate.relevance(self.fts_weight, self.vector_weight)

    def rank(self) -> None:
        """Sort best first: after any stage that changed a score."""
        self.candidates.sort(key=lambda c: (-self.relevance(c), -c.id))

    def top(self, count: int) -> list[Candidate]:
        return self.candidates[:count]

    def ids(self, candidates: Iterable[Candidate] | None = None) -> list[int]:
        return [c.id for c in (self.candidates if candidates is None else candidates)]

    def by_id(self) -> dict[int, Candidate]:
        return {c.id: c for c in self.candidates}


@dataclass
class SearchRequest:
    """One search as the stages see it: what was asked, what the gather found, and what the stages
    read once and share (the traits of candidates, the speakers the query names)."""

    query: str
    user_id: str
    limit: int
    mode: str
    layers: tuple[str, ...]
    kinds: tuple[str, ...] | None
    fts_query: FtsQuery
    audience: Audience = EVERYONE  # every retriever and the hydrate keep only what it may see
    query_vector: np.ndarray | None = None
    vector_searched: bool = False  # the vector side ran (a query vector and an index)
    has_turns: bool | None = None  # None: not asked yet
    time_task: asyncio.Future[tuple[TimeRange, ...]] | None = None
    perspective: Perspective | None = None
    perspective_task: asyncio.Future[np.ndarray | None] | None = None
    traits: dict[int, RankTraits] = field(default_factory=dict)
    speakers: dict[int, str] = field(default_factory=dict)  # candidate → the speaker the query names
    timings_ms: dict[str, float] = field(default_factory=dict)
    tasks: list[asyncio.Future[Any]] = field(default_factory=list)  # cancelled when the search ends

    def timed(self, name: str, since: float) -> float:
        """Record ``name`` as taking from ``since`` until now; returns now."""
        now = time.perf_counter()
        self.timings_ms[name] = round((now - since) * 1000, 2)
        return now


@dataclass(frozen=True)
class SearchHit:
    """One result: the memory and how it scored.

    ``relevance`` is :meth:`Candidate.relevance` (the fused score with the boosts and priors that
    apply); ``score`` is what the results are ordered by: the relevance itself, or with ranking on,
    relevance × the multiplier (``factors["ranking"]``), or after the reranker its rank's score.
    ``factors``: each stage's multiplier by name (``time``, ``subject``, ``length``, ``ranking``);
    ``bonus``: what session support added. So ``relevance = (fts_weight·fts_score +
    vector_weight·vector_score) × Π factors except ranking + bonus``.
    """

    memory: MemoryRecord
    score: float
    fts_score: float
    vector_score: float
    source: str
    relevance: float
    factors: dict[str, float] = field(default_factory=dict)
    bonus: float = 0.0
    # The cosine to the question as asked (Candidate.query_cosine): what search.min_similarity judges.
    query_cosine: float | None = None


@dataclass(frozen=True)
class SearchResult:
    hits: list[SearchHit]
    fts_query: FtsQuery
    vector_used: bool
    timings_ms: dict[str, float]
    # What the LLM reranker did (search/rerank.py): "off", "reranked", "timeout", "unavailable"…
    rerank: str = "off"


def parse_timestamp(text: str) -> datetime:
    """A stored timestamp (ISO 8601, ``Z`` for UTC) as an aware datetime."""
    moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def cancel_pending(tasks: Sequence[asyncio.Future[Any]]) -> None:
    for task in tasks:
        if not task.done():
            task.cancel()
