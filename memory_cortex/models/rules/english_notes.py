"""English written as notes rather than sentences, the way a busy parent or a terse answer puts it:
"Husband Dan.", "Kids: Mia 7, Leo 4.", "Me: 38, part-time accountant.", "Dog = Pickle.", "Mia -
coeliac.", "Partner's name is Jonas." Each is rewritten as the sentence it stands for ("My husband
Dan.", "I'm 38, …", "Mia is coeliac.") before the rules read it, so the same rules apply."""

from __future__ import annotations

import re
from dataclasses import replace

from .english_identity import occupation
from .english_people import REL_WORDS
from .english_rule_parts import article
from .english_text import recase
from .english_values import NOT_A_NAME, clean_value, is_occupation, plain_job
from .shapes import About, Draft, Rule, Voice, en_sentence, first_words_of

# Relations a note names without "my" ("Husband Dan.", "Son Arlo, 6"): family and partners, whose
# bare word opening a message can only mean the speaker's own.
_BARE_RELATION = (
    r"husband|wife|partner|hubby|boyfriend|girlfriend|fianc[ée]e?|son|daughter|sons|daughters|kids|children|"
    r"twins|eldest|youngest|oldest|stepson|stepdaughter|mum|mom|dad|boss|manager|sister|brother|bf|gf|"
    r"baby(?=\s+(?-i:[A-Z])[a-z]+\s*,)"  # "Baby Ivy, 8 months", not "Baby Shark on repeat"
)
_PETS = r"dog|cat|puppy|kitten|hamster|rabbit|bunny|guinea\s+pig|parrot|budgie|tortoise|horse|pony"
_NAME_WORD = r"(?-i:[A-Z])[\w'-]+"

# "Husband Dan.", "Son Arlo, 6", "Partner Sam does bedtimes", "Partner's name is Jonas", "bf is called jayden"
_BARE_KIN = re.compile(
    rf"^(?P<rel>{_BARE_RELATION})(?=\s*,?\s+{_NAME_WORD}|'s\s|\s+(?:is|are|was|has|have)\s|\s+name\s)",
    re.IGNORECASE,
)
# "Dog = Pickle.", "Cat: Bramble.", "Kids: Mia 7, Leo 4."
_LABELLED = re.compile(
    rf"^(?P<rel>{_BARE_RELATION}|{_PETS})\s*(?:[:=]|[-–—](?=\s))\s*(?=(?-i:[A-Z]))",
    re.IGNORECASE,
)
_OWNER = re.compile(r"(?P<name>(?-i:[A-Z])[\w'-]+)\s*\((?P<owner>(?-i:[A-Z])[a-z]+)'s\)")
# "Birthday's 9 August.", "Husband's name Tom": what of the speaker's a note names without "my"
_BARE_OWN = re.compile(r"^(?P<noun>birthday|bday|hometown|surname|nickname)(?='s\s|\s+is\s)", re.IGNORECASE)
_NAME_NO_VERB = re.compile(r"(?<='s name)\s+(?=(?-i:[A-Z])[a-z]+\b)")
# "Ella (eldest) - 11": a child named, then which one
_NAME_WHICH = re.compile(
    r"^(?P<name>(?-i:[A-Z][a-z]+))\s*\((?P<rel>eldest|oldest|youngest|middle\s+one)\)\s*", re.I
)
# "Me: 38, part-time accountant.", "Me - lactose intolerant."
_ME = re.compile(r"^me\s*(?:[:=]|[-–—](?=\s))\s*", re.IGNORECASE)
# "Mia - coeliac.", "Leo allergic to eggs.": a name, then what they are, the verb left out.
_NAME_STATE = re.compile(
    r"^(?P<name>(?-i:[A-Z][a-z]+))(?:\s*[:\-–—]\s*|\s+(?=allergic\s+to\b))(?=(?:allergic|coeliac|celiac|diabetic|asthmatic|epileptic|autistic|"
    r"dyslexic|vegan|vegetarian|veggie|pescatarian|(?:lactose|gluten|dairy)[- ]intolerant|nut[- ]free)\b)",
)
_NOT_NAMES = frozenset(
    """i me my we our you he she it they the a an and but so been being still now also always mostly strictly fully
    totally just not never went gone going became become was is am are""".split()
)
# "my brother jake is 20": in a message written all in lower case, the name after a relation word.
_LOWER_RELATIVE_NAME = re.compile(
    rf"\b(?:my|our)\s+(?:(?:little|big|older|younger|baby|best|twin|new|current|actual)\s+)?(?:{REL_WORDS})\s+(?P<name>[a-z]+)"
    r"(?=\s+(?:is|was|has|works|lives|moved|turned|got|just|and|n|loves|hates|studies|goes|started)\b|'s\b)"
)
_NOT_LOWER_NAMES = frozenset(
    """really just also still now always never finally recently actually literally honestly totally only and but so
    officially basically probably usually currently apparently seriously clearly definitely obviously lowkey
    is was has who which that the a an in at on from of with to for says said thinks wants""".split()
)


# "Rafael, 45, history teacher in Madrid.", "Tom, Bristol-based, I run a bike shop.": a speaker
# introducing themself by name, "I'm" left out. Only when every part after the name (up to one the
# speaker says in the first person) is an age, a job or where they are based, and one is not an age:
# "Mia, 7, loves dinosaurs" and "Sarah, nurse at St Mary's, is my sister" introduce no one.
_NAME_INTRO = re.compile(
    r"^(?!(?:hi|hey|hello|hiya|morning|evening|afternoon|ok|okay|yes|yeah|yep|no|nope|thanks|sure|sorry|well|so|"
    r"correct|exactly|true|indeed|absolutely|definitely|totally|agreed|same|also|plus|anyway|btw|"
    r"right|great|cool|nice|oh|ah|hmm|wow|dear|guys|folks|team|everyone|mum|mom|dad|january|february|march|april|"
    r"may|june|july|august|september|october|november|december|monday|tuesday|wednesday|thursday|friday|saturday|"
    rf"sunday)\b){NOT_A_NAME}(?P<name>(?-i:[A-Z])(?-i:[a-z])[\w'-]*)\s*,\s*(?P<rest>.+)$",
    re.IGNORECASE,
)
_INTRO_AGE = re.compile(r"^\d{1,3}(?:\s*(?:y/?o|yrs?(?:\s+old)?|years?\s+old))?$", re.IGNORECASE)
_INTRO_BASED = re.compile(r"^(?-i:[A-Z])[\w'.-]*-based$", re.IGNORECASE)
_FIRST_PERSON = re.compile(r"^(?:i|i'm|im|i've|ive|my|me|we|we're|our)\b", re.IGNORECASE)


# "hi, sigrid here, night-shift nurse in Oslo": a name written in lower case, said as "here".
_LOWER_HERE = re.compile(
    r"^(?:(?:hi|hey|hello|hiya|yo|hej|hola|morning)[\s,!.]+)?(?P<name>(?-i:[a-z])[\w'-]{1,20})\s+here\s*,\s*(?P<rest>.+)$",
    re.IGNORECASE,
)


def _introduced(sentence: str) -> str | None:
    """ "I'm Rafael, 45, …" for "Rafael, 45, …" (and "sigrid here, nurse in Oslo"); None when the
    sentence is no introduction."""
    if (here := _LOWER_HERE.match(sentence)) is not None:
        sentence = f"{here['name'].capitalize()}, {here['rest']}"
    m = _NAME_INTRO.match(sentence)
    if m is None:
        return None
    said_more = False
    for part in re.split(r"\s*[,;]\s*", m["rest"].strip().rstrip(".!…")):
        if _FIRST_PERSON.match(part):
            break
        if _INTRO_AGE.match(part):
            continue
        head = re.split(r"\s+(?:at|in|for|with)\s+", part, maxsplit=1)[0]
        if not (
            _INTRO_BASED.match(part) or (plain_job(head) and is_occupation(head) and len(head.split()) <= 4)
        ):
            return None
        if head.split()[0].lower() in _NOT_A_JOB_START or _VERBLESS.search(part):
            return None
        said_more = True
    return f"I'm {sentence}" if said_more else None


def prepare(sentence: str) -> str:
    """``sentence`` as the sentence a note stands for ("Husband Dan." → "My husband Dan."); a
    sentence written all in lower case gets its names capitalised first. Others are returned as
    they are."""
    sentence = recase(sentence)
    if not any(char.isupper() for char in sentence):
        sentence = _LOWER_RELATIVE_NAME.sub(_capitalised, sentence)
    sentence = _NAME_NO_VERB.sub(" is ", sentence, count=1)
    if (m := _BARE_OWN.match(sentence)) is not None:
        return f"My {m['noun'].lower()}{sentence[m.end() :]}"
    if (m := _NAME_WHICH.match(sentence)) is not None:
        return f"My {m['rel'].lower()}, {m['name']}, {sentence[m.end() :].lstrip('-–—: ')}"
    if (m := _LABELLED.match(sentence)) is not None:
        rest = sentence[m.end() :]
        if (owned := _OWNER.match(rest)) is not None:  # "Hamster: Nugget (Leo's)": Leo's pet
            return f"{owned['owner']} has a {m['rel'].lower()} called {owned['name']}{rest[owned.end() :]}"
        return f"My {m['rel'].lower()} {rest}"
    if (m := _BARE_KIN.match(sentence)) is not None:
        return f"My {m['rel'].lower()}{sentence[m.end() :]}"
    if (m := _ME.match(sentence)) is not None:
        return f"I'm {sentence[m.end() :]}"
    if (introduced := _introduced(sentence)) is not None:
        return introduced
    if (m := _NAME_STATE.match(sentence)) is not None and m["name"].lower() not in _NOT_NAMES:
        return f"{m['name']} is {sentence[m.end() :]}"
    return sentence


def _capitalised(m: re.Match[str]) -> str:
    name = m["name"]
    if name in _NOT_LOWER_NAMES or name.endswith(("ing", "ed")):
        return m.group()
    return m.group()[: m.start("name") - m.start()] + name.capitalize()


# --- "I have two kids, Aarav and Diya", "my kids Mia 7, Leo 4", "two cats, Pip and Squeak": each one named

_COUNT = r"two|three|four|five|six|\d"
_KIDS = r"kids|children|sons|daughters|boys|girls|twins"
_PET_PLURALS = (
    r"dogs|cats|puppies|kittens|hamsters|rabbits|bunnies|guinea\s+pigs|parrots|budgies|tortoises|horses"
)
_ONE = r"(?:(?:the\s+)?(?:elder|older|younger|eldest|oldest|youngest|big|little|first|second|third)\s+one\s+is\s+)?"
_LISTED = rf"{_ONE}(?-i:[A-Z][a-z]+)(?:\s*\(?\d{{1,2}}\)?)?"
_NAMED_LIST = re.compile(
    rf"^(?:(?:i|we)(?:'ve|\s+have)?\s+(?:(?:have|am\s+having|are\s+having)(?:\s+got)?|got)\s+(?P<count>{_COUNT})\s+"
    rf"|(?:my|our)\s+(?:(?P<count2>{_COUNT})\s+)?)(?:(?:little|lovely|wonderful|gorgeous|beautiful)\s+)?(?P<kind>{_KIDS}|{_PET_PLURALS})"
    rf"\s*(?:[,:;—–-]|\s(?:are|called|named)|(?=\s(?-i:[A-Z])))\s*"
    rf"(?P<names>{_LISTED}(?:\s*(?:,|\band\b|&|\+)\s*(?:and\s+)?{_LISTED})+)(?:[\s!.]*$|\s*[,;.]\s+.*$)",
    re.IGNORECASE,
)
_LISTED_NAME = re.compile(r"\b(?-i:[A-Z][a-z]+)\b(?:\s*\(?\s*(?P<age>\d{1,2})\b\)?)?")
_NUMBERS = {"two": 2, "three": 3, "four": 4, "five": 5, "six": 6}
_NOT_LISTED = frozenset("I Im The And But So Both Two Three All My Our They He She We".split())
_KID_RELATION = {"sons": "son", "boys": "son", "daughters": "daughter", "girls": "daughter"}


def _named_list(m: re.Match[str], voice: Voice) -> Draft | None:
    """Kids or pets counted and named in one go: a relation (or pet) fact for each, and each one's
    age when a number follows the name ("Mia 7, Leo 4"). Nothing when the names do not add up."""
    kind = " ".join(m["kind"].lower().split())
    found = [n for n in _LISTED_NAME.finditer(m["names"]) if n.group().split()[0] not in _NOT_LISTED]
    names = [(n.group().split()[0].rstrip("(").strip(), n["age"]) for n in found]
    count = m["count"] or m["count2"]
    wanted = int(count) if count and count.isdigit() else _NUMBERS.get((count or "").lower())
    if len(names) < 2 or (wanted is not None and len(names) != wanted):
        return None
    is_pet = re.fullmatch(_PET_PLURALS, kind) is not None
    single = _singular(kind)
    drafts: list[Draft] = []
    for name, age in names:
        if is_pet:
            drafts.append(
                Draft(
                    en_sentence(f"{voice.title} has a {single} named {name}"), "pet", "relationship", 7
                ).stating("pet", name)
            )
        else:
            relation = _KID_RELATION.get(kind, "child")
            drafts.append(
                Draft(
                    en_sentence(f"{name} is {voice.possessive} {single}"), single, "relationship", 7
                ).stating(relation, name)
            )
        if age:
            about = About(name, None, "pet" if is_pet else "person", of=voice.person)
            drafts.append(
                Draft(en_sentence(f"{name} is {age} years old"), "age", "identity", 7, about=about).stating(
                    "age", age
                )
            )
    return replace(drafts[0], also=tuple(drafts[1:]))


def _singular(kind: str) -> str:
    if kind in ("children", "kids", "twins"):
        return "child"
    if kind == "puppies":
        return "puppy"
    if kind == "bunnies":
        return "bunny"
    return kind[:-1]


# --- a job, a plan, a drink said as a bare phrase: "Engineering manager.", "Staff Engineer at Stripe.",
# "Sports day Fri 20th.", "Black coffee."

_NOT_A_JOB_START = frozenset(
    """my your his her our their the a an this that no not any some every what which who great good best bad worst
    terrible amazing lovely poor dear thanks thank hi hey hello bye proud happy former ex old future dream wannabe
    aspiring retired""".split()
)
_ORG = r"(?-i:[A-Z0-9])[\w&'.-]*(?:\s+(?:&\s+)?(?-i:[A-Z0-9])[\w&'.-]*){0,3}"
_BARE_JOB = re.compile(
    rf"^(?P<job>[\w-]+(?:\s+[\w&-]+){{0,3}}?)(?:\s+(?:at|for|with)\s+(?P<org>(?:the\s+)?{_ORG})|\s*,\s*(?P<org2>{_ORG})(?=\s*$))?"
    r"(?:\s+since\s+[\w\s]+?)?(?:\s*,\s*(?:freelance|self[- ]employed|part[- ]time|full[- ]time|contract|permanent|"
    r"\d[\w\s-]*?(?:days?|shifts?|hours?)\b[\w\s]*?|at\s+the\s+moment|for\s+now|currently)[\w\s]*)?$",
    re.IGNORECASE,
)


def _bare_job(m: re.Match[str], voice: Voice) -> Draft | None:
    """A clause that is nothing but a job, and where: an answer or a note ("Engineering manager.",
    "Nurse at St Mary's, 3 long days a week", "Senior associate, Clifford Chance")."""
    job = clean_value(m["job"])
    if not job or job.split()[0].lower() in _NOT_A_JOB_START or not plain_job(job) or not is_occupation(job):
        return None
    if job.lower().split()[-1] in ("student", "students", "lead", "head") or re.search(
        r"\bof\s+(?-i:[a-z])", job
    ):
        return None  # "CFO of bad decisions": a joke
    draft = _is_a(job, voice)
    org = clean_value(m["org"] or m["org2"], keep_article=True) if (m["org"] or m["org2"]) else None
    if not org:
        return draft
    employer = Draft(en_sentence(f"{voice.title} works at {org}"), "employer", "identity", 8).stating(
        "employer", org
    )
    return replace(draft, also=(employer,))


# "Sysadmin at a hospital in Stockholm.", "Night-shift nurse in Oslo.": a job and where, as a note.
_BARE_JOB_WHERE = re.compile(
    r"^(?P<job>[\w-]+(?:\s+[\w&-]+){0,3}?)(?=\s+(?:at\s+(?:a|an)\s+[a-z]|in\s+(?-i:[A-Z])))(?P<where>.+)$",
    re.IGNORECASE,
)
_VERBLESS = re.compile(
    r"\b(?:is|are|am|was|were|be|been|has|have|had|will|would|can|could|should|do|does|did|go|going|went|"
    r"met|saw|called|said|told|like|likes|love|loves)\b",
    re.IGNORECASE,
)
_IM_A = re.compile(r"^I'm an? (?P<obj>.+)$")


def _bare_job_where(m: re.Match[str], voice: Voice) -> Draft | None:
    """A note that is nothing but a job and where it is done ("ER nurse in Winnipeg", "Marketing
    director at an airline in Dubai"): read as "I'm a …", so the job and the home come apart."""
    job = clean_value(m["job"])
    if (
        not job
        or job.split()[0].lower() in _NOT_A_JOB_START
        or not plain_job(job)
        or not is_occupation(job)
        or _VERBLESS.search(
            where := re.split(r"\s*[,;]", m["where"], maxsplit=1)[0]
        )  # "…, proud auntie-to-be"
    ):
        return None
    job = m["job"] if re.match(r"^[A-Z]{2}", m["job"]) else m["job"][:1].lower() + m["job"][1:]  # "ER nurse"
    said = _IM_A.match(f"I'm {article(job)}{where}")
    return occupation(said, voice) if said is not None else None


_EVENT = (
    r"(?:sports\s+day|parents'?\s+evening|open\s+(?:day|evening)|school\s+(?:trip|play|fair|fete|disco|concert|run)|"
    r"nativity(?:\s+play)?|inset\s+day|prize\s+giving|bake\s+sale|prom|recital|trip|party|wedding|appointment|"
    r"meeting|interview|exam|flight|dentist|check-?up|scan|surgery|operation|match|tournament|concert|gig|"
    r"playdate|sleepover|christening|graduation|holiday|offsite|reunion)"
)
_NOTE_DATE = (
    r"(?P<date>(?:(?:mon|tue|tues|wed|weds|thu|thur|thurs|fri|sat|sun)[a-z]*\.?\s+)?(?:the\s+)?\d{1,2}(?:st|nd|rd|th)?"
    r"(?:\s+(?:of\s+)?(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*)?|(?:jan|feb|mar|apr|may|jun|jul|"
    r"aug|sep|sept|oct|nov|dec)[a-z]*\s+\d{1,2}(?:st|nd|rd|th)?)"
)
_PLAN_NOTE = re.compile(
    rf"^(?P<plan>(?:[\w'-]+\s+){{0,2}}?{_EVENT})(?:\s+(?:to|in|at)\s+(?P<where>(?-i:[A-Z])[\w'-]+))?\s*(?:[=:\-–—]\s*|\s+)(?:on\s+)?"
    rf"{_NOTE_DATE}(?:[\s!.]*$|\s*[,;].*$)",
    re.IGNORECASE,
)
_NOT_PLAN_START = frozenset("i my your we our the a an no not this that next last every".split())


def _plan_note(m: re.Match[str], voice: Voice) -> Draft | None:
    """ "Parents evening Tues 12th.", "School trip to Bath = 14 May": a plan and its date, noted."""
    plan = " ".join(m["plan"].lower().split())
    if plan.split()[0] in _NOT_PLAN_START:
        return None
    if len(plan.split()) == 1 and m["where"]:  # "Trip to Paris 12th May": the Paris trip
        plan = f"{m['where'].lower()} {plan}"
    date = " ".join(m["date"].split())
    about = About(plan, None, "plan", of=voice.person)
    return Draft(en_sentence(f"The {plan} is on {date}"), plan, "project_state", 7, about=about).stating(
        "date", date
    )


_HOUSEHOLD_DIET = re.compile(
    r"^(?:we're\s+|we\s+are\s+)?(?:a\s+)?(?P<diet>vegan|veggie|vegetarian|pescatarian|halal|kosher|gluten[- ]free|"
    r"plant[- ]based)\s+(?:household|family|home|house)\b(?:\s*[,;].*)?$",
    re.IGNORECASE,
)


def _household_diet(m: re.Match[str], voice: Voice) -> Draft | None:
    """ "Veggie household, kids included": the speaker's diet, and their household's."""
    diet = m["diet"].lower()
    return Draft(en_sentence(f"{voice.possessive} household is {diet}"), "diet", "identity", 8).stating(
        "diet", diet
    )


_DRINK_NOTE = re.compile(
    r"^(?P<obj>(?:black|white|iced|hot|green|herbal|strong|filter|decaf|oat\s+milk|soy|almond|builder's|builders)\s+"
    r"(?:[\w-]+\s+)?(?:coffee|tea|latte|flat\s+white|americano|cappuccino|chai|espresso|mocha|matcha))"
    r"(?:\s*[,.]?\s*(?:no|with|two|one)\s+(?:sugar|sugars|milk)|\s*,\s*(?:always|every\s+(?:day|morning)))?[\s!.]*$",
    re.IGNORECASE,
)


def _drink_note(m: re.Match[str], voice: Voice) -> Draft | None:
    """ "Black coffee.", "Green tea, always": a usual drink, noted."""
    drink = " ".join(m["obj"].split())
    return Draft(
        en_sentence(f"{voice.title} usually drinks {drink}"), "usual drink", "preference", 6
    ).stating("drink", drink)


EN_NOTE_RULES: tuple[Rule, ...] = (
    Rule(_NAMED_LIST, _named_list, first_words_of("I we we've my our")),
    Rule(_PLAN_NOTE, _plan_note),
    Rule(_DRINK_NOTE, _drink_note),
    Rule(_HOUSEHOLD_DIET, _household_diet),
)
"""Rules read before the others: a note's words would otherwise be taken for something else."""

# "Junior architect life, deadline on Friday.", "Accountant life in tax season": a job, said as a life
_JOB_LIFE = re.compile(
    r"^(?P<job>[\w-]+(?:\s+[\w-]+){0,2}?)\s+life\b(?:\s*[,;!.].*|\s+(?:in|with|during)\b.*)?$", re.I
)


def _job_life(m: re.Match[str], voice: Voice) -> Draft | None:
    job = clean_value(m["job"])
    if not job or not plain_job(job) or not is_occupation(job) or job.split()[0].lower() in _NOT_A_JOB_START:
        return None
    if not job.split()[0].isupper():
        job = job[:1].lower() + job[1:]  # capitalised only as the sentence's first word
    return _is_a(job, voice)


def _is_a(job: str, voice: Voice) -> Draft:
    """ "The user is a nurse.": a job said as a note."""
    return Draft(en_sentence(f"{voice.title} is {article(job)}"), "job", "identity", 8).stating("job", job)


EN_BARE_JOB_RULES: tuple[Rule, ...] = (
    Rule(_BARE_JOB, _bare_job),
    Rule(_BARE_JOB_WHERE, _bare_job_where),
    Rule(_JOB_LIFE, _job_life),
)
"""Read after every other rule: only a clause nothing else made sense of is a bare job."""
