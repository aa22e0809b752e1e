"""Speaker-perspective queries: a question about someone, asked the way they would say it.

A transcript turn is stored as its speaker said it ("Melanie: We went camping with the kids"),
while a question about it names them in the third person ("What has Melanie done with her
family?"). The same question in the first person ("What have I done with my family?") lies nearer
to her turns in the embedding space, so search embeds both and, when the person is the one
speaker the query names among the best candidates, scores them against both
(``search.speaker_query``).

Rules only, no model: the query must name exactly one person (one capitalised word after the
first, so "What", "When" and a name that opens the question do not count; a second name such as
a place makes it ambiguous) and hold no first-person word (in "What did Melanie tell me?" the
first person is already taken); that name becomes "I" ("my" for a possessive) and the
third-person singular pronouns become first-person ones. The rules are blunt on purpose: a
pronoun meaning someone else ("her son's birthday" when the son is meant), an object "her"
("meet her" → "meet my") or "Melanie's been" ("my been") come out wrong. What is embedded is a
hint for the vector side, never shown and never used for FTS, and it is used only beside the
query itself.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# A word (letters first; "Caroline's" gives "Caroline"): a name when it starts with a capital.
# The subject boost (services/search.py) reads a query's names with it too.
WORD = re.compile(r"\b[^\W\d_][\w-]*")

_PRONOUNS = {
    "she": "I",
    "he": "I",
    "her": "my",
    "his": "my",
    "him": "me",
    "hers": "mine",
    "herself": "myself",
    "himself": "myself",
}
_PRONOUN = re.compile(r"\b(" + "|".join(_PRONOUNS) + r")\b", re.IGNORECASE)
# Words that already speak in the first person: whose "I" would the rewrite's be?
_FIRST_PERSON = re.compile(r"\b(I|me|my|mine|myself)\b", re.IGNORECASE)


@dataclass(frozen=True)
class Perspective:
    """The one person a query names (as written) and the query asked in their words."""

    name: str
    query: str


def speaker_perspective(query: str) -> Perspective | None:
    """The query in the first person of the one person it names, or None when it names no one or
    more than one (see the module's docstring)."""
    names = {word for word in WORD.findall(query)[1:] if word[0].isupper()}
    if len(names) != 1 or _FIRST_PERSON.search(query):
        return None
    (name,) = names
    escaped = re.escape(name)
    text = re.sub(rf"\b{escaped}['’]s\b", "my", query)
    text = re.sub(rf"\b{escaped}\b", "I", text)
    text = _PRONOUN.sub(lambda match: _PRONOUNS[match.group(1).lower()], text)
    return Perspective(name, text)
