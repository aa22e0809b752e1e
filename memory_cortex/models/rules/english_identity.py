"""Who someone is, where they live and come from, and what work they do or study, said in the
first person ("I'm 34", "I'm a nurse at St Mary's", "I live in Cardiff", "I'm from Kraków", "I work
for Shell", "I'm doing a PhD in chemistry", "I teach maths"), with the few statements tried among
them ("answer in French", "I'm a big tea drinker", "I run a small bakery")."""

from __future__ import annotations

import dataclasses
import re

from .english_more import FIELDS
from .english_places import home, home_value, origin
from .english_rule_parts import IM, en_rules, say
from .english_text import lowercase_org, plausible_home
from .english_values import LANGUAGES, ORG_WORD, clean_value, is_drink, is_occupation, job_and_employer
from .english_voice import en_fact, is_content, topic_from
from .shapes import Draft, Rule, Voice, cap, en_sentence


def _age(m: re.Match[str], voice: Voice) -> Draft | None:
    return Draft(f"{voice.title} is {m['age']} years old.", "age", "identity", 8).stating("age", m["age"])


def occupation(m: re.Match[str], voice: Voice) -> Draft | None:
    """ "I'm a nurse", "I'm a clinical trainer at Medisim", "I work as a nurse at St Mary's": a job,
    and the employer when one is named. "I'm a mother of two" is an identity without an attribute;
    "I'm a night owl", "a certified couch potato" are no fact at all."""
    phrase = m["obj"]
    if not is_content(phrase):
        return None
    phrase = _ASIDE.sub("", phrase)
    if _TITLE_OF_NOTHING.match(phrase):
        return None  # "the CEO of overthinking", "a master of procrastination": a joke
    # "a translator, 36, living in Hamburg with my boyfriend Jonas": the fact says the job alone.
    said = m.string[: m.start("obj")] + phrase
    draft = Draft(en_fact(said, voice), topic_from(phrase, "identity"), "identity", 8)
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
    if employer:  # "for Lavazza here in Turin"
        employer = re.sub(r"\s+(?:here|there)$", "", employer, flags=re.IGNORECASE)
    draft = draft.stating("job", job)
    also = []
    if employer:
        also.append(
            Draft(en_sentence(f"{voice.title} works at {employer}"), "employer", "identity", 8).stating(
                "employer", employer
            )
        )
    if (
        based
        and (place := home_value(based["home"]))
        and plausible_home(place)
        and not re.match(r"^(?:\w+\s+)?student\b", job, re.I)
    ):
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


EN_IDENTITY_RULES: tuple[Rule, ...] = en_rules(
    (
        # --- identity: who, where, what work
        (
            "I",
            rf"^{IM}\s+(?P<age>\d{{1,3}})(?:\s*(?:years?|yrs?|y/?o)(?:\s+old)?)?(?!\s+(?:mentally|at\s+heart|inside|in\s+"
            r"spirit|in\s+\w+\s+years)\b)(?:\s+(?:now|today|already|this\s+year|going\s+on\s+\d+))?(?:\s+(?:btw|by\s+the\s+way))?"
            r"(?:(?:\s*,\s*|\s+(?:and|but|so)\s+)(?!(?:and\s+)?(?:what|how|why|who|where)\b).*|,?\s+not\s+\d{1,3}\b.*)?[\s!.]*$",
            _age,
        ),
        (
            "I",
            rf"^{IM}\s+(?:(?:also|currently|now|actually|officially|finally|still|just|technically|proudly|happily|"
            rf"newly|(?:happy|proud)\s+(?:being|to\s+be))\s+)*(?:a|an)\s+(?!(?:bit|little|lot|tad|fan|big|"
            r"huge|massive|great|fool|idiot|moron|mess|genius|liar|real|total|complete|quick|few|sec|second(?![- ]year)|"
            r"minute|moment|good|terrible|bad|awful|decent|amazing|excellent|better|best|worst|natural|born|hopeless|"
            r"lousy|fantastic|brilliant|wonderful|horrible|poor|keen|avid|proper|certified|professional|"
            r"first[- ]time|self[- ]confessed|recovering)\b)(?P<obj>[\w-].*)$",
            occupation,
        ),
        (
            "I",
            rf"^{IM}\s+(?:the\s+)?(?P<obj>(?:ceo|cto|cfo|coo|founder|co-?founder|owner|tech\s+lead|lead\s+"
            r"developer|maintainer|author|creator|director|president|vp)(?:\s+(?:at|of|for)\s+(?:(?:the\s+)?(?-i:[A-Z0-9])|"
            r"(?:a|an)\s+)[^,;]*)?)"
            r"(?:\s*[,;].*|\s+(?:and|but|so)\s+(?:i|i'm|we)\b.*)?$",
            say("identity", 8, attribute="job"),
        ),
        (
            "I",
            r"^i\s+(?:currently\s+|now\s+|also\s+|still\s+|actually\s+|really\s+)?(?:live|reside)\s+"
            # "still lives on her own in Cork"
            r"(?:(?:on\s+(?:my|her|his|their)\s+own|alone|by\s+(?:my|her|him)self)\s+(?=in\s+(?-i:[A-Z])))?(?:in|at|near|"
            r"on(?=\s+(?:the\s+)?(?-i:[A-Z]))|outside(?:\s+of)?)"
            r"\s+(?P<obj>.+)$",
            home,
        ),
        (
            "I",
            rf"^{IM}\s+(?:(?:currently|now|still|also|happily|finally)\s+)*(?:living|based|located|residing)\s+"
            r"(?:here\s+)?(?:in|at|near|out\s+of(?=\s+(?-i:[A-Z]))|outside)\s+(?P<obj>.+)$",
            home,
        ),
        # "I finally settled in Kumasi", "we're all settled in Leeds now": a move, said once it is done.
        (
            "I",
            rf"^(?:i|{IM}|i've|i\s+have)\s+(?:(?:just|finally|now|all|fully|properly|happily)\s+)*(?:got\s+)?"
            r"settled\s+in(?:to)?\s+(?=(?-i:[A-Z]))(?P<obj>.+)$",
            home,
        ),
        (
            "I",
            r"^i(?:'ve|\s+have)?\s+(?:just\s+|recently\s+|finally\s+)?(?:moved|relocated)\s+(?:back\s+)?(?:to|into(?=\s+(?-i:[A-Z]))|"
            # "just moved into a new flat in Glasgow"
            r"into(?=\s+(?:a|our|my|the)\s+(?:new\s+|little\s+|tiny\s+)?(?:flat|house|place|apartment|home|houseshare)\s+"
            r"in\s+(?-i:[A-Z])))\s+"
            r"(?P<obj>.+)$",
            home,
        ),
        (
            "I",
            rf"^(?:{IM}|i\s+come)\s+(?:originally\s+)?from\s+(?!(?:here|there|work|home|the\s+future|the\s+past|"
            r"school|now|scratch)\b)(?P<obj>.+)$",
            origin,
        ),
        (
            "I",
            r"^i\s+was\s+born\s+(?:and\s+raised\s+)?in\s+(?P<obj>.+)$",
            origin,
        ),
        ("I", r"^i\s+was\s+born\s+on\s+(?P<obj>.+)$", say("identity", 8, "birthday", attribute="birthday")),
        ("I", r"^i\s+(?:grew\s+up|was\s+(?:brought\s+up|raised))\s+in\s+(?P<obj>.+)$", origin),
        ("I", rf"^{IM}\s+born\s+(?:and\s+(?:raised|bred)\s+)?in\s+(?P<obj>.+)$", origin),
        ("I", r"^i\s+(?:currently\s+|now\s+|also\s+|still\s+)?work\s+as\s+(?P<obj>.+)$", occupation),
        (
            "I",
            r"^i\s+(?:currently\s+|now\s+|also\s+|still\s+)?work\s+(?:at|for)\s+(?P<obj>.+)$",
            _employer,
        ),
        ("I", rf"^{IM}\s+(?:currently\s+|now\s+)?(?:employed|working)\s+as\s+(?P<obj>.+)$", occupation),
        (
            "I",
            rf"^{IM}\s+(?:currently\s+|now\s+)?(?:employed|working)\s+(?:at|for)\s+(?P<obj>.+)$",
            _employer,
        ),
        (
            "I",
            r"^i(?:'ve|\s+have)\s+(?:been\s+)?(?:living|lived)\s+in\s+(?P<obj>.+?)\s+(?:for|since)\b.*$",
            home,
        ),
        ("I", r"^i\s+(?:just\s+|finally\s+)?got\s+promoted\s+to\s+(?P<obj>.+)$", _promoted),
        (
            "I",
            rf"^{IM}\s+(?:currently\s+|now\s+)?(?:doing|taking|studying\s+for|working\s+on)\s+(?:a|an|my)\s+(?:phd|"
            r"ph\.d\.?|doctorate|master'?s|masters|msc|ma|mba|bsc|ba|degree|bachelor'?s|apprenticeship|diploma|"
            r"course|certificate|training|foundation\s+year)(?:\s+degree)?\s+in\s+"
            r"(?P<obj>.+)$",
            _studies,
        ),
        (
            "I",
            rf"^{IM}\s+(?:a|an)\s+(?:phd|ph\.d\.?|master'?s|grad|graduate|undergrad|undergraduate|medical|law|"
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
            rf"^{IM}\s+(?:a\s+)?(?:huge|big|massive|heavy|serious|daily)\s+(?P<obj>[\w\s-]{{2,30}}?)\s+drinker\b.*$",
            _drinker,
        ),
        (
            "I",
            rf"^{IM}\s+(?:a|an)\s+(?:huge|big|massive|die-?hard|lifelong)\s+(?P<obj>(?-i:[A-Z])[\w\s.-]{{1,30}}?)\s+fan\b.*$",
            say("preference", 6, attribute="likes"),
        ),
        (
            "I",
            rf"^(?:i\s+(?:currently\s+)?study|{IM}\s+(?:currently\s+)?studying|{IM}\s+majoring\s+in)"
            r"\s+(?P<obj>.+)$",
            _studies,
        ),
        ("I", r"^i\s+(?:currently\s+|now\s+|also\s+)?teach\s+(?P<obj>.+)$", _teaches),
        (
            "I",
            rf"^(?:i\s+(?:currently\s+|mainly\s+|mostly\s+)?work|{IM}\s+(?:currently\s+|now\s+)?working)\s+on\s+"
            r"(?P<obj>.+)$",
            say("project_state", 6),
        ),
        (
            "I",
            r"^i\s+(?:run|own|founded|co-?founded|started)\s+(?:a|an|my\s+own)\s+(?P<obj>.+)$",
            say("identity", 7),
        ),
    )
)
