"""English "my X is Y" statements: "my sister's name is Ana", "my favourite colour is green", "my
birthday's July 14", "my dog is a rescue greyhound called Dash". What X names says which attribute Y
is (a relation's name, a favourite, an identity noun), or that the statement is none ("my mum is
amazing", "my spirit animal is a sloth")."""

from __future__ import annotations

import re

from ..attributes import canonical_relation
from ..facts import Category
from .english_people import relation_of
from .english_values import DIETS, NOT_A_NAME, clean_value, drink_value, is_drink
from .english_voice import en_fact, is_content
from .shapes import Draft, Voice

RELATION_WORDS = (
    "sister sisters brother brothers sibling siblings mother mom mum mommy mummy mama father dad daddy papa "
    "parent parents wife husband partner spouse fiance fiancé fiancee fiancée girlfriend boyfriend son sons "
    "daughter daughters kid kids child children baby twin friend friends bestie roommate flatmate housemate "
    "boss manager colleague colleagues coworker coworkers co-worker cofounder co-founder teammate mentor "
    "teacher doctor therapist dentist cat cats dog dogs pet pets puppy kitten parrot hamster rabbit horse "
    "cousin cousins aunt uncle niece nephew grandma grandmother grandpa grandfather grandparents "
    "granddaughter grandson stepmother stepfather stepson stepdaughter stepbrother stepsister neighbor "
    "neighbour landlord family in-laws mother-in-law father-in-law mate roomie hubby missus nan nana gran granny "
    "grandad granddad aunty auntie oga sis bro"
).split()
"""Words naming a relative, a pet or someone the speaker knows ("sister", "boss", "puppy")."""
_RELATIONS = frozenset(RELATION_WORDS)

_POSSESSIVE_FORBIDDEN = frozenset(
    "i you he she it they we me him her them us says said thinks thought told and or but that which who "
    "if when because also really is are was were has have had will would do does did not just".split()
)
_POSSESSIVE_DISCOURSE = frozenset(
    "question questions point guess concern concerns issue issues problem problems answer bad pleasure "
    "understanding assumption thought thoughts idea ideas suggestion request hope fear worry mistake "
    "fault turn apologies apology opinion take head brain mind heart day week life code output error "
    "schedule calendar inbox weekend morning evening night mood plan plans place room desk phone laptop car "
    "real couch bed "
    "errors result results log logs response message prompt test tests build screen internet connection "
    "wifi battery reply feeling feelings gut bet sense impression".split()
)
_IDENTITY_NOUNS = frozenset(
    "name birthday age email e-mail address job occupation profession pronouns nationality hometown "
    "gender timezone username handle phone number title role religion height weight diet citizenship "
    "language tongue website blog github".split()
)
_PROJECT_NOUNS = frozenset(
    "project projects repo repository stack deadline server database db app website site company startup "
    "team framework codebase branch api budget domain product client customer launch release backend "
    "frontend deployment pipeline service".split()
)
_GOAL_NOUNS = frozenset(
    "goal goals plan plans dream dreams aim priority priorities ambition resolution".split()
)
_TRANSIENT = re.compile(
    r"^(?:not|so|too|very|kind\s+of|sort\s+of|a\s+bit|a\s+little|still|already|broken|slow|down|failing|"
    r"fine|ok|okay|good|bad|great|done|ready|here|there|gone|missing|wrong|right|correct|different|same|"
    r"better|worse|empty|full|dead|crashing|stuck|loading|off|open|closed|weird|strange|messed|acting|"
    r"a\s+mess|killing|bugged|buggy|lagging|this|that|it|what|where|who|how|why|when|which|just|literally|"
    r"honestly|all\s+over|spent|terrible|awful|horrible|insane|mental|crazy|wild|a\s+nightmare|a\s+disaster|"
    r"chaos|chaotic|zero|nothing|everything|amazing|lovely|the\s+best|the\s+worst|so+|such|being|getting|going)\b",
    re.IGNORECASE,
)


def my_x_is_y(m: re.Match[str], voice: Voice) -> Draft | None:
    """'my sister's name is Ana', 'my favourite colour is green', 'my email is a@b.c'."""
    words = [w.removesuffix("'s") for w in m["x"].lower().split()]
    if any(w in _POSSESSIVE_FORBIDDEN for w in words) or words[-1] in _POSSESSIVE_DISCOURSE:
        return None
    if not is_content(m["y"]) or _TRANSIENT.match(m["y"].strip()) or _NOT_A_VALUE.match(m["y"].strip()):
        return None
    x = m["x"].lower()
    if words[-1] in ("dream", "dreams", "wish", "fantasy") or " ".join(words[-2:]) in _JOKE_NOUNS:
        return None  # "my dream is to open a bakery": a wish; "my spirit animal is a sloth": a joke
    relation = next((w for w in words if w in _RELATIONS), None)
    if relation is not None and words[-1] != relation and words[-1] in _RELATIONS:
        return None  # "my friend's baby is called Nova": someone else's relation
    if relation is not None and words[-1] not in (relation, "name") and _QUOTED_TITLE.match(m["y"].strip()):
        return None  # "my friend's book is called 'My Life in Lisbon'": a title, not a fact about anyone
    attribute: str | None = None
    said_value: str | None = None
    if relation is not None:
        category: Category = "relationship"
        importance, topic = 7, x.split("'s")[0].strip() if "'s" in x else relation
        # "my sister's name is Ana", "my boss is Paul Hart", "my dog is called Rex": who they are.
        if (named := _NAMED.match(m["y"])) and len(words) <= 3 and words[-1] in (relation, "name"):
            said = m.string[: m.start("y") + named.end("name")]  # not the run-on after the name
            draft = Draft(en_fact(said, voice), topic, "relationship", 7)
            return draft.stating(relation_of(relation) or canonical_relation(relation), named["name"])
        elif words[-1] == relation and (called := _CALLED_AT_END.search(m["y"])):
            # "my dog is a rescue greyhound called Dash"
            draft = Draft(en_fact(m.string, voice), relation, "relationship", 7)
            return draft.stating(relation_of(relation) or canonical_relation(relation), called["name"])
        elif len(words) == 1 or words[-1] == relation:
            return None  # "my mum is amazing": an opinion; what she is or has is read in her voice
    elif any(w in ("favourite", "favorite", "fave", "preferred", "hobby", "hobbies") for w in words):
        category, importance, topic = "preference", 6, x
        drink = re.split(r"\s+(?:with|and|but|because)\s+", drink_value(m["y"]) or "", maxsplit=1)[0]
        if any(w in ("drink", "beverage") for w in words) and drink and is_drink(drink):
            attribute, said_value = "drink", drink  # "a strong iced coffee with condensed milk": the drink
        elif words[0] in ("favourite", "favorite", "fave"):
            attribute = "likes"
    elif words[-1] in _IDENTITY_NOUNS:
        category, importance, topic = "identity", 8, x
        attribute = _IDENTITY_ATTRIBUTES.get(" ".join(words[-2:])) or _IDENTITY_ATTRIBUTES.get(words[-1])
        if attribute == "birthday" and not re.search(
            r"\d|jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec", m["y"], re.I
        ):
            attribute = None  # "my birthday is next Friday": when it falls, not the date
    elif words[-1] in _PROJECT_NOUNS:
        category, importance, topic = "project_state", 6, x
    elif words[-1] in _GOAL_NOUNS:
        category, importance, topic = "fact", 6, x
    elif " ".join(words[-2:]) in ("usual drink", "go-to drink", "daily drink", "morning drink"):
        category, importance, topic, attribute = "preference", 6, x, "drink"
    elif re.match(r"^my\s+\S.*?\s+are\b", m.string, re.IGNORECASE):
        return None  # "my eyes are terrible in the dark", "my shifts are all over the place": a description
    else:
        category, importance, topic = "fact", 5, x
    if category in ("relationship", "fact", "project_state") and m["y"].split()[0].lower().endswith("ing"):
        return None  # "my cat is sleeping", "my project is going well": a moment, not a fact
    said = m.string if said_value is None else m.string[: m.start("y")] + m["y"].split(",")[0]
    draft = Draft(en_fact(said, voice), topic, category, importance)
    value = said_value or clean_value(
        re.sub(r"^(?:now|actually|called|named|on)\s+", "", m["y"].strip(), flags=re.I)
    )
    if attribute == "diet" and not (value and DIETS.match(value)):
        return None  # "my diet is mostly biscuits": a joke, not a diet
    return draft.stating(attribute, value) if attribute else draft


# "called 'My Life in Lisbon'" (the quoted title already dropped, "called" is left alone)
_QUOTED_TITLE = re.compile(r"^(?:called|named|titled)(?:\s+['\"‘“].*)?$", re.IGNORECASE)
_CALLED_AT_END = re.compile(
    r"^(?:a|an)\s+[\w\s-]{2,40}?\s+(?:called|named)\s+(?P<name>(?-i:[A-Z])[\w'-]+)[\s!.]*$", re.I
)
_JOKE_NOUNS = frozenset(
    [
        "spirit animal",
        "second home",
        "happy place",
        "love language",
        "toxic trait",
        "roman empire",
        "villain era",
        "personality",
        "real partner",
        "one true love",
        "true love",
        "therapist",
    ]
)
_NOT_A_VALUE = re.compile(r"^(?:my|your|our|whatever|whoever|basically|literally)\b", re.IGNORECASE)
_NAMED = re.compile(
    rf"^(?:now\s+|actually\s+)?(?:(?:called|named)\s+|{NOT_A_NAME})(?P<name>(?-i:[A-Z])[\w'.-]*(?:\s+(?-i:[A-Z])[\w'.-]*){{0,2}})"
    r"(?:[\s!.]*$|\s*[,;:–—]|\s+(?:and|but|so|who|now|(?:she|he|they|we)(?:'s|'re|\s+(?:is|are|r))?)\b)",
    re.IGNORECASE,
)
# "my X is Y" with an identity noun X: the attribute it states.
_IDENTITY_ATTRIBUTES = {
    "name": "name",
    "nickname": "name",
    "birthday": "birthday",
    "age": "age",
    "hometown": "origin",
    "job": "job",
    "occupation": "job",
    "profession": "job",
    "title": "job",
    "job title": "job",
    "role": "job",
    "diet": "diet",
    "language": "language",
}
