"""The English statements the rules extractor takes ("my name is…", "I live in…", "remind me
to…"), each a pattern and the handler that writes its fact."""

from __future__ import annotations

import dataclasses
import re

from ..attributes import canonical_relation
from ..facts import Category
from .english_more import FIELDS, home_value
from .english_more import allergy as _allergy
from .english_more import home as _home
from .english_more import origin as _origin
from .english_more import speaks as _speaks
from .english_people import relation_of
from .english_possessive import RELATION_WORDS, my_x_is_y
from .english_text import lowercase_org
from .english_values import (
    LANGUAGES,
    NATIONALITIES,
    ORG_WORD,
    clean_value,
    is_drink,
    is_occupation,
    job_and_employer,
)
from .english_voice import en_fact, is_content, team_fact, third_person, topic_from
from .shapes import Draft, Handler, Rule, Voice, cap, en_sentence, first_words_of


def en_pattern(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.IGNORECASE)


_IM = r"(?:i'm|i\s+am|im)"
_IHAVE = r"(?:i\s+have|i've\s+got|i\s+have\s+got|ive\s+got)"
_ADV = (
    r"(?:(?:really|truly|absolutely|also|generally|usually|definitely|always|mostly|actually|"
    r"personally|strongly|much|still|just|honestly|totally|genuinely|do|currently|now|only|very)\s+)*"
)
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


def _say(
    category: Category,
    importance: int,
    topic: str | None = None,
    *,
    obj: str = "obj",
    attribute: str | None = None,
) -> Handler:
    """The common case: the whole clause, in the third person; ``obj`` must be real content. With
    ``attribute``, the fact states it, ``obj`` (cleaned) being its value."""

    def handler(m: re.Match[str], voice: Voice) -> Draft | None:
        phrase = m.groupdict().get(obj)
        if not is_content(phrase):
            return None
        label = topic or topic_from(phrase or "", category)
        draft = Draft(en_fact(m.string, voice), label, category, importance)
        return draft.stating(attribute, clean_value(phrase)) if attribute else draft

    return handler


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


def _age(m: re.Match[str], voice: Voice) -> Draft | None:
    return Draft(f"{voice.title} is {m['age']} years old.", "age", "identity", 8).stating("age", m["age"])


def _occupation(m: re.Match[str], voice: Voice) -> Draft | None:
    """ "I'm a nurse", "I'm a clinical trainer at Medisim", "I work as a nurse at St Mary's": a job,
    and the employer when one is named. "I'm a mother of two" is an identity without an attribute;
    "I'm a night owl", "a certified couch potato" are no fact at all."""
    phrase = m["obj"]
    if not is_content(phrase):
        return None
    phrase = _ASIDE.sub("", phrase)
    if _TITLE_OF_NOTHING.match(phrase):
        return None  # "the CEO of overthinking", "a master of procrastination": a joke
    draft = Draft(en_fact(m.string, voice), topic_from(phrase, "identity"), "identity", 8)
    # "a civil engineer living in Bath": where they live is said after the job, not part of it.
    based = re.search(
        r"\s+(?:based\s+(?:in|out\s+of)|living\s+in)\s+(?P<home>.+)$", phrase, re.IGNORECASE
    ) or _IN_PLACE.search(phrase)
    if not is_occupation(phrase[: based.start()] if based else phrase):
        head = re.split(r"\s+(?:of|at|in|for|with|from|and|but|who|so)\b|[,;]", phrase.strip(), maxsplit=1)[
            0
        ].lower()
        return draft if head.split()[-1:] and head.split()[-1] in _IDENTITY_WORDS else None
    if based:
        phrase = phrase[: based.start()]
    job, employer = job_and_employer(phrase)
    if based and not employer and ORG_WORD.search(based["home"]):  # "a staff nurse in Apollo Hospital"
        employer, based = clean_value(based["home"], keep_article=True), None
    elif not employer and (named := _IN_ORG.search(job)):  # "senior accountant in HDFC Bank"
        job, employer = job[: named.start()], named["org"]
    if employer and (where := _IN_PLACE.search(employer)):  # "at Spotify in Stockholm"
        employer, based = employer[: where.start()], based or where
    draft = draft.stating("job", job)
    also = []
    if employer:
        also.append(
            Draft(en_sentence(f"{voice.title} works at {employer}"), "employer", "identity", 8).stating(
                "employer", employer
            )
        )
    if based and (place := home_value(based["home"])) and not re.match(r"^(?:\w+\s+)?student\b", job, re.I):
        also.append(
            Draft(en_sentence(f"{voice.title} is based in {place}"), "home", "identity", 8).stating(
                "home", place
            )
        )
    field = re.match(r"^(?:\w+\s+)?student\s+(?:in|of)\s+(?P<field>.+)$", job, re.IGNORECASE) or re.match(
        rf"^(?:(?:first|second|third|final|fourth|\d(?:st|nd|rd|th))[- ]year\s+)?(?P<field>{FIELDS})\s+student$",
        job,
        re.I,
    )
    if field:
        also.append(
            Draft(en_sentence(f"{voice.title} studies {field['field']}"), "studies", "identity", 7).stating(
                "studies", field["field"]
            )
        )
    return dataclasses.replace(draft, also=tuple(also)) if also else draft


_IN_ORG = re.compile(
    r"\s+in\s+(?P<org>(?-i:[A-Z])[\w&'.-]*(?:\s+(?-i:[A-Z])[\w&'.-]*){0,3}\s+(?:hospital|bank|university|college|"
    r"school|clinic|group|ltd|limited|inc|plc|gmbh|corp|company|airways|telecom|council|ministry|agency))\s*$",
    re.IGNORECASE,
)
_TITLE_OF_NOTHING = re.compile(
    r"^(?:[\w-]+\s+)?(?:ceo|cfo|cto|coo|president|queen|king|master|chief)\s+of\s+(?!(?:a|an|the|my|our)\b)(?-i:[a-z])",
    re.IGNORECASE,
)
# "a nurse in Leeds", "at Spotify in Stockholm": where they are (a place, not "in IT", "in Year 6").
_IN_PLACE = re.compile(
    r"\s+in\s+(?P<home>(?-i:[A-Z])(?=[\w'.-]*[a-z])[\w'.-]*(?:\s+(?-i:[A-Z])[\w'.-]*){0,2})\s*$"
)


# What follows a job and is not part of it: "a teacher, so summers are sacred", "a developer so…".
_ASIDE = re.compile(r"\s*(?:[,;:–—(]|\s+(?:so|and|but|because|which|who|tbh|lol)\b).*$", re.IGNORECASE)


_IDENTITY_WORDS = frozenset(
    """mother father mum mom dad parent grandmother grandfather grandparent widow widower veteran christian
    muslim jew catholic buddhist hindu atheist introvert extrovert immigrant expat refugee citizen
    twin vegan vegetarian""".split()
)


def _promoted(m: re.Match[str], voice: Voice) -> Draft | None:
    job = clean_value(m["obj"])
    if not job:
        return None
    return Draft(en_fact(m.string, voice), topic_from(job, "job"), "identity", 8).stating("job", job)


def _studies(m: re.Match[str], voice: Voice) -> Draft | None:
    field = clean_value(
        re.sub(r"\s+(?:at|in)\s+(?:uni|university|college|school|(?-i:[A-Z])).*$", "", m["obj"], flags=re.I)
    )
    if not field or not is_content(field):
        return None
    return Draft(en_fact(m.string, voice), topic_from(field, "studies"), "identity", 7).stating(
        "studies", field
    )


def _teaches(m: re.Match[str], voice: Voice) -> Draft | None:
    """ "I teach chemistry at a secondary school": a chemistry teacher."""
    subject = clean_value(re.sub(r"\s+(?:at|in|for|to)\s+.*$", "", m["obj"], flags=re.IGNORECASE))
    if not subject or not is_content(subject) or len(subject.split()) > 3:
        return None
    job = f"{subject} teacher"
    return Draft(en_fact(m.string, voice), topic_from(job, "job"), "identity", 8).stating("job", job)


def _answer_language(m: re.Match[str], voice: Voice) -> Draft | None:
    language = m["lang"].strip()
    if language.lower() not in LANGUAGES:
        return None
    fact = en_sentence(f"{voice.title} wants answers in {cap(language)}")
    return Draft(fact, "answer language", "preference", 8).stating("language", cap(language))


def _drinker(m: re.Match[str], voice: Voice) -> Draft | None:
    drink = clean_value(m["obj"])
    if not drink or not is_drink(drink):
        return None
    return Draft(en_fact(m.string, voice), "usual drink", "preference", 6).stating("drink", drink)


def _employer(m: re.Match[str], voice: Voice) -> Draft | None:
    employer = clean_value(m["obj"], keep_article=True)
    if not is_content(m["obj"]) or not employer:
        return None
    draft = Draft(en_fact(m.string, voice), "employer", "identity", 8)
    # "I work for myself", "I work at home": no organisation named.
    named = (
        re.match(r"[A-Z0-9]|the\s+[A-Z]", employer) and not re.match(r"(?:home|myself|my\s)", employer, re.I)
    ) or lowercase_org(employer)
    return draft.stating("employer", employer) if named else draft


_TRIVIAL_TASK = re.compile(
    r"^(?:go|leave|sleep|run|rest|eat|wait|pee|wake\s+up|head\s+out|log\s+off|sign\s+off|hurry|"
    r"get\s+going|think|focus|stop|relax|breathe|calm\s+down)\b(?:\s+\w+)?$|"
    r"^(?:know|understand|ask|say|tell\s+you|admit|confess|clarify|mention|be\s+honest|think|"
    r"apologi[sz]e|point\s+out|figure\s+out\s+what|see\s+(?:if|what|how))\b",
    re.IGNORECASE,
)


def _todo(m: re.Match[str], voice: Voice) -> Draft | None:
    task = m["task"].strip()
    if len(task.split()) < 2 or _TRIVIAL_TASK.match(task) or not is_content(task):
        return None
    fact = team_fact(m.string, voice) if m["who"].lower() == "we" else en_fact(m.string, voice)
    return Draft(fact, topic_from(task, "todo"), "todo", 6)


def _remind_me(m: re.Match[str], voice: Voice) -> Draft | None:
    task = m["task"].strip()
    if re.match(r"(?:what|how|where|who|why|which|whether|when\s+we|of\s+what|about\s+what)\b", task, re.I):
        return None  # "remind me what we said": a request to recall, not a reminder
    body = third_person(task, voice, named=True)
    topic = topic_from(re.sub(r"^(?:to|that|about|of)\s+", "", task, flags=re.I), "reminder")
    return Draft(en_sentence(f"{voice.title} wants to be reminded {body}"), topic, "todo", 7)


def _todo_note(m: re.Match[str], voice: Voice) -> Draft | None:
    task = m["task"].strip()
    if not is_content(task):
        return None
    return Draft(
        en_sentence(f"To-do for {voice.subject}: {third_person(task, voice, named=True)}"),
        topic_from(task, "todo"),
        "todo",
        6,
    )


def _dont_let_me_forget(m: re.Match[str], voice: Voice) -> Draft | None:
    task = m["task"].strip()
    if not is_content(task):
        return None
    prep = (m["prep"] or "about").lower()
    return Draft(
        en_sentence(f"{voice.title} wants to be reminded {prep} {third_person(task, voice, named=True)}"),
        topic_from(task, "reminder"),
        "todo",
        7,
    )


def _decision(m: re.Match[str], voice: Voice) -> Draft | None:
    if not is_content(m["obj"]):
        return None
    team = m.string.lower().startswith("we")
    fact = team_fact(m.string, voice) if team else en_fact(m.string, voice)
    obj = re.sub(r"^(?:to|on|that|for|against|not\s+to)\s+", "", m["obj"].strip(), flags=re.I)
    return Draft(fact, topic_from(obj, "decision"), "decision", 7)


def _lets(m: re.Match[str], voice: Voice) -> Draft | None:
    if not is_content(m["obj"]):
        return None
    fact = en_sentence(
        f"{voice.title} decided to {m['verb'].lower()} {third_person(m['obj'], voice, named=True)}"
    )
    return Draft(fact, topic_from(m["obj"], "decision"), "decision", 6)


EN_RULES: tuple[Rule, ...] = tuple(
    Rule(en_pattern(pattern), handler, first_words_of(starts))
    for starts, pattern, handler in (
        # --- names
        (
            "my",
            rf"^my\s+(?P<kind>(?:first|full|last|real|given|legal|middle|preferred)\s+|nick)?name(?:'s|\s+is)\s+"
            rf"{_ANY_NAME}{_NAME_TAIL}",
            _name_is,
        ),
        (
            "you please just pls call",
            rf"^(?:(?:you\s+can|you\s+may|please|just|pls)\s+)*call\s+me\s+{_CAP_NAME}{_NAME_TAIL}",
            _called,
        ),
        (
            "I people everyone my friends",
            rf"^(?:i\s+go\s+by|{_IM}\s+(?:going\s+by|called)|people\s+call\s+me|everyone\s+calls\s+me|(?:my\s+)?"
            rf"friends\s+call\s+me)\s+{_CAP_NAME}{_NAME_TAIL}",
            _goes_by,
        ),
        (
            "I",
            rf"^{_IM}\s+(?:happily\s+)?(?:married|engaged)\s+to\s+(?P<obj>.+)$",
            _say("relationship", 8, "partner", attribute="partner"),
        ),
        (
            "I",
            rf"^{_IM}\s+(?:currently\s+)?dating\s+(?P<obj>.+)$",
            _say("relationship", 7, "partner", attribute="partner"),
        ),
        # --- health, diet: high importance, checked before the generic "I'm a…"
        (
            "I",
            rf"^{_IM}\s+(?:very\s+|severely\s+|highly\s+|extremely\s+|deathly\s+|quite\s+|mildly\s+|also\s+)?"
            r"allergic\s+to\s+(?P<obj>.+)$",
            _allergy,
        ),
        (
            "I",
            rf"^{_IHAVE}\s+(?:a\s+|an\s+)?(?:severe\s+|serious\s+|mild\s+|bad\s+)?(?P<obj>[\w -]{{1,40}}?)\s+"
            r"allerg(?:y|ies)(?:\s*,.*|\s+(?:so|and|but|which|because)\b.*)?$",
            _allergy,
        ),
        (
            "I",
            rf"^{_IHAVE}\s+(?:an?\s+)?allerg(?:y|ies)\s+to\s+(?P<obj>.+)$",
            _allergy,
        ),
        (
            "I",
            r"^i\s+(?:can't|cannot|can\s+not)\s+(?:eat|drink|have|tolerate|digest)\s+(?P<obj>.+)$",
            _say("identity", 8, "diet"),
        ),
        (
            "I",
            r"^i\s+(?:don't|do\s+not|dont|never)\s+(?:eat|drink)\s+(?P<obj>.+)$",
            _say("preference", 7, "diet"),
        ),
        (
            "I",
            rf"^{_IM}\s+(?:a\s+|an\s+)?(?:strict\s+|also\s+|fully\s+|mostly\s+)?(?P<obj>vegan|vegetarian|veggie|"
            r"pescatarian|pescetarian|plant[- ]based|keto|paleo|flexitarian|carnivore|teetotal(?:er|ler)?|halal|pure\s+veg|"
            r"kosher|gluten[- ]free|dairy[- ]free|lactose[- ]free)\b(?!-).*$",
            _say("identity", 8, "diet", attribute="diet"),
        ),
        (
            "I",
            rf"^{_IM}\s+(?:also\s+|severely\s+|very\s+)?(?P<obj>(?:lactose|gluten|dairy|fructose|histamine)[- ]"
            r"intolerant|celiac|coeliac|(?:type\s+[12]\s+)?diabetic|pre-?diabetic|asthmatic|epileptic|anemic|anaemic)\b.*$",
            _say("identity", 8, "health", attribute="health"),
        ),
        (
            "I",
            rf"^(?:{_IHAVE}|i(?:'ve|\s+have)\s+had)\s+(?P<obj>(?:type\s+[12]\s+)?diabetes|asthma|adhd|epilepsy|dyslexia|autism|"
            r"c[oe]?eliac\s+disease|crohn'?s(?:\s+disease)?|migraines|a\s+heart\s+condition|high\s+blood\s+"
            r"pressure|hypertension|tinnitus|colou?r\s*blindness|arthritis|dementia|alzheimer'?s|parkinson'?s|"
            r"ms|multiple\s+sclerosis|cancer|depression|anxiety|ibs|lupus|eczema|psoriasis|hypothyroidism|"
            r"sleep\s+apnea|ptsd|ocd|bipolar(?:\s+disorder)?|long\s+covid|fibromyalgia|endometriosis|pcos|"
            r"glaucoma|a\s+pacemaker|hearing\s+loss|heart\s+disease|kidney\s+disease|celiac|coeliac|"
            r"(?:a\s+)?(?:gluten|lactose|dairy)\s+intolerance|anemia|anaemia|scoliosis|osteoporosis|gout|(?:high\s+)?cholesterol|"
            r"sickle\s+cell(?:\s+disease)?|cystic\s+fibrosis|hiv|chronic\s+fatigue(?:\s+syndrome)?|fibro|cerebral\s+palsy|"
            r"down\s+syndrome|a\s+bad\s+back|sciatica|a\s+stammer|a\s+stutter|narcolepsy|insomnia|vertigo|tourette'?s)\b.*$",
            _say("identity", 8, "health", attribute="health"),
        ),
        (
            "I",
            rf"^{_IM}\s+(?:also\s+|profoundly\s+|partially\s+)?(?P<obj>colou?r[- ]?blind|deaf|hard\s+of\s+hearing|blind|"
            r"autistic|dyslexic|dyspraxic)\b.*$",
            _say("identity", 8, "health", attribute="health"),
        ),
        (
            "I",
            rf"^{_IM}\s+(?P<obj>left[- ]handed|right[- ]handed|disabled|neurodivergent|married|single|divorced|widowed|"
            r"retired|unemployed|self[- ]employed)\b.*$",
            _say("identity", 8),
        ),
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
            rf"^{_IHAVE}\s+(?:a|an|one|two|three|four|five|six|seven|eight|nine|ten|\d+)\s+(?:[\w-]+\s+){{0,2}}?"
            rf"(?P<obj>{_REL})\b.*$",
            _say("relationship", 7),
        ),
        # --- "my X is Y"
        (
            "my",
            r"^my\s+(?P<x>[^\W\d_][\w-]*(?:'s)?(?:\s+[^\W\d_][\w-]*(?:'s)?){0,3}?)\s+(?:is|are)\s+(?P<y>.+)$",
            my_x_is_y,
        ),
        (
            "my",
            # "my birthday's July 14": the same, with the verb joined to its noun.
            r"^my\s+(?P<x>(?:[^\W\d_][\w-]*\s+){0,2}[^\W\d_][\w-]*)'s\s+(?P<y>(?!\w+\s+(?:is|are)\b).+)$",
            my_x_is_y,
        ),
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
        # --- identity: who, where, what work
        (
            "I",
            rf"^{_IM}\s+(?P<age>\d{{1,3}})(?:\s*(?:years?|yrs?|y/?o)(?:\s+old)?)?(?!\s+(?:mentally|at\s+heart|inside|in\s+"
            r"spirit|in\s+\w+\s+years)\b)(?:\s+(?:now|today|already|this\s+year|going\s+on\s+\d+))?(?:\s+(?:btw|by\s+the\s+way))?"
            r"(?:(?:\s*,\s*|\s+(?:and|but|so)\s+)(?!(?:and\s+)?(?:what|how|why|who|where)\b).*|,?\s+not\s+\d{1,3}\b.*)?[\s!.]*$",
            _age,
        ),
        (
            "I",
            rf"^{_IM}\s+(?:(?:also|currently|now|actually|officially|finally|still|just|technically|proudly|happily|"
            rf"newly|(?:happy|proud)\s+(?:being|to\s+be))\s+)*(?:a|an)\s+(?!(?:bit|little|lot|tad|fan|big|"
            r"huge|massive|great|fool|idiot|moron|mess|genius|liar|real|total|complete|quick|few|sec|second(?![- ]year)|"
            r"minute|moment|good|terrible|bad|awful|decent|amazing|excellent|better|best|worst|natural|born|hopeless|"
            r"lousy|fantastic|brilliant|wonderful|horrible|poor|keen|avid|proper|certified|professional|"
            r"first[- ]time|self[- ]confessed|recovering)\b)(?P<obj>[\w-].*)$",
            _occupation,
        ),
        (
            "I",
            rf"^{_IM}\s+(?:the\s+)?(?P<obj>(?:ceo|cto|cfo|coo|founder|co-?founder|owner|tech\s+lead|lead\s+"
            r"developer|maintainer|author|creator|director|president|vp)(?:\s+(?:at|of|for)\s+(?:(?:the\s+)?(?-i:[A-Z0-9])|"
            r"(?:a|an)\s+)[^,;]*)?)"
            r"(?:\s*[,;].*|\s+(?:and|but|so)\s+(?:i|i'm|we)\b.*)?$",
            _say("identity", 8, attribute="job"),
        ),
        (
            "I",
            r"^i\s+(?:currently\s+|now\s+|also\s+|still\s+|actually\s+|really\s+)?(?:live|reside)\s+(?:in|at|near|"
            r"on(?=\s+(?:the\s+)?(?-i:[A-Z]))|outside(?:\s+of)?)"
            r"\s+(?P<obj>.+)$",
            _home,
        ),
        (
            "I",
            rf"^{_IM}\s+(?:currently\s+|now\s+)?(?:living|based|located|residing)\s+(?:here\s+)?(?:in|at|near|out\s+of|"
            r"outside)\s+(?P<obj>.+)$",
            _home,
        ),
        (
            "I",
            r"^i(?:'ve|\s+have)?\s+(?:just\s+|recently\s+|finally\s+)?(?:moved|relocated)\s+(?:back\s+)?(?:to|into(?=\s+(?-i:[A-Z])))\s+"
            r"(?P<obj>.+)$",
            _home,
        ),
        (
            "I",
            rf"^(?:{_IM}|i\s+come)\s+(?:originally\s+)?from\s+(?!(?:here|there|work|home|the\s+future|the\s+past|"
            r"school|now|scratch)\b)(?P<obj>.+)$",
            _origin,
        ),
        (
            "I",
            r"^i\s+was\s+born\s+(?:and\s+raised\s+)?in\s+(?P<obj>.+)$",
            _origin,
        ),
        ("I", r"^i\s+was\s+born\s+on\s+(?P<obj>.+)$", _say("identity", 8, "birthday", attribute="birthday")),
        ("I", r"^i\s+(?:grew\s+up|was\s+(?:brought\s+up|raised))\s+in\s+(?P<obj>.+)$", _origin),
        ("I", rf"^{_IM}\s+born\s+(?:and\s+(?:raised|bred)\s+)?in\s+(?P<obj>.+)$", _origin),
        ("I", r"^i\s+(?:currently\s+|now\s+|also\s+|still\s+)?work\s+as\s+(?P<obj>.+)$", _occupation),
        (
            "I",
            r"^i\s+(?:currently\s+|now\s+|also\s+|still\s+)?work\s+(?:at|for)\s+(?P<obj>.+)$",
            _employer,
        ),
        ("I", rf"^{_IM}\s+(?:currently\s+|now\s+)?(?:employed|working)\s+as\s+(?P<obj>.+)$", _occupation),
        (
            "I",
            rf"^{_IM}\s+(?:currently\s+|now\s+)?(?:employed|working)\s+(?:at|for)\s+(?P<obj>.+)$",
            _employer,
        ),
        (
            "I",
            r"^i(?:'ve|\s+have)\s+(?:been\s+)?(?:living|lived)\s+in\s+(?P<obj>.+?)\s+(?:for|since)\b.*$",
            _home,
        ),
        ("I", r"^i\s+(?:just\s+|finally\s+)?got\s+promoted\s+to\s+(?P<obj>.+)$", _promoted),
        (
            "I",
            rf"^{_IM}\s+(?:currently\s+|now\s+)?(?:doing|taking|studying\s+for|working\s+on)\s+(?:a|an|my)\s+(?:phd|"
            r"ph\.d\.?|doctorate|master'?s|masters|msc|ma|mba|bsc|ba|degree|bachelor'?s|apprenticeship|diploma|"
            r"course|certificate|training|foundation\s+year)(?:\s+degree)?\s+in\s+"
            r"(?P<obj>.+)$",
            _studies,
        ),
        (
            "I",
            rf"^{_IM}\s+(?:a|an)\s+(?:phd|ph\.d\.?|master'?s|grad|graduate|undergrad|undergraduate|medical|law|"
            r"doctoral|\w+[- ]year)\s+student\s+(?:in|of|studying)\s+(?P<obj>.+)$",
            _studies,
        ),
        (
            "please kindly pls plz answer reply respond write talk speak",
            r"^(?:(?:please|kindly|pls|plz)\s+)?(?:answer|reply|respond|write|talk|speak)\s+(?:(?:to\s+)?me\s+)?(?:only\s+)?in\s+"
            r"(?P<lang>[a-z]+)(?:\s+(?:please|only|from\s+now(?:\s+on)?|going\s+forward|henceforth|from\s+here\s+on))*"
            r"(?:\s*,.*|\s+(?:i'm|i\s+am|as|because|since|so)\b.*)?$",
            _answer_language,
        ),
        (
            "I",
            rf"^{_IM}\s+(?:a\s+)?(?:huge|big|massive|heavy|serious|daily)\s+(?P<obj>[\w\s-]{{2,30}}?)\s+drinker\b.*$",
            _drinker,
        ),
        (
            "I",
            rf"^{_IM}\s+(?:a|an)\s+(?:huge|big|massive|die-?hard|lifelong)\s+(?P<obj>(?-i:[A-Z])[\w\s.-]{{1,30}}?)\s+fan\b.*$",
            _say("preference", 6, attribute="likes"),
        ),
        (
            "I",
            rf"^(?:i\s+(?:currently\s+)?study|{_IM}\s+(?:currently\s+)?studying|{_IM}\s+majoring\s+in)"
            r"\s+(?P<obj>.+)$",
            _studies,
        ),
        ("I", r"^i\s+(?:currently\s+|now\s+|also\s+)?teach\s+(?P<obj>.+)$", _teaches),
        (
            "I",
            rf"^(?:i\s+(?:currently\s+|mainly\s+|mostly\s+)?work|{_IM}\s+(?:currently\s+|now\s+)?working)\s+on\s+"
            r"(?P<obj>.+)$",
            _say("project_state", 6),
        ),
        (
            "I",
            r"^i\s+(?:run|own|founded|co-?founded|started)\s+(?:a|an|my\s+own)\s+(?P<obj>.+)$",
            _say("identity", 7),
        ),
        # --- preferences
        (
            "I",
            rf"^i\s+{_ADV}(?:prefer|like|love|adore|enjoy)\s+(?P<obj>.+)$",
            _say("preference", 6, attribute="likes"),
        ),
        (
            "I",
            rf"^i\s+{_ADV}(?:hate|dislike|detest|loathe|despise)\s+(?P<obj>.+)$",
            _say("preference", 6, attribute="dislikes"),
        ),
        (
            "I",
            rf"^i\s+{_ADV}(?:don't|do\s+not|dont)\s+(?:really\s+)?(?:like|love|enjoy|care\s+for)\s+(?P<obj>.+)$",
            _say("preference", 6, attribute="dislikes"),
        ),
        (
            "I",
            rf"^i\s+{_ADV}(?:don't|do\s+not|dont)\s+(?:ever\s+)?(?:want|use)\s+(?P<obj>.+)$",
            _say("preference", 7),
        ),
        ("I", r"^i\s+(?:can't|cannot)\s+stand\s+(?P<obj>.+)$", _say("preference", 6, attribute="dislikes")),
        (
            "I",
            r"^(?:i'd|i\s+would)\s+(?:much\s+)?(?:rather|prefer)\s+(?!not\s+(?:say|talk|discuss|answer|share|"
            r"go\s+into)\b)(?P<obj>.+)$",
            _say("preference", 6),
        ),
        (
            "I",
            rf"^{_IM}\s+not\s+(?:a\s+)?(?:big\s+|huge\s+|massive\s+|great\s+|real\s+)?fan\s+of\s+(?P<obj>.+)$",
            _say("preference", 6, attribute="dislikes"),
        ),
        (
            "I",
            rf"^{_IM}\s+(?:a\s+)?(?:big\s+|huge\s+|massive\s+|great\s+|real\s+)?fan\s+of\s+(?P<obj>.+)$",
            _say("preference", 6, attribute="likes"),
        ),
        ("I", rf"^{_IM}\s+(?:really\s+)?into\s+(?P<obj>.+)$", _say("preference", 6, attribute="likes")),
        (
            "I",
            rf"^i\s+{_ADV}(?:use|code\s+in|program\s+in|write\s+code\s+in|work\s+with|develop\s+(?:in|with))\s+"
            r"(?P<obj>.+)$",
            _say("preference", 5),
        ),
        # --- skills
        (
            "I",
            r"^i\s+(?:can|know\s+how\s+to)\s+(?P<obj>(?:speak|code|program|play|cook|drive|swim|sing|dance|draw|"
            r"paint|ski|snowboard|surf|knit|sew|juggle|fly|touch[- ]type|read\s+music)\b.*)$",
            _say("skill", 6),
        ),
        ("I", r"^i\s+know\s+how\s+to\s+(?P<obj>.+)$", _say("skill", 6)),
        (
            "I",
            r"^i\s+(?:also\s+|fluently\s+|only\s+|mainly\s+|mostly\s+|still\s+)*speak\s+(?P<obj>.+)$",
            _speaks,
        ),
        (
            "I",
            rf"^{_IM}\s+(?:very\s+|pretty\s+|quite\s+|really\s+|fairly\s+|reasonably\s+)?(?:good|great|skilled|"
            r"proficient|fluent|experienced|an\s+expert|expert|competent|comfortable|decent|familiar)\s+"
            r"(?:at|in|with)\s+(?P<obj>.+)$",
            _say("skill", 6),
        ),
        (
            "I",
            rf"^{_IM}\s+(?:not\s+(?:very\s+)?good|bad|terrible|hopeless|new)\s+(?:at|with|to)\s+(?P<obj>.+)$",
            _say("skill", 5),
        ),
        (
            "I",
            r"^(?:i\s+have|i've\s+got|i've\s+had|i\s+have\s+had)\s+\S+(?:\s+\S+)?\s+years?\s+of\s+experience\s+"
            r"(?:in|with|as|doing)\s+(?P<obj>.+)$",
            _say("skill", 7),
        ),
        # --- decisions
        (
            "I we we've",
            r"^(?:i|we)(?:'ve|\s+have)?\s+(?:just\s+|finally\s+|already\s+|now\s+)?(?:decided|chosen|chose|settled"
            r"\s+on|opted|committed)\b\s*(?P<obj>.+)$",
            _decision,
        ),
        ("I we're we", rf"^(?:{_IM}|we're|we\s+are)\s+going\s+(?:to\s+go\s+)?with\s+(?P<obj>.+)$", _decision),
        (
            "let's",
            r"^let's\s+(?P<verb>go\s+with|use|stick\s+with|stay\s+with|switch\s+to|settle\s+on)\s+(?P<obj>.+)$",
            _lets,
        ),
        (
            "I",
            r"^i(?:'ll|\s+will)\s+(?:go\s+with|stick\s+with|switch\s+to)\s+(?P<obj>.+)$",
            _say("decision", 6),
        ),
        # --- to-dos
        (
            "I we we've",
            r"^(?P<who>i|we)(?:(?:'ve|\s+have)\s+got\s+to|\s+(?:still\s+|really\s+|also\s+|definitely\s+|urgently\s+)?"
            r"(?:need\s+to|have\s+to|must|gotta|got\s+to|should\s+remember\s+to))\s+(?P<task>.+)$",
            _todo,
        ),
        ("please remind", r"^(?:please\s+)?remind\s+me\s+(?P<task>.+)$", _remind_me),
        (
            "todo to-do to note reminder",
            r"^(?:todo|to-do|to\s+do|note\s+to\s+self|reminder)\s*[:\-–]\s*(?P<task>.+)$",
            _todo_note,
        ),
        (
            "please don't do",
            r"^(?:please\s+)?(?:don't|do\s+not)\s+let\s+me\s+forget\s+(?:(?P<prep>to|about|that)\s+)?(?P<task>.+)$",
            _dont_let_me_forget,
        ),
        # --- last: a bare "I'm Ana" / "I'm Brazilian" (capitalised, nothing after it)
        (
            "I",
            rf"^{_IM}\s+{_CAP_NAME}(?:\s+(?:btw|by\s+the\s+way|here))?(?:\s*,\s+(?!(?:and|but|so|or)\b).*)?$",
            _im_name,
        ),
    )
)
