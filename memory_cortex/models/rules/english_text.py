"""Chat English as the rules read it: text-speak spelled out ("im" → "I'm", "u" → "you", "w" →
"with"), quoted text recognised, and the checks that keep a value plausible (a home is a place, an
allergen is a substance, a partner is a name)."""

from __future__ import annotations

import re
from functools import lru_cache

# --- text-speak: the spelling, not the meaning, changes

_TEXTSPEAK = {
    "i": "I",
    "im": "I'm",
    "ive": "I've",
    "dont": "don't",
    "doesnt": "doesn't",
    "didnt": "didn't",
    "cant": "can't",
    "wont": "won't",
    "isnt": "isn't",
    "wasnt": "wasn't",
    "havent": "haven't",
    "hasnt": "hasn't",
    "u": "you",
    "ur": "your",
    "w": "with",
    "w/": "with",
    "bc": "because",
    "cuz": "because",
    "coz": "because",
    "yrs": "years",
    "yr": "year",
    "mths": "months",
    "thx": "thanks",
    "pls": "please",
    "plz": "please",
    "gonna": "going to",
    "wanna": "want to",
    "thru": "through",
    "tho": "though",
    "bf": "boyfriend",
    "gf": "girlfriend",
    "bff": "best friend",
    "n": "and",
    "r": "are",
    "hes": "he's",
    "shes": "she's",
    "theyre": "they're",
    "studyin": "studying",
    "workin": "working",
    "livin": "living",
    "doin": "doing",
    "bday": "birthday",
    "gfs": "girlfriend's",
    "bfs": "boyfriend's",
}
_TEXTSPEAK_WORD = re.compile(
    r"(?<![\w'])(?:" + "|".join(sorted(map(re.escape, _TEXTSPEAK), key=len, reverse=True)) + r")(?![\w'/])",
    re.IGNORECASE,
)
# "id rather", "id retire": "I'd" only before a verb ("my id" is an ID)
_ID = re.compile(
    r"(?<![\w'])id(?=\s+(?:rather|love|like|prefer|be|have|go|move|say|kill|retire|never|probably)\b)", re.I
)


def _spelled(m: re.Match[str]) -> str:
    word = m.group()
    low = word.lower()
    if low == "w" and not re.match(r"\s+[a-z]", m.string[m.end() :]):
        return word  # a lone "w" that starts nothing: leave it
    out = _TEXTSPEAK.get(low)
    return out if out else word


# "my birthdays the 3rd", "my dads a mechanic": the apostrophe chat leaves out.
_MISSING_APOSTROPHE = re.compile(
    r"\b(my\s+(?:(?:little|big|baby|best|older|younger)\s+)?(?:name|birthday|bday|dad|mum|mom|sister|sis|brother|bro|son|"
    r"daughter|husband|wife|boss|partner|girlfriend|boyfriend|manager|friend|bestie|cat|dog|puppy|kitten|bunny|"
    r"hamster|nan|grandma|grandad|cousin|aunt|uncle))s(?=\s+(?:the\s+\d|\d|called\b|named\b|name\b|a\s|an\s|"
    r"from\b|(?-i:[A-Z])))",
    re.IGNORECASE,
)


_TEXTSPEAK_KEYS = frozenset(_TEXTSPEAK) | {"id"}
_PUNCTUATION = ".,!?;:()\"'~"


@lru_cache(maxsize=2048)
def spell_out(clause: str) -> str:
    """'im 27 and ive got 2 cats w u' → "I'm 27 and I've got 2 cats with you"."""
    lowered = clause.lower()
    if "my " in lowered:
        clause = _MISSING_APOSTROPHE.sub(r"\1's", clause)
    if _TEXTSPEAK_KEYS.isdisjoint(w.strip(_PUNCTUATION) for w in lowered.split()):
        return clause
    return _ID.sub("I'd", _TEXTSPEAK_WORD.sub(_spelled, clause))


# --- a message written all in lower case: names where a name is said

_NAME_CUE = re.compile(
    r"\b(?P<cue>called|named|name\s+is|name's|go\s+by|goes\s+by)\s+(?P<name>[a-z][a-z'-]+)"
    # "call me lexi not alexandra": not "call me later", "call me crazy but…"
    r"|\bcall\s+me\s+(?P<name2>[a-z][a-z'-]+)(?=\s*$|\s+(?:not|instead|from\s+now|pls|please|now|thanks)\b|\s*[!.,])"
    # "we moved to birmingham", "i live in croydon": a place
    r"|\b(?:moved\s+(?:back\s+)?to|relocated\s+to|live\s+in|living\s+in|based\s+in)\s+(?P<place>[a-z][a-z'-]{2,})\b"
)
_NOT_NAMES = frozenset(
    "a an the my your his her our their not no just also still now actually so that this it me you him them "
    "what who whatever something anything nothing because and but or later back tomorrow tonight soon today asap "
    "anytime whenever again maybe sometime crazy old please pls".split()
)


_NOT_PLACES = frozenset(
    """the a an my our his her their this that town city london's uni university college halls school work home
    house flat apartment place area country countryside suburbs centre center together here there sin peace
    denial fear hope one two three new old rural""".split()
)


def recase(sentence: str) -> str:
    """A sentence written all in lower case with the words it names as names capitalised: "my cat's
    called biscuit" → "my cat's called Biscuit", "we moved to birmingham" → "…Birmingham". A sentence
    with any capital letter is left as it is."""
    if any(char.isupper() for char in sentence):
        return sentence

    def named(m: re.Match[str]) -> str:
        group = "name" if m["name"] else "name2" if m["name2"] else "place"
        name = m[group]
        if name in _NOT_NAMES or (group == "place" and name in _NOT_PLACES):
            return m.group()
        return m.group()[: m.start(group) - m.start()] + name[:1].upper() + name[1:]

    return _NAME_CUE.sub(named, sentence)


# --- quoted text: a title, a line of dialogue, a pasted bio (never the speaker's own statement)

QUOTED = (
    r"(?:(?<=[\s:(])|^)'(?=[^\W\d_])(?:[^'\n]|'(?=[a-z]))*?\s(?:[^'\n]|'(?=[a-z]))*?(?<=[\w.!?,])'(?=[\s,.!?;:)]|$)"
    r"|\"[^\"\n]*\b(?:i|i'm|im|i've|i'd|i'll|my|me)\b[^\"\n]*\"|“[^”\n]*\b(?:i|i'm|im|my|me)\b[^”\n]*”"
)
"""A quoted span of two words or more in single quotes ('I'm Glad My Mom Died'), or a short quote in
double quotes that says "I"/"my" ("I'm from Barcelona"): someone else's words, dropped."""


# --- plausible values

_NOT_ALLERGENS = frozenset(
    """monday mondays tuesday tuesdays wednesday wednesdays thursday thursdays friday fridays saturday saturdays
    sunday sundays mornings morning work hard exercise effort people adulting responsibility responsibilities
    meetings meeting homework chores cardio running mornings early alarms emails email school job jobs
    commitment commitments small talk nonsense drama stupidity bullshit bs you him her them it this that
    everything life housework maths math deadlines""".split()
)


def plausible_allergen(value: str | None) -> bool:
    """'shellfish', 'bee stings', 'the new washing powder' yes; 'Mondays', 'hard work', 'people' no."""
    if not value:
        return False
    words = re.findall(r"[^\W\d_]+", value.lower())
    return bool(words) and not any(w in _NOT_ALLERGENS for w in words[:2])


_NOT_HOMES = re.compile(
    r"^(?:the\s+(?-i:[a-z])|(?:my|your|his|her|our|their|a|an|this|that|it|bed|sin|denial|hope|fear|"
    r"hell|heaven|peace|sweatpants|pyjamas|pajamas|hiding|monday|tuesday|wednesday|thursday|friday|saturday|sunday|"
    r"january|february|march|april|june|july|august|september|october|november|december|"
    # what a developer works "in": "a developer in Python" lives nowhere
    r"python|java|javascript|typescript|rust|go|golang|ruby|rails|scala|kotlin|swift|php|perl|haskell|elixir|"
    r"react|angular|vue|django|node|excel|sql|unity|unreal|figma|photoshop)\b)",
    re.IGNORECASE,
)


def plausible_home(value: str | None) -> bool:
    """A place ('Porto', 'the Netherlands', 'north London', 'manchester'), not 'my car', 'the office',
    'a van', 'denial'."""
    return bool(value) and not _NOT_HOMES.match(value or "")


_NAME = re.compile(r"^(?-i:[A-Z])[\w'.-]*(?:\s+(?-i:[A-Z])[\w'.-]*){0,2}$")


def is_name(value: str | None) -> bool:
    """'Marco', 'Mrs Patel', 'Paul Hart': capitalised words, at most three."""
    return bool(value) and bool(_NAME.match(value or ""))


NOT_ORGS = frozenset(
    """home work uni university college school it this that there here the a an my his her their our gym
    hospital church mine yours theirs night nights weekends weekend myself present moment least all noon dawn
    midnight lunch lunchtime dusk last first once scale random""".split()
)
"""Words an "at …" names that are no organisation ("at home", "at uni", "at night")."""


def lowercase_org(employer: str) -> bool:
    """'tesco', 'greggs': one word a chat writes in lower case for an organisation, not 'home' or 'nights'."""
    return re.fullmatch(r"[a-z][\w&'.-]*", employer) is not None and employer not in NOT_ORGS


# A verb of the third person back in the first ("she is" → "I am"), for a statement read in its
# speaker's voice.
BACK_TO_FIRST = {
    "is": "am",
    "'s": "'m",
    "has": "have",
    "was": "was",
    "doesn't": "don't",
    "does": "do",
    "goes": "go",
    "studies": "study",
}
