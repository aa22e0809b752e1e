"""Where someone lives and where they come from. ``home_value`` is the place alone ("Cardiff with
my partner Rhys" → "Cardiff"); ``home`` and ``origin`` read the first-person statements ("I live in
Cardiff", "I grew up in Lagos", english_identity); the rules here read the indirect ones: "home is
Dublin these days", "I'm Lagos-based", "been living in Leeds for six years", "Melbourne girl
through and through", "Glaswegian born and bred", "my native place is Pune"."""

from __future__ import annotations

import dataclasses
import re

from .english_rule_parts import IM, article, en_rules
from .english_text import is_name, plausible_home
from .english_values import NATIONALITIES, clean_value
from .english_voice import en_fact, is_content
from .shapes import Draft, Rule, Voice, en_sentence

DEMONYMS = (
    frozenset(
        """brummie scouser geordie mancunian londoner glaswegian dubliner parisian texan californian aussie kiwi
    yorkshireman yorkshirewoman cockney bostonian chicagoan torontonian melburnian sydneysider lagosian
    floridian new yorker jerseyite liverpudlian edinburgher corkonian""".split()
    )
    | NATIONALITIES
)
PLACE = r"(?P<place>(?-i:[A-Z])[\w'.-]*(?:\s+(?-i:[A-Z])[\w'.-]*){0,2})"
# "a Lagos babe", "Melbourne girl through and through" (a "girl" or "boy" alone may be a brand's: "a Disney girl")
_PLACE_PERSON = (
    r"(?:(?:girl|boy)(?=\s+(?:through\s+and\s+through|born\s+and\s+(?:bred|raised)|at\s+heart))|babe|lad|lass|gal|native|"
    r"born\s+and\s+(?:bred|raised))"
)


_HOME_TAIL = re.compile(
    r"\s+(?:with|for|near|because|since|after|where|which|but|and|so|to|as|last|this|over|in\s+(?:the\s+)?(?:spring|summer|"
    r"autumn|fall|winter|\d{4}|january|february|march|april|may|june|july|august|september|october|november|"
    r"december))\b.*$|\s+[-–—]\s+.*$",
    re.IGNORECASE,
)


def home_value(phrase: str | None) -> str | None:
    """'Cardiff with my partner Rhys' → 'Cardiff'; 'Munich last month for my partner's job' → 'Munich'."""
    value = clean_value(phrase)
    if not value:
        return None
    value = _HOME_TAIL.sub("", value)
    if (office := _OFFICE.match(value)) is not None:  # "the Hamburg office": Hamburg
        value = office["place"]
    return clean_value(value) or None


_OFFICE = re.compile(
    r"^(?:the\s+)?(?P<place>(?-i:[A-Z])[\w'.-]*(?:\s+(?-i:[A-Z])[\w'.-]*)?)\s+(?:office|offices|branch|site|campus|hq|"
    r"headquarters)$",
    re.IGNORECASE,
)


_DWELLING = re.compile(
    r"^(?:a|an|the|my|our)\s+(?:[\w-]+\s+){0,2}?(?:flat|house|place|apartment|room|studio|bungalow|cottage|"
    r"houseshare|house\s+share|terrace|semi|care\s+home|nursing\s+home|retirement\s+(?:home|village))\s+"
    r"(?:in|on|near|just\s+outside)\s+(?=(?-i:[A-Z]))",
    re.IGNORECASE,
)


def home(m: re.Match[str], voice: Voice) -> Draft | None:
    """'I live in Cardiff with my partner Rhys' → Cardiff; 'in a flat in Manchester city centre' →
    Manchester city centre; not 'I live at the office'."""
    place = _DWELLING.sub("", m["obj"].strip())
    if not is_content(place) or not plausible_home(place):
        return None
    value = home_value(place)
    if not value or not plausible_home(value):
        return None
    # "…in Galway with my son Cian, he's 8": the fact says where, and nothing that may change apart.
    said = m.string[: m.start("obj")] + _HOME_SAID_END.split(m["obj"], maxsplit=1)[0]
    return Draft(en_fact(said, voice), "home", "identity", 8).stating("home", value)


_HOME_SAID_END = re.compile(r"\s*[,;]|\s+(?:with|and|but|so|because|cause|cos|though|although|where)\b", re.I)


def origin(m: re.Match[str], voice: Voice) -> Draft | None:
    """'I'm from Kraków originally', 'I grew up in Lagos'; not 'born in the wrong decade'."""
    if not is_content(m["obj"]) or not plausible_home(m["obj"].strip()):
        return None
    value = home_value(m["obj"])
    if not value or not plausible_home(value):
        return None
    return Draft(en_fact(m.string, voice), "origin", "identity", 8).stating("origin", value)


def place_is_home(m: re.Match[str], voice: Voice) -> Draft | None:
    """The rule's ``place`` is where they live: "home is Dublin these days", "we bought a house in
    Bath" (english_more)."""
    home = home_value(m["place"])
    if not home or not plausible_home(home):
        return None
    return Draft(en_fact(m.string, voice), "home", "identity", 8).stating("home", home)


def _based(m: re.Match[str], voice: Voice) -> Draft | None:
    home = home_value(m["place"])
    if not home:
        return None
    return Draft(en_sentence(f"{voice.title} is based in {home}"), "home", "identity", 8).stating(
        "home", home
    )


def _place_person(m: re.Match[str], voice: Voice) -> Draft | None:
    """'I'm a Lagos babe', 'Melbourne girl through and through', "we're Edinburgh people now"."""
    place = m["place"]
    if not is_name(place) or place.split()[0].lower() in _NOT_PLACES:
        return None
    attribute = "home" if m.groupdict().get("now") or m.groupdict().get("people") else "origin"
    verb = "lives in" if attribute == "home" else "is from"
    return Draft(en_sentence(f"{voice.title} {verb} {place}"), attribute, "identity", 8).stating(
        attribute, place
    )


_NOT_PLACES = frozenset(
    """i a the my big good disney marvel barbie gemini leo virgo libra scorpio aries taurus cancer sagittarius
    capricorn aquarius pisces apple android google tiktok instagram daddy's mummy's mama's papa's""".split()
)


def _demonym(m: re.Match[str], voice: Voice) -> Draft | None:
    """ "I'm originally a Brummie", "Glaswegian born and bred", "I'm a Kiwi living in Melbourne"."""
    who = m["who"] or m["alone"]
    if who.lower() not in DEMONYMS or re.search(r"\b(?:now|these\s+days)\b", m.string, re.IGNORECASE):
        return None
    draft = Draft(en_sentence(f"{voice.title} is {article(who)}"), "origin", "identity", 8).stating(
        "origin", who
    )
    home = home_value(m.groupdict().get("home"))
    if home and plausible_home(home):
        extra = Draft(en_sentence(f"{voice.title} lives in {home}"), "home", "identity", 8).stating(
            "home", home
        )
        draft = dataclasses.replace(draft, also=(extra,))
    return draft


def _origin(m: re.Match[str], voice: Voice) -> Draft | None:
    place = clean_value(m["place"])
    if not place or not is_name(place):
        return None
    return Draft(en_sentence(f"{voice.title} is from {place}"), "origin", "identity", 8).stating(
        "origin", place
    )


EN_PLACE_RULES: tuple[Rule, ...] = en_rules(
    (
        # --- where they live, where they are from
        (
            "home home's",
            rf"^home(?:\s+is|'s)\s+(?:now\s+)?{PLACE}(?:\s+(?:these\s+days|now|nowadays))?(?:\s*[,;].*)?$",
            place_is_home,
        ),
        (None, rf"^{PLACE}\s+is\s+(?:my\s+)?home\s+(?:now|these\s+days|nowadays)\b.*$", place_is_home),
        (None, rf"^(?:{IM}\s+)?{PLACE}-based\b.*$", _based),
        (
            "I",
            rf"^i\s+(?:dey|dey\s+for|stay|stay\s+in|(?:am|'m)\s+(?:presently|currently)\s+staying\s+in)\s+{PLACE}\b.*$",
            place_is_home,
        ),
        (None, rf"^(?:{IM}\s+)?(?:presently|currently)\s+staying\s+in\s+{PLACE}\b.*$", place_is_home),
        (
            "I I'm im we we're",
            # "I'm still in Norwich", "I'm over in London", "we're out in Dubai now", "I moved in with my
            # sister in Leeds", "I'm living with him in Malaga now": where they live, said the chat way
            rf"^(?:{IM}|we're|we\s+are|i|we)\s+(?:(?:still|over|out|down|up)\s+in|(?:(?:still|now)\s+)?(?:living|live|"
            r"moved\s+in)\s+with\s+(?:my\s+|our\s+|him|her|them|(?-i:[A-Z])\w+)(?:\s*[\w-]+)?\s+in)\s+"
            rf"{PLACE}(?:\s+(?:now|these\s+days|nowadays|on\s+(?:my|her|his|their)\s+own|last\s+\w+|in\s+\w+))?"
            r"(?:\s*[,;].*|\s+(?:so|and|but|with)\b.*)?$",
            place_is_home,
        ),
        (
            "I",
            r"^i(?:'ve|\s+have)\s+(?:been\s+)?(?:living|lived|been)\s+in\s+(?P<place>(?-i:[A-Z])[\w'.-]*(?:\s+(?-i:[A-Z])"
            r"[\w'.-]*){0,2})\s+(?:(?:for\s+)?(?:about\s+|almost\s+|nearly\s+|over\s+)?(?:\d+|a|an|one|two|three|four|five|"
            r"six|seven|eight|nine|ten|a\s+few|a\s+couple(?:\s+of)?|several)\s+(?:years?|yrs?|months?)|since|for\s+(?:ages|"
            r"years|a\s+while|a\s+long\s+time|donkey's\s+years|most\s+of\s+my\s+life|my\s+whole\s+life))\b.*$",
            place_is_home,
        ),
        (
            None,
            rf"^(?:(?:{IM}|we're|we\s+are)\s+)?(?P<place>(?-i:[A-Z])[\w'.-]*(?:\s+(?-i:[A-Z])[\w'.-]*)?)\s+"
            r"(?P<people>people|folk|residents|locals)\s+now\b.*$",
            _place_person,
        ),
        (
            None,
            rf"^(?:{IM}\s+(?:originally\s+)?(?:a|an)\s+)?(?P<place>(?-i:[A-Z])[\w'.-]*(?:\s+(?-i:[A-Z])[\w'.-]*)?)\s+"
            rf"{_PLACE_PERSON}(?:\s+(?:through\s+and\s+through|born\s+and\s+bred|at\s+heart))?(?P<now>\s+(?:now|these\s+days|"
            r"nowadays))?\b.*$",
            _place_person,
        ),
        (
            None,
            # "I'm originally a Brummie", "I'm a Kiwi living in Melbourne"; said alone, only with "born and bred"
            rf"^(?:(?:{IM}\s+(?:originally\s+)?(?:a|an)\s+)(?P<who>(?-i:[A-Z])[\w-]+(?:\s+(?-i:[A-Z])[\w-]+)?)"
            rf"(?:\s+(?:born\s+and\s+(?:bred|raised)|through\s+and\s+through)|(?=\s+living\s+in\s+)|(?=\s*(?:,|\s+but\b|$)))|"
            rf"(?P<alone>(?-i:[A-Z])[\w-]+)\s+(?:born\s+and\s+(?:bred|raised)|through\s+and\s+through))"
            rf"(?:\s+living\s+in\s+(?P<home>.+))?.*$",
            _demonym,
        ),
        ("my", rf"^my\s+native(?:\s+(?:place|town|city|village|state))?\s+(?:is|was)\s+{PLACE}.*$", _origin),
    )
)
