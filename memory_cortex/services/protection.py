"""What must never be silently hidden: a memory the user cannot afford to lose from recall.

One rule, read by every place that could hide a memory: decay never archives it, the working
layer's expiry promotes it to core instead of archiving it, and search's similarity floor
(``search.min_similarity``) never leaves it out (importance and topics only, see ``by_category``). It lives here, beside both the search and the
lifecycle services, so each reads the same settings (``lifecycle.protect_importance``,
``protected_categories``, ``protected_topics``).
"""

from __future__ import annotations

import re
from typing import Protocol

from ..config import LifecycleConfig

_TOPIC_WORD = re.compile(r"\w+", re.UNICODE)


class Protectable(Protocol):
    """What the rule reads of a memory (a store row, a lifecycle row, a search hit's record)."""

    @property
    def importance(self) -> int: ...

    @property
    def category(self) -> str: ...

    @property
    def topic(self) -> str: ...

    @property
    def subject_id(self) -> int | None: ...


def protected_because(
    memory: Protectable, config: LifecycleConfig, *, by_category: bool = True
) -> str | None:
    """Why ``memory`` must never be hidden (None: nothing protects it). Only the user's own memories
    are protected: another person's allergy (``subject_id`` set) is that person's, and never pushed
    into the user's answers. The rules, checked in this order:

        - its importance is at least ``protect_importance`` (the extractor or the writer said it is vital);
        - its category is one of ``protected_categories`` (default ``identity``: who the user is);
        - its topic has a word of ``protected_topics`` (health, allergies, medication, safety…),
          compared case-insensitively word by word ("Health & allergies" has "health").

        ``by_category=False`` leaves the category rule out: search's similarity floor keeps a vital
        memory (importance, safety topic) in every answer, but not every identity fact in answers to
        questions that have nothing to do with them; decay and expiry keep identity facts regardless.
    """
    if memory.subject_id is not None:
        return None
    if memory.importance >= config.protect_importance:
        return f"importance {memory.importance} ≥ {config.protect_importance}"
    if by_category and memory.category in config.protected_categories:
        return f"category {memory.category}"
    words = set(_TOPIC_WORD.findall((memory.topic or "").lower()))
    for word in config.protected_topics:
        if word.lower() in words:
            return f"topic word {word.lower()}"
    return None
