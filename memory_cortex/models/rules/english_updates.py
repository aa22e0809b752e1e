"""English updates said in passing: a new employer ("starting Monday I'm at Shopify", "first day at
Globex done!"), a new role ("I'm sous chef now"), someone's birthday ("Sofia turned 12 on
Saturday!"), a new partner ("I've been dating Daniel for two months"), the answer language
("switch back to English replies"), and a business's town ("I run a pottery studio in Bath")."""

from __future__ import annotations

import dataclasses
import re

from .english_employment import employer_draft as _employer_draft
from .english_rule_parts import ORG
from .english_values import LANGUAGES, clean_value, is_occupation
from .english_voice import en_fact, topic_from
from .shapes import About, Draft, Rule, Voice, cap, en_sentence, first_words_of

_IM = r"(?:i'm|i\s+am|im)"
_NAME = r"(?P<name>(?-i:[A-Z][\w'.-]*)(?:\s+(?-i:[A-Z][\w'.-]*))?)"
_NOW = r"(?:\s+(?:now|these\s+days|from\s+now\s+on))"


def _pattern(text: str) -> re.Pattern[str]:
    return re.compile(text, re.IGNORECASE)


def _now_at(m: re.Match[str], voice: Voice) -> Draft | None:
    """ "I'm at Shopify now", "now I'm at Shopify": only said of a change is "at X" an employer."""
    return _employer_draft(m["org"], voice, en_fact(m.string, voice))


def _first_day(m: re.Match[str], voice: Voice) -> Draft | None:
    return _employer_draft(m["org"], voice, en_sentence(f"{voice.title} started at {m['org']}"))


def _joined_as(m: re.Match[str], voice: Voice) -> Draft | None:
    """ "I joined Deloitte as a consultant", "(I) joined as a consultant on the 1st": the new role, and
    the employer when one is named."""
    job = clean_value(re.split(r"\s+(?:on|in|at|last|this|from|since|after|and|but|so)\b|,", m["job"])[0])
    if not job or not is_occupation(job):
        return None
    draft = Draft(en_fact(m.string, voice), topic_from(job, "job"), "identity", 8).stating("job", job)
    employer = _employer_draft(m["org"], voice) if m["org"] else None
    return dataclasses.replace(draft, also=(employer,)) if employer else draft


def _role_now(m: re.Match[str], voice: Voice) -> Draft | None:
    """ "I'm sous chef now", "I'm the financial controller now!": a role said as a change."""
    job = clean_value(m["job"])
    if not job or not is_occupation(job):
        return None
    return Draft(en_fact(m.string, voice), topic_from(job, "job"), "identity", 8).stating("job", job)


def _named_turned(m: re.Match[str], voice: Voice) -> Draft | None:
    """ "Sofia turned 12 on Saturday!": a named person's new age (a name, then "turned" and a number)."""
    name = m["name"]
    if name.split()[0].lower() in ("i", "it", "this", "that", "he", "she", "they", "we", "the"):
        return None
    fact = en_sentence(f"{name} turned {m['age']}")
    about = About(name, None, "person", of=voice.person)
    return Draft(fact, "age", "identity", 8, about=about).stating("age", m["age"])


def _dating(m: re.Match[str], voice: Voice) -> Draft | None:
    return Draft(en_fact(m.string, voice), "partner", "relationship", 8).stating("partner", m["name"])


def _someone_new(m: re.Match[str], voice: Voice) -> Draft | None:
    """ "I'm seeing someone new!": a partner, named by the sentence after it ("His name is Migs");
    unnamed, the fact states no partner."""
    return Draft(en_fact(m.string, voice), "partner", "relationship", 7).stating("partner", "someone")


def _language_switch(m: re.Match[str], voice: Voice) -> Draft | None:
    language = m["lang"]
    if language.lower() not in LANGUAGES:
        return None
    fact = en_sentence(f"{voice.title} wants answers in {cap(language)}")
    return Draft(fact, "answer language", "preference", 8).stating("language", cap(language))


def _plan_on(m: re.Match[str], voice: Voice) -> Draft | None:
    """ "I'm running the Berlin marathon on September 27": a named event and its date."""
    plan = " ".join(m["plan"].split()).lower()
    date = clean_value(m["date"], keep_article=True)
    if not date:
        return None
    about = About(plan, None, "plan", of=voice.person)
    return Draft(en_fact(m.string, voice), plan, "project_state", 7, about=about).stating("date", date)


def _new_partner(m: re.Match[str], voice: Voice) -> Draft | None:
    """ "I have a new girlfriend, Freya": who the partner is now."""
    fact = en_sentence(f"{voice.possessive.capitalize()} {m['rel'].lower()} is {m['name']}")
    return Draft(fact, "partner", "relationship", 8).stating("partner", m["name"])


def _named_pet(m: re.Match[str], voice: Voice) -> Draft | None:
    """ "I adopted a kitten, Mochi": a pet named after a comma."""
    return Draft(en_fact(m.string, voice), "pet", "relationship", 7).stating("pet", m["name"])


def _cleft_allergy(m: re.Match[str], voice: Voice) -> Draft | None:
    """ "It's pecans I'm allergic to, not walnuts": the allergy, said the other way round."""
    allergen = clean_value(m["obj"])
    if not allergen:
        return None
    # The words as said: "…, not walnuts" tells the store which allergy it corrects.
    return Draft(en_fact(m.string, voice), "allergy", "identity", 9).stating("allergy", allergen)


def _degree_in(m: re.Match[str], voice: Voice) -> Draft | None:
    field = clean_value(m["obj"])
    if not field:
        return None
    return Draft(en_fact(m.string, voice), topic_from(field, "studies"), "identity", 7).stating(
        "studies", field
    )


def _being_a(m: re.Match[str], voice: Voice) -> Draft | None:
    """ "Being a paramedic is never boring": the speaker's job, said in passing."""
    job = clean_value(m["job"])
    if not job or not is_occupation(job):
        return None
    return Draft(en_sentence(f"{voice.title} is a {job}"), topic_from(job, "job"), "identity", 8).stating(
        "job", job
    )


def _prefer_language(m: re.Match[str], voice: Voice) -> Draft | None:
    return _language_switch(m, voice)


def _home_of(m: re.Match[str], voice: Voice) -> Draft | None:
    """ "My flat in Hamburg is tiny": where they live, named by their home."""
    place = clean_value(m["place"])
    if not place:
        return None
    return Draft(en_sentence(f"{voice.title} lives in {place}"), "home", "identity", 8).stating("home", place)


def _teach_at(m: re.Match[str], voice: Voice) -> Draft | None:
    """ "I teach chemistry at a high school in Tallinn": the job, and the town."""
    subject = m["what"].strip().lower()
    job = f"{subject} teacher"
    draft = Draft(en_fact(m.string, voice), topic_from(job, "job"), "identity", 8).stating("job", job)
    home = clean_value(m["place"])
    if home:
        also = Draft(en_sentence(f"{voice.title} is based in {home}"), "home", "identity", 8).stating(
            "home", home
        )
        draft = dataclasses.replace(draft, also=(also,))
    return draft


def _called_org(m: re.Match[str], voice: Voice) -> Draft | None:
    """ "I work as a software engineer at a fintech startup called Pleo": the job and the named employer."""
    draft = _employer_draft(m["org"], voice, en_sentence(f"{voice.title} works at {m['org']}"))
    job = clean_value(m["job"]) if m["job"] else None
    if draft is None or not job or not is_occupation(job):
        return draft
    first = Draft(en_fact(m.string, voice), topic_from(job, "job"), "identity", 8).stating("job", job)
    return dataclasses.replace(first, also=(draft,))


def _business_in(m: re.Match[str], voice: Voice) -> Draft | None:
    """ "I run a small pottery studio in Bath": what they run, and the town it is in as their home."""
    draft = Draft(en_fact(m.string, voice), topic_from(m["what"], "business"), "identity", 7)
    home = clean_value(m["place"])
    if not home:
        return draft
    also = Draft(en_sentence(f"{voice.title} is based in {home}"), "home", "identity", 8).stating(
        "home", home
    )
    return dataclasses.replace(draft, also=(also,))


def _promoted(m: re.Match[str], voice: Voice) -> Draft | None:
    """ "I was promoted to senior engineer", "she made me team lead for the test department": a new role."""
    job = clean_value(m["job"])
    if not job or not is_occupation(job):
        return None
    fact = en_sentence(f"{voice.title} was promoted to {job}")
    return Draft(fact, topic_from(job, "job"), "identity", 8).stating("job", job)


EN_UPDATE_RULES: tuple[Rule, ...] = tuple(
    Rule(_pattern(pattern), handler, first_words_of(starts))
    for starts, pattern, handler in (
        # "I'm at Shopify now", "Starting Monday I'm at Shopify!" (its lead-in leaves a "now"): a
        # workplace; a bare "I'm at Heathrow" is a moment.
        ("I now", rf"^(?:now\s+)?{_IM}\s+(?:now\s+)?(?:over\s+)?at\s+{ORG}{_NOW}[\s!.]*$", _now_at),
        ("now", rf"^now\s+{_IM}\s+(?:over\s+)?at\s+{ORG}[\s!.]*$", _now_at),
        ("first my", rf"^(?:my\s+)?first\s+(?:day|week)\s+(?:at|with)\s+{ORG}\b.*$", _first_day),
        (
            "I",
            rf"^{_IM}\s+(?:officially\s+)?(?:the\s+|a\s+|an\s+)?(?P<job>(?:(?!\s(?:at|for|with|in)\s)[\w\s-]){{3,40}}?){_NOW}"
            r"(?:\s*,?\s*as\s+of\s+.+)?[\s!.]*$",
            _role_now,
        ),
        (
            "I",
            rf"^i(?:'ve|\s+have)?\s+(?:just\s+|recently\s+|officially\s+)?joined(?:\s+{ORG})?\s+as\s+(?:a|an|the|their|our)?\s*"
            r"(?P<job>[\w\s-]{3,60})(?:[\s!.]*$|\s*,.*$|\s+(?:on|in|at|last|this|from|since|after|and|but|so)\b.*$)",
            _joined_as,
        ),
        (None, rf"^{_NAME}\s+(?:just\s+)?turned\s+(?P<age>\d{{1,3}})\b.*$", _named_turned),
        (
            "I so",
            rf"^(?:so\s+)?i(?:'ve|\s+have)\s+been\s+(?:dating|seeing|going\s+out\s+with)\s+(?:a\s+(?:[\w-]+\s+){{0,2}}?"
            rf"(?:man|woman|guy|girl|gentleman|lady|bloke|fella|lad)\s+(?:called|named)\s+)?{_NAME}\b.*$",
            _dating,
        ),
        (
            "I I'm im so",
            r"^(?:so\s+)?(?:i'm|im|i\s+am|i've|i\s+have)\s+(?:now\s+|finally\s+)?(?:seeing|dating|met)\s+(?:someone|somebody|"
            r"a\s+(?:guy|girl|man|woman|lady|bloke))(?:\s+new)?$",
            _someone_new,
        ),
        (
            "let's can please switch",
            r"^(?:let's|can\s+we|could\s+we|please)?\s*(?:switch|go|change)\s+(?:back\s+)?(?:over\s+)?to\s+"
            r"(?P<lang>[a-z]+)\s+(?:replies|answers|responses)\b.*$",
            _language_switch,
        ),
        (
            "I",
            rf"^i\s+(?:have|got|'ve\s+got)\s+a\s+new\s+(?P<rel>girlfriend|boyfriend|partner|wife|husband|fianc[ée]e?)\s*,\s*"
            rf"{_NAME}\b.*$",
            _new_partner,
        ),
        (
            "I we",
            rf"^(?:i|we)(?:'ve|\s+have)?\s+(?:just\s+|also\s+|finally\s+|now\s+)?(?:adopted|got|rescued|brought\s+home|"
            rf"have)\s+(?:a|an)\s+(?:new\s+|little\s+|rescue\s+)?(?:kitten|puppy|cat|dog|rabbit|bunny|hamster|parrot|"
            rf"guinea\s+pig)\s*,\s*{_NAME}\s*(?:[!.]|,|$).*$",
            _named_pet,
        ),
        (
            "I she he they my",
            r"^(?:i\s+(?:was|got|have\s+been|'ve\s+been|just\s+got)\s+(?:just\s+)?promoted\s+to|(?:she|he|they|"
            r"my\s+(?:boss|manager|company))\s+(?:just\s+)?(?:made|promoted)\s+me(?:\s+to)?)\s+(?:the\s+|a\s+|an\s+)?"
            r"(?P<job>[\w\s-]{3,40}?)(?:\s+(?:for|of|in|at|on)\s+[^,;]+?)?(?:[\s!.]*$|\s*[,;].*$)",
            _promoted,
        ),
        (
            "it's it",
            r"^(?:it's|it\s+is)\s+(?P<obj>[\w\s-]{2,30}?)\s+(?:that\s+)?(?:i'm|i\s+am)\s+allergic\s+to\b.*$",
            _cleft_allergy,
        ),
        (
            "my",
            r"^my\s+(?:master'?s|masters|degree|phd|bachelor'?s|major|doctorate|msc|ma|ba|bsc|mba)(?:\s+degree)?\s+is\s+"
            r"(?:in|on)\s+(?P<obj>.+)$",
            _degree_in,
        ),
        (
            "being",
            r"^being\s+(?:a|an)\s+(?P<job>[\w\s-]{3,40}?)\s+(?:is|has|means|isn't|can\s+be)\b.*$",
            _being_a,
        ),
        (
            "I",
            r"^i(?:'d|\s+would)\s+(?:prefer|like|rather\s+have)\s+(?:(?:the\s+)?(?:answers|replies|responses)\s+in\s+|"
            r"(?:you\s+to\s+)?(?:answer|reply|respond)\s+in\s+)(?P<lang>[a-z]+)\b.*$",
            _prefer_language,
        ),
        (
            "my our",
            r"^(?:my|our)\s+(?:little\s+|tiny\s+|new\s+)?(?:flat|apartment|house|place|home|room|studio)\s+in\s+"
            r"(?P<place>(?-i:[A-Z])[\w'.-]*(?:\s+(?-i:[A-Z])[\w'.-]*)?)\s+(?:is|has|was)\b.*$",
            _home_of,
        ),
        (
            "I",
            r"^i\s+(?:currently\s+)?teach\s+(?P<what>[\w\s-]{2,30}?)\s+at\s+(?:a|an|the)\s+[\w\s-]{2,30}?\s+in\s+"
            r"(?P<place>(?-i:[A-Z])[\w'.-]*(?:\s+(?-i:[A-Z])[\w'.-]*)?)\b.*$",
            _teach_at,
        ),
        (
            "I",
            rf"^(?:i\s+work|{_IM}\s+working)\s+(?:as\s+(?:a|an)\s+(?P<job>[\w\s-]{{3,40}}?)\s+)?at\s+(?:a|an)\s+[\w\s-]{{2,40}}?\s+"
            rf"(?:called|named)\s+{ORG}\b.*$",
            _called_org,
        ),
        (
            "I",
            rf"^{_IM}\s+(?:running|doing|attending|hosting|throwing|having|taking|sitting|flying\s+to|going\s+to)\s+"
            rf"(?:the|a|an|my|our)\s+(?P<plan>(?-i:[A-Z])[\w'-]+(?:\s+[\w'-]+){{0,2}}?\s+(?:marathon|half\s+marathon|"
            rf"race|triathlon|conference|summit|festival|concert|wedding|exam|interview|party|trip|retreat|match|game|"
            rf"show|gig|recital|ceremony|launch))\s+(?:on|this|next)\s+(?P<date>(?:the\s+)?(?:\d|monday|tuesday|"
            rf"wednesday|thursday|friday|saturday|sunday|jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec|weekend)"
            rf"[\w\s,-]*?)(?:[\s!.]*$|\s*[,;].*$)",
            _plan_on,
        ),
        (
            "I",
            r"^i\s+(?:run|own|have)\s+(?:a|an|my\s+own)\s+(?P<what>(?:[\w'-]+\s+){0,4}?(?:studio|shop|bakery|cafe|café|"
            r"restaurant|bar|salon|clinic|practice|business|company|agency|gallery|store|firm|school|gym))\s+in\s+"
            r"(?P<place>(?-i:[A-Z])[\w'.-]*(?:\s+(?-i:[A-Z])[\w'.-]*)?)\b.*$",
            _business_in,
        ),
    )
)
