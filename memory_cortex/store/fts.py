"""User text → safe FTS5 MATCH expressions.

User text never reaches MATCH raw: FTS5 gives meaning to ``"``, ``*``, ``-``, ``:``, ``^``, ``(``,
``AND``/``OR``/``NOT``/``NEAR``, and a stray one is a syntax error (a 500 in the seed). Here the text
is cut into word tokens, stop-words are dropped, and every token is wrapped in double quotes (a
phrase of one token, which FTS5 never parses as an operator). Tokens are OR-ed: bm25 ranks rows that
match more and rarer terms higher, which is what a question needs ("all terms required" finds
nothing for most questions).

Scripts written without spaces (Chinese, Japanese) go to the trigram index: a run of three or more
such characters becomes its overlapping three-character windows; shorter runs are returned for a
``LIKE`` substring match because a trigram index cannot match fewer than three characters.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

# Han, Hiragana, Katakana, Hangul: the scripts unicode61 cannot split into words.
_CJK = r"\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af\uff66-\uff9f"
_CJK_RUN = re.compile(f"[{_CJK}]+")
_WORD = re.compile(rf"[^\W_{_CJK}]+(?:['’][^\W_{_CJK}]+)*")

MAX_TERMS = 32

# Function words that carry no topic: dropping them keeps bm25 on the words that matter.
STOP_WORDS = frozenset(
    """
    a about above after again against all am an and any are aren't as at be because been before
    being below between both but by can can't cannot could couldn't did didn't do does doesn't doing
    don't down during each few for from further had hadn't has hasn't have haven't having he he'd
    he'll he's her here here's hers herself him himself his how how's i i'd i'll i'm i've if in into
    is isn't it it's its itself let's me more most mustn't my myself no nor not of off on once only
    or other ought our ours ourselves out over own same shan't she she'd she'll she's should
    shouldn't so some such than that that's the their theirs them themselves then there there's
    these they they'd they'll they're they've this those through to too under until up very was
    wasn't we we'd we'll we're we've were weren't what what's when when's where where's which while
    who who's whom why why's with won't would wouldn't you you'd you'll you're you've your yours
    yourself yourselves near also just did does ever still yet like likely would kind sort
    s t d ll m re ve
    """.split()
)


@dataclass(frozen=True)
class FtsQuery:
    """What to ask each index; an empty part means: do not query that index."""

    words: str = ""  # MATCH expression for the porter/unicode61 index
    terms: tuple[str, ...] = ()  # the same words one by one, quoted (to look up how common each is)
    trigrams: str = ""  # MATCH expression for the trigram index
    substrings: tuple[str, ...] = field(default_factory=tuple)  # short CJK runs for LIKE

    @property
    def empty(self) -> bool:
        return not (self.words or self.trigrams or self.substrings)


def quote(term: str) -> str:
    """One FTS5 string token: double quotes around it, inner quotes doubled."""
    return '"' + term.replace('"', '""') + '"'


def word_terms(text: str) -> list[str]:
    """Lower-cased word tokens without stop-words, first occurrence order, at most MAX_TERMS."""
    seen: dict[str, None] = {}
    for match in _WORD.finditer(text.lower()):
        token = match.group().replace("’", "'")
        if token in STOP_WORDS:
            continue
        # Possessives and contractions: "caroline's" → "caroline" (unicode61 splits on ').
        token = token.split("'")[0]
        if token and token not in STOP_WORDS:
            seen.setdefault(token, None)
    return list(seen)[:MAX_TERMS]


def build_query(text: str) -> FtsQuery:
    """Turn any user string into MATCH expressions that cannot be a syntax error."""
    text = text.replace("\x00", " ")
    words = word_terms(text)
    trigram_terms: dict[str, None] = {}
    substrings: dict[str, None] = {}
    for run in _CJK_RUN.findall(text):
        if len(run) >= 3:
            for i in range(len(run) - 2):
                trigram_terms.setdefault(run[i : i + 3], None)
        else:
            substrings.setdefault(run, None)
    return FtsQuery(
        words=" OR ".join(quote(t) for t in words),
        terms=tuple(quote(t) for t in words),
        trigrams=" OR ".join(quote(t) for t in list(trigram_terms)[:MAX_TERMS]),
        substrings=tuple(list(substrings)[:MAX_TERMS]),
    )


def like_pattern(substring: str) -> str:
    """A LIKE pattern matching ``substring`` literally anywhere (used with ``ESCAPE '\\'``)."""
    escaped = substring.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"
