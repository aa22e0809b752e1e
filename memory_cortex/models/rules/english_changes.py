"""English statements of change ("I've switched to rooibos", "I turned 35", "I'm not vegan any more",
"I started at Medisim", "the Lisbon trip is now on April 2"), pets, and statements about someone
the speaker names by relation ("my dad has type 2 diabetes": the same rules, about the dad)."""

from __future__ import annotations

import dataclasses
import re

from .english_people import BARE_KIN, NAMED_REL_WORDS, PET_KINDS, REL_ADJ, relation_of
from .english_people import REL_WORDS as PEOPLE_WORDS
from .english_rule_parts import article
from .english_text import BACK_TO_FIRST, lowercase_org, spell_out
from .english_values import DIETS, NOT_A_NAME, WORD_AGE, clean_value, drink_value, is_drink, is_occupation
from .english_voice import en_fact, is_content, topic_from
from .shapes import About, Draft, Rule, Voice, en_sentence, first_words_of


def _pattern(text: str) -> re.Pattern[str]:
    return re.compile(text, re.IGNORECASE)


_IM = r"(?:i'm|i\s+am|im)"
_NAME = r"(?P<name>(?-i:[A-Z][\w'.-]*)(?:\s+(?-i:[A-Z][\w'.-]*)){0,2})"
_SPECIES = rf"(?P<species>{PET_KINDS})"
_PLAN = (
    r"(?P<plan>(?:(?!(?:i|i'm|am|is|are|was|my|me|we|you)\b)[\w'-]+\s+){0,3}?(?:trip|holiday|vacation|wedding|party|appointment|meeting|offsite|interview|"
    r"flight|concert|dinner|visit|surgery|operation|conference|exam|reunion|move|check-?up|recital|"
    r"graduation|ceremony|launch|deadline|retreat|hike|match|game|gig|show|festival|getaway|weekend(?:\s+away)?|"
    r"hen\s+do|stag\s+do|hen\s+party|stag\s+party|meetup|meet-up|catch-?up|bbq|barbecue|picnic|sleepover|playdate|"
    r"christening|baptism|funeral|housewarming|viewing|scan|date\s+night|night\s+out|camping\s+trip|course|"
    r"marathon|race|half|dentist|doctor's|doctors|gp|vet|physio|hairdresser|haircut|orthodontist|optician)"
    r"(?:\s+(?:to|in|at|with)\s+(?-i:[A-Z][\w'.-]*)(?:\s+(?-i:[A-Z][\w'.-]*))?|\s+(?:home|back))?)"
)


def _switch(m: re.Match[str], voice: Voice) -> Draft | None:
    new = clean_value(m["new"])
    if not new or not is_content(new):
        return None
    draft = Draft(en_fact(m.string, voice), topic_from(new, "switch"), "preference", 6)
    if is_drink(new):
        return draft.stating("drink", new)
    if DIETS.match(new):
        return draft.stating("diet", new)
    return draft


def _drinks(m: re.Match[str], voice: Voice) -> Draft | None:
    drink = drink_value(m["obj"])
    if not drink or not is_drink(drink):
        return None
    return Draft(en_fact(m.string, voice), "usual drink", "preference", 6).stating("drink", drink)


def _turned(m: re.Match[str], voice: Voice) -> Draft | None:
    return Draft(en_sentence(f"{voice.title} turned {m['age']}"), "age", "identity", 8).stating(
        "age", m["age"]
    )


def _went_diet(m: re.Match[str], voice: Voice) -> Draft | None:
    diet = clean_value(m["diet"])
    return Draft(en_fact(m.string, voice), "diet", "identity", 8).stating("diet", diet)


def _no_longer_diet(m: re.Match[str], voice: Voice) -> Draft | None:
    diet = clean_value(m["diet"] or m["diet2"])
    if not diet:
        return None
    fact = en_sentence(f"{voice.title} is no longer {diet}")
    return Draft(fact, "diet", "identity", 8).stating("diet", f"not {diet}")


def _joined(m: re.Match[str], voice: Voice) -> Draft | None:
    """'I started at Medisim', 'starting at Aldi as a store manager', 'started as a junior doctor at St
    Thomas'': the employer, and the job when one is said."""
    org = m["org"]
    as_job = re.match(r"as\s+(?:a|an)\s+(?P<job>.+?)\s+(?:at|with|for)\s+(?P<org>.+)$", org, re.IGNORECASE)
    role = re.search(
        r"\bas\s+(?:a|an|the|their|our)?\s*(?P<job>[\w\s-]{2,40}?)\s*(?:[,.!]|\s+(?:next|this|on|from|starting|so|and|"
        r"but)\b|$)",
        org,
        re.IGNORECASE,
    )
    title = as_job["job"] if as_job else role["job"] if role else None
    if as_job:
        org = as_job["org"]
    org, _, after = _DASH.sub("\0", org, count=1).partition("\0")
    if (
        _PLACE_OF_STUDY.search(org) and not title
    ):  # "started at Uni of York - doing History": a student, not an employee
        field = re.match(
            r"^(?:doing|studying|reading)\s+(?P<field>[\w\s]{2,30}?)[\s!.]*$", after, re.IGNORECASE
        )
        if field is None:
            return None
        return Draft(en_fact(m.string, voice), "studies", "identity", 7).stating("studies", field["field"])
    org = re.sub(
        r"\s+(?:on\s+)?(?:mon|tues|wednes|thurs|fri|satur|sun)day\b.*$", "", org, flags=re.IGNORECASE
    )
    employer = clean_value(_IN_DEPARTMENT.sub("", org), keep_article=True)
    job = None
    if title and is_occupation(title) and (title := clean_value(title)):
        job = Draft(en_sentence(f"{voice.title} works as {article(title)}"), "job", "identity", 8).stating(
            "job", title
        )
    if not employer or not (
        re.match(r"[A-Z0-9]|the\s+[A-Z]", employer)
        or _PUBLIC_EMPLOYER.match(employer)
        or lowercase_org(employer)
    ):
        return job  # "I started at the bottom": no organisation named
    also = [job] if job else []
    where = re.search(
        r"\s+in\s+(?P<place>(?-i:[A-Z])(?=[\w'.-]*[a-z])[\w'.-]*(?:\s+(?-i:[A-Z])[\w'.-]*)?)$", employer
    )
    if where:  # "starting at Google in London"
        employer = employer[: where.start()]
        also.append(
            Draft(en_sentence(f"{voice.title} is based in {where['place']}"), "home", "identity", 8).stating(
                "home", where["place"]
            )
        )
    draft = Draft(en_fact(m.string, voice), "employer", "identity", 8).stating("employer", employer)
    return dataclasses.replace(draft, also=tuple(also)) if also else draft


_IN_DEPARTMENT = re.compile(  # "a new job at Workday in HR": the employer is Workday
    r"\s+in\s+(?:hr|it|sales|marketing|finance|legal|ops|operations|engineering|product|design|data|support|"
    r"compliance|accounts|payroll|recruitment|research|admin|the\s+\w+\s+team)\b.*$",
    re.IGNORECASE,
)
_DASH = re.compile(r"\s+[-–—]\s+")
_PLACE_OF_STUDY = re.compile(r"\b(?:uni|university|college|sixth\s+form)\b", re.IGNORECASE)
_PUBLIC_EMPLOYER = re.compile(
    r"^the\s+(?:council|civil\s+service|army|navy|air\s+force|police|fire\s+service|government)$",
    re.IGNORECASE,
)


def _reports_to(m: re.Match[str], voice: Voice) -> Draft | None:
    return Draft(
        en_sentence(f"{voice.possessive.capitalize()} manager is {m['name']}"), "manager", "relationship", 7
    ).stating("manager", m["name"])


def _partnered(m: re.Match[str], voice: Voice) -> Draft | None:
    return Draft(en_fact(m.string, voice), "partner", "relationship", 8).stating("partner", m["name"])


def _pet(m: re.Match[str], voice: Voice) -> Draft | None:
    species = " ".join(m["species"].lower().split())
    name = m.groupdict().get("name")
    if name:
        draft = Draft(en_fact(m.string, voice), "pet", "relationship", 7).stating("pet", name)
        if not m["age"]:
            return draft
        about = About(name, None, "pet", of=voice.person)  # "…called Dougal, who is now eleven"
        age = Draft(en_sentence(f"{name} is {m['age']} years old"), "age", "identity", 7, about=about)
        return dataclasses.replace(draft, also=(age.stating("age", m["age"]),))
    return Draft(en_sentence(f"{voice.title} has a {species}"), "pet", "relationship", 6).stating(
        "pet", species
    )


def _plan_date(m: re.Match[str], voice: Voice) -> Draft | None:
    plan = _plan_name(m["plan"])
    date = clean_value(m["date"], keep_article=True)
    if date and re.fullmatch(r"\d{1,2}(?:[:.]\d\d)?\s*(?:am|pm|o'clock)?", date, re.I):
        return None  # "party's at 8": a time, not a date
    if (
        date
        and re.fullmatch(r"(?:mon|tues|wednes|thurs|fri|satur|sun)day", date, re.I)
        and not (m["verb"] or " not " in m["date"])
    ):
        return None  # "the meeting is on Friday": maybe every Friday; a change to a day is a date
    if (
        not plan
        or not date
        or not re.search(
            r"\d|monday|tuesday|wednesday|thursday|friday|saturday|sunday|"
            r"january|february|march|april|may|june|july|august|september|"
            r"october|november|december|tomorrow|next|weekend",
            date,
            re.I,
        )
    ):
        return None
    fact = en_fact(m.string, voice)
    return Draft(fact, plan, "project_state", 7, about=About(plan, None, "plan", of=voice.person)).stating(
        "date", date
    )


def _plan_name(words: str) -> str:
    """ "trip to Lisbon" → "lisbon trip": the name a plan is filed under (lower case)."""
    words = " ".join(w for w in words.split() if "'" not in w)  # "the kids' school concert": the concert
    moved = re.match(r"^(?P<what>.+?)\s+(?:to|in|at)\s+(?P<where>[A-Z][\w'.-]*(?:\s+[A-Z][\w'.-]*)?)$", words)
    if moved:
        words = f"{moved['where']} {moved['what']}"
    return words.lower()


EN_CHANGE_RULES: tuple[Rule, ...] = tuple(
    Rule(_pattern(pattern), handler, first_words_of(starts))
    for starts, pattern, handler in (
        (
            "I",
            r"^i(?:'ve|\s+have)?\s+(?:just\s+|recently\s+|finally\s+|now\s+)?(?:switched|changed|"
            r"converted)\s+(?:over\s+)?(?:from\s+.+?\s+)?to\s+(?P<new>.+)$",
            _switch,
        ),
        (
            "I my",
            r"^(?:i\s+(?:usually\s+|mostly\s+|mainly\s+|always\s+|only\s+|now\s+)?(?:drink|have)|my\s+(?:usual|"
            r"go-to|daily|morning|regular)\s+(?:drink|order|brew)\s+is)\s+(?P<obj>[\w\s-]+?)(?:\s+(?:every|each|"
            r"in\s+the|first\s+thing|with)\b.*|\s*[,;].*)?$",
            _drinks,
        ),
        (
            "I",
            r"^i(?:'ve|\s+have)?\s+(?:just\s+|finally\s+|recently\s+)?turned\s+(?P<age>\d{1,3})\b.*$",
            _turned,
        ),
        (
            "I",
            rf"^(?:i(?:'ve|\s+have)?\s+(?:just\s+|recently\s+|finally\s+|officially\s+)?(?:gone|went|become|turned|"
            rf"became)|{_IM}\s+(?:going|now|officially))\s+(?P<diet>(?:fully\s+)?(?:vegan|vegetarian|pescatarian|"
            rf"pescetarian|plant[- ]based|keto|paleo|teetotal|gluten[- ]free|dairy[- ]free))\b.*$",
            _went_diet,
        ),
        (
            "I",
            rf"^(?:{_IM}\s+(?:no\s+longer|not)\s+(?:a\s+)?(?P<diet>vegan|vegetarian|pescatarian|keto|teetotal)"
            rf"(?:\s+(?:any\s*more|anymore))?|i(?:'ve|\s+have)?\s+(?:stopped|quit)\s+being\s+(?:a\s+)?"
            rf"(?P<diet2>vegan|vegetarian|pescatarian|keto))\b(?:[\s!.]*$|\s*,.*$|\s+(?:and|but|so|since|because)\b.*$)",
            _no_longer_diet,
        ),
        (
            "I",
            rf"^(?:i(?:'ve|\s+have)?\s+(?:just\s+|recently\s+|finally\s+|officially\s+)?(?:started|joined|began)|(?:{_IM}|"
            r"i'll\s+be|i\s+will\s+be)\s+(?:officially\s+)?starting|i\s+start)\s+"
            r"(?:a\s+new\s+(?:job|role|position)\s+|working\s+|my\s+new\s+job\s+)?(?:at|with|for)\s+(?P<org>.+)$",
            _joined,
        ),
        (
            "I",
            r"^i(?:'ve|\s+have)?\s+(?:just\s+|recently\s+|finally\s+)?(?:got|landed|accepted|taken|took)\s+(?:a|the)\s+"
            r"(?:new\s+)?(?:job|role|position|offer)\s+(?:at|with)\s+(?P<org>.+)$",
            _joined,
        ),
        (
            "I",
            rf"^(?:i(?:'ve|\s+have)?\s+(?:just\s+|recently\s+|finally\s+)?started|{_IM}\s+(?:officially\s+)?starting)\s+"
            r"(?:work\s+|working\s+)?(?P<org>as\s+(?:a|an)\s+.+)$",
            _joined,
        ),
        (
            "I",
            rf"^(?:i\s+(?:now\s+|still\s+)?report|{_IM}\s+(?:now\s+|still\s+)?reporting)\s+(?:directly\s+)?to\s+{_NAME}"
            r"(?:\s+now)?(?:\s+(?:since|after|because|as\s+of)\b.*|\s*[,;].*)?$",
            _reports_to,
        ),
        (
            "I",
            rf"^i(?:'ve|\s+have)?\s+(?:just\s+|finally\s+)?(?:got\s+engaged|got\s+married|married)\s+(?:to\s+)?{_NAME}\b.*$",
            _partnered,
        ),
        (
            "I we",
            rf"^(?:i|we)(?:'ve|\s+have)?\s+(?:just\s+|recently\s+|finally\s+)?(?:have|got|adopted|rescued|bought|keep|"
            rf"brought\s+home)\s+(?:a|an|one)\s+(?:new\s+|little\s+|rescue\s+|\w+\s+)?{_SPECIES}"
            # "a cat from the shelter, a tabby named Tansy"
            r"(?:\s+from\s+(?:a|the|our|my)\s+(?:[\w-]+\s+){0,2}?(?:shelter|rescue|rescue\s+centre|breeder|pound|farm|sanctuary))?"
            rf"(?:\s*,?\s*(?:(?:a|an)\s+(?:[\w-]+\s+){{0,2}}?)?"
            rf"(?:named|called|who's\s+called|(?:her|his|its)\s+name(?:'s|\s+is))\s+{_NAME}"
            rf"(?:\s*,\s*who(?:'s|\s+is)\s+(?:now\s+)?(?P<age>\d{{1,2}}|{WORD_AGE})(?:\s+years\s+old)?\b)?)?"
            rf"(?:[\s!.]*$|\s*,(?!\s*(?-i:[A-Z])).*$|"
            rf"(?<=[a-z])\s+(?:and|but|who|which)\s+(?:he|she|it|they)\b.*$|"
            # "a cat called Biscuit who keeps walking on my keyboard": what the pet does, not whose it is
            rf"(?<=[a-z])\s+who\s+(?!(?:is|'s|was|were|belongs|lives)\b)(?-i:[a-z])\w+.*$)",
            _pet,
        ),
        (
            None,
            rf"^(?:(?P<head>the|our|my)\s+)?{_PLAN}(?:\s+(?:is|was|has\s+been|got|will\s+be|is\s+now|starts|begins|kicks\s+off)|"
            rf"'s(?:\s+been)?|(?=\s+(?:moved|"
            rf"pushed|rescheduled|postponed|changed)\b))\s+(?:now\s+|officially\s+|"
            rf"still\s+)?(?:(?P<verb>moved|pushed|changed|rescheduled|postponed|brought\s+forward|booked|set|scheduled|planned|"
            rf"confirmed)\s+)?(?:(?:to|for|on|at)\s+)?(?P<date>(?:the\s+\d|\d|(?:mon|tues|wednes|thurs|fri|satur|sun)day|"
            rf"jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec|next|this|tomorrow).*)$",
            _plan_date,
        ),
    )
)


# --- someone the speaker names by relation: the rules again, in their voice

_RELATIVE = _pattern(
    rf"^(?:(?P<det>my|our)\s+(?:(?P<adj>{REL_ADJ}|eldest|oldest|youngest)\s+)?(?P<rel>{PEOPLE_WORDS})|(?P<kin>{BARE_KIN})|"
    r"(?P<det2>my|our)\s+(?P<age>\d{1,2})[\s-]*(?:year|yr)[\s-]*old(?:\s+(?P<kid>son|daughter|boy|girl))?)"
    rf"(?:\s*,?\s+{_NAME}\s*,?)?(?:\s+and\s+(?:his|her|their)\s+(?:wife|husband|partner|family|kids|children|girlfriend|"
    r"boyfriend)(?=\s+(?:live|are|have|moved)\b))?"
    rf"(?:\s+|(?P<is>'s\s+))(?P<rest>(?(is).+|(?:is|has|was|lives|live|works|moved|just|recently|"
    r"finally|also|still|now|only|turned|started|got|loves|likes|hates|can't|cannot|doesn't|does|speaks|studies|"
    r"goes|drinks|eats|plays|went|became|quit|left|joined|runs|owns|teaches|adopted|grew|retired|prefers|adores|"
    r"'s)\b.*))$"
)
# What of theirs a possessive names that is about them: "my mum's birthday is…", "my son's diet is…".
_THEIR_OWN = re.compile(
    r"^(?:birthday|bday|age|hometown|job|diet|usual\s+drink|favou?rite\s+[\w\s]+?)\s+(?:is|falls\s+on)\b",
    re.I,
)
_PARTICIPLE = re.compile(
    r"^(?:(?:just|recently|finally|also|now|already|officially)\s+)*(?:got|been|gone|moved|started|had|become|"
    r"lived|worked|left|quit|joined|retired|turned|taken|switched|adopted)\b",
    re.IGNORECASE,
)
# Where a second statement about the same person starts ("is 12 and obsessed with Minecraft"): only
# the first is read, in their voice.
_NEXT_PREDICATE = re.compile(
    r"\s*(?:,\s*|\s+)(?:and(?!\s+(?-i:[A-Z]))|but|so|who|which)\s+.*$|"
    # not the names a count introduces: "has two cats, Pip and Squeak"
    r"\s*[,;]\s+(?!(?-i:[A-Z])[a-z]+(?:\s*(?:,|\band\b|&)\s*(?-i:[A-Z])[a-z]+)+[\s!.]*$).*$",
    re.IGNORECASE,
)
_NAMING = re.compile(
    rf"^(?:is|'s)\s+(?:now\s+|actually\s+)?(?:(?:called|named)\b|{NOT_A_NAME}(?-i:[A-Z])[\w'.-]*(?:\s+(?-i:[A-Z])[\w'.-]*){{0,2}}"
    r"(?:[\s!.]*$|\s*[,;:–—]|\s+(?:and|but|so|who|now)\b))",
    re.IGNORECASE,
)
_ADVERB = re.compile(
    r"^(?:just|recently|finally|also|still|now|really|already|actually|only|officially)$", re.IGNORECASE
)


def en_relative(clause: str) -> tuple[About, str, str] | None:
    """ "my dad has type 2 diabetes" → (the user's father, "dad", "I have type 2 diabetes"); None
    when the clause is not such a statement. The relation's name is kept when said ("my daughter
    Mia is 5": Mia). Chat's own words count: "mum's moved to Spain", "our eldest", "my Staffy
    Bruno", "my 3 year old"."""
    m = _RELATIVE.match(clause)
    if m is None or _NAMING.match(m["rest"] if not m["is"] else "is " + m["rest"]):
        return None  # "my sister is called Ana", "my boss is Paul Hart": who they are, not about them
    if m["age"]:
        said = f"{m['age']} year old" + (f" {m['kid'].lower()}" if m["kid"] else "")
        relation = relation_of(m["kid"]) if m["kid"] else "child"
    else:
        said = " ".join((m["rel"] or m["kin"]).lower().split())
        relation = relation_of(said)
        if said in ("boy", "girl") and (m["det"] or "").lower() != "our":
            return None  # "my girl" may be a girlfriend as well as a daughter
    if relation is None:
        return None
    rest = _NEXT_PREDICATE.sub("", m["rest"])
    kind = "pet" if relation == "pet" else "person"
    said_as = (
        f"{m['adj'].lower()} {said}"
        if m["adj"] and m["adj"].lower() not in ("new", "lovely", "darling")
        else said
    )
    if m["is"] and _THEIR_OWN.match(rest):  # "my mum's birthday is 3 March": her birthday
        return About(m["name"], relation, kind), said_as, f"my {rest}"
    if m["is"] and re.match(
        r"^[\w-]+(?:\s+[\w-]+)?\s+(?:is|are|was|were|has|have|'s)\b", rest, re.IGNORECASE
    ):
        return None  # "my sister's wedding is in June": her wedding, not her
    if m["is"]:
        rest = ("has " if _PARTICIPLE.match(rest) else "is ") + rest
    words = rest.split()
    for i, word in enumerate(words):
        if _ADVERB.match(word):
            continue
        words[i] = _to_first_person(word)
        break
    rest = " ".join(words).replace(" 'm", "'m")
    if rest.startswith("'m"):
        rest = rest[2:].strip()
        rest = f"am {rest}"
    return About(m["name"], relation, kind), said_as, f"I {rest}"


def _to_first_person(verb: str) -> str:
    low = verb.lower()
    if low in BACK_TO_FIRST:
        return BACK_TO_FIRST[low]
    if low.endswith("ies") and len(low) > 4:
        return verb[:-3] + "y"
    if low.endswith(("shes", "ches", "sses", "xes")):
        return verb[:-2]
    if low.endswith("s") and not low.endswith("ss"):
        return verb[:-1]
    return verb


# --- "we" said for the speaker and their household; the "I" chat English leaves out

_WE = _pattern(
    r"^we(?P<aux>'ve|\s+have|'re|\s+are)?\s+(?=(?:just\s+|recently\s+|finally\s+|officially\s+|now\s+|still\s+|all\s+)*"
    r"(?:moved|relocated|shifted|staying|live|got|adopted|rescued|bought|brought|have|are\s+(?:based|living)|living|based|"
    r"settled\s+in(?=\s+(?-i:[A-Z]))))"
)
_OUR_HOUSEHOLD = _pattern(rf"^our\s+(?=(?:\w+\s+)?(?:{NAMED_REL_WORDS}|hamster|rabbit|parrot|horse|pets?)\b)")
# A statement whose "I" was left out: "just moved to Bristol", "turned 30 on Sunday", "got a new job at
# Monzo". Only these openings: a bare "Got it." or "moved the meeting" reads as nothing after the "I".
_NO_SUBJECT = _pattern(
    r"^(?:(?:just|finally|recently|officially|also|absolutely|really|honestly|literally|currently|still|now)\s+)*"
    r"(?P<verb>moved\s+(?:to|into(?=\s+(?-i:[A-Z]))|into(?=\s+(?:a|our|my|the)\s+(?:new\s+)?(?:flat|house|place|apartment|home)\s+in\b))|work\s+in(?=\s+(?-i:[A-Z])[\w'-]+\s+as\b)|originally\s+from|fluent\s+in|diagnosed\s+with|got\s+the\s+keys\s+to|signed\s+(?:the|a)\s+lease|"
    r"relocated\s+to|only\s+drink\s|(?:not|no\s+longer)\s+(?:a\s+)?(?:vegan|vegetarian|pescatarian|keto|teetotal)\s+(?:any\s*more|anymore)|"
    r"turned\s+\d+|started\s+(?:at|with|working|as)|starting\s+(?:at|with|as|a\s+new)|"
    r"been\s+(?:at|with|in|(?:vegan|vegetarian|pescatarian|pescetarian|veggie|keto|plant-based|teetotal)(?!-)|working|living)|"
    r"(?:can't|cannot)\s+stand|(?:love|hate|adore|loathe|detest)\s+(?!(?:it|this|that|these|those|you|u|ya|him|her|"
    r"them|us|when|how|the|what|who|my|your|ur)\b)|doing\s+(?:a|an|my)\s+(?:(?:part|full)[- ]time\s+)?(?:masters|master's|phd|degree|"
    r"apprenticeship|course|diploma|bachelor's|bachelors|ma|msc|mba|bsc)|studying|joined|got\s+(?:a\s+new\s+job|the\s+job|a\s+job|promoted|engaged|married|a\s+(?:new\s+)?(?:dog|cat|puppy|"
    r"kitten))|switched\s+(?:to|from)|adopted|went\s+(?:vegan|vegetarian)|gone\s+(?:vegan|vegetarian)|quit\s+my|born\s+"
    r"(?:and\s+raised\s+)?(?:in|on)|grew\s+up\s+in|living\s+in|based\s+(?:here\s+|there\s+)?in|allergic\s+to|reporting\s+to|working\s+"
    r"(?:at|for|as)|(?:big|huge|massive)\s+fan\s+of|married\s+to|engaged\s+to|live\s+in|work\s+(?:at|for|as)|"
    r"settled\s+in(?=\s+(?-i:[A-Z])))\b"
)
_AM_FORMS = (
    "not",
    "no",
    "living",
    "based",
    "allergic",
    "reporting",
    "working",
    "big",
    "huge",
    "massive",
    "married",
    "engaged",
    "starting",
    "doing",
    "studying",
    "originally",
    "fluent",
)
_WAS_FORMS_MORE = ("diagnosed",)
# "I meant I work at Barclays": the statement meant.
_I_MEANT = _pattern(r"^i\s+meant(?:\s+to\s+say)?(?:\s+that)?\s+(?=(?:i|i'm|i've|my|we|we're)\b)")
# "nut allergy, the serious kind": an allergy said as what they have.
_BARE_ALLERGY = _pattern(
    r"^(?=(?:severe\s+|serious\s+|bad\s+|mild\s+)?[\w-]+(?:\s+[\w-]+)?\s+allerg(?:y|ies)(?:\s*[,;]|$|\s+(?:here|btw|so|and)\b))"
    r"(?!(?:my|his|her|their|our|your|the|this|that|an?)\b)"
)
# "vegan for 5 years now", "asthmatic since childhood", "27 years old, if it matters": what they are, "I'm" left out.
_BARE_STATE = _pattern(
    r"^(?=(?:vegan|vegetarian|veggie|pescatarian|pescetarian|plant[- ]based|teetotal|(?:type\s+[12]\s+)?diabetic|"
    r"asthmatic|epileptic|coeliac|celiac|(?:lactose|gluten|dairy)[- ]intolerant|\d{1,3}\s*(?:years?\s+old|y/?o|yrs?\s+old))"
    r"(?:\s+(?:for\s+[\w\s]*?\b(?:now|years|yrs)\b|since|here|btw|now|so|and|but|though|tbh|only)\b|\s*[,;]|$))"
)
_HAVE_FORMS = ("been",)
# "type 1 diabetic here", "Grace here": a speaker introducing themself ("Looky here", "come here" are not).
_HERE = _pattern(
    r"^(?!(?:a|an|the|my|your|his|her|our|their|nobody|everyone|someone|it|this|that|nothing|anyone|he|she|they|we|"
    r"you|i|i'm|me|who|what|where|same|over|right|back|up|down|out|in|not|also|just|look|looky|lookie|come|get|"
    r"listen|hey|hi|hello|sit|stay)\b)(?P<who>(?:[\w-]+\s+){0,3}?[\w-]+)"
    r"\s+here(?:\s*,.*|\s+(?:so|and|but|btw|lol|tbh)\b.*)?$"
)
# "me and the missus moved…", "Ahmed and I got engaged", "my partner and I live…": the speaker with someone.
_US = _pattern(
    r"^(?:me\s+and\s+(?:the|my|our)\s+(?:\w+\s+){0,2}?\w+|(?:my|our)\s+(?:\w+\s+){0,2}?\w+\s+and\s+(?:i|me)|"
    r"(?-i:[A-Z])\w+\s+and\s+(?:i|me))\s+(?=(?:just\s+|finally\s+|recently\s+|have\s+|'ve\s+)*(?:moved|relocated|live|"
    r"are\s+(?:based|living)|bought|adopted|got\s+a)\b)"
)
_ENGAGED = _pattern(
    r"^(?P<name>(?-i:[A-Z])[\w'-]+)\s+and\s+(?:i|me)\s+(?:just\s+|finally\s+|officially\s+)?(?:got|are|are\s+getting)\s+"
    r"(?P<what>engaged|married)\b"
)
_WAS_FORMS = ("born",)


# "I work like graphic designer for Lavazza": "as", in a learner's English (never "like a dog"; not
# before "in": "programmer in Comarch" names no place, and nothing here tells a firm from a town).
_WORK_LIKE = _pattern(
    r"^i\s+work\s+like\s+(?!(?:a|an|the|crazy|mad|hell)\b)(?P<job>(?:(?!\s(?:in|for|at|by|with)\s)[\w\s-])+?)(?=\s+(?:for|at|by|with)\b|$)"
)


# "My daughter persuaded me to adopt a cat", "my wife talked me into getting a dog": it was done.
_TALKED_INTO = _pattern(
    r"^(?:my\s+(?:[\w-]+\s+){1,2}|(?-i:[A-Z])[a-z]+\s+)(?:finally\s+)?(?:persuaded|convinced|talked)\s+me\s+"
    r"(?:to|into)\s+(?P<verb>adopt|adopting|get|getting)\s+(?=an?\s)"
)
_DONE = {"adopt": "adopted", "adopting": "adopted", "get": "got", "getting": "got"}


def en_normalise(clause: str) -> str:
    """A clause as the rules read it: "We finally moved to Edinburgh" → "I finally moved to
    Edinburgh" (a household's move, pet or home is the speaker's too), "Our hamster is…" → "My
    hamster is…", and the "I" chat English leaves out put back ("just moved to Bristol" → "I just
    moved to Bristol"). Text-speak is spelled out first ("im" → "I'm"). Other clauses are left as
    they are."""
    clause = _I_MEANT.sub("", spell_out(clause))
    if (talked := _TALKED_INTO.match(clause)) is not None:  # "My daughter persuaded me to adopt a cat…"
        clause = f"I {_DONE[talked['verb'].lower()]} {clause[talked.end() :]}"
    m = _WORK_LIKE.match(clause)
    if m is not None and is_occupation(m["job"]):  # a learner's "I work like programmer in Comarch"
        clause = f"I work as {clause[m.start('job') :]}"
    m = _ENGAGED.match(clause)
    if m is not None:
        return f"I got {m['what'].lower()} to {m['name']}{clause[m.end() :]}"
    m = _US.match(clause)
    if m is not None:
        clause = "we " + clause[m.end() :]
    m = _WE.match(clause)
    if m is not None:
        aux = (m["aux"] or "").strip().lower()
        start = {"'ve": "I've", "have": "I have", "'re": "I'm", "are": "I am"}.get(aux, "I")
        rest = re.sub(r"\bour\b", "my", clause[m.end() :], flags=re.IGNORECASE)
        return f"{start} {rest}"
    if _OUR_HOUSEHOLD.match(clause):
        return "My " + clause[4:]
    m = _NO_SUBJECT.match(clause)
    if m is not None:
        first = m["verb"].split()[0].lower()
        if first in ("big", "huge", "massive"):
            return f"I'm a {clause}"
        clause = clause[:1].lower() + clause[1:]  # "Currently based in Cebu": mid-sentence now
        if first in _AM_FORMS:
            return f"I'm {clause}"
        if first in _WAS_FORMS or first in _WAS_FORMS_MORE:
            return f"I was {clause}"
        if first in _HAVE_FORMS:
            return f"I've {clause}"
        return f"I {clause}"
    m = _HERE.match(clause)
    if m is not None:
        verb = (
            "I have" if re.search(r"\b(?:allerg(?:y|ies)|intolerance|condition)$", m["who"], re.I) else "I'm"
        )
        return f"{verb} {m['who']}{clause[m.end('who') + 5 :]}"
    if _BARE_STATE.match(clause):
        return f"I'm {clause}"
    if _BARE_ALLERGY.match(clause):
        return f"I have a {clause}"
    return clause
