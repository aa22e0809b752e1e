"""The lifecycle's formulas, pure so the tests and the README can check them: the promotion score
of a working memory and the decayed strength of a core one. What is protected from decay (and from
expiry and the similarity floor) is :func:`~memory_cortex.services.protection.protected_because`."""

from __future__ import annotations

import math

from ...config import LifecycleConfig
from ...store.lifecycle import LifecycleRow
from ..protection import protected_because


def promotion_score(row: LifecycleRow, best_core_cosine: float | None, config: LifecycleConfig) -> float:
    """How much a working memory deserves core:

    ``w_access·min(1, reads/k) + w_signal·high_signal + w_novelty·novelty``

    - reads: ``access_count``; ``k`` = ``promote_access_count``;
    - high_signal: 1 when the category is one of ``high_signal_categories``, the importance is at
      least ``high_signal_importance``, or the rules extractor found it (it only takes explicit
      "remember that…" statements), else 0;
    - novelty: ``1 − max(0, highest cosine to the user's core memories)``: a memory core already
      says adds little (1 when the user has no core memory yet). ``best_core_cosine`` None: the row
      has no vector to compare, novelty counts 0.5 (unknown).
    """
    access = min(1.0, row.access_count / config.promote_access_count)
    high_signal = (
        row.category in config.high_signal_categories
        or row.importance >= config.high_signal_importance
        or row.extractor == "rules"
    )
    novelty = 0.5 if best_core_cosine is None else 1.0 - max(0.0, min(1.0, best_core_cosine))
    score = (
        config.promote_weight_access * access
        + config.promote_weight_signal * float(high_signal)
        + config.promote_weight_novelty * novelty
    )
    return round(score, 9)  # 0.45 + 0 must reach a 0.45 threshold despite float sums


def access_factor(access_count: int, max_access_count: int) -> float:
    """``0.5 + 0.5·log(1+n)/log(1+max n)`` over the user's core memories: 0.5 for a memory never
    read, 1 for the most read one.

    The literal ``log(1+n)/log(1+max n)`` is 0 for every unread memory, which would archive
    everything new at once; with a floor of one half an unread memory decays at its category's
    pace alone (an unread identity fact lasts ~77 days, an unread todo ~37), and reads at most
    double its strength.
    """
    if max_access_count <= 0:
        return 0.5
    return 0.5 + 0.5 * math.log1p(max(0, access_count)) / math.log1p(max_access_count)


def decay_strength(
    category: str, access_count: int, max_access_count: int, days: float, config: LifecycleConfig
) -> float:
    """``base(category) × access_factor × exp(−λ·days)``; ``days`` since the memory was last read
    or entered core, whichever is later."""
    base = config.category_bases.get(category, config.default_base)
    return (
        base * access_factor(access_count, max_access_count) * math.exp(-config.decay_lambda * max(0.0, days))
    )


def days_until_archived(category: str, config: LifecycleConfig, *, read_share: float = 0.0) -> float:
    """Days an untouched memory of ``category`` stays in core (``read_share``: its log-reads over
    the most-read memory's, 0 = never read); ``inf`` when it never falls below the threshold."""
    base = config.category_bases.get(category, config.default_base) * (0.5 + 0.5 * read_share)
    if config.archive_threshold <= 0 or base <= 0:
        return math.inf if config.archive_threshold <= 0 else 0.0
    return max(0.0, math.log(base / config.archive_threshold) / config.decay_lambda)


def explain_decay(
    row: LifecycleRow, days: float, max_access_count: int, strength: float, config: LifecycleConfig
) -> str:
    """The numbers behind one decay decision, as the preview shows them: "protected: …" for a memory
    kept although its strength fell below the threshold, else the formula filled in, e.g.
    ``strength 0.3 (todo) × 0.5 (0 reads of 4) × exp(−0.03 × 60.0 days in core) = 0.025 < 0.05``."""
    why = protected_because(row, config)
    if why is not None:
        return f"protected: {why} (strength {strength:.3f} < {config.archive_threshold:g})"
    base = config.category_bases.get(row.category, config.default_base)
    factor = access_factor(row.access_count, max_access_count)
    return (
        f"strength {base:g} ({row.category}) × {factor:.2f} ({row.access_count} reads of"
        f" {max_access_count}) × exp(−{config.decay_lambda:g} × {days:.1f} days in core)"
        f" = {strength:.3f} < {config.archive_threshold:g}; importance {row.importance}"
    )
