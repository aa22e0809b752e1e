"""The memory lifecycle: working memories are promoted or expire, near-duplicates merge, unread
memories decay into the archive, and old archive entries are folded into history summaries.

One run is six stages, in order (README "Memory lifecycle" has the formulas and defaults):

1. ``promote``: a working memory whose promotion score reaches ``promote_threshold`` moves to core;
   one that does not and has outlived ``working_ttl_hours`` moves to the archive (it expired). A
   verbatim turn is never promoted: it moves to the archive after ``turn_archive_days``;
2. ``merge``: live core memories at cosine ≥ ``merge_cosine`` form groups (union-find); the newest
   of a group keeps its wording and takes the group's highest importance and all its reads, the
   others are hidden behind it (``superseded_by``) with a ``merged`` link. Incremental: only rows
   created, edited or moved into core since the last merge are compared with all the others;
3. ``decay``: a core memory whose strength ``base(category) × access_factor × exp(−λ·days)`` falls
   below ``archive_threshold`` moves to the archive;
4. ``sessions``: a conversation nothing was posted to for ``session_summary_after_days`` is told
   again by the LLM as one ``session_summary`` fact in core (its turns stay); one that got new
   turns since is summarised again and the new summary supersedes the old. Committed per session;
5. ``compress``: archive entries at least ``compress_after_days`` in the archive are summarised by
   the LLM, per user and month, into a ``history_summary`` memory in core; the entries stay, each
   pointing at its summary (``compressed_into``) with a ``summarised`` link. Without an LLM, or when
   it fails, the stage is skipped and the next run tries again (so is ``sessions``);
6. ``maintain``: FTS5 ``optimize`` and a check of the vector index against the store.

One module per stage (``promote`` … ``maintain``), the formulas in ``scoring``, the reports in
``report``, what the stages share in ``engine``; :mod:`.service` runs them.
"""

from ...store.lifecycle import RunRecord
from .clock import iso, next_daily_run, parse_time, utc_now
from .report import LifecycleReport, Pending, StageReport
from .scoring import access_factor, days_until_archived, decay_strength, promotion_score
from .service import STAGES, FinishedHook, LifecycleService

__all__ = [
    "STAGES",
    "FinishedHook",
    "LifecycleReport",
    "LifecycleService",
    "Pending",
    "RunRecord",
    "StageReport",
    "access_factor",
    "days_until_archived",
    "decay_strength",
    "iso",
    "next_daily_run",
    "parse_time",
    "promotion_score",
    "utc_now",
]
