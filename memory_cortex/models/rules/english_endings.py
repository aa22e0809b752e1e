"""English statements that a value stopped holding: a pet or a person gone ("Biscuit passed away last
week", "we had to rehome Luna"), a couple parted ("Jonas and I broke up"), a job left ("I resigned
from Deloitte last month"), a drink given up ("I've quit coffee"). Each is a fact of its own that
ends the current fact holding that value (:attr:`~..facts.ExtractedFact.ends`); where none holds it,
it is kept as a plain fact and ends nothing."""

from __future__ import annotations

import re

from .english_people import REL_WORDS
from .english_rule_parts import ORG, en_rules
from .english_values import clean_value, drink_value, is_drink
from .english_voice import en_fact, topic_from
from .shapes import Draft, Rule, Voice

_NAME = r"(?P<name>(?-i:[A-Z])[\w'-]+(?:\s+(?-i:[A-Z])[\w'-]+)?)"
_NOT_NAMES = re.compile(
    rf"^(?:{REL_WORDS}|i|he|she|they|it|we|you|this|that|there|everyone|nobody|someone|mum|mom|dad|"
    r"grandma|grandpa|grandad|granny|nan|nana|the|my|our|his|her|their)$",
    re.IGNORECASE,
)
_PET_OR_PERSON = (
    r"(?:(?:my|our)\s+(?:[\w-]+\s+){0,2}?(?:dog|cat|puppy|kitten|hamster|rabbit|bunny|parrot|budgie|tortoise|horse|"
    r"pony|guinea\s+pig|fish|goldfish|spaniel|terrier|labrador|lab|greyhound|collie|retriever|poodle)\s*,?\s+)?"
)


def _said(m: re.Match[str], voice: Voice) -> str:
    """The statement alone, about the speaker ("we had to…" is theirs), without what follows a comma
    after the statement itself ("Jonas and I broke up" keeps its "and I")."""
    said = m.start("after")
    clause = (
        m.string[:said]
        + re.split(
            r"\s*[,;]\s*|\s+(?:and|but|so)\s+(?=(?:i|i'm|i've|we|now|then|switched|joined|started)\b)",
            m.string[said:],
            maxsplit=1,
            flags=re.I,
        )[0]
    )
    return en_fact(re.sub(r"^we(?=\s|')", "I", clause, flags=re.IGNORECASE), voice)


def _gone(m: re.Match[str], voice: Voice) -> Draft | None:
    """ "Biscuit passed away last week", "we had to put Rolo down": the one it names is gone."""
    name = m["name"]
    if _NOT_NAMES.match(name) or _NOT_NAMES.match(name.split()[0]):
        return None
    return Draft(_said(m, voice), "loss", "relationship", 7).ending(None, name)


def _went_with(m: re.Match[str], voice: Voice) -> Draft | None:
    """ "Comet went with her": the pet of that name is the speaker's no longer."""
    name = m["name"]
    if _NOT_NAMES.match(name) or _NOT_NAMES.match(name.split()[0]):
        return None
    return Draft(_said(m, voice), "pet", "relationship", 7).ending("pet", name)


def _parted(m: re.Match[str], voice: Voice) -> Draft | None:
    """ "Jonas and I broke up", "I split up with Jonas": the partner of that name is no longer."""
    name = m["name"] or m["name2"]
    if _NOT_NAMES.match(name):
        return None
    return Draft(_said(m, voice), "relationship", "relationship", 7).ending("partner", name)


def _left_job(m: re.Match[str], voice: Voice) -> Draft | None:
    """ "I resigned from Deloitte last month", "I left Acme in May": that employer is no longer."""
    org = clean_value(m["org"], keep_article=True)
    if not org or _NOT_NAMES.match(org):
        return None
    return Draft(_said(m, voice), "employer", "identity", 7).ending("employer", org)


def _gave_up(m: re.Match[str], voice: Voice) -> Draft | None:
    """ "I've quit coffee", "I gave up Coke": a usual drink that no longer is."""
    drink = drink_value(re.split(r"\s+(?:for|since|because|as|after|last|this|a|two|three)\b|,", m["obj"])[0])
    if not drink or not is_drink(drink):
        return None
    return Draft(_said(m, voice), topic_from(drink, "drink"), "preference", 6).ending("drink", drink)


_WHEN = r"(?P<after>(?:[\s,;].*)?)$"
EN_ENDING_RULES: tuple[Rule, ...] = en_rules(
    (
        (
            None,
            rf"^(?:(?:sadly|unfortunately|so|well)[\s,]+)?{_PET_OR_PERSON}{_NAME}\s+(?:has\s+|have\s+)?(?:sadly\s+|finally\s+)?"
            r"(?:passed\s+away|passed\s+on\b(?!\s+(?:the|a|an|my|his|her|it|this|that)\b)|died|crossed\s+the\s+rainbow\s+bridge|is\s+no\s+longer\s+with\s+us|was\s+put\s+to\s+sleep|"
            r"went\s+to\s+(?:a|her|his|their)\s+new\s+(?:home|family))\b" + _WHEN,
            _gone,
        ),
        (
            # "Comet went with her" (after a split): a pet that left, never "Tom went with her to the party"
            None,
            rf"^{_PET_OR_PERSON}{_NAME}\s+(?:went|stayed)\s+with\s+(?:her|him|them)(?P<after>\s*[.!]*)$",
            _went_with,
        ),
        (
            "I we",
            r"^(?:i|we)(?:'ve|\s+have)?\s+(?:(?:just|finally|sadly|recently)\s+)?(?:lost|had\s+to\s+(?:put\s+down|rehome|re-home|"
            r"give\s+away|say\s+goodbye\s+to)|rehomed|re-homed|gave\s+away)\s+(?:(?:our|my)\s+(?:[\w-]+\s+){0,2}?)?"
            rf"{_NAME}(?:\s+(?:down|away))?\b" + _WHEN,
            _gone,
        ),
        (
            "I we",
            r"^(?:i|we)(?:'ve|\s+have)?\s+(?:(?:just|finally|sadly|recently)\s+)?had\s+to\s+put\s+(?:(?:our|my)\s+(?:[\w-]+\s+){0,2}?)?"
            rf"{_NAME}\s+down\b" + _WHEN,
            _gone,
        ),
        (
            None,
            rf"^(?:{_NAME}\s+and\s+(?:i|me)|(?:me|i)\s+and\s+{_NAME.replace('P<name>', 'P<name2>')})\s+(?:have\s+|'ve\s+)?(?:just\s+|finally\s+|officially\s+)?(?:broke\s+up|broken\s+up|"
            r"split(?:\s+up)?|separated|divorced|called\s+it\s+(?:off|quits))\b" + _WHEN,
            _parted,
        ),
        (
            "I",
            r"^i(?:'ve|\s+have)?\s+(?:just\s+|finally\s+|officially\s+)?(?:broke|broken|split)\s+up\s+with\s+"
            rf"{_NAME}\b" + _WHEN,
            _parted,
        ),
        (
            "I",
            r"^i(?:'ve|\s+have)?\s+(?:just\s+|finally\s+|officially\s+)?(?:resigned\s+from|quit|left|handed\s+in\s+my\s+"
            r"notice\s+at|was\s+(?:laid\s+off|let\s+go|made\s+redundant)\s+(?:from|at|by))\s+(?:my\s+job\s+at\s+)?"
            rf"{ORG}(?=\s+(?:last|this|in|on|after|at\s+the\s+end|yesterday|today|and|but|so)\b|\s*[,;.!]|$)"
            + _WHEN,
            _left_job,
        ),
        (
            "I",
            r"^i(?:'ve|\s+have)?\s+(?:just\s+|finally\s+|officially\s+)?(?:quit|gave\s+up|given\s+up|stopped\s+drinking|"
            r"cut\s+out)\s+(?P<obj>[\w\s'-]+?)(?:\s*[,;.!]|\s+(?:and|but|so)\b|$)" + _WHEN,
            _gave_up,
        ),
    )
)
"""Read before the other rules: "I left Acme" is the end of an employer, not a move."""
