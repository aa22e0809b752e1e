"""What the English rule tables are built from: ``en_pattern`` and ``en_rules`` (a table of
``(first words, pattern, handler)`` rows, kept in the order given: the first match wins), the
pattern fragments several tables share ("I'm", "I have", the adverbs before a verb), and ``say``,
the handler most first-person statements need."""

from __future__ import annotations

import re
from collections.abc import Iterable

from ..facts import Category
from .english_values import clean_value
from .english_voice import en_fact, is_content, topic_from
from .shapes import Draft, Handler, Rule, Voice, first_words_of


def en_pattern(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.IGNORECASE)


def en_rules(table: Iterable[tuple[str | None, str, Handler]]) -> tuple[Rule, ...]:
    """One rule a row, in the row's order. A row is the words a match can begin with (None: any;
    see :func:`~.shapes.first_words_of`), the pattern (compiled case-insensitive) and its handler."""
    return tuple(
        Rule(en_pattern(pattern), handler, first_words_of(starts)) for starts, pattern, handler in table
    )


IM = r"(?:i'm|i\s+am|im)"
IHAVE = r"(?:i\s+have|i've\s+got|i\s+have\s+got|ive\s+got)"
ORG = r"(?P<org>(?-i:[A-Z0-9])[\w&'.-]*(?:\s+(?:&\s+)?(?-i:[A-Z0-9])[\w&'.-]*){0,3})"
"""An organisation named with capitals ("Stanbic Bank", "H&M", "3M"), as group ``org``."""
# What follows "love" when it was a noun ("Love and acceptance should be everyone's right"), not a verb.
NOT_A_CLAUSE = r"(?!(?:and|or|but|is|are|was|should|will|would|can|must)\b)"
ADV = (
    r"(?:(?:really|truly|absolutely|also|generally|usually|definitely|always|mostly|actually|"
    r"personally|strongly|much|still|just|honestly|totally|genuinely|do|currently|now|only|very)\s+)*"
)


def article(noun: str) -> str:
    """'a nurse', 'an engineer'."""
    return ("an " if noun[:1].lower() in "aeiou" else "a ") + noun


def say(
    category: Category,
    importance: int,
    topic: str | None = None,
    *,
    obj: str = "obj",
    attribute: str | None = None,
) -> Handler:
    """The common case: the whole clause, in the third person; ``obj`` must be real content. With
    ``attribute``, the fact states it, ``obj`` (cleaned) being its value."""

    def handler(m: re.Match[str], voice: Voice) -> Draft | None:
        phrase = m.groupdict().get(obj)
        if not is_content(phrase):
            return None
        label = topic or topic_from(phrase or "", category)
        draft = Draft(en_fact(m.string, voice), label, category, importance)
        return draft.stating(attribute, clean_value(phrase)) if attribute else draft

    return handler
