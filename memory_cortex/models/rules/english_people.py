"""The people (and pets) an English speaker names by relation: the words ("my mum", "our eldest",
"my best mate", "my Staffy"), the canonical relation each stands for, and the patterns that find
who a clause is about."""

from __future__ import annotations

import re

from ..attributes import canonical_relation
from .shapes import Draft, Voice, en_sentence

# Words chat English uses for a relation that ``canonical_relation`` does not know.
_MORE_RELATIONS = {
    "tita": "aunt",
    "tito": "uncle",
    "lola": "grandmother",
    "lolo": "grandfather",
    "mate": "friend",
    "best mate": "friend",
    "best friend": "friend",
    "bestie": "friend",
    "bff": "friend",
    "eldest": "child",
    "oldest": "child",
    "youngest": "child",
    "little one": "child",
    "twins": "child",
    "twin": "child",
    "kids": "child",
    "boy": "son",
    "lad": "son",
    "girl": "daughter",
    "oga": "manager",
    "aunty": "aunt",
    "auntie": "aunt",
    "hubby": "partner",
    "missus": "partner",
    "other half": "partner",
    "nan": "grandmother",
    "nana": "grandmother",
    "granny": "grandmother",
    "gran": "grandmother",
    "grandad": "grandfather",
    "granddad": "grandfather",
}

PET_KINDS = (
    "dog|cat|puppy|kitten|pup|parrot|hamster|rabbit|bunny|horse|tortoise|turtle|guinea\\s+pig|budgie|ferret|lizard|"
    "snake|goldfish|bearded\\s+dragon|gecko|staffy|staffie|collie|labrador|lab|pug|spaniel|cockapoo|cavapoo|"
    "labradoodle|terrier|poodle|husky|beagle|dachshund|sausage\\s+dog|greyhound|whippet|lurcher|corgi|bulldog|"
    "frenchie|retriever|alsatian|chihuahua|schnauzer|rottweiler|dalmatian|shih\\s+tzu|tabby"
)
_PETS = frozenset(w.replace("\\s+", " ") for w in PET_KINDS.split("|"))

REL_WORDS = (
    "sister-in-law|brother-in-law|mother-in-law|father-in-law|sister|sis|brother|bro|mother|mom|mum|mama|father|dad|son|"
    "daughter|kid|child|baby|wife|husband|hubby|missus|partner|girlfriend|boyfriend|fiancée?|fiancee|spouse|"
    "best\\s+friend|best\\s+mate|friend|bestie|mate|colleague|coworker|co-worker|boss|manager|oga|grandma|"
    "grandmother|nan|nana|granny|gran|tita|tito|lola|lolo|grandpa|grandfather|grandad|granddad|aunty|auntie|aunt|uncle|cousin|"
    "roommate|flatmate|housemate|neighbou?r|niece|nephew|grandson|granddaughter|grandchild|grandkid|twins|eldest|"
    "oldest|youngest|little\\s+one|boy|girl|" + PET_KINDS
)
"""Relation words, longest first where one starts another."""

REL_ADJ = r"(?:older|younger|little|big|baby|twin|step|new|best|lovely|darling|elder|line|junior|senior)"


def relation_of(said: str) -> str | None:
    """'mum' → 'mother', 'best mate' → 'friend', 'our eldest' → 'child', 'Staffy' → 'pet'."""
    said = " ".join(said.lower().split())
    if said in _MORE_RELATIONS:
        return _MORE_RELATIONS[said]
    if said in _PETS:
        return "pet"
    relation = canonical_relation(said)
    if relation is None and said.startswith("best "):
        relation = canonical_relation(said[5:])
    return relation


BARE_KIN = r"(?:mum|mom|mam|dad|nan|nana|grandma|grandad|granddad|grandpa|granny|gran)"
"""Kin chat English names without "my": "mum's moved to Spain", "dad's from Punjab"."""

_NOT_A_NAME = frozenset(
    "i i'm im is and or but who which that the a an to in on at for with from he she they it we you me my our "
    "said says told asked thinks just also so now still only already finally recently really".split()
)


def name_ok(name: str | None) -> bool:
    return bool(name) and name.split()[0].lower() not in _NOT_A_NAME


NAME = r"(?-i:(?:(?:Mrs?|Ms|Dr)\.?\s+)?[A-Z][\w'.-]*(?:\s+[A-Z][\w'.-]*)?)"
"""A person's or pet's name as written: capitalised, one or two words ("Mrs Patel", "Paul Hart")."""

MY_RELATIVE = re.compile(
    rf"^(?:my|our)\s+(?:(?P<adj>{REL_ADJ})\s+)?(?P<rel>{REL_WORDS})\b(?:\s*,?\s+(?P<name>{NAME})\b)?",
    re.IGNORECASE,
)
"""'my sister', 'our eldest', 'my dad Kev', 'my Staffy Bruno'."""


def said_of(m: re.Match[str]) -> str:
    """The relation as said, with its adjective: 'little brother', 'eldest', 'Staffy'."""
    rel = " ".join(m["rel"].split())
    adj = m["adj"]
    return (
        f"{adj.lower()} {rel.lower()}"
        if adj and adj.lower() not in ("new", "lovely", "darling")
        else rel.lower()
    )


NAMED_REL_WORDS = (
    "sister|brother|mother|mom|mum|father|dad|son|daughter|kid|child|baby|wife|husband|partner|girlfriend|"
    "boyfriend|fiancée?|fiancee|spouse|friend|best\\s+friend|colleague|coworker|boss|manager|grandma|grandmother|"
    "grandpa|grandfather|grandad|granddad|aunt|uncle|tita|tito|lola|lolo|cousin|roommate|flatmate|neighbou?r|niece|nephew|"
    "grandson|granddaughter|dog|cat|"
    "puppy|kitten"
)
"""The relations a speaker names someone by in passing ("my husband Marco", "our neighbour Frank")."""

# --- "my husband Marco", "our neighbour Frank": a relation named in passing

_NAMED_RELATIVE = re.compile(
    rf"\b(?:my|our)\s+(?:(?:older|younger|little|big|baby|twin|eldest|oldest|youngest|step|best|new|lovely)\s+)?"
    rf"(?P<rel>{NAMED_REL_WORDS}|grandad|granddad|{PET_KINDS})\s*,?\s+(?P<name>(?-i:(?:Mrs?|Ms|Dr|Miss|Herr|Frau|Mme|Madame|Señora?|Sra?)\.?\s+)?"
    r"(?-i:[A-Z][\w'-]+)(?:\s+(?-i:[A-Z][\w'-]+))?)\b",
    re.IGNORECASE,
)


def en_named_relations(clause: str, voice: Voice) -> list[Draft]:
    """The relations a statement names in passing ("My husband Marco says hi" → the user's partner is
    Marco), each a fact of its own."""
    drafts = []
    for m in _NAMED_RELATIVE.finditer(clause):
        said = " ".join(m["rel"].lower().split())
        relation = relation_of(said)
        name = m["name"].removesuffix("'s")  # "my daughter Zoe's birthday": Zoe
        if relation is None or name.split()[0].lower() in _NOT_NAMED:
            continue
        fact = en_sentence(f"{name} is {voice.possessive} {said}")
        drafts.append(Draft(fact, said, "relationship", 7).stating(relation, name))
    return drafts


_NOT_NAMED = frozenset(
    "i i'm im is and or but who which that the a an to in on at for with from he she they it we you me my our "
    "said says told asked thinks just also".split()
)
