"""Hybrid search: FTS5 candidates + vector candidates → one fused, user-scoped ranking.

A search is a list of named stages over one pool of candidates (:mod:`.gather`, :mod:`.stages`,
:mod:`.service`); each candidate carries its raw signals and the factors the stages set, and its
score is computed from them in one place:

    relevance = (fts_weight · fts + vector_weight · max(cosine, 0)) × time × subject × length + bonus
    score     = relevance × ranking       (or, after the LLM reranker, its new rank's score)

where a factor a stage did not set counts 1 (weights 0.4/0.6 by default, as in the seed). The
method, stage by stage:

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
   "in 2023") are found by dateparser (:mod:`..timeparse`) and every candidate about a time inside
   one scores ``× (1 + time_boost)``; with ``search.time_candidates`` the user's memories in the
   range join the candidates. A boost, never a filter: a query whose date matches nothing still
   gets its best results.
6. Subject-aware search (``search.subject_boost``): a transcript turn said by someone the query
   names ("Melanie: …") scores ``× (1 + subject_boost)``; session followers
   (``search.follower_weight``): the next turns after an FTS hit share its FTS score.
7. Speaker-perspective query (``search.speaker_query``, :mod:`..perspective`): a query naming one
   speaker is also embedded in their first person, and the candidates are scored against both.
8. Pseudo-relevance feedback (``search.prf_docs``): the query vector moves toward the best few
   results and the candidates are scored again.
9. Length prior and session support (``search.length_prior``, ``search.session_support``): among
   the best ``prior_pool`` results, transcript turns that say little lose up to 15 %, and the turns
   of a session that holds other good results gain a share of their scores.
10. Optional multi-factor ranking (``ranking.enabled``): the best ``limit × pool`` by relevance are
   re-ordered by relevance × a multiplier from importance, recency and reads, so that, among
   comparably relevant memories, "I moved to Porto" (new) outranks "I live in Lyon" (a year old).
   See :class:`~memory_cortex.config.RankingConfig` for the formula.
"""

from .model import DEFAULT_LAYERS, Candidate, SearchHit, SearchResult, parse_timestamp
from .rerank import LlmReranker
from .service import SearchService, ranking_multiplier

__all__ = [
    "DEFAULT_LAYERS",
    "Candidate",
    "LlmReranker",
    "SearchHit",
    "SearchResult",
    "SearchService",
    "parse_timestamp",
    "ranking_multiplier",
]
