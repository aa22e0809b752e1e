"""Whom a "he" or "she" opening an English sentence means: the one relative the sentences just
before named. "My brother Kerem is visiting next week. He is a dentist." reads the second sentence as
"my brother Kerem is a dentist.", so the rules that read relatives' statements read it.

Only a relative named by "my"/"our", or someone named as a sentence's subject ("Camila stopped being
vegan"), becomes the one meant, and only while nothing else could be: a sentence that names two of
them, or anyone else ("her boyfriend", "the landlord"), forgets them; so does a pronoun of the other gender ("my sister… He…"), and three sentences of the
speaker's in a row that do not refer to them (a reply of the assistant's only forgets them when it
names someone else: "Has the vet seen her?"). A wrong subject is worse than none: when in doubt, no one is meant.
"""

from __future__ import annotations

import dataclasses
import re

from .english_people import NAME, REL_ADJ, REL_WORDS, name_ok, relation_of
from .shapes import Focus

_HE = frozenset(
    """brother bro father dad daddy papa son husband hubby boyfriend grandfather grandpa granddad grandad uncle
    nephew grandson tito lolo""".split()
)
_SHE = frozenset(
    """sister sis mother mom mum mama mam daughter wife missus girlfriend grandmother grandma granny nan nana gran
    aunt auntie aunty niece granddaughter tita lola""".split()
)
_QUIET_LIMIT = 2  # sentences in a row that do not refer to them, before they are forgotten

_NAMED = (
    rf"\s+(?:(?P<adj>{REL_ADJ})\s+)?(?P<rel>{REL_WORDS})\b(?P<owns>'s?\b)?"
    rf"(?:\s*,?\s+(?:(?:is\s+)?(?:called|named)\s+)?(?P<name>{NAME})\b)?"
)
_MENTION = re.compile(rf"\b(?:my|our){_NAMED}", re.IGNORECASE)
_HEARD_MENTION = re.compile(rf"\b(?:your){_NAMED}", re.IGNORECASE)
# Someone else the pronoun could mean: another person's relative, a person by role, a named subject.
_SOMEONE_ELSE = re.compile(
    rf"\b(?:his|her|their|a|an|the|this|that)\s+(?:(?:{REL_ADJ})\s+)?(?:{REL_WORDS}|guy|man|woman|lady|girl|boy|"
    r"doctor|gp|vet|dentist|surgeon|physio|therapist|midwife|pharmacist|trainer|coach|teacher|nurse|landlord|"
    r"landlady|cashier|waiter|waitress|driver|stranger|client|customer|patient|owner|seller|buyer|agent)\b"
    r"|\b(?:someone|somebody|anyone|everyone)\b",
    re.IGNORECASE,
)
# Someone named as the subject of a sentence or of a part of it: "Funny thing, Camila stopped being vegan".
_NAMED_SUBJECT = re.compile(
    r"(?:^|[,;]\s*|\b(?:and|but|so)\s+)(?P<name>(?-i:[A-Z][a-z]+))\s+(?:is|was|has|had|said|says|told|just|lives|works|"
    r"moved|stopped|started|loves|hates|turned|got|called|texted|came|went|and)\b"
)
_NOT_NAMED = frozenset(
    """i my our the a an it this that there he she we they you so and but also then mum mom dad nan gran
    grandma grandpa everyone nobody someone today yesterday tomorrow work home life""".split()
)
_PRONOUN_START = re.compile(
    r"^(?P<lead>(?:(?:oh\s+and|and|also|plus|btw|but|oh|though|now|so|then|anyway)[\s,]+)?)(?P<pronoun>he|she)\b(?!\s+(?:said|says|told|thinks|asked))",
    re.IGNORECASE,
)
_REFERS = re.compile(r"\b(?:he|she|him|her|his|hers|he's|she's)\b", re.IGNORECASE)


def en_refer(sentence: str, focus: Focus | None, heard: bool = False) -> tuple[str, Focus | None]:
    """``sentence`` with an opening "he"/"she" replaced by the relative ``focus`` names when it can
    only mean them, and whom the sentences after this one may mean by "he"/"she". ``heard``: the
    sentence is the assistant's, said to the speaker ("How old is your sister?"): it names their
    relatives with "your" and is returned as it is."""
    opening = _PRONOUN_START.match(sentence)
    if opening is not None and focus is not None and _fits(opening["pronoun"], focus):
        said = sentence if heard else focus.phrase + _spelled_out(sentence[opening.end() :])
        return said, dataclasses.replace(focus, quiet=0)
    named = list((_HEARD_MENTION if heard else _MENTION).finditer(sentence))
    mentions = {m["name"] or m["rel"].lower(): m for m in named}
    subjects = {
        m["name"] for m in _NAMED_SUBJECT.finditer(sentence) if m["name"].lower() not in _NOT_NAMED
    } - set(mentions)
    if _SOMEONE_ELSE.search(sentence) or len(mentions) + len(subjects) > 1 or any(m["owns"] for m in named):
        return sentence, None
    if mentions:
        return sentence, _focus_of(next(iter(mentions.values())))
    if subjects:  # "Camila stopped being vegan.": them, by name (the relative they are, if known)
        name = next(iter(subjects))
        same = focus is not None and focus.name == name
        return sentence, dataclasses.replace(focus, quiet=0) if same else Focus(name, None, name)
    if focus is None or opening is not None:
        return sentence, None  # a "he" or "she" that cannot be them: someone not named here
    if _REFERS.search(sentence) or (focus.name and re.search(rf"\b{re.escape(focus.name)}\b", sentence)):
        return sentence, dataclasses.replace(focus, quiet=0)
    if heard or len(sentence.split()) <= 2:
        return sentence, focus  # the assistant's answer, "Thanks!", "Moqueca!": no one else was meant
    quiet = focus.quiet + 1
    return sentence, dataclasses.replace(focus, quiet=quiet) if quiet <= _QUIET_LIMIT else None


_CONTRACTED = re.compile(
    r"^'s\b(?=(?P<adverb>\s+(?:also|just|already|finally|never|recently|always|still|now))?\s+(?P<next>\S+))"
)
_PARTICIPLE = re.compile(r"^(?:got|been|gone|had|[a-z]+ed|[a-z]+en)$", re.IGNORECASE)


def _spelled_out(rest: str) -> str:
    """ "'s a dentist" → " is a dentist", "'s also got …" → " has also got …" ("my son's 8" would
    read as his age either way; "my cat Luna's a tabby" would not)."""
    m = _CONTRACTED.match(rest)
    if m is None:
        return rest
    verb = " has" if _PARTICIPLE.match(m["next"].strip(",.!")) else " is"
    return verb + rest[m.end() :]


def _focus_of(m: re.Match[str]) -> Focus | None:
    rel = " ".join(m["rel"].lower().split())
    if relation_of(rel) is None:
        return None
    name = m["name"] if name_ok(m["name"]) else None
    adj = f"{m['adj'].lower()} " if m["adj"] else ""
    phrase = f"my {adj}{rel}" + (f" {name}" if name else "")
    gender = "he" if rel in _HE else "she" if rel in _SHE else None
    return Focus(phrase, gender, name)


def _fits(pronoun: str, focus: Focus) -> bool:
    return focus.gender is None or focus.gender == pronoun.lower()
