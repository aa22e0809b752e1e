"""What an English clause says in passing, wherever it sits in it: a child's age said as who they are
("my 3 year old is obsessed with dinosaurs"), a job named in passing ("6 months into my job at
Accenture"), and what a group chat says of someone by name ("Dan moved to Bristol last week")."""

from __future__ import annotations

import re

from .english_passing import Reader, about_of, as_first_person, opens_as_speaker
from .english_people import NAME, name_ok, relation_of
from .english_text import is_name
from .shapes import About, Draft, Voice, en_sentence

_YEAR_OLD = re.compile(
    r"^(?:my|our)\s+(?P<age>\d{1,2})[\s-]*(?:year|yr)[\s-]*old(?:\s+(?P<kid>son|daughter|boy|girl))?\b",
    re.IGNORECASE,
)
_JOB_AT = re.compile(
    rf"\b(?:my|the)\s+(?:new\s+)?(?:job|role|position|gig)\s+(?:at|with)\s+(?P<org>{NAME}|the\s+{NAME})",
    re.IGNORECASE,
)
_NEW_JOB_AT = re.compile(
    rf"(?:^|,\s*)new\s+(?:job|role|position|gig)\s+(?:at|with)\s+(?P<org>{NAME}|the\s+{NAME})", re.IGNORECASE
)
_NOT_MINE = re.compile(
    r"\b(?:old|previous|last|former|first|dream|interview|application|offer)\s+(?:job|role|position|gig)\b|"
    r"\b(?:interview|applying|applied|apply|quit|left|leaving|lost|resigned|fired|sacked|laid\s+off|hate|hated|was|"
    r"were|used\s+to)\b",
    re.IGNORECASE,
)
_NAMED_SUBJECT = re.compile(
    r"^(?P<name>(?-i:[A-Z][a-z]+(?:\s+[A-Z][a-z]+)?))(?:\s+|(?='s\s))(?P<rest>(?:just\s+|finally\s+|recently\s+|also\s+|now\s+)*(?:moved\s+(?:back\s+)?to|relocated\s+to|"
    r"lives\s+in|turned\s+\d|works\s+(?:at|for|as)|started\s+at|got\s+a\s+(?:new\s+)?job\s+at|is\s+allergic\s+to|"
    # "Finn has eczema", "Mia is coeliac", "Leo's 5 now": what they have, what they are, their age
    r"has\s+(?!(?:to|got\s+to|been|just|no|nothing)\b)|(?:is|'s)\s+(?:(?:now|officially|just|still|also)\s+)?(?:\d{1,2}(?=\s+(?:now|today|years?|"
    r"this\s+year|already|and)\b|\s*[,.!]|$)|coeliac|celiac|diabetic|asthmatic|epileptic|autistic|dyslexic|vegan|vegetarian|"
    r"pescatarian|(?:lactose|gluten|dairy)[- ]intolerant|"
    # "Tom is a chef", "Ana's a nurse at St James's": a job (the occupation rule decides)
    r"(?:a|an)\s+(?=[\w-]+(?:\s+[\w-]+)?(?:\s*$|\s*[,.!]|\s+(?:at|in|for|with|and|now)\b))))\b.*)$"
)
_NOT_PEOPLE = frozenset(
    """just finally recently everyone everybody someone somebody nobody anyone they we he she it mum mom dad nan
    grandma grandad grandpa granny gran my our the this that there work home school uni today yesterday monday
    tuesday wednesday thursday friday saturday sunday january february march april may june july august september
    october november december""".split()
)


def in_passing(clause: str, voice: Voice, read: Reader) -> list[Draft]:
    """A child's age said as who they are ("my 3 year old is obsessed with dinosaurs"), a job named in
    passing ("6 months into my job at Accenture"), and what a group chat says of someone by name ("Dan
    moved to Bristol last week")."""
    drafts: list[Draft] = []
    m = _YEAR_OLD.match(clause)
    if m:
        relation = relation_of(m["kid"]) if m["kid"] else "child"
        said = m["kid"].lower() if m["kid"] else "child"
        about = About(None, relation, of=voice.person)
        draft = read(f"I'm {m['age']} years old", voice.relative(about, said))
        if draft is not None:
            drafts.append(about_of(draft, about))
    m = _JOB_AT.search(clause)
    mine = m is not None and not _NOT_MINE.search(clause)
    if m is None and (bare := _NEW_JOB_AT.search(clause)) is not None and not _NOT_MINE.search(clause):
        m, mine = bare, True  # "…, new job at Tesco head office, first week is mental": the speaker's
    if mine and (m.group().lower().lstrip(", ").startswith(("my", "new")) or opens_as_speaker(clause)):
        said = read(clause, voice)  # "I start my new job at Monzo": the clause's own fact says it already
        org = m["org"] if said is None or said.attribute != "employer" else None
        if org:
            fact = en_sentence(f"{voice.title} works at {org}")
            drafts.append(Draft(fact, "employer", "identity", 8).stating("employer", org))
    m = _NAMED_SUBJECT.match(clause)
    if m and name_ok(m["name"]) and m["name"].split()[0].lower() not in _NOT_PEOPLE:
        about = About(m["name"], None, of=voice.person)
        rest = re.sub(r"^'s\s+", "is ", _NEXT.sub("", m["rest"]))
        draft = read(as_first_person(rest), Voice.of(m["name"]))
        if (
            draft is not None
            and draft.attribute is not None
            and (draft.attribute != "home" or is_name(draft.value))
        ):
            drafts.append(about_of(draft, about))  # not "Paul moved to the platform team": no place
    return drafts


_NEXT = re.compile(r"\s*(?:,\s*|\s+)(?:and|but|so|who|which)\s+.*$|\s*[,;]\s+.*$", re.IGNORECASE)
