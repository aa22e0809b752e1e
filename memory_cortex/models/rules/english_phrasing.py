"""English as learners and formal writers phrase it: "I have 34 years", "I am staying in Pune since
2019", "I am working by Siemens", "I work in Itaú as data analyst", "my wife is teacher", "I am
exceedingly fond of dahlias", "I have never cared for coriander", "I take my tea with lemon", "my
physician diagnosed me with…", "I should prefer to be addressed as Dorothy". Each rule states the
same attribute its plainer English form does."""

from __future__ import annotations

import dataclasses
import re

from .english_more import PASSING_ILLNESS
from .english_places import home_value
from .english_rule_parts import article
from .english_text import plausible_allergen, plausible_home
from .english_values import (
    LANGUAGES,
    ORG_WORD,
    WORD_AGE,
    clean_value,
    drink_value,
    is_drink,
    is_occupation,
    plain_job,
)
from .english_voice import en_fact, is_content, topic_from
from .shapes import Draft, Rule, Voice, cap, en_sentence, first_words_of

_IM = r"(?:i'm|i\s+am|im)"
_PLACE = r"(?P<place>(?-i:[A-Z])[\w'.-]*(?:\s+(?-i:[A-Z])[\w'.-]*){0,2})"
_ORG = r"(?P<org>(?-i:[A-Z0-9])[\w&'.ú-]*(?:\s+(?:&\s+)?(?-i:[A-Z0-9])[\w&'.-]*){0,3})"
_SINCE = (
    r"(?:since\s+[\w\s]+?|for\s+(?:the\s+)?(?:past\s+|last\s+)?(?:\w+\s+)?(?:years?|months?|ages|a\s+while))"
)


def _home(m: re.Match[str], voice: Voice) -> Draft | None:
    home = home_value(m["place"])
    if not home or not plausible_home(home) or home.endswith("'s"):
        return None  # "staying at Mum's": a visit
    return Draft(en_sentence(f"{voice.title} lives in {home}"), "home", "identity", 8).stating("home", home)


def _age(m: re.Match[str], voice: Voice) -> Draft | None:
    age = " ".join((m.groupdict().get("age") or m["age2"]).lower().split())
    return Draft(en_sentence(f"{voice.title} is {age} years old"), "age", "identity", 8).stating("age", age)


def _job_draft(job: str | None, voice: Voice) -> Draft | None:
    job = clean_value(job) if job else None
    if not job or not is_occupation(job):
        return None
    return Draft(
        en_sentence(f"{voice.title} works as {article(job)}"), topic_from(job, "job"), "identity", 8
    ).stating("job", job)


def _works_at(m: re.Match[str], voice: Voice) -> Draft | None:
    """An employer, and the job when one is said: "I'm working with MTN as a network engineer", "I work
    like programmer in Comarch", "I am working by Siemens since 2015". Without a job or a time said,
    only an organisation by name ("Access Bank", "KPMG") is taken: "working with Sarah" names no employer."""
    org = clean_value(m["org"], keep_article=True)
    if not org or org.split()[0].lower() in _NOT_ORGS:
        return None
    job = _job_draft(m.groupdict().get("job"), voice)
    if m.groupdict().get("job") and job is None:
        return None
    if m["prep"].lower() == "in" and not ORG_WORD.search(org) and not m.groupdict().get("doing"):
        return job  # "I work in Leeds as a nurse": a town as often as an employer
    said = m.groupdict().get("since") or m.groupdict().get("doing")
    if job is None and not said and not ORG_WORD.search(org):
        return None
    employer = Draft(en_sentence(f"{voice.title} works at {org}"), "employer", "identity", 8).stating(
        "employer", org
    )
    return dataclasses.replace(employer, also=(job,)) if job else employer


# "shifted to Bangalore" is a move; "shifted to React" is not.
_NOT_PLACES = (
    r"(?:python|java|javascript|typescript|react|rust|go|golang|linux|windows|mac|macos|ios|android|aws|azure|gcp|"
    r"kubernetes|docker|excel|notion|slack|teams|zoom|english|spanish|french|german)"
)
_NOT_ORGS = frozenset("home work night nights weekends my the this that it them him her".split())


def _bare_job(m: re.Match[str], voice: Voice) -> Draft | None:
    """ "My wife is teacher of English", "I am programmer": a job said without its article."""
    job = clean_value(m["job"])
    if not job or not plain_job(job) or not is_occupation(job):
        return None
    if job.lower().split()[-1] in ("lead", "head", "student", "students"):
        return None
    return Draft(en_fact(m.string, voice), topic_from(job, "job"), "identity", 8).stating("job", job)


def _likes(m: re.Match[str], voice: Voice) -> Draft | None:
    thing = clean_value(m["obj"])
    if not thing or not is_content(thing):
        return None
    return Draft(en_fact(m.string, voice), topic_from(thing, "likes"), "preference", 6).stating(
        "likes", thing
    )


def _dislikes(m: re.Match[str], voice: Voice) -> Draft | None:
    thing = clean_value(m["obj"])
    if not thing or not is_content(thing):
        return None
    return Draft(en_fact(m.string, voice), topic_from(thing, "dislikes"), "preference", 6).stating(
        "dislikes", thing
    )


def _drink(m: re.Match[str], voice: Voice) -> Draft | None:
    drink = drink_value(m["obj"])
    if not drink or not is_drink(drink):
        return None
    return Draft(
        en_sentence(f"{voice.title} usually drinks {drink}"), "usual drink", "preference", 6
    ).stating("drink", drink)


def _allergy(m: re.Match[str], voice: Voice) -> Draft | None:
    allergen = clean_value(m["obj"])
    if not allergen or not plausible_allergen(allergen) or not is_content(allergen):
        return None
    return Draft(en_sentence(f"{voice.title} is allergic to {allergen}"), "allergy", "identity", 9).stating(
        "allergy", allergen
    )


def _health(m: re.Match[str], voice: Voice) -> Draft | None:
    condition = clean_value(m["obj"])
    if not condition:
        return None
    return Draft(en_sentence(f"{voice.title} has {condition}"), "health", "identity", 8).stating(
        "health", condition
    )


def _birthday(m: re.Match[str], voice: Voice) -> Draft | None:
    date = " ".join(m["obj"].split())
    return Draft(
        en_sentence(f"{voice.possessive.capitalize()} birthday is {date}"), "birthday", "identity", 8
    ).stating("birthday", date)


def _diagnosed(m: re.Match[str], voice: Voice) -> Draft | None:
    """ "My physician diagnosed me with atrial fibrillation": a lasting condition (not "a cold")."""
    condition = clean_value(m["obj"])
    if not condition or PASSING_ILLNESS.match(condition) or not is_content(condition):
        return None
    return Draft(en_sentence(f"{voice.title} has {condition}"), "health", "identity", 8).stating(
        "health", condition
    )


def _called(m: re.Match[str], voice: Voice) -> Draft | None:
    return Draft(f"{voice.title} wants to be called {m['name']}.", "preferred name", "identity", 9).stating(
        "name", m["name"]
    )


def _language(m: re.Match[str], voice: Voice) -> Draft | None:
    language = m["lang"]
    if language.lower() not in LANGUAGES:
        return None
    fact = en_sentence(f"{voice.title} wants answers in {cap(language)}")
    return Draft(fact, "answer language", "preference", 8).stating("language", cap(language))


def _studies(m: re.Match[str], voice: Voice) -> Draft | None:
    field = clean_value(m["obj"])
    if not field or not is_content(field):
        return None
    return Draft(en_fact(m.string, voice), topic_from(field, "studies"), "identity", 7).stating(
        "studies", field
    )


def _team_at(m: re.Match[str], voice: Voice) -> Draft | None:
    """ "I lead the platform team at Shopify": where they work."""
    org = clean_value(m["org"], keep_article=True)
    if not org:
        return None
    return Draft(en_fact(m.string, voice), "employer", "identity", 8).stating("employer", org)


_JOB = r"(?P<job>[\w-]+(?:\s+[\w-]+){0,3}?)"
_DEGREE = (
    r"(?:phd|ph\.d\.?|doctorate|master'?s|masters|msc|ma|mba|bsc|ba|btech|b\.tech|mtech|be|llb|llm|bcom|mbbs|bba|"
    r"degree|bachelor'?s|diploma|hnd|pgce|a[- ]levels|gcses)"
)
_DIET_FOLLOWS = r"(?:\s*[,;].*|\s+(?:and|but|so|because)\b.*)?$"

EN_PHRASING_RULES: tuple[Rule, ...] = tuple(
    Rule(re.compile(pattern, re.IGNORECASE), handler, first_words_of(starts))
    for starts, pattern, handler in (
        # --- where they live
        (
            "I",
            rf"^i\s+(?:currently\s+|now\s+)?stay\s+(?:at|in)\s+{_PLACE}(?:\s+(?:since|for|now|with|but|and)\b.*|\s*[,;].*)?$",
            _home,
        ),
        (
            "I",
            rf"^{_IM}\s+(?:currently\s+|presently\s+|now\s+)?staying\s+(?:at|in)\s+{_PLACE}"
            rf"(?:\s+only)?\s+(?:{_SINCE}|now|permanently|these\s+days)\b.*$",
            _home,
        ),
        (
            "I",
            rf"^i(?:'ve|\s+have)?\s+(?:just\s+|recently\s+|finally\s+)?shifted\s+(?:back\s+)?to\s+(?!{_NOT_PLACES}\b){_PLACE}"
            r"(?:[\s!.]*$|\s*[,;].*$|\s+(?:last|this|in|since|recently|only|now|with|for|from|and|but|so)\b.*$)",
            _home,
        ),
        # --- age
        (
            "I",
            r"^i\s+have\s+(?P<age>\d{1,3})\s+years(?:\s+old)?(?:[\s!.]*$|\s*[,;].*$|\s+(?:and|but|so)\b.*$)",
            _age,
        ),
        (
            "I",
            rf"^{_IM}\s+(?:(?P<age>{WORD_AGE})\s+years\s+old|(?P<age2>{WORD_AGE}|\d{{1,3}})\s+years\s+of\s+age)"
            r"(?!\s+(?:mentally|at\s+heart|inside|in\s+spirit)\b)(?:[\s!.]*$|\s*[,;].*$|\s+(?:and|but|so)\b.*$)",
            _age,
        ),
        (
            "I",
            rf"^{_IM}\s+(?:now\s+)?(?P<age>(?=[a-z]+(?:teen|ty|ven|lve)\b){WORD_AGE})(?:\s+now)?[\s!.]*$",
            _age,
        ),
        # --- work
        (
            "I",
            rf"^(?:i\s+(?:currently\s+|now\s+)?work|{_IM}\s+(?:currently\s+|now\s+)?working|{_IM}\s+doing\s+(?:a\s+)?job)"
            rf"\s+(?P<prep>with|by|in|at|for)\s+(?:the\s+)?{_ORG}(?P<since>\s+{_SINCE})?\s+as\s+(?:a\s+|an\s+)?{_JOB}"
            r"(?:\s*[,;.].*|\s+(?:since|for|and|but|so|now)\b.*)?$",
            _works_at,
        ),
        (
            "I",
            rf"^(?:i\s+(?:currently\s+|now\s+)?work|{_IM}\s+(?:currently\s+|now\s+)?working)\s+(?:as|like)\s+(?:a\s+|an\s+)?"
            rf"{_JOB}\s+(?P<prep>in|at|with|by|for)\s+(?:the\s+)?{_ORG}(?:\s*[,;.].*|\s+(?:since|for|and|but|so|now)\b.*)?$",
            _works_at,
        ),
        (
            "I",
            rf"^(?:i\s+(?:currently\s+|now\s+)?work|{_IM}\s+(?:currently\s+|now\s+)?working|{_IM}\s+(?P<doing>doing\s+(?:a\s+)?job))"
            rf"\s+(?P<prep>with|by|in|at|for)\s+(?:the\s+)?{_ORG}(?:(?P<since>\s+{_SINCE})|\s+now)?(?:\s*[,;.].*|\s+(?:and|but|so)\b.*)?$",
            _works_at,
        ),
        (
            "I working",
            rf"^(?:{_IM}\s+)?(?:now\s+)?working\s+(?P<prep>with|at|for)\s+(?:the\s+)?{_ORG}\s+now[\s!.]*$",
            _works_at,
        ),
        (
            "I",
            r"^i\s+(?:lead|manage|run|head(?:\s+up)?|am\s+on|'m\s+on|work\s+in|work\s+on)\s+(?:the|a|an)\s+[\w\s-]{2,40}?\s+"
            rf"(?:team|department|division|squad|group|unit)\s+(?:at|for|in)\s+{_ORG}(?:\s*[,;.].*|\s+(?:since|and|but)\b.*)?$",
            _team_at,
        ),
        (
            "I",
            rf"^{_IM}\s+(?!(?:a|an|the|not|no|so|very|really|just|also|still|now|always|never|on|in|at|off|going|"
            rf"feeling|getting|being|done|over|back|home|here|there|out|up|down)\b)(?P<job>[\w-]+(?:\s+[\w-]+){{0,2}}?)"
            r"(?:\s+(?:of|at|in|for|with)\s+.*|\s*[,;].*)?$",
            _bare_job,
        ),
        # --- likes and dislikes
        (
            "I",
            rf"^{_IM}\s+(?:very\s+|so\s+|really\s+|quite\s+|rather\s+|exceedingly\s+|extremely\s+|terribly\s+|awfully\s+|"
            r"particularly\s+|especially\s+|ever\s+so\s+)?fond\s+of\s+(?P<obj>.+?)(?:\s+and\s+(?:i\b|grow|have|love)\b.*)?$",
            _likes,
        ),
        (
            "I",
            rf"^{_IM}\s+(?:a|an)\s+(?:great|huge|big|keen|devoted|lifelong|passionate)\s+(?:admirer|lover)\s+of\s+"
            r"(?P<obj>.+?)(?:\s+and\s+(?:i\b|attend|go|have|love)\b.*)?$",
            _likes,
        ),
        (
            "I",
            r"^i(?:'ve|\s+have)?\s+never\s+(?:really\s+)?(?:cared\s+for|been\s+(?:partial\s+to|fond\s+of|keen\s+on|a\s+fan\s+of))\s+"
            r"(?P<obj>.+)$",
            _dislikes,
        ),
        (
            "I",
            rf"^{_IM}\s+not\s+(?:at\s+all\s+|very\s+|terribly\s+|particularly\s+)?(?:partial\s+to|fond\s+of|keen\s+on)\s+(?P<obj>.+)$",
            _dislikes,
        ),
        # --- drink
        (
            "I",
            r"^i\s+(?:usually\s+|always\s+|only\s+|mostly\s+)?take\s+(?:only\s+|my\s+)?(?P<obj>[\w\s-]+?)(?:\s+(?:with|every|each|in|"
            r"at|first|morning|in\s+the)\b.*|\s*[,;].*)?$",
            _drink,
        ),
        # --- health and allergies
        (
            "I",
            rf"^(?:i\s+have|i've\s+got|{_IM}\s+having)\s+(?:an?\s+)?allerg(?:y|ies)\s+(?:on|for|from|with|against)\s+(?P<obj>.+)$",
            _allergy,
        ),
        (
            None,
            r"^(?P<obj>(?!(?:i|my|it|that|this|the)\b)[\w-]+(?:\s+[\w-]+)?)\s*[-–—:,]\s*(?:severely\s+|very\s+)?anaphyla(?:ctic|xis)\b.*$",
            _allergy,
        ),
        (
            "I",
            rf"^{_IM}\s+having\s+(?P<obj>sugar|diabetes|bp|high\s+bp|thyroid|asthma|migraines?)\s+(?:{_SINCE}|problem)\b.*$",
            _health,
        ),
        (
            "my the",
            r"^(?:my|the|a)\s+(?:doctor|physician|gp|consultant|specialist|neurologist|cardiologist|dermatologist|"
            r"paediatrician|pediatrician|psychiatrist)\s+(?:has\s+|just\s+|finally\s+|officially\s+)*diagnosed\s+me\s+"
            r"with\s+(?P<obj>.+)$",
            _diagnosed,
        ),
        # --- names
        (
            "I",
            r"^(?:i'd|i\s+would|i\s+should|i'd\s+much|i\s+would\s+much)\s+(?:prefer|like|rather)\s+(?:to\s+)?be\s+(?:called|"
            r"addressed\s+as|known\s+as)\s+(?P<name>(?-i:[A-Z])[\w'-]+)\b.*$",
            _called,
        ),
        # --- the answer language
        (
            "please keep",
            r"^(?:please\s+)?keep\s+(?:the\s+|your\s+|all\s+)?(?:replies|answers|responses)\s+in\s+(?P<lang>[a-z]+)\b(?:\s*[,;].*|\s+please)?$",
            _language,
        ),
        (
            "please switch can let's",
            r"^(?:please\s+|can\s+you\s+|could\s+you\s+|let's\s+)?switch\s+(?:back\s+)?to\s+(?P<lang>[a-z]+)\s+(?:from\s+now\s+on|"
            r"going\s+forward|for\s+now\s+on|henceforth|please)\b.*$",
            _language,
        ),
        (
            "my",
            r"^my\s+(?:birthday|bday)\s+(?:falls|is)\s+on\s+(?P<obj>(?:the\s+)?\d{1,2}(?:st|nd|rd|th)?\s+(?:of\s+)?"
            r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*|(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)"
            r"[a-z]*\s+\d{1,2}(?:st|nd|rd|th)?)\b.*$",
            _birthday,
        ),
        (
            "I",
            rf"^{_IM}\s+(?:now\s+)?(?P<prep>at)\s+(?:the\s+)?{_ORG}\s+as\s+(?:a|an)\s+{_JOB}(?:\s*[,;.].*|\s+(?:now|since|and|but)\b.*)?$",
            _works_at,
        ),
        (
            "I",
            rf"^{_IM}\s+(?:absolutely\s+|totally\s+|completely\s+)?(?:mad|crazy|nuts|wild)\s+(?:about|for)\s+(?P<obj>.+)$",
            _likes,
        ),
        # --- studies
        (
            "I",
            rf"^{_IM}\s+(?:currently\s+)?(?:doing|taking|studying\s+for|working\s+on)\s+(?:a\s+|an\s+|my\s+)?(?:part[- ]time\s+|"
            rf"full[- ]time\s+|online\s+|distance\s+)?(?P<obj>{_DEGREE})\b(?!\s+in\b)(?:\s+(?:at|with|alongside|from|starting|"
            r"next|this|in\s+(?:september|january|the\s+autumn|the\s+fall))\b.*|\s*[,;].*)?$",
            _studies,
        ),
        (
            "I",
            rf"^{_IM}\s+(?:currently\s+)?(?:doing|taking|studying)\s+(?:a\s+|an\s+|my\s+)?(?:part[- ]time\s+|full[- ]time\s+)?"
            rf"{_DEGREE}\s+in\s+(?P<obj>.+)$",
            _studies,
        ),
        (
            "I",
            rf"^{_IM}\s+(?:in|at)\s+{_ORG}\s+(?:reading|studying|doing)\s+(?P<obj>[\w\s]{{2,30}}?)(?:\s*[,;.].*)?$",
            _studies,
        ),
    )
)
