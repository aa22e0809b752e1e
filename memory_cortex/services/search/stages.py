"""The stages after ``gather``, each one named step over the pool (built once from the config; a
stage whose setting is off is not built at all):

- ``time``: the candidates about a time the query names score ``× (1 + time_boost)``; with
  ``time_candidates`` the user's memories in that range join the pool first;
- ``speakers``: the speaker labels of the best ``subject_pool`` are read; a turn said by someone the
  query names scores ``× (1 + subject_boost)``;
- ``speaker_query``: a query naming one speaker, who is the only one named among the best, is also
  asked in their first person: every candidate's cosine is taken against both forms at once;
- ``feedback``: pseudo-relevance feedback (Rocchio): the cosines are taken again against the query
  moved toward the best ``prf_docs`` results;
- ``priors``: among the best ``prior_pool``, a transcript turn scores ``× (1 + length_prior ·
  ln(chars / pivot))`` (the log held to ±1.5) and gains ``session_support`` × the weighed scores of
  the two best other turns of its session (``bonus``).

A stage that changes scores sets a named factor (or the bonus, or the cosine) on the candidates
and ranks the pool again; the score itself is always computed from those parts
(:meth:`~.model.Candidate.relevance`).
"""

from __future__ import annotations

import math
import sqlite3
import time
from typing import Protocol

import numpy as np

from ...config import SearchConfig
from ...records import RankTraits
from ...store import retrieval as retrieval_sql
from ...store.db import Database
from ...store.vectors import VectorIndex
from ...vectormath import normalize
from ..index_calls import call_index
from ..perspective import WORD
from .gather import TurnsCache
from .lookup import LookupStage
from .model import Candidate, Pool, SearchRequest

# The length prior's ln(chars / pivot) is held to ±1.5: ×(1 ± 0.15) at most with the default 0.1.
LENGTH_LOG_CLAMP = 1.5


class Stage(Protocol):
    """One named step over the pool; it records its own time in ``request.timings_ms``."""

    name: str

    async def apply(self, request: SearchRequest, pool: Pool) -> None: ...


class TraitReader:
    """Reads what the boosts and priors need of candidates (speaker label, length, session), each
    candidate once per search (``request.traits`` keeps what was read)."""

    def __init__(self, db: Database) -> None:
        self._db = db

    async def read(self, request: SearchRequest, memory_ids: list[int]) -> dict[int, RankTraits]:
        known = request.traits
        missing = [memory_id for memory_id in memory_ids if memory_id not in known]
        if missing:
            known.update(await self._db.read(lambda conn: retrieval_sql.rank_traits(conn, missing)))
        return known


class TimeStage:
    name = "time"

    def __init__(self, db: Database, index: VectorIndex | None, config: SearchConfig) -> None:
        self._db, self._index, self._config = db, index, config

    async def apply(self, request: SearchRequest, pool: Pool) -> None:
        ranges = await request.time_task if request.time_task is not None else ()
        if not ranges:
            return
        bounds = [time_range.bounds() for time_range in ranges]
        extra = await self._in_range_rows(request, bounds)
        by_id = pool.by_id()
        if extra and request.query_vector is not None and self._index is not None:
            missing = [mid for mid in extra if mid not in by_id or by_id[mid].cosine is None]
            cosines = await call_index(
                self._index, self._index.cosines, request.user_id, request.query_vector, missing
            )
            for mid, cosine in cosines.items():  # the query as asked: no stage has re-scored yet
                if mid in by_id:
                    by_id[mid].cosine = cosine
                    by_id[mid].query_cosine = cosine
                else:
                    by_id[mid] = Candidate(mid, cosine=cosine, query_cosine=cosine)
                    pool.candidates.append(by_id[mid])
        for mid in extra:
            if mid in by_id and by_id[mid].cosine is not None:
                by_id[mid].in_vector = True
        times = await self._db.read(lambda conn: retrieval_sql.about_times(conn, pool.ids()))
        boost = 1.0 + self._config.time_boost
        for memory_id, moment in times.items():
            if any(start <= moment < end for start, end in bounds):
                by_id[memory_id].factors["time"] = boost
        pool.rank()

    async def _in_range_rows(self, request: SearchRequest, bounds: list[tuple[str, str]]) -> list[int]:
        """Up to ``time_candidates`` of the user's memories in each range (newest first)."""
        count = self._config.time_candidates
        if count <= 0 or not request.layers:
            return []

        def read(conn: sqlite3.Connection) -> list[int]:
            found: dict[int, None] = {}
            for start, end in bounds:
                found.update(
                    dict.fromkeys(
                        retrieval_sql.in_time_range(
                            conn,
                            request.user_id,
                            start,
                            end,
                            count,
                            request.layers,
                            request.kinds,
                            request.audience,
                        )
                    )
                )
            return list(found)

        return await self._db.read(read)


class SpeakersStage:
    """Finds the candidates said by someone the query names (their text starts with a label such
    as "Melanie: …" made of capitalised words of the query; its first word counts: "Melanie
    said…" names her, and a "What" matches no label) and boosts them when ``subject_boost`` is on.
    The speaker query reads the same labels."""

    name = "speakers"

    def __init__(self, traits: TraitReader, config: SearchConfig) -> None:
        self._traits, self._config = traits, config

    async def apply(self, request: SearchRequest, pool: Pool) -> None:
        if self._config.subject_boost <= 0 and request.perspective is None:
            return
        # Only the best few can reach the results with a ×1.3: only their labels are read (never
        # fewer than the results asked for).
        candidates = pool.ids(pool.top(max(self._config.subject_pool, request.limit)))
        names = {word.casefold() for word in WORD.findall(request.query) if word[0].isupper()}
        if not candidates or not names:
            return
        traits = await self._traits.read(request, candidates)
        request.speakers = {
            memory_id: speaker
            for memory_id in candidates
            if memory_id in traits
            and (speaker := traits[memory_id].speaker) is not None
            and set(speaker.split()) <= names
        }
        if self._config.subject_boost > 0 and request.speakers:
            boost = 1.0 + self._config.subject_boost
            by_id = pool.by_id()
            for memory_id in request.speakers:
                by_id[memory_id].factors["subject"] = boost
            pool.rank()


class SpeakerQueryStage:
    """The query in the first person of the one speaker it names (:mod:`..perspective`), when that
    speaker is the only one named among the best candidates ("Melanie said what about Caroline?"
    names two); else the rewrite is dropped unread (cancelled: it leaves the embedder's batch)."""

    name = "speaker_query"

    def __init__(self, index: VectorIndex | None, config: SearchConfig) -> None:
        self._index, self._config = index, config

    async def apply(self, request: SearchRequest, pool: Pool) -> None:
        task, perspective = request.perspective_task, request.perspective
        if task is None or perspective is None:
            return
        named = request.query_vector is not None and set(request.speakers.values()) == {
            perspective.name.casefold()
        }
        if not named:
            task.cancel()
            return
        spoken = await task
        if spoken is None or request.query_vector is None or self._index is None:
            return
        # Every candidate is scored against q + speaker_query · p (normalised): a few hundred rows;
        # an FTS-only candidate only when score_all_candidates lets it have a cosine at all.
        query = normalize(
            normalize(request.query_vector)[0] + self._config.speaker_query * normalize(spoken)[0]
        )[0]
        request.query_vector = query
        rescored = [
            c.id for c in pool.candidates if self._config.score_all_candidates or c.cosine is not None
        ]
        cosines = await call_index(self._index, self._index.cosines, request.user_id, query, rescored)
        for candidate in pool.candidates:
            candidate.cosine = cosines.get(candidate.id)
        pool.rank()


class FeedbackStage:
    """Pseudo-relevance feedback (Rocchio) on the vector side: every candidate is scored again
    against ``q/|q| + prf_weight · mean(vectors of the best prf_docs)``, which pulls up what they
    share with the question. Re-scoring the candidates finds the same as a second search over the
    whole matrix, at a fraction of the cost: a few hundred rows, no model call."""

    name = "feedback"

    def __init__(self, index: VectorIndex | None, config: SearchConfig) -> None:
        self._index, self._config = index, config

    async def apply(self, request: SearchRequest, pool: Pool) -> None:
        if not request.vector_searched or not pool.candidates or request.query_vector is None:
            return
        assert self._index is not None
        feedback = await call_index(
            self._index, self._index.vectors_of, request.user_id, pool.ids(pool.top(self._config.prf_docs))
        )
        if feedback.shape[0] == 0:
            return  # no feedback memory has a vector
        expanded = self.expanded_query(request.query_vector, feedback)
        cosines = await call_index(self._index, self._index.cosines, request.user_id, expanded, pool.ids())
        for candidate in pool.candidates:
            candidate.cosine = cosines.get(candidate.id)
        pool.rank()

    def expanded_query(self, query: np.ndarray, feedback: np.ndarray) -> np.ndarray:
        return normalize(normalize(query)[0] + self._config.prf_weight * feedback.mean(axis=0))[0]


class PriorsStage:
    """The length prior and session support over the transcript turns among the best
    ``prior_pool`` (at least ``limit``). A turn has a speaker label and session context (see
    ``rank_traits``); a standalone fact is written to say one thing whatever its length, and keeps
    its score. Bm25 favours short rows, and a short greeting that names the person asked about is
    close to any question on them, yet "Bye!" answers nothing; the turns of the one exchange a
    question is about rise together. Results outside the pool keep their score."""

    name = "priors"

    def __init__(self, traits: TraitReader, turns: TurnsCache, config: SearchConfig) -> None:
        self._traits, self._turns, self._config = traits, turns, config

    async def apply(self, request: SearchRequest, pool: Pool) -> None:
        if request.has_turns is None:
            request.has_turns = await self._turns.has_turns(request.user_id)
        best = pool.top(max(self._config.prior_pool, request.limit))
        if not request.has_turns or not best:  # the priors re-score transcript turns only
            return
        length_prior, support = self._config.length_prior, self._config.session_support
        traits = await self._traits.read(request, pool.ids(best))
        turns = {c.id: traits[c.id] for c in best if c.id in traits and traits[c.id].session}
        pivot = self._config.length_pivot_chars
        weighed: dict[int, float] = {}
        for candidate in best:
            if candidate.id in turns and length_prior > 0:
                log_ratio = math.log(max(turns[candidate.id].chars, 1) / pivot)
                clamped = min(max(log_ratio, -LENGTH_LOG_CLAMP), LENGTH_LOG_CLAMP)
                candidate.factors["length"] = 1.0 + length_prior * clamped
            weighed[candidate.id] = pool.relevance(candidate)
        if support > 0:
            by_session: dict[str | None, list[float]] = {}
            for memory_id, turn in turns.items():
                by_session.setdefault(turn.session, []).append(weighed[memory_id])
            for scores in by_session.values():
                scores.sort(reverse=True)  # once per session, not once per turn
            for candidate in best:
                if candidate.id in turns:
                    others = list(by_session[turns[candidate.id].session])
                    others.remove(weighed[candidate.id])  # itself, once (the rest stay best first)
                    candidate.bonus = support * sum(others[:2])
        pool.rank()


def build_stages(
    db: Database, index: VectorIndex | None, config: SearchConfig, turns: TurnsCache, *, time_aware: bool
) -> list[Stage]:
    """The stages the config turns on, in their fixed order."""
    traits = TraitReader(db)
    stages: list[Stage] = []
    if time_aware:
        stages.append(TimeStage(db, index, config))
    if config.subject_boost > 0 or config.speaker_query > 0:
        stages.append(SpeakersStage(traits, config))
    if config.speaker_query > 0:
        stages.append(SpeakerQueryStage(index, config))
    if config.prf_docs > 0:
        stages.append(FeedbackStage(index, config))
    if config.length_prior > 0 or config.session_support > 0:
        stages.append(PriorsStage(traits, turns, config))
    stages.append(LookupStage(db, index, config))  # last: what the user believes now comes first
    return stages


async def run_stage(stage: Stage, request: SearchRequest, pool: Pool) -> None:
    started = time.perf_counter()
    await stage.apply(request, pool)
    request.timed(stage.name, started)
