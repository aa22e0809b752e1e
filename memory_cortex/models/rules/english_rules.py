"""The English first-person statements the rules extractor takes, in the order they are tried
(the first rule that matches a clause and writes a fact wins): ``EN_RULES``. Its groups live in
modules of their own (english_health, english_identity, english_preferences, english_todos); the
ones here say what someone is called and who their people are ("my name is…", "call me…", "I'm
married to…", "Ana is my sister", "my X is Y"), and the standing instructions to the assistant
("always answer in French"), each a pattern and the handler that writes its fact."""

from __future__ import annotations

import re

from ..attributes import canonical_relation
from .english_health import EN_HEALTH_RULES
from .english_identity import EN_IDENTITY_RULES
from .english_people import relation_of
from .english_possessive import RELATION_WORDS, my_x_is_y
from .english_preferences import EN_PREFERENCE_RULES, EN_SKILL_RULES
from .english_rule_parts import IHAVE, IM, en_rules, say
from .english_todos import EN_DECISION_RULES, EN_TODO_RULES
from .english_values import NATIONALITIES
from .english_voice import en_fact, third_person, topic_from
from .shapes import Draft, Rule, Voice, cap, en_sentence

_REL = "(?:" + "|".join(sorted(map(re.escape, RELATION_WORDS), key=len, reverse=True)) + ")"
_REL_PHRASE = rf"(?:(?:best|older|younger|big|little|baby|twin|eldest|oldest|youngest|step|line)\s+)?{_REL}"

_NAME_WORD = r"[^\W\d_][\w'.-]*"
_NAME_TAIL = (
    r"(?:\s+(?:and|but|or|btw|by\s+the\s+way|though|so|from\s+now\s+on|please|instead|these\s+days|now|"
    r"for\s+short|not)\b.*|\s*\(.*\)|\s*[,;:–—-]\s+.*)?$"
)
_ANY_NAME = (
    rf"(?P<name>{_NAME_WORD}(?:\s+(?!(?:and|but|or|btw|by|though|so|from|please)\b){_NAME_WORD}){{0,3}})"
)
_CAP_NAME = r"(?P<name>(?-i:[A-Z][\w'.-]*)(?:\s+(?-i:[A-Z][\w'.-]*)){0,2})"
_NOT_NAMES = frozenset(
    "not irrelevant unimportant secret private a an the also too hard long short weird spelled spelt "
    "pronounced actually still now what unknown none nothing same different kind very so literally on "
    "in written sorry fine good great done back here there okay ok sure ready confused lost out just "
    "happy glad tired busy this that it he she they who which today tomorrow yesterday everything "
    "something mine always never new free home available afk brb whatever".split()
)


def _name_ok(name: str) -> bool:
    return name.split()[0].lower() not in _NOT_NAMES


def _name_is(m: re.Match[str], voice: Voice) -> Draft | None:
    if not _name_ok(m["name"]):
        return None
    kind = m["kind"] or ""
    return Draft(
        f"{cap(voice.possessive)} {kind}name is {m['name']}.", f"{kind.strip()} name".strip(), "identity", 10
    ).stating("name", m["name"])


def _called(m: re.Match[str], voice: Voice) -> Draft | None:
    if not _name_ok(m["name"]):
        return None
    return Draft(f"{voice.title} wants to be called {m['name']}.", "preferred name", "identity", 9).stating(
        "name", m["name"]
    )


def _goes_by(m: re.Match[str], voice: Voice) -> Draft | None:
    if not _name_ok(m["name"]):
        return None
    return Draft(f"{voice.title} goes by {m['name']}.", "preferred name", "identity", 9).stating(
        "name", m["name"]
    )


def _im_name(m: re.Match[str], voice: Voice) -> Draft | None:
    """'Hi, I'm Ana': a name, or a nationality ('I'm Brazilian': where they are from)."""
    if not _name_ok(m["name"]):
        return None
    draft = Draft(f"{voice.title} is {m['name']}.", "identity", "identity", 8)
    if all(word.lower() in NATIONALITIES for word in m["name"].split()):  # "I'm British Indian"
        if re.search(r",\s*(?:from|born\s+in|grew\s+up\s+in)\s+(?-i:[A-Z])", m.string, re.IGNORECASE):
            return None  # "I'm Welsh, from Swansea": the place says more, and is read next
        return draft.stating("origin", m["name"])
    return draft.stating("name", m["name"])


def _named_relation(m: re.Match[str], voice: Voice) -> Draft | None:
    """'Ana is my sister' → 'Ana is the user's sister.'"""
    if not _name_ok(m["name"]):
        return None
    draft = Draft(en_fact(m.string, voice), topic_from(m["rel"], "family"), "relationship", 7)
    return draft.stating(relation_of(m["rel"]) or canonical_relation(m["rel"].split()[-1]), m["name"])


def _named_favourite(m: re.Match[str], voice: Voice) -> Draft | None:
    if not _name_ok(m["name"]):
        return None
    draft = Draft(en_fact(m.string, voice), f"favourite {topic_from(m['thing'], 'thing')}", "preference", 6)
    return draft.stating("likes", m["name"])


_INSTRUCTION_VERBS = (
    r"(?:answer|reply|respond|write|speak|talk|use|call|add|include|give|show|ask|format|put|keep|mention|"
    r"say|start|end|sign|run|test|check|explain|cite|provide|double-check|confirm|assume|suggest|"
    r"recommend|comment|document|type|spell|list|summari[sz]e|translate|refer|address|make|be|respect)"
)


def _always_never(m: re.Match[str], voice: Voice) -> Draft | None:
    body = third_person(m["body"], voice, to_assistant=True, named=True)
    adverb = "never" if m["adv"].lower() in ("never", "ever") else "always"
    return Draft(
        en_sentence(f"{voice.title} wants the assistant to {adverb} {body}"),
        topic_from(m["body"], "instructions"),
        "preference",
        8,
    )


_NAME_RULES: tuple[Rule, ...] = en_rules(
    (
        # --- names
        (
            "my",
            rf"^my\s+(?P<kind>(?:first|full|last|real|given|legal|middle|preferred)\s+|nick)?name(?:'s|\s+is)\s+"
            rf"{_ANY_NAME}{_NAME_TAIL}",
            _name_is,
        ),
        (
            "you please just pls call i'd i",
            rf"^(?:(?:you\s+can|you\s+may|please|just|pls|i'd\s+(?:like|love|prefer)\s+(?:it\s+if\s+)?you\s+(?:to\s+)?|"
            rf"i\s+(?:would\s+like|want)\s+you\s+to)\s*)*call\s+me\s+{_CAP_NAME}{_NAME_TAIL}",
            _called,
        ),
        (
            "I people everyone my friends",
            rf"^(?:i\s+go\s+by|{IM}\s+(?:going\s+by|called)|people\s+call\s+me|everyone\s+calls\s+me|(?:my\s+)?"
            rf"friends\s+call\s+me)\s+{_CAP_NAME}{_NAME_TAIL}",
            _goes_by,
        ),
    )
)

_PARTNER_RULES: tuple[Rule, ...] = en_rules(
    (
        (
            "I",
            rf"^{IM}\s+(?:happily\s+)?(?:married|engaged)\s+to\s+(?P<obj>.+)$",
            say("relationship", 8, "partner", attribute="partner"),
        ),
        (
            "I",
            rf"^{IM}\s+(?:currently\s+)?dating\s+(?P<obj>.+)$",
            say("relationship", 7, "partner", attribute="partner"),
        ),
    )
)

_RELATION_RULES: tuple[Rule, ...] = en_rules(
    (
        # --- relationships
        (
            None,
            rf"^{_CAP_NAME}(?:\s+is|'s)\s+(?:(?:officially|now|also|actually|still)\s+)?my\s+(?P<rel>{_REL_PHRASE})\b.*$",
            _named_relation,
        ),
        (
            None,
            rf"^{_CAP_NAME}\s+is\s+my\s+(?:absolute\s+|all-time\s+)?favou?rite\s+(?P<thing>.+)$",
            _named_favourite,
        ),
        (
            "I",
            rf"^{IHAVE}\s+(?:a|an|one|two|three|four|five|six|seven|eight|nine|ten|\d+)\s+(?:[\w-]+\s+){{0,2}}?"
            rf"(?P<obj>{_REL})\b.*$",
            say("relationship", 7),
        ),
        # --- "my X is Y"
        (
            "my",
            r"^my\s+(?P<x>[^\W\d_][\w-]*(?:'s)?(?:\s+[^\W\d_][\w-]*(?:'s)?){0,3}?)"
            # "my favourite drink in the morning is…": when, not part of what
            r"(?:\s+(?:in\s+the\s+(?:morning|evening|afternoon)s?|at\s+night|these\s+days|on\s+weekends?))?"
            r"\s+(?:is|are)\s+(?P<y>.+)$",
            my_x_is_y,
        ),
        (
            "my",
            # "my birthday's July 14": the same, with the verb joined to its noun.
            r"^my\s+(?P<x>(?:[^\W\d_][\w-]*\s+){0,2}[^\W\d_][\w-]*)'s\s+(?P<y>(?!\w+\s+(?:is|are)\b).+)$",
            my_x_is_y,
        ),
    )
)

_INSTRUCTION_RULES: tuple[Rule, ...] = en_rules(
    (
        # --- standing instructions to the assistant
        (
            "please always never",
            rf"^(?:please\s+)?(?P<adv>always|never)\s+(?P<body>{_INSTRUCTION_VERBS}\b.*)$",
            _always_never,
        ),
        (
            "please don't do",
            r"^(?:please\s+)?(?:don't|do\s+not)\s+(?P<adv>ever)\s+(?P<body>.+)$",
            _always_never,
        ),
    )
)

_BARE_NAME_RULES: tuple[Rule, ...] = en_rules(
    (
        # --- last: a bare "I'm Ana" / "I'm Brazilian" (capitalised, nothing after it)
        (
            "I",
            rf"^{IM}\s+{_CAP_NAME}(?:\s+(?:btw|by\s+the\s+way|here))?(?:\s*,\s+(?!(?:and|but|so|or)\b).*)?$",
            _im_name,
        ),
    )
)

EN_RULES: tuple[Rule, ...] = (
    *_NAME_RULES,
    *_PARTNER_RULES,
    *EN_HEALTH_RULES,  # high importance, checked before the generic "I'm a…"
    *_RELATION_RULES,
    *_INSTRUCTION_RULES,
    *EN_IDENTITY_RULES,
    *EN_PREFERENCE_RULES,
    *EN_SKILL_RULES,
    *EN_DECISION_RULES,
    *EN_TODO_RULES,
    *_BARE_NAME_RULES,  # last: a bare "I'm Ana" / "I'm Brazilian"
)
