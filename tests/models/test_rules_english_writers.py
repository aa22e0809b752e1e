"""The English rules on how varied writers put things: learners of English ("I have 34 years", "I am
working by Siemens"), formal older writers ("I am exceedingly fond of…"), teens in lower case ("my
cats called biscuit"), parents writing notes ("Son Arlo, 6, autistic."), terse answers ("Staff
Engineer at Stripe."), and changes said in passing. Each positive row names every (subject,
attribute, value) the message must state; extra facts with an attribute fail the row too.
"""

from __future__ import annotations

import pytest

from memory_cortex.models.rules import Said, extract_statements


def facts_of(text: str, speaker: str | None = None) -> set[tuple[str, str, str]]:
    """(subject, attribute, value) of each fact, and the relation a fact about a named person states."""
    found = set()
    for _, fact in extract_statements([Said(text, speaker)]):
        if fact.attribute is not None or fact.ends:  # a value said to have ended reads "ended: <value>"
            ended = "ended: " if fact.ends else ""
            found.add((fact.subject, fact.attribute or "", ended + (fact.value or "").lower()))
        if fact.relation and not fact.subject.endswith(f"'s {fact.relation}") and fact.subject_kind != "plan":
            found.add((speaker or "user", fact.relation, fact.subject.lower()))
    return found


POSITIVES: list[tuple[str, set[tuple[str, str, str]]]] = [
    # learners of English
    ("I have 41 years and I work as nurse", {("user", "age", "41"), ("user", "job", "nurse")}),
    ("I am staying in Kochi since 2017", {("user", "home", "kochi")}),
    ("I stay at Kumasi with my parents", {("user", "home", "kumasi")}),
    ("I am working by Bosch since 2012", {("user", "employer", "bosch")}),
    (
        "I'm working with Vodacom as a sales agent",
        {("user", "employer", "vodacom"), ("user", "job", "sales agent")},
    ),
    ("I work at Tata as project manager", {("user", "employer", "tata"), ("user", "job", "project manager")}),
    ("I am doing job in Wipro", {("user", "employer", "wipro")}),
    ("I am born in Lyon but I live in Lille", {("user", "origin", "lyon"), ("user", "home", "lille")}),
    ("we shifted to Chennai last year only", {("user", "home", "chennai")}),
    ("I have allergy on dust", {("user", "allergy", "dust")}),
    ("I very like biryani", {("user", "likes", "biryani")}),
    ("I am pure veg", {("user", "diet", "pure veg")}),
    ("My husband Ravi is teacher of maths", {("user", "partner", "ravi"), ("Ravi", "job", "teacher")}),
    (
        "I am working as senior clerk in Canara Bank",
        {("user", "job", "senior clerk"), ("user", "employer", "canara bank")},
    ),
    # formal, older writers
    ("I am sixty-nine years of age", {("user", "age", "sixty-nine")}),
    ("I am rather fond of lupins", {("user", "likes", "lupins")}),
    ("I have never cared for opera", {("user", "dislikes", "opera")}),
    ("I take my coffee with a splash of milk", {("user", "drink", "coffee")}),
    ("My GP diagnosed me with glaucoma last spring", {("user", "health", "glaucoma")}),
    ("I should prefer to be called Margaret", {("user", "name", "margaret")}),
    ("I was raised in Limerick", {("user", "origin", "limerick")}),
    (
        "I keep an old collie called Bess, who is now twelve",
        {("user", "pet", "bess"), ("Bess", "age", "twelve")},
    ),
    (
        "My brother Hugh, who is seventy, lives in a nursing home near Bath",
        {("user", "brother", "hugh"), ("Hugh", "age", "seventy"), ("Hugh", "home", "bath")},
    ),
    (
        "My daughter Ruth and her husband live in Perth",
        {("user", "daughter", "ruth"), ("Ruth", "home", "perth")},
    ),
    ("I would be grateful if you would reply in Welsh henceforth", {("user", "language", "welsh")}),
    # teens, in lower case
    ("my dogs called pepper shes a lab", {("user", "pet", "pepper")}),
    ("gf is called maya shes 16", {("user", "partner", "maya"), ("Maya", "age", "16")}),
    ("im 15 n i live in hull", {("user", "age", "15"), ("user", "home", "hull")}),
    (
        "my sister lily is 12 n works at greggs on sat",
        {("user", "sister", "lily"), ("Lily", "age", "12"), ("Lily", "employer", "greggs")},
    ),
    ("got a job at primark!! so happy", {("user", "employer", "primark")}),
    # notes
    ("Wife Jo. Works at the hospital.", {("user", "partner", "jo")}),
    (
        "Daughter Amy 8 - loves ponies",
        {("user", "daughter", "amy"), ("Amy", "age", "8"), ("Amy", "likes", "ponies")},
    ),
    (
        "Kids: Sam 9, Bea 6.",
        {("user", "child", "sam"), ("Sam", "age", "9"), ("user", "child", "bea"), ("Bea", "age", "6")},
    ),
    ("Cat: Socks.", {("user", "pet", "socks")}),
    ("Me: 44, part-time teacher.", {("user", "age", "44"), ("user", "job", "part-time teacher")}),
    ("Sam - asthmatic.", {("Sam", "health", "asthmatic")}),
    ("Bea allergic to kiwi.", {("Bea", "allergy", "kiwi")}),
    ("Nativity play Thurs 14th.", {("nativity play", "date", "thurs 14th")}),
    ("Green tea. No sugar.", {("user", "drink", "green tea")}),
    (
        "I have three cats, Pip, Pop and Pud",
        {("user", "pet", "pip"), ("user", "pet", "pop"), ("user", "pet", "pud")},
    ),
    # terse answers
    ("Yes — Head of Sales at Ocado.", {("user", "job", "head of sales"), ("user", "employer", "ocado")}),
    ("Product manager, Monzo.", {("user", "job", "product manager"), ("user", "employer", "monzo")}),
    ("Correct, Leeds-based.", {("user", "home", "leeds")}),
    ("Partner's name is Eli.", {("user", "partner", "eli")}),
    ("Birthday's 3 June.", {("user", "birthday", "3 june")}),
    ("Peanuts — anaphylactic.", {("user", "allergy", "peanuts")}),
    # introductions as notes: a name, then what they do and where, "I'm" left out
    (
        "Hola. Pablo, 52, maths teacher in Sevilla.",
        {
            ("user", "name", "pablo"),
            ("user", "age", "52"),
            ("user", "job", "maths teacher"),
            ("user", "home", "sevilla"),
        },
    ),
    (
        "Hi! Lena, product designer at a bank in Vienna.",
        {("user", "name", "lena"), ("user", "job", "product designer"), ("user", "home", "vienna")},
    ),
    ("Dale, Leeds-based, I fix boilers.", {("user", "name", "dale"), ("user", "home", "leeds")}),
    ("Hey, Ines. Paramedic at a clinic in Braga.", {("user", "job", "paramedic"), ("user", "home", "braga")}),
    ("Midwife in Cork, mum of three.", {("user", "job", "midwife"), ("user", "home", "cork")}),
    ("Developer in Python, mostly backend.", {("user", "job", "developer")}),  # Python is no town
    # a fact to keep in mind, said as a reminder or a note
    ("reminder I'm allergic to sesame so no tahini pls", {("user", "allergy", "sesame")}),
    ("Note I just moved to Dundee so the address changed", {("user", "home", "dundee")}),
    # settled, still living: where home is now
    ("Finally settled in Utrecht, we moved in last week.", {("user", "home", "utrecht")}),
    ("We're all settled in Galway now.", {("user", "home", "galway")}),
    ("I'm still living in Derby.", {("user", "home", "derby")}),
    # a bracketed aside and the consequence after ", so" are not part of the statement
    ("I'm diabetic (type 2 since last year), so sweets are basically out.", {("user", "health", "diabetic")}),
    # a new role said as joining, a change after an emoji, a formal note, a permission to switch
    (
        "I joined Monzo as a data engineer in May",
        {("user", "job", "data engineer"), ("user", "employer", "monzo")},
    ),
    ("guess who got promoted 🎉🎉 im a team lead now!!!", {("user", "job", "team lead")}),
    ("Kindly note that my birthday falls on 4 May.", {("user", "birthday", "4 may")}),
    ("From now on you can answer me in German please.", {("user", "language", "german")}),
    # "he" or "she" after a relative named at the end of the first part is them
    (
        "I live in Galway with my son Cian, he's 8 and obsessed with dinosaurs.",
        {
            ("user", "home", "galway"),
            ("Cian", "age", "8"),
            ("Cian", "likes", "dinosaurs"),
            ("user", "son", "cian"),
        },
    ),
    # a laugh at the last part only ("…, three cats and zero free time haha")
    (
        "I'm a vet in Cork, 41 years old, three cats and zero free time haha",
        {("user", "job", "vet"), ("user", "home", "cork"), ("user", "age", "41")},
    ),
    # a value said to have ended: what ended, and nothing in its place
    ("Sad news, Biscuit passed away last week.", {("user", "", "ended: biscuit")}),
    ("Sad news though, Pip died on Thursday.", {("user", "", "ended: pip")}),
    ("we had to rehome Luna, she needed a garden", {("user", "", "ended: luna")}),
    ("Jonas and I broke up last month.", {("user", "partner", "ended: jonas")}),
    ("I resigned from Deloitte last month.", {("user", "employer", "ended: deloitte")}),
    ("I've quit coffee, it was wrecking my sleep.", {("user", "drink", "ended: coffee")}),
    # changes said in passing
    (
        "I'm with KPMG now, left EY in March.",
        {("user", "employer", "kpmg"), ("user", "employer", "ended: ey")},
    ),
    ("No longer at Aviva — joined Zurich in June.", {("user", "employer", "zurich")}),
    ("Moved out of Bath, we're in Bristol now.", {("user", "home", "bristol")}),
    (
        "My brother quit Nike, he is with Adidas now.",
        {("user's brother", "employer", "adidas"), ("user's brother", "employer", "ended: nike")},
    ),
    ("We adopted a dog, his name is Rolo.", {("user", "pet", "rolo")}),
    ("My mum's birthday is 9 July.", {("user's mother", "birthday", "9 july")}),
    ("Ella's 8 now, not 7.", {("Ella", "age", "8")}),
    ("Can you switch to Italian from now on?", {("user", "language", "italian")}),
    ("Not vegan anymore, it was too hard.", {("user", "diet", "not vegan")}),
    # where someone works, said by what they do there or where they are; a name asked for politely
    ("I fly for Aer Lingus.", {("user", "employer", "aer lingus")}),
    (
        "Starting Monday I'm at Stanbic Bank as head of internal audit.",
        {("user", "employer", "stanbic bank"), ("user", "job", "head of internal audit")},
    ),
    (
        "i work at stripe as a software tester (QA)",
        {("user", "employer", "stripe"), ("user", "job", "software tester")},
    ),
    ("I'd like you to call me Maggie from now on.", {("user", "name", "maggie")}),
    # someone new, named after the fact
    ("new team = new manager, her name is ingrid, she seems nice", {("user", "manager", "ingrid")}),
    ("I'm seeing someone new! His name is Migs.", {("user", "partner", "migs")}),
    # what is said of someone by name is all theirs, the employer with the job
    ("Dan works at Google as a designer", {("Dan", "employer", "google"), ("Dan", "job", "designer")}),
    ("Tom is coming over tonight. He's a chef.", {("Tom", "job", "chef")}),
    (
        "Funny thing, Camila stopped being vegan. Now she is just vegetarian.",
        {("Camila", "diet", "vegetarian")},
    ),
    # where they live, said the chat way
    ("I'm over in London so I worry.", {("user", "home", "london")}),
    (
        "My mum's 82 and still in Norwich on her own",
        {("user's mother", "age", "82"), ("user's mother", "home", "norwich")},
    ),
    ("I moved in with my sister in Leeds last month", {("user", "home", "leeds")}),
    ("I'm based in the Hamburg office now", {("user", "home", "hamburg")}),
    ("yo we moved to birmingham over half term so im on the new wifi now", {("user", "home", "birmingham")}),
    # group chat: a laugh ends a statement, a new job said as a note, work said by what is done
    ("wait no ur cat lol im allergic to cats", {("user", "allergy", "cats")}),
    (
        "lads I cant make thursday, new job at Tesco head office, first week is mental",
        {("user", "employer", "tesco")},
    ),
    ("I'm driving for Uber evenings now so thursdays are tight", {("user", "employer", "uber")}),
    # a job said as a life, a move into a new home, relatives named in a question
    ("Work's been mental. Junior architect life, deadline on Friday.", {("user", "job", "junior architect")}),
    ("just moved into a new flat in Glasgow with two flatmates", {("user", "home", "glasgow")}),
    ("Any gift ideas for my wife Elena?", {("user", "partner", "elena")}),
    ("my neighbour Herr Brandt asked if you know a dog trainer", {("user", "neighbour", "herr brandt")}),
    ("my nephew Tom is 5", {("Tom", "age", "5"), ("user", "nephew", "tom")}),
    (
        "Aisha and I split up, and Comet went with her.",
        {("user", "partner", "ended: aisha"), ("user", "pet", "ended: comet")},
    ),
    ("We're planning the Iceland trip, it's on June 12.", {("iceland trip", "date", "june 12")}),
    (
        "Grace left Google last month, she's at Stripe now.",
        {("Grace", "employer", "ended: google"), ("Grace", "employer", "stripe")},
    ),
    # a pet from a shelter named in an aside, adopted at someone's urging
    (
        "My daughter persuaded me to adopt a cat from the shelter, a tabby named Tansy.",
        {("user", "pet", "tansy")},
    ),
    # an intro as a note: the partner named bare, the employer by the work done there
    ("I'm a nurse, husband Tom, two dogs", {("user", "job", "nurse"), ("user", "partner", "tom")}),
    ("I'm at Deloitte, mostly audit work for the mining clients.", {("user", "employer", "deloitte")}),
    # a drink by habit
    ("I basically live on black coffee, like 4 cups a day", {("user", "drink", "black coffee")}),
    ("Every morning I drink my chimarrão.", {("user", "drink", "chimarrão")}),
    (
        "My favourite drink in the morning is a strong iced coffee with condensed milk",
        {("user", "drink", "strong iced coffee")},
    ),
    # a condition named by its kind
    ("I have macular degeneration, so reading is hard.", {("user", "health", "macular degeneration")}),
]


@pytest.mark.parametrize(("text", "expected"), POSITIVES)
def test_varied_writers_state_their_facts(text: str, expected: set[tuple[str, str, str]]) -> None:
    assert facts_of(text) == expected


NEGATIVES = [
    # a person or a visit where an employer or a home would be
    "I'm with Sarah now",
    "I'm at Costa as usual",
    "I'm over in London for work this week",
    "Every day I drink too much",
    "my friend has a new job at Google",
    "i live in the city",
    "Mum life!",
    "What if my wife Elena finds out lol",
    "Tom went with her to the party",
    "Tom convinced me to move to Leeds",
    "I'm at Starbucks, doing some work",
    "Tom is a legend",
    "I write for Sarah",
    "I'd like you to call me tomorrow",
    "I'm staying at Mum's since Tuesday",
    "I'm staying in London this weekend",
    "we shifted to React last year",
    # numbers that are not an age
    "I have 3 years of experience",
    "I'm one of them",
    # notes that name no one and no job
    "Engineer at heart, artist by weekend.",
    "Great teacher, that one.",
    "Been vegan-curious lately",
    "Dad jokes are the worst",
    "Tom - running late",
    "Me: tired",
    # taken back, or someone else's thing
    "Ignore what I said about Leeds, that was a joke.",
    "My friend's book is called 'Rain in Lisbon'.",
    "I take the bus to work",
    # a person introduced by someone else, a time, a notion of "settled", boxes that are no home
    "Mia, 7, loves dinosaurs.",
    "Sarah, nurse at St Mary's, is my sister.",
    "Monday, 9am works for me",
    "I'm settled in my ways.",
    "Still living out of boxes",
    # a pet that passed a test, someone else's loss, a relative named by relation only
    "Biscuit passed the vet check.",
    "Mum died last year",
    "I joined the gym as a member",
    # "he" of someone not named: nothing after it is the speaker's
    "I met a guy at the climbing wall, he's a chef, and obsessed with jazz",
    # a laugh that takes the statement back
    "I'm a millionaire, not really lol",
    "I'm a millionaire, in my dreams haha",
    "I don't drink coffee at all, only hot chocolate lol",
]


@pytest.mark.parametrize("text", NEGATIVES)
def test_what_only_looks_like_a_fact_states_nothing(text: str) -> None:
    assert facts_of(text) == set()


def test_a_town_after_in_is_not_taken_for_an_employer() -> None:
    assert facts_of("I work in Leeds as a nurse, love it") == {("user", "job", "nurse")}


def test_a_name_in_a_lower_case_message_is_capitalised_in_the_fact() -> None:
    facts = extract_statements([Said("my cats called biscuit")])
    assert [fact.value for _, fact in facts] == ["Biscuit"]


def test_an_emoji_between_two_statements_ends_the_first() -> None:
    assert facts_of("Plot twist 😂 Dami just got a new job at Google") == {("Dami", "employer", "google")}


def test_kids_counted_and_named_are_children_never_pets() -> None:
    assert facts_of("I have two kids, Mia and Leo.") == {("user", "child", "mia"), ("user", "child", "leo")}
    assert facts_of("we adopted two puppies, Max and Ruby") == {
        ("user", "pet", "max"),
        ("user", "pet", "ruby"),
    }


def test_each_named_persons_statement_after_and_is_their_own() -> None:
    assert facts_of("Mia is 6 and Leo is 4.") == {("Mia", "age", "6"), ("Leo", "age", "4")}
    assert facts_of("Mia lives in Leeds, Tom lives in York") == {
        ("Mia", "home", "leeds"),
        ("Tom", "home", "york"),
    }


def test_a_correction_of_a_named_persons_fact_stays_a_correction() -> None:
    (fact,) = [fact for _, fact in extract_statements([Said("Correction: Mia is 7 years old, not 6.")])]
    assert (fact.subject, fact.attribute, fact.value, fact.category) == ("Mia", "age", "7", "correction")


@pytest.mark.parametrize(
    ("text", "fact"),
    [
        (
            "Chloe and I split up back in February, it was mutual.",
            "Chloe and the user split up back in February.",
        ),
        (
            "I resigned from Deloitte last month and I start at Stanbic on Monday.",
            "The user resigned from Deloitte last month.",
        ),
    ],
)
def test_an_ending_is_told_whole_without_what_follows_it(text: str, fact: str) -> None:
    ending = [each.fact for _, each in extract_statements([Said(text)]) if each.ends]
    assert ending == [fact]
