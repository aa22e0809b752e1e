"""The English rules on chat as people type it: text-speak, dropped subjects, indirect phrasings,
several statements about the same person in one clause, and the jokes, quotes and reported speech
that must stay empty.

Each positive row names every (subject, attribute, value) the message must state; extra facts with
an attribute fail the row too, so a row is a check on precision as well as recall.
"""

from __future__ import annotations

import pytest

from memory_cortex.models.rules import Said, extract_statements


def facts_of(text: str, speaker: str | None = None) -> set[tuple[str, str, str]]:
    """(subject, attribute, value) of each fact, and the relation a fact about a named person states
    ("Sam (the user's child) turned 10" also says the user's child is Sam)."""
    found = set()
    for _, fact in extract_statements([Said(text, speaker)]):
        if fact.attribute is not None:  # a value said to have ended reads "ended: <value>"
            found.add(
                (fact.subject, fact.attribute, ("ended: " if fact.ends else "") + (fact.value or "").lower())
            )
        if fact.relation and not fact.subject.endswith(f"'s {fact.relation}") and fact.subject_kind != "plan":
            found.add((speaker or "user", fact.relation, fact.subject.lower()))
    return found


POSITIVES: list[tuple[str, set[tuple[str, str, str]]]] = [
    # a new role said by who gave it, and a learner's "work like"
    (
        "And she made me team lead for the test department, so I have six people under me now.",
        {("user", "job", "team lead")},
    ),
    ("I was promoted to senior engineer last week", {("user", "job", "senior engineer")}),
    (
        "I work like graphic designer for Lavazza here in Turin.",
        {("user", "job", "graphic designer"), ("user", "employer", "lavazza"), ("user", "home", "turin")},
    ),
    # text-speak and dropped subjects
    ("ive been at deloitte for three years now", {("user", "employer", "deloitte")}),
    ("im Lagos-based btw", {("user", "home", "lagos")}),
    ("been vegetarian since uni tbh", {("user", "diet", "vegetarian")}),
    ("cant stand coriander, tastes like soap", {("user", "dislikes", "coriander")}),
    ("u can call me Bex, everyone does", {("user", "name", "bex")}),
    ("allergic to shellfish so no prawns for me", {("user", "allergy", "shellfish")}),
    ("type 1 diabetic here", {("user", "health", "type 1 diabetic")}),
    # indirect phrasings
    ("home is Dublin these days", {("user", "home", "dublin")}),
    ("I'm a Lagos babe but Toronto is home now", {("user", "origin", "lagos"), ("user", "home", "toronto")}),
    (
        "Glaswegian born and bred, live in London now though",
        {("user", "origin", "glaswegian"), ("user", "home", "london")},
    ),
    ("I'm at Unilever, in marketing", {("user", "employer", "unilever"), ("user", "job", "marketing")}),
    (
        "I work for Shell as a process engineer",
        {("user", "employer", "shell"), ("user", "job", "process engineer")},
    ),
    ("I'm the head chef at Nonna's", {("user", "job", "head chef"), ("user", "employer", "nonna's")}),
    ("Im a stay at home dad to 3 kids", {("user", "job", "stay at home dad to 3 kids")}),
    ("I eat halal so I check the gelatine", {("user", "diet", "halal")}),
    ("tea, always tea, with two sugars", {("user", "drink", "tea")}),
    ("ngl i'm obsessed with Formula 1", {("user", "likes", "formula 1")}),
    ("I'm a nurse in Leeds", {("user", "job", "nurse"), ("user", "home", "leeds")}),
    ("we finally got the keys to the new flat in Glasgow", {("user", "home", "glasgow")}),
    ("in case it matters, I'm 58, took early retirement", {("user", "age", "58")}),
    ("the hen do is on the 12th of July", {("hen do", "date", "the 12th of july")}),
    ("Ahmed and I got engaged last night!!!", {("user", "partner", "ahmed")}),
    # a change of job or partner said as leaving one
    (
        "I left Vodafone, I'm at MTN now",
        {("user", "employer", "mtn"), ("user", "employer", "ended: vodafone")},
    ),
    ("no longer at Barclays, moved to Monzo in March", {("user", "employer", "monzo")}),
    (
        "Just left Tesco, starting at Aldi as a store manager next week",
        {("user", "employer", "aldi"), ("user", "job", "store manager")},
    ),
    # later statements about the same person
    (
        "btw my son's name is Arjun, he's 4, and he loves trains",
        {("user", "son", "arjun"), ("Arjun", "age", "4"), ("Arjun", "likes", "trains")},
    ),
    ("my sister's called Hannah and she's a vet", {("user", "sister", "hannah"), ("Hannah", "job", "vet")}),
    ("our eldest, Sam, just turned 10", {("user", "child", "sam"), ("Sam", "age", "10")}),
    (
        "my twins, Ella and Ruby, start school in September",
        {("user", "child", "ella"), ("user", "child", "ruby")},
    ),
    ("oh that's Karen, she's my manager, she's lovely", {("user", "manager", "karen")}),
    (
        "my mum is from Kerala and dad's from Punjab",
        {("user's mother", "origin", "kerala"), ("user's father", "origin", "punjab")},
    ),
    (
        "born and raised in Kano, been in Abuja since uni",
        {("user", "origin", "kano"), ("user", "home", "abuja")},
    ),
    (
        "my 3 year old is obsessed with dinosaurs",
        {("user's child", "age", "3"), ("user's child", "likes", "dinosaurs")},
    ),
    ("my Staffy Bruno is 9 now", {("user", "pet", "bruno"), ("Bruno", "age", "9")}),
    ("we have two rabbits, Salt and Pepper", {("user", "pet", "salt"), ("user", "pet", "pepper")}),
    (
        "my mum speaks Welsh and English",
        {("user's mother", "speaks", "welsh"), ("user's mother", "speaks", "english")},
    ),
    # group chat: someone else's "I", and someone named
    (
        "I've been at Wipro 4 yrs now, still a junior dev",
        {("Priya", "employer", "wipro"), ("Priya", "job", "junior dev")},
    ),
]
SPEAKERS = {"I've been at Wipro 4 yrs now, still a junior dev": "Priya"}


@pytest.mark.parametrize(("text", "expected"), POSITIVES)
def test_chat_english_states_its_facts(text: str, expected: set[tuple[str, str, str]]) -> None:
    assert facts_of(text, SPEAKERS.get(text)) == expected


def test_someone_named_in_a_group_chat_is_the_subject() -> None:
    assert facts_of("Dan moved to Bristol last week, he's loving it", "Liam") == {("Dan", "home", "bristol")}


NEGATIVES = [
    # jokes and sarcasm
    "I'm allergic to Mondays",
    "me? allergic to Mondays, obviously",
    "I'm the CEO of overthinking and CFO of bad decisions",
    "sure and I'm the Queen of England",
    "yeah and I'm Beyonce",
    "I'm married to my job lol",
    "im 12 years old and what is this",
    "I'm 12 years old mentally",
    "I'm a terrible cook",
    "I live at the office at this point",
    "born in the wrong decade",
    "been vegan-curious lately",
    # quoted and pasted text
    "just finished 'I'm Glad My Mom Died', what a read",
    "translate 'I am a teacher and I live in Madrid' into Spanish pls",
    "the song goes 'I'm from Barcelona' and now it's stuck in my head",
    "write a bio: I'm a nurse based in Leeds",
    # what someone else says, questions, plans, moments
    "Bob says he moved to Rome and started at Google",
    "my mum thinks I should've been a doctor",
    "you're the vegan one right?",
    "maybe we'll move to Spain next year, who knows",
    "im in Dubai for the week lol",
    "party's at 8 tonight",
    # not a place, not a person, not current
    "Paul moved to the platform team",
    "Monday moved to Tuesday",
    "my job at Tesco was boring",
    "my friend's baby is called Nova, cute right?",
    "my dream is to open a bakery in Cornwall one day",
    "my eyes are terrible in the dark",
    "I was diagnosed with a sprained ankle",
    # reactions to a moment, not what someone is, likes or is called
    "I work like crazy these days",
    "Looky here, I got this new pup for you!",
    "An online platform can really show off your studio and get investors.",
    "I love seeing them soaking in the sun like this.",
    "I love the freedom and connection it brings.",
    "Oh wow, I love the book even more now.",
]


@pytest.mark.parametrize("text", NEGATIVES)
def test_jokes_quotes_and_hearsay_state_nothing(text: str) -> None:
    assert facts_of(text) == set()


def test_a_dead_pet_is_not_named_as_a_pet() -> None:
    assert ("user", "pet", "rex") not in facts_of("my dog Rex died last year")


def test_text_speak_is_spelled_out_in_the_fact() -> None:
    [(_, fact)] = extract_statements([Said("im from Cape Town")])
    assert fact.fact == "The user is from Cape Town."


def test_a_long_ramble_is_read_part_by_part() -> None:
    text = (
        "sorry to ramble but basically I grew up in Coventry, did uni in Bristol, and now I live in Cardiff "
        "with my partner Rhys and our dog Taffy"
    )
    assert facts_of(text) >= {
        ("user", "origin", "coventry"),
        ("user", "home", "cardiff"),
        ("user", "partner", "rhys"),
        ("user", "pet", "taffy"),
    }
