"""English statements said the indirect way chat says them: "been at Deloitte for three years",
"home is Dublin these days", "I'm Lagos-based", "Glaswegian born and bred", "I'm at Unilever, in
marketing", "tea, always tea", "I eat halal", "obsessed with Formula 1", "I'm the head chef at
Nonna's"."""

from __future__ import annotations

import dataclasses
import re

from .english_text import NOT_ORGS, is_name, plausible_allergen, plausible_home
from .english_values import DIETS, LANGUAGES, NATIONALITIES, clean_value, is_drink, is_occupation
from .english_voice import en_fact, is_content, topic_from
from .shapes import About, Draft, Rule, Voice, en_sentence, first_words_of

_IM = r"(?:i'm|i\s+am|im)"
_ADV = r"(?:(?:just|also|still|now|currently|finally|officially|actually|really|proudly|happily|technically)\s+)*"
_ORG = r"(?P<org>(?-i:[A-Z0-9])[\w&'.-]*(?:\s+(?:&\s+)?(?-i:[A-Z0-9])[\w&'.-]*){0,3})"
_DURATION = (
    r"(?:(?:for\s+)?(?:about\s+|almost\s+|nearly\s+|over\s+|like\s+)?(?:\d+|a|an|one|two|three|four|five|six|seven|"
    r"eight|nine|ten|eleven|twelve|fifteen|twenty|a\s+few|a\s+couple(?:\s+of)?|several)\s+(?:years?|yrs?|months?)|"
    r"since\s+\S+)"
)
_DEPARTMENTS = frozenset(
    """marketing sales finance hr it legal compliance operations ops logistics engineering product design research
    admin accounts accounting audit tax consulting recruitment procurement communications comms pr security
    data analytics strategy insurance banking retail hospitality healthcare education publishing construction
    tech software media advertising pharma teaching nursing journalism fashion events transport manufacturing
    energy payroll quality qa testing support""".split()
)
_DEMONYMS = (
    frozenset(
        """brummie scouser geordie mancunian londoner glaswegian dubliner parisian texan californian aussie kiwi
    yorkshireman yorkshirewoman cockney bostonian chicagoan torontonian melburnian sydneysider lagosian
    floridian new yorker jerseyite liverpudlian edinburgher corkonian""".split()
    )
    | NATIONALITIES
)
NAME = r"(?-i:(?:(?:Mrs?|Ms|Dr)\.?\s+)?[A-Z][\w'.-]*(?:\s+[A-Z][\w'.-]*)?)"
_PLACE = r"(?P<place>(?-i:[A-Z])[\w'.-]*(?:\s+(?-i:[A-Z])[\w'.-]*){0,2})"
# "a Lagos babe", "Melbourne girl through and through" (a "girl" or "boy" alone may be a brand's: "a Disney girl")
_PLACE_PERSON = (
    r"(?:(?:girl|boy)(?=\s+(?:through\s+and\s+through|born\s+and\s+(?:bred|raised)|at\s+heart))|babe|lad|lass|gal|native|"
    r"born\s+and\s+(?:bred|raised))"
)


def _employer_draft(org: str | None, voice: Voice, fact: str | None = None) -> Draft | None:
    employer = clean_value(org, keep_article=True) if org else None
    if not employer or not re.match(r"[A-Z0-9]|the\s+[A-Z]|[a-z][\w&'.-]*$", employer):
        return None
    if employer.lower() in NOT_ORGS or employer.split()[0].lower() in NOT_ORGS:
        return None
    text = fact or en_sentence(f"{voice.title} works at {employer}")
    return Draft(text, "employer", "identity", 8).stating("employer", employer)


def _with_job(draft: Draft | None, job: str | None, voice: Voice) -> Draft | None:
    job = clean_value(job) if job else None
    if draft is None or not job or not (is_occupation(job) or job.lower() in _DEPARTMENTS):
        return draft
    extra = Draft(en_sentence(f"{voice.title} works as {_article(job)}"), "job", "identity", 8).stating(
        "job", job
    )
    return dataclasses.replace(draft, also=(*draft.also, extra))


def _article(job: str) -> str:
    return ("an " if job[:1].lower() in "aeiou" else "a ") + job


def _been_at(m: re.Match[str], voice: Voice) -> Draft | None:
    """'I've been at Deloitte for three years', 'been with Infosys since I graduated'."""
    draft = _employer_draft(m["org"], voice, en_fact(m.string, voice))
    return _with_job(draft, m.groupdict().get("job"), voice)


def _at_org(m: re.Match[str], voice: Voice) -> Draft | None:
    """'I'm at Unilever, in marketing', 'I'm at a tiny startup called Verdana now', 'working in TCS as a
    business analyst', 'I work for Shell as a process engineer'."""
    draft = _employer_draft(m["org"], voice, en_fact(m.string, voice))
    dept = (m.groupdict().get("dept") or "").strip()
    if draft is not None and dept.lower() in _DEPARTMENTS:
        job = Draft(en_sentence(f"{voice.title} works in {dept}"), "job", "identity", 7).stating("job", dept)
        draft = dataclasses.replace(draft, also=(*draft.also, job))
    return _with_job(draft, m.groupdict().get("job"), voice)


def _works_in(m: re.Match[str], voice: Voice) -> Draft | None:
    """'I work in HR': a line of work; 'I work in TCS': an employer (an acronym, not a department)."""
    what = clean_value(m["what"]) or ""
    if what.lower() in _DEPARTMENTS:
        return Draft(en_fact(m.string, voice), "job", "identity", 7).stating("job", what)
    if re.fullmatch(r"(?-i:[A-Z]{2,6})", what):
        return _with_job(
            _employer_draft(what, voice, en_fact(m.string, voice)), m.groupdict().get("job"), voice
        )
    return None


def _the_job_at(m: re.Match[str], voice: Voice) -> Draft | None:
    """'I'm the head chef at Nonna's'."""
    job = clean_value(m["job"])
    if not job or not is_occupation(job):
        return None
    draft = Draft(en_fact(m.string, voice), topic_from(job, "job"), "identity", 8).stating("job", job)
    employer = _employer_draft(m["org"], voice) if m["org"] else None
    return dataclasses.replace(draft, also=(employer,)) if employer else draft


def _by_trade(m: re.Match[str], voice: Voice) -> Draft | None:
    job = clean_value(m["job"])
    if not job or not is_occupation(job):
        return None
    return Draft(en_sentence(f"{voice.title} is {_article(job)} by trade"), "job", "identity", 8).stating(
        "job", job
    )


def _home(m: re.Match[str], voice: Voice) -> Draft | None:
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
    return clean_value(_HOME_TAIL.sub("", value)) or None


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
    if who.lower() not in _DEMONYMS or re.search(r"\b(?:now|these\s+days)\b", m.string, re.IGNORECASE):
        return None
    draft = Draft(en_sentence(f"{voice.title} is {_article(who)}"), "origin", "identity", 8).stating(
        "origin", who
    )
    home = home_value(m.groupdict().get("home"))
    if home and plausible_home(home):
        extra = Draft(en_sentence(f"{voice.title} lives in {home}"), "home", "identity", 8).stating(
            "home", home
        )
        draft = dataclasses.replace(draft, also=(extra,))
    return draft


def _diet(m: re.Match[str], voice: Voice) -> Draft | None:
    diet = clean_value(m["diet"])
    if not diet or not DIETS.match(diet):
        return None
    return Draft(en_fact(m.string, voice), "diet", "identity", 8).stating("diet", diet)


def _habit_drink(m: re.Match[str], voice: Voice) -> Draft | None:
    """'black coffee, no sugar, every single morning', 'tea, always tea', "it's sparkling water for me now"."""
    drink = clean_value(m["obj"])
    if not drink or not is_drink(drink) or len(drink.split()) > 4:
        if drink and DIETS.match(drink) and m.groupdict().get("diet_ok"):
            return Draft(en_sentence(f"{voice.title} eats {drink}"), "diet", "identity", 8).stating(
                "diet", drink
            )
        return None
    return Draft(
        en_sentence(f"{voice.title} usually drinks {drink}"), "usual drink", "preference", 6
    ).stating("drink", drink)


def _likes(m: re.Match[str], voice: Voice) -> Draft | None:
    thing = clean_value(re.sub(r"\s+me$", "", m["obj"].strip(), flags=re.IGNORECASE))
    if not thing or not is_content(thing) or _NOT_A_LIKE.match(thing):
        return None
    return Draft(en_fact(m.string, voice), topic_from(thing, "likes"), "preference", 6).stating(
        "likes", thing
    )


_NOT_A_LIKE = re.compile(
    r"^(?:when|whenever|if|how|why|where|who|you|u|ya|him|her|them|us|me|myself|it|this|that|life|everyone|"
    r"everything|the\s+(?:way|idea|fact|thought|new|sound|smell|look|vibe|feeling))\b",
    re.IGNORECASE,
)


def _boss(m: re.Match[str], voice: Voice) -> Draft | None:
    """'my oga at work na Mr Okon', 'my boss at work is Paul'."""
    name = m["name"]
    if not is_name(name):
        return None
    return Draft(
        en_sentence(f"{voice.possessive.capitalize()} manager is {name}"), "manager", "relationship", 7
    ).stating("manager", name)


FIELDS = (
    r"(?:medicine|medical|law|nursing|engineering|physics|chemistry|biology|maths|mathematics|history|english|economics|psychology|"
    r"computer\s+science|architecture|dentistry|pharmacy|philosophy|sociology|politics|geography|art|music|drama|business|"
    r"accounting|finance|marketing|veterinary\s+medicine|vet\s+med|midwifery|physiotherapy|french|spanish|german|"
    r"classics|theology|linguistics|journalism|film|fashion|design|biochemistry|neuroscience|statistics|data\s+science)"
)


def _field(m: re.Match[str], voice: Voice) -> Draft | None:
    field = m["obj"].lower()
    return Draft(en_sentence(f"{voice.title} studies {field}"), "studies", "identity", 7).stating(
        "studies", field
    )


def _all_about(m: re.Match[str], voice: Voice) -> Draft | None:
    """ "I'm all about green tea": a usual drink, or something they like."""
    thing = clean_value(m["obj"])
    if thing and is_drink(thing) and len(thing.split()) <= 4:
        return Draft(
            en_sentence(f"{voice.title} usually drinks {thing}"), "usual drink", "preference", 6
        ).stating("drink", thing)
    return _likes(m, voice)


PASSING_ILLNESS = re.compile(
    r"^(?:covid|flu|the\s+flu|a\s+cold|cold|an?\s+(?:\w+\s+)?infection|infection|pneumonia|a\s+virus|a\s+sprain|"
    r"an?\s+(?:sprained|broken|fractured|twisted|pulled|torn)|sprained|broken|fractured|"
    r"a\s+fracture|tonsillitis|bronchitis|strep|a\s+broken|an?\s+ear|food\s+poisoning|concussion)\b",
    re.IGNORECASE,
)


def _diagnosed(m: re.Match[str], voice: Voice) -> Draft | None:
    """ "diagnosed with type 2 diabetes last year": a lasting condition (not "covid", "a cold")."""
    condition = clean_value(m["obj"])
    if not condition or PASSING_ILLNESS.match(condition) or not is_content(condition):
        return None
    return Draft(en_fact(m.string, voice), "health", "identity", 8).stating("health", condition)


def _fluent(m: re.Match[str], voice: Voice) -> Draft | None:
    if not any(w.lower() in LANGUAGES for w in re.findall(r"[^\W\d_]+", m["obj"])):
        return None  # "fluent in sarcasm": a joke; "fluent in Excel": a skill, read by the skill rule
    return speaks(m, voice)


def _works_as(m: re.Match[str], voice: Voice) -> Draft | None:
    """ "my mum works at the hospital as a nurse": a job, at no organisation named."""
    job = clean_value(m["job"])
    if not job or not is_occupation(job):
        return None
    return Draft(en_fact(m.string, voice), topic_from(job, "job"), "identity", 8).stating("job", job)


def _name(m: re.Match[str], voice: Voice) -> Draft | None:
    name = m["name"]
    if not is_name(name) or name.lower() in _DEMONYMS:
        return None
    return Draft(f"{voice.title} is {name}.", "identity", "identity", 8).stating("name", name)


def _origin(m: re.Match[str], voice: Voice) -> Draft | None:
    place = clean_value(m["place"])
    if not place or not is_name(place):
        return None
    return Draft(en_sentence(f"{voice.title} is from {place}"), "origin", "identity", 8).stating(
        "origin", place
    )


def _speaks_sign(m: re.Match[str], voice: Voice) -> Draft | None:
    lang = m["lang"]
    return Draft(en_sentence(f"{voice.title} signs {lang}"), "languages", "skill", 7).stating("speaks", lang)


def _plan_for(m: re.Match[str], voice: Voice) -> Draft | None:
    """ "it's Tuesday not Monday for the dentist": when a plan is."""
    plan = " ".join(m["plan"].lower().split())
    date = clean_value(m["date"], keep_article=True)
    if not date:
        return None
    return Draft(
        en_sentence(f"The {plan} is on {date}"),
        plan,
        "project_state",
        7,
        about=About(plan, None, "plan", of=voice.person),
    ).stating("date", date)


_WEEKDAY_OR_DATE = (
    r"(?:(?:mon|tues|wednes|thurs|fri|satur|sun)day|the\s+\d{1,2}(?:st|nd|rd|th)|\d{1,2}(?:st|nd|rd|th)?\s+(?:jan|feb|mar|apr|"
    r"may|jun|jul|aug|sep|oct|nov|dec)\w*|(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)\w*\s+\d{1,2}(?:st|nd|rd|th)?)"
)

EN_MORE_RULES: tuple[Rule, ...] = tuple(
    Rule(re.compile(pattern, re.IGNORECASE), handler, first_words_of(starts))
    for starts, pattern, handler in (
        # --- where they work, said the indirect way
        (
            "I",
            rf"^i(?:'ve|\s+have)\s+(?:been\s+)?(?:at|(?:working|worked|employed)\s+(?:at|for|with))\s+"
            rf"(?P<org>(?!(?:home|work|uni|university|college|school|it|this|the\s+(?-i:[a-z]))\b)[\w&'.-]+"
            rf"(?:\s+(?-i:[A-Z&])[\w&'.-]*){{0,3}})\s+{_DURATION}\b.*$",
            _been_at,
        ),
        (
            "I",
            rf"^i(?:'ve|\s+have)\s+been\s+with\s+{_ORG}\s+since\s+(?:\d{{4}}|i\s+graduated|graduating|uni|university|"
            r"college|school|i\s+left)\b(?:\s*[,;]\s*(?:doing|as|in)\s+(?:a\s+|an\s+)?(?P<job>[\w\s-]{2,30}?)"
            r"(?:\s+mostly|\s+mainly)?)?(?:\s*[,;].*)?$",
            _been_at,
        ),
        (
            "since",
            rf"^since\s+(?:\d{{4}}|uni|university|college|i\s+graduated)\s*,?\s+(?:at|with)\s+{_ORG}(?:\s*[,;].*)?$",
            _been_at,
        ),
        (
            "I",
            rf"^{_IM}\s+(?:now\s+)?(?:at|with)\s+{_ORG}\s*,\s*in\s+(?P<dept>[a-z][\w&-]*(?:\s+[a-z][\w&-]*)?)"
            r"(?:\s*[,;].*)?$",
            _at_org,
        ),
        (
            "I",
            rf"^{_IM}\s+(?:now\s+)?(?:at|with)\s+(?:a|an)\s+(?:[\w-]+\s+){{0,4}}?(?:startup|start-up|company|firm|"
            rf"agency|charity|bank|studio|consultancy|school|hospital|business)\s+(?:called|named)\s+{_ORG}.*$",
            _at_org,
        ),
        (
            "I",
            rf"^(?:{_IM}\s+(?:currently\s+)?working|i\s+(?:currently\s+)?work)\s+(?:nights\s+|days\s+|shifts\s+|"
            rf"weekends\s+)?(?:at|for)\s+(?:the\s+)?{_ORG}(?:\s+(?:warehouse|store|shop|branch|office|factory|"
            rf"depot|site|plant))?(?:\s+(?:since|for)\s+[\w\s]+?)?\s+as\s+(?:(?:a|an|the)\s+)?(?P<job>[\w\s-]{{2,40}}?)"
            r"(?:\s*[,;.].*|\s+(?:since|for|and|but|so)\b.*)?$",
            _at_org,
        ),
        (
            "I",
            rf"^(?:i\s+(?:currently\s+)?work|{_IM}\s+(?:currently\s+)?working)\s+in\s+(?P<what>[\w&]+)(?:\s+(?:since|for)\s+\S+)?(?:\s+as\s+(?:a|an)\s+(?P<job>[\w\s-]{{2,40}}))?(?:\s*[,;].*)?$",
            _works_in,
        ),
        (
            "I",
            rf"^{_IM}\s+{_ADV}the\s+(?P<job>[\w\s-]{{2,30}}?)\s+(?:at|for|of)\s+(?:{_ORG}|(?:a|an)\s+[a-z][\w\s-]*?)"
            r"(?:\s*[,;].*|\s+(?:and|but|so|since)\b.*)?$",
            _the_job_at,
        ),
        (
            None,
            rf"^(?:{_IM}\s+(?:a|an)\s+)?(?P<job>[\w-]+(?:\s+[\w-]+)?)\s+by\s+(?:trade|profession)\b.*$",
            _by_trade,
        ),
        # --- where they live, where they are from
        (
            "home home's",
            rf"^home(?:\s+is|'s)\s+(?:now\s+)?{_PLACE}(?:\s+(?:these\s+days|now|nowadays))?(?:\s*[,;].*)?$",
            _home,
        ),
        (None, rf"^{_PLACE}\s+is\s+(?:my\s+)?home\s+(?:now|these\s+days|nowadays)\b.*$", _home),
        (None, rf"^(?:{_IM}\s+)?{_PLACE}-based\b.*$", _based),
        (
            "I",
            rf"^i\s+(?:dey|dey\s+for|stay|stay\s+in|(?:am|'m)\s+(?:presently|currently)\s+staying\s+in)\s+{_PLACE}\b.*$",
            _home,
        ),
        (None, rf"^(?:{_IM}\s+)?(?:presently|currently)\s+staying\s+in\s+{_PLACE}\b.*$", _home),
        (
            "I",
            r"^i(?:'ve|\s+have)\s+(?:been\s+)?(?:living|lived|been)\s+in\s+(?P<place>(?-i:[A-Z])[\w'.-]*(?:\s+(?-i:[A-Z])"
            r"[\w'.-]*){0,2})\s+(?:(?:for\s+)?(?:about\s+|almost\s+|nearly\s+|over\s+)?(?:\d+|a|an|one|two|three|four|five|"
            r"six|seven|eight|nine|ten|a\s+few|a\s+couple(?:\s+of)?|several)\s+(?:years?|yrs?|months?)|since|for\s+(?:ages|"
            r"years|a\s+while|a\s+long\s+time|donkey's\s+years|most\s+of\s+my\s+life|my\s+whole\s+life))\b.*$",
            _home,
        ),
        (
            None,
            rf"^(?:(?:{_IM}|we're|we\s+are)\s+)?(?P<place>(?-i:[A-Z])[\w'.-]*(?:\s+(?-i:[A-Z])[\w'.-]*)?)\s+"
            r"(?P<people>people|folk|residents|locals)\s+now\b.*$",
            _place_person,
        ),
        (
            None,
            rf"^(?:{_IM}\s+(?:originally\s+)?(?:a|an)\s+)?(?P<place>(?-i:[A-Z])[\w'.-]*(?:\s+(?-i:[A-Z])[\w'.-]*)?)\s+"
            rf"{_PLACE_PERSON}(?:\s+(?:through\s+and\s+through|born\s+and\s+bred|at\s+heart))?(?P<now>\s+(?:now|these\s+days|"
            r"nowadays))?\b.*$",
            _place_person,
        ),
        (
            None,
            # "I'm originally a Brummie", "I'm a Kiwi living in Melbourne"; said alone, only with "born and bred"
            rf"^(?:(?:{_IM}\s+(?:originally\s+)?(?:a|an)\s+)(?P<who>(?-i:[A-Z])[\w-]+(?:\s+(?-i:[A-Z])[\w-]+)?)"
            rf"(?:\s+(?:born\s+and\s+(?:bred|raised)|through\s+and\s+through)|(?=\s+living\s+in\s+)|(?=\s*(?:,|\s+but\b|$)))|"
            rf"(?P<alone>(?-i:[A-Z])[\w-]+)\s+(?:born\s+and\s+(?:bred|raised)|through\s+and\s+through))"
            rf"(?:\s+living\s+in\s+(?P<home>.+))?.*$",
            _demonym,
        ),
        ("my", rf"^my\s+native(?:\s+(?:place|town|city|village|state))?\s+(?:is|was)\s+{_PLACE}.*$", _origin),
        (
            "myself",
            r"^myself\s+(?P<name>(?-i:[A-Z])[\w'-]+(?:\s+(?-i:[A-Z])[\w'-]+)?)(?:\s*[,;].*|\s+(?:and|from|here)\b.*)?$",
            _name,
        ),
        # --- diet and drink
        (
            "I",
            r"^i(?:'ve|\s+have)\s+(?:been|gone)\s+(?:a\s+|an\s+|fully\s+|strictly\s+)?(?P<diet>vegan|vegetarian|veggie|"
            r"pescatarian|pescetarian|plant[- ]based|keto|paleo|teetotal|gluten[- ]free|dairy[- ]free)\b.*$",
            _diet,
        ),
        (
            "I",
            r"^i\s+(?:only\s+|strictly\s+|mostly\s+|also\s+)?(?:eat|do|follow|keep)\s+(?:a\s+)?(?P<diet>halal|kosher|"
            r"vegan|plant[- ]based|keto|paleo|low[- ]carb|gluten[- ]free)(?:\s+(?:diet|only|food))*\b(?:\s*[,;].*|"
            r"\s+(?:so|and|but|because)\b.*)?$",
            _diet,
        ),
        (None, r"^(?:i\s+was\s+)?born\s+(?:a\s+)?(?P<diet>veggie|vegetarian|vegan)\b.*$", _diet),
        (
            "I",
            rf"^{_IM}\s+(?:doing|on)\s+(?:a\s+)?(?P<diet>keto|paleo|low[- ]carb|vegan|plant[- ]based)(?:\s+diet)?\b.*$",
            _diet,
        ),
        (
            None,
            r"^(?:always\s+)?(?P<obj>[\w'-]+(?:\s+[\w'-]+){0,3}?)(?:\s*,\s*[\w\s-]{1,20}?){0,2}?(?:\s*,\s*(?:always|no\s+sugar|every\s+(?:single\s+)?"
            r"(?:morning|day)|with\s+(?:two|one|\d|milk)\s*(?:sugars?)?)|\s+(?:all\s+the\s+way|every\s+(?:single\s+)?"
            r"(?:morning|day)|or\s+(?:nothing|bust|i\s+(?:don't|can't|cannot)\s+function|i\s+die)))(?:\s*$|\s*,.*|\s+(?P=obj)\b.*|\s+for\s+me\b.*)$",
            _habit_drink,
        ),
        (
            "it's its",
            r"^(?:it's|its|it\s+is)\s+(?:all\s+)?(?P<obj>[\w'-]+(?:\s+[\w'-]+){0,3}?)\s+(?P<diet_ok>everything|for\s+me|"
            r"all\s+the\s+way|only)\b.*$",
            _habit_drink,
        ),
        (
            "I",
            rf"^{_IM}\s+(?:strictly\s+|totally\s+|very\s+much\s+|more\s+of\s+)?(?:a|an)\s+(?P<obj>[\w\s-]{{2,25}}?)\s+"
            r"(?:girl|guy|person|man|woman|lad|gal|kinda\s+(?:girl|guy))\b.*$",
            _habit_drink,
        ),
        # --- likes
        (
            None,
            rf"^(?:{_IM}\s+)?(?:kind\s+of\s+|a\s+bit\s+|totally\s+|completely\s+|absolutely\s+)?obsessed\s+(?:with|w)\s+"
            r"(?P<obj>.+)$",
            _likes,
        ),
        (
            "lifelong huge big massive die-hard diehard",
            r"^(?:lifelong|huge|big|massive|die-?hard)\s+(?P<obj>(?-i:[A-Z])[\w\s.-]{1,30}?)\s+(?:fan|supporter)\b.*$",
            _likes,
        ),
        ("I love", r"^(?:i\s+)?(?:do\s+)?love\s+a\s+good\s+(?P<obj>.+)$", _likes),
        ("I", rf"^{_IM}\s+(?:all|totally|very\s+much)\s+about\s+(?P<obj>.+)$", _all_about),
        (
            "I",
            r"^i(?:'ve\s+been|\s+was|\s+got|\s+have\s+been)?\s+(?:just\s+|recently\s+|finally\s+|officially\s+)?"
            r"diagnosed\s+with\s+(?P<obj>.+)$",
            _diagnosed,
        ),
        (
            "I",
            rf"^{_IM}\s+(?:also\s+|pretty\s+|fully\s+|totally\s+)?fluent\s+in\s+(?P<obj>.+)$",
            _fluent,
        ),
        (
            "I",
            r"^i\s+(?:currently\s+|now\s+|also\s+)?work\s+(?:nights\s+|days\s+|shifts\s+)?(?:at|for|in)\s+(?:a|an|the)\s+"
            r"[a-z][\w\s'-]*?\s+as\s+(?:a|an)\s+(?P<job>[\w\s-]{2,40}?)(?:\s*[,;.].*|\s+(?:and|but|so|since)\b.*)?$",
            _works_as,
        ),
        # --- who they are
        ("myself", r"^myself\s+(?P<name>(?-i:[A-Z])[\w'-]+)$", _name),
        (
            "my",
            rf"^my\s+(?P<rel>oga|boss|manager|supervisor|line\s+manager)(?:\s+at\s+work)?\s+(?:na|is|be)\s+"
            rf"(?P<name>{NAME})(?:\s*[,;].*)?$",
            _boss,
        ),
        (
            None,
            r"^(?P<obj>[\w'-]+(?:\s+[\w'-]+){0,2})\s+(?:is|are)\s+(?:totally\s+|really\s+|so\s+)?my\s+(?:thing|jam|"
            r"passion|obsession|happy\s+place|favou?rite\s+thing)\b.*$",
            _likes,
        ),
        (
            "I we",
            rf"^(?:i|we)(?:'ve|\s+have)?\s+(?:just\s+|finally\s+|officially\s+)*(?:got\s+the\s+keys\s+to|signed\s+(?:the|a)\s+"
            r"lease\s+(?:on|for)|bought|moved\s+into|moved\s+in(?:\s+together)?(?=\s+in\b))\s+(?:(?:a|the|our|my)\s+"
            r"(?:new\s+|own\s+|first\s+|little\s+)*(?:flat|house|place|home|apartment|condo|bungalow|cottage|"
            rf"townhouse)\s+)?in\s+{_PLACE}.*$",
            _home,
        ),
        (
            "I",
            rf"^{_IM}\s+(?:currently\s+)?(?:doing|reading|studying)\s+(?P<obj>{FIELDS})\s+at\s+(?:(?:[a-z]+\s+)?(?:uni|university|college)\b|"
            r"(?-i:[A-Z])).*$",
            _field,
        ),
        (
            "I",
            r"^i\s+(?:also\s+)?sign(?:\s+too)?\s*,?\s*(?P<lang>(?-i:BSL|ASL|ISL|Auslan|LSF|DGS))\b.*$",
            _speaks_sign,
        ),
        (
            "it's its",
            rf"^(?:it's|its|it\s+is)\s+(?P<date>{_WEEKDAY_OR_DATE})(?:\s*,?\s*not\s+(?:the\s+)?[\w]+)?\s+for\s+(?:the|my|our)\s+"
            r"(?P<plan>[a-z][\w'-]*(?:\s+[a-z][\w'-]*){0,2})(?:\s*[,;].*)?$",
            _plan_for,
        ),
    )
)


# --- handlers the first-person rules share (english_rules)


def allergy(m: re.Match[str], voice: Voice) -> Draft | None:
    """'I'm allergic to shellfish'; not 'allergic to Mondays' (a joke, not a substance)."""
    value = clean_value(m["obj"])
    if not is_content(m["obj"]) or not plausible_allergen(value):
        return None
    return Draft(en_fact(m.string, voice), "allergy", "identity", 9).stating("allergy", value)


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
    return Draft(en_fact(m.string, voice), "home", "identity", 8).stating("home", value)


def origin(m: re.Match[str], voice: Voice) -> Draft | None:
    """'I'm from Kraków originally', 'I grew up in Lagos'; not 'born in the wrong decade'."""
    if not is_content(m["obj"]) or not plausible_home(m["obj"].strip()):
        return None
    value = home_value(m["obj"])
    if not value or not plausible_home(value):
        return None
    return Draft(en_fact(m.string, voice), "origin", "identity", 8).stating("origin", value)


def speaks(m: re.Match[str], voice: Voice) -> Draft | None:
    """'I speak Hindi and English at home and a bit of Marathi': one fact a language."""
    phrase = m["obj"]
    if not is_content(phrase):
        return None
    found = [w for w in re.findall(r"[^\W\d_]+", phrase) if w.lower() in LANGUAGES]
    if not found:
        value = clean_value(phrase)
        if not value or not re.match(r"(?-i:[A-Z])", value):
            return None  # "I speak fluent sarcasm"
        found = [value]
    drafts = [
        Draft(
            en_sentence(f"{voice.title} speaks {lang[:1].upper() + lang[1:]}"), "languages", "skill", 7
        ).stating("speaks", lang[:1].upper() + lang[1:])
        for lang in dict.fromkeys(found)
    ]
    first = dataclasses.replace(drafts[0], fact=en_fact(m.string, voice))
    return dataclasses.replace(first, also=tuple(drafts[1:]))
