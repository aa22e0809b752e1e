"""What an English statement says besides its first fact: relations named in passing ("my husband
Marco says hi"), and the statements that follow it about the same person ("my son's name is Arjun,
he's 4, and he loves trains"; "born in Kano, been in Abuja since uni"; "our eldest, Sam, just turned
10"). Each later part is read by the same rules, in the voice of whom it is about; a part about no
one known ("she's lovely", "it never ends") says nothing."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, replace

from .english_people import BARE_KIN, MY_RELATIVE, NAME, PET_KINDS, REL_WORDS, name_ok, relation_of, said_of
from .english_text import BACK_TO_FIRST, spell_out
from .english_values import WORD_AGE, is_drink, is_occupation
from .shapes import About, Draft, Voice, en_sentence

Reader = Callable[[str, Voice], Draft | None]

# "…is called Ruby she's 9": chat runs an age on without a comma.
_RUN_ON_AGE = r"\s+(?=(?:he|she)(?:'s|\s+is)\s+\d{1,2}\b)"
_JOIN = re.compile(rf",|\band\b|\bbut\b|\bso\b|;|\s[-–—]\s|{_RUN_ON_AGE}", re.IGNORECASE)
_SEGMENT = re.compile(
    r"\s*[,;]\s*(?:(?:and|but|so|plus)\s+)?|\s+[-–—]\s+|(?<!^me)\s+(?:and(?!\s+(?:i|me)\b)|but|plus|so)\s+(?!(?:raised|bred)\b)"
    rf"|{_RUN_ON_AGE}",
    re.IGNORECASE,
)
# What someone else says, thinks or wants is not a statement of fact, and neither is what follows it.
_REPORTED = re.compile(
    r"\b(?:says?|said|saying|thinks?|thought|reckons?|told|tells|claims?|swears?|believes?|wants?|wish(?:es)?|"
    r"hopes?|doubt|assumes?|keeps?\s+(?:saying|telling|asking)|according\s+to|apparently|supposedly|joked|"
    r"pretend(?:s|ing)?|used\s+to|would|could|should|might|'d)\b",
    re.IGNORECASE,
)
# A part that makes the rest conditional, or starts a new thought about something else.
# "My sister Margaret, who is eighty-two, …": her age, said in passing.
_WHO_IS_AGE = rf"(?:'s|\s+is)\s+(?:now\s+)?(?:\d{{1,3}}|{WORD_AGE})\b"
_STOP = re.compile(
    rf"^(?:if|unless|when|whenever|once|in\s+case|even\s+if|as\s+long\s+as|which|who(?!{_WHO_IS_AGE})|whose|where|"
    r"that\s+(?!'s)|"
    r"though|although|because|cause|cos|since|before|after|until|like|not|never\s+gonna|otherwise|or)\b",
    re.IGNORECASE,
)
_ADVERBS = (
    r"(?:(?:just|also|still|now|recently|finally|currently|only|already|officially|really|absolutely|mostly|"
    r"originally|actually|literally|totally|even|presently)\s+)*"
)
_BE_START = re.compile(
    rf"^{_ADVERBS}(?:allergic|based|living|married|engaged|obsessed|originally|from|vegan|vegetarian|pescatarian|"
    r"veggie|keto|halal|kosher|coeliac|celiac|diabetic|lactose|gluten|dairy|studying|working|doing|a|an|fluent|"
    r"(?<=still\s)in(?=\s+(?-i:[A-Z]))|"
    r"retired|into|big|huge|massive|lifelong|no\s+longer|autistic|dyslexic|asthmatic|epileptic|deaf|mad\s+about|"
    rf"crazy\s+about|(?:\d{{1,3}}|{WORD_AGE})(?=\s*(?:$|years?|yrs?|y/?o\b|and\b|,)))\b",
    re.IGNORECASE,
)
_HAVE_START = re.compile(rf"^{_ADVERBS}(?:been|gone|lived|worked|had)\b", re.IGNORECASE)
_VERB_START = re.compile(
    rf"^{_ADVERBS}(?:moved|relocated|live|work|love|like|hate|prefer|adore|enjoy|loathe|detest|speak|study|teach|"
    r"drink|eat|grew|started|start|starting|joined|left|quit|turned|went|switched|run|own|can't|cannot|don't|"
    r"never|report|use|got|have|adopted|rescued|signed|bought)\b",
    re.IGNORECASE,
)
_BORN = re.compile(rf"^{_ADVERBS}born\b", re.IGNORECASE)
# "An online platform can really show off your studio": a thing that does something, not "I'm a …".
_A_THING_DOES = re.compile(
    r"^an?\s+(?:(?!(?:who|that|which)\b)[\w-]+\s+){0,3}?(?:can|could|will|would|should|may|might|must|is|was|does|did|has|looks|makes|"
    r"helps|sounds|seems)\b",
    re.IGNORECASE,
)
_HAVING = re.compile(r"^having\s+(?:grown\s+up|been\s+(?:born|raised|brought\s+up))\s+in\b", re.IGNORECASE)
_THIRD_VERB = re.compile(
    rf"^(?P<adv>{_ADVERBS})(?P<verb>is|'s|has|was|does|doesn't|lives|works|speaks|drinks|eats|loves|likes|hates|"
    r"prefers|adores|enjoys|studies|teaches|moved|relocated|started|joined|left|quit|turned|went|switched|runs|"
    r"owns|can't|cannot|got|adopted|grew|reports|uses|plays|goes|just|needs|wants)\b",
    re.IGNORECASE,
)
_PRONOUN = re.compile(rf"^(?:he|she|who(?={_WHO_IS_AGE}))(?P<rest>'s\b.*|\s+.*)$", re.IGNORECASE | re.DOTALL)
_PARTICIPLE = re.compile(
    r"^\s*(?:just\s+|also\s+|recently\s+|finally\s+)*(?:got|been|gone|moved|started|had|lived|worked|become)\b",
    re.I,
)
_WE = re.compile(r"^we(?P<aux>'re|'ve|\s+are|\s+have)?\s+", re.IGNORECASE)
_BARE_NAME = re.compile(rf"^{NAME}$")
_THE_JOB = re.compile(r"^the\s+(?P<job>[\w\s-]{2,30})$", re.IGNORECASE)
_BARE_AGE = re.compile(r"^\s*\(?(?P<age>\d{1,2})\)?$")
_AGE = re.compile(r"^(?P<age>\d{1,2})\s*(?:years?|yrs?|y/?o)(?:\s+old)?$", re.IGNORECASE)

_NAMED_AS = re.compile(
    rf"^(?:my|our)\s+(?:(?P<adj>(?:older|younger|little|big|baby|twin|step|best))\s+)?(?P<rel>{REL_WORDS})"
    rf"(?:'s\s+name\s+is|\s+is\s+called|'s\s+called|\s+is\s+named|\s+goes\s+by)\s+(?P<name>{NAME})$",
    re.IGNORECASE,
)
_IS_MY = re.compile(
    rf"^(?P<name>{NAME})(?:'s|\s+is)\s+my\s+(?:(?P<adj>(?:older|younger|little|big|baby|twin|step|best))\s+)?"
    rf"(?P<rel>{REL_WORDS})\b",
    re.IGNORECASE,
)
_INTRODUCED = re.compile(rf"^(?:that's|this\s+is|meet|that\s+was)\s+(?P<name>{NAME})$", re.IGNORECASE)
# "Ava's birthday was yesterday, she's 7 now": the parts after it are about Ava.
_NAMED_DAY = re.compile(rf"^(?P<name>{NAME})'s\s+(?:birthday|bday)\b", re.IGNORECASE)
_PRONOUN_IS_MY = re.compile(
    r"^(?:he's|she's|he\s+is|she\s+is)\s+my\s+(?P<rel>[\w-]+(?:\s+[\w-]+)?)$", re.IGNORECASE
)
_KIN_SUBJECT = re.compile(
    rf"^(?P<rel>{BARE_KIN})(?='s\b|\s+(?:is|has|was|lives|works|moved|just|still)\b)", re.I
)
_PETS_HAD = re.compile(
    r"^(?:i|we)(?:'ve|\s+have)?\s+(?:also\s+)?(?:have|got|adopted|rescued)\s+(?:two|three|four|five|\d)\s+"
    rf"(?P<kind>{PET_KINDS}|pupp|bunn)(?:s|es|ies)\b",  # pets only: "two kids, Mia and Leo" are not pets
    re.IGNORECASE,
)
_FIRST_PERSON = re.compile(r"^(?:i|i'm|i've|i'd|me|myself)\b", re.IGNORECASE)
_INNER_FIRST_PERSON = re.compile(
    r"\b(?:i|we)\s+(?=(?:just\s+|finally\s+|recently\s+)?(?:moved|packed|relocated|live|"
    r"work|started|joined|left|got|adopted|bought)\b)",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class _Subject:
    """Whom the parts of a clause are about: the speaker (``about`` None), or someone they name."""

    about: About | None = None
    said: str | None = None  # the relation as said ("little brother"), for the voice
    naming: bool = False  # a bare name next names them ("our eldest, Sam, …")
    pets: str | None = None  # "we have two rabbits, Salt and Pepper": the names that follow are pets
    left: str | None = None  # "left Vodafone", "split up": the job or partner that comes next replaces it
    was_from: bool = False  # "I'm from Kraków originally, now in Berlin": where they are now follows
    moved_in: str | None = None  # "We're in Leeds now, …": a home when a move is mentioned next


_SPEAKER = _Subject()


def _is_speaker(subject: _Subject | None) -> bool:
    return subject is not None and subject.about is None and subject.pets is None and subject.left is None


def continuations(clause: str, voice: Voice, read: Reader) -> list[Draft]:
    """The statements after a clause's first one, each about whom it is about."""
    clause = spell_out(clause)
    if not _JOIN.search(clause):
        return []
    parts = [_OPENER.sub("", p.strip()) for p in _SEGMENT.split(clause) if p and p.strip()]
    parts = [p for p in parts if p]
    if len(parts) < 2 or _REPORTED.search(parts[0]):
        return []
    subject = opening = _opening(parts[0])
    drafts: list[Draft] = []
    named = MY_RELATIVE.match(parts[0]) if subject is not None and subject.about is not None else None
    if named is not None and (
        age := _BARE_AGE.match(parts[0][named.end() :])
    ):  # "my daughter Grace 9": her age
        drafts += _read_first_person(f"I'm {age['age']} years old", subject, voice, read)
    # "London born and raised, now living in Brighton": whom a first part without a subject is about,
    # when the rules read it as the speaker's
    first = read(parts[0], voice) if subject is None and not _NOT_ALONE.match(parts[0]) else None
    if first is not None and first.about is None and first.attribute:
        subject = _Subject(was_from=first.attribute == "origin")
    # "I live in Galway with my son Cian, he's 8": whom a "he" or "she" after the first part means
    last_named = _last_named(parts[0])
    for part in parts[1:]:
        if _STOP.match(part) or _REPORTED.search(part):
            break
        if _is_speaker(subject) and _THIRD_PERSON.match(part):
            if last_named is None:
                break  # someone not named here: nothing after this is the speaker's
            subject = last_named
        bare = _BARE_NAMED.match(part) if _is_speaker(subject) else None
        if bare is not None and name_ok(bare["name"]) and (relation := relation_of(bare["rel"])) is not None:
            # "…, pilot with Ryanair, wife Siobhan and three kids in Limerick": who they are, as a note
            found = _relation_fact(About(bare["name"], relation), bare["rel"].lower(), voice)
            drafts += [found] if found is not None else []
            continue
        if subject is None:
            subject = _opening(part, later=True)
            if _is_speaker(subject):  # "…, on top of that I found out I'm allergic to latex"
                drafts += _read_first_person(_we_as_i(part), subject, voice, read)
            continue
        found, subject = _part(part, subject, voice, read)
        drafts += found
    return (
        drafts
        + _changed(parts, voice, read)
        + _their_new_job(parts, opening, voice, read)
        + _dated(parts, voice, read)
    )


# "We're planning the Iceland trip, it's on June 12": a named plan, then when it is
_PLAN_NAMED = re.compile(
    r"\b(?:the|our|my)\s+(?P<plan>(?:(?-i:[A-Z])[\w'-]*\s+){1,2}(?:trip|holiday|wedding|party|reunion|meetup|"
    r"conference|visit|dinner|concert|match|marathon|race|retreat|course|exam|interview|appointment))\b",
    re.IGNORECASE,
)
_IT_IS_ON = re.compile(
    r"^(?:it's|its|it\s+is)\s+(?:now\s+)?(?:on|booked\s+for|set\s+for|planned\s+for|scheduled\s+for)\s+(?P<date>.+)$",
    re.IGNORECASE,
)


def _dated(parts: list[str], voice: Voice, read: Reader) -> list[Draft]:
    """The date of a plan the first part names, said by a later one."""
    plan = _PLAN_NAMED.search(parts[0])
    if plan is None:
        return []
    for part in parts[1:]:
        if (when := _IT_IS_ON.match(part)) is not None:
            found = read(f"The {plan['plan']} is on {when['date']}", voice)
            return [found] if found is not None else []
    return []


_NAME_SAID = re.compile(rf"^(?:his|her|their)\s+name(?:'s|\s+is)\s+(?P<name>{NAME})$", re.IGNORECASE)
_NEW_RELATIVE = re.compile(rf"(?:^|\s|=)(?:(?:a|my|our)\s+)?new\s+(?P<rel>{REL_WORDS})$", re.IGNORECASE)
_BARE_NAMED = re.compile(
    r"^(?P<rel>wife|husband|partner|girlfriend|boyfriend|fianc[ée]e?|son|daughter|boss|manager)\s+"
    rf"(?P<name>{NAME})(?:\s*$|\s+(?:and|with|in|who)\b)",
    re.IGNORECASE,
)
_THIRD_PERSON = re.compile(r"^(?:he|she|he's|she's|hes|shes)\b", re.IGNORECASE)
_NAMED_AT_END = re.compile(
    rf"\b(?:my|our)\s+(?:(?:older|younger|little|big|baby|twin|eldest|oldest|youngest|step|best|new)\s+)?"
    rf"(?P<rel>{REL_WORDS})\s*,?\s+(?P<name>(?-i:[A-Z][\w'-]+))\s*$",
    re.IGNORECASE,
)


def _last_named(part: str) -> _Subject | None:
    """The relative a part ends by naming ("…with my son Cian"), if any."""
    m = _NAMED_AT_END.search(part)
    if m is None or not name_ok(m["name"]) or (relation := relation_of(m["rel"])) is None:
        return None
    return _Subject(About(m["name"], relation, "pet" if relation == "pet" else "person"), m["rel"].lower())


def _their_new_job(parts: list[str], subject: _Subject | None, voice: Voice, read: Reader) -> list[Draft]:
    """ "My brother quit BMW, he is with Audi now", "Grace left Google last month, she's at Stripe
    now": the new employer of whom the clause is about (the old one's end too, for someone named)."""
    named = _NAMED_LEFT.match(parts[0]) if subject is None or subject.about is None else None
    if named is not None and name_ok(named["name"]):
        subject = _Subject(About(named["name"], None))
    if subject is None or subject.about is None or not _THEY_LEFT.search(parts[0]):
        return []
    for part in parts[1:]:
        if (new := _THEY_WITH.match(part)) is not None:
            left = _read_first_person(f"I left {named['rest']}", subject, voice, read) if named else []
            return left + _read_first_person(f"I work at {new['org']}", subject, voice, read)
    return []


_NAMED_LEFT = re.compile(r"^(?P<name>(?-i:[A-Z][a-z]+))\s+(?:quit|left)\s+(?P<rest>(?-i:[A-Z]).*)$")


_WITH_NOW = re.compile(rf"^(?:i'm|im|i\s+am)\s+(?:now\s+)?with\s+(?P<org>{NAME})\s+now$", re.IGNORECASE)
_JOINED = re.compile(r"^(?:i\s+|i've\s+)?(?:just\s+)?joined\s+as\b", re.IGNORECASE)
# "My brother quit BMW, he is with Audi now": someone else's new employer, after the old one
_THEY_LEFT = re.compile(r"\b(?:quit|left)\s+(?-i:[A-Z])", re.IGNORECASE)
_THEY_WITH = re.compile(
    rf"^(?:he|she)(?:'s|\s+is)\s+(?:now\s+)?(?:with|at)\s+(?P<org>{NAME})(?:\s+now)?\b", re.IGNORECASE
)


def _changed(parts: list[str], voice: Voice, read: Reader) -> list[Draft]:
    """What a change said in any order states: "Moved out of London, we're in Margate now" (a home),
    "I'm with Deloitte now, left PwC in the summer" (an employer: "with" someone alone may be a partner)."""
    drafts: list[Draft] = []
    if any(_MOVE.search(p) for p in parts):
        for part in parts:
            if (now_in := _IN_NOW.match(part)) is not None:
                drafts += _read_first_person(f"I live in {now_in['place']}", _SPEAKER, voice, read)
    if any(((left := _LEFT.match(p)) and not left["split"]) or _JOINED.match(p) for p in parts):
        for part in parts:
            if (new := _WITH_NOW.match(part)) is not None:
                fact = en_sentence(f"{voice.title} now works at {new['org']}")
                drafts.append(Draft(fact, "employer", "identity", 8).stating("employer", new["org"]))
    return drafts


# Openers of a part that are not part of what it says.
_OPENER = re.compile(
    r"^(?:(?:anyway|anyways|also|plus|then|and\s+then|oh\s+and|btw|on\s+top\s+of\s+that|honestly|tbh|ngl|wait|no(?!\s+(?:longer|more)\b)|nope|"
    r"sorry|oops|actually|ok|okay|yeah|yes|so|well|oh|"
    r"the\s+(?:big|good|great|other)\s+news\s+is|(?:i\s+)?(?:just\s+)?found\s+out(?:\s+that)?|turns\s+out(?:\s+that)?)"
    r"(?:[\s,]+|$))+",
    re.IGNORECASE,
)


def _opening(part: str, *, later: bool = False) -> _Subject | None:
    """Whom the first part of a clause is about, if it says."""
    m = _NAMED_AS.match(part) or _IS_MY.match(part)
    if m and name_ok(m["name"]) and (relation := relation_of(m["rel"])):
        return _Subject(About(m["name"], relation), _said(m))
    m = _INTRODUCED.match(part) or _NAMED_DAY.match(part)
    if m and name_ok(m["name"]):
        return _Subject(About(m["name"], None), None)
    m = _PRONOUN_IS_MY.match(part)
    if m:
        return _Subject(About(None, relation_of(m["rel"])), m["rel"].lower(), naming=True)
    m = _NEW_RELATIVE.search(part)  # "new team = new manager, her name is Ingrid"
    if m and (relation := relation_of(m["rel"])) and relation != "pet":
        return _Subject(About(None, relation), m["rel"].lower(), naming=True)
    m = MY_RELATIVE.match(part)
    if m and (relation := relation_of(m["rel"])):
        name = m["name"] if name_ok(m["name"]) else None
        about = About(name, relation, "pet" if relation == "pet" else "person")
        return _Subject(about, said_of(m), naming=name is None and part[m.end() :].strip() == "")
    m = _KIN_SUBJECT.match(part)
    if m and (relation := relation_of(m["rel"])):
        return _Subject(About(None, relation), m["rel"].lower())
    m = _PETS_HAD.match(part)
    if m:
        kind = m["kind"].lower()
        return _Subject(pets={"pupp": "puppy", "bunn": "bunny"}.get(kind, kind))
    m = _LEFT.match(part)
    if m:
        return _Subject(left="partner" if m["split"] else "job")
    if (now_in := _IN_NOW.match(part)) is not None:
        return _Subject(moved_in=now_in["place"])
    if _FIRST_PERSON.match(part) or _WE.match(part):
        return _Subject(was_from=True) if _FROM.search(part) else _SPEAKER
    if later:
        return None
    if _subjectless(part) is not None or _INNER_FIRST_PERSON.search(part) or _MY_THING.match(part):
        return _SPEAKER
    return None


# "I left Vodafone", "no longer at Barclays", "me and Dave split up": what comes next replaces it.
_LEFT = re.compile(
    r"^(?:(?:i|i've|i\s+have)\s+)?(?:just\s+|finally\s+|recently\s+)?(?:(?:left|quit)\s+(?-i:[A-Z])|(?:i'm\s+)?no\s+longer\s+"
    r"(?:at|with)\s+(?-i:[A-Z])|handed\s+in\s+my\s+notice)|^(?P<split>(?:me\s+and\s+[\w\s]+?|[\w\s]+?\s+and\s+(?:i|me)|i|we)\s+"
    r"(?:split(?:\s+up)?|broke\s+up|separated|divorced|called\s+it\s+off)\b)",
    re.IGNORECASE,
)
_FROM = re.compile(r"\b(?:from|grew\s+up|born|raised)\b", re.IGNORECASE)
_MY_THING = re.compile(rf"^my\s+(?!(?:{REL_WORDS})\b)", re.IGNORECASE)
_NEW_JOB = re.compile(
    rf"^(?:(?:i'm|im|i\s+am)\s+)?(?:now\s+)?(?:at|with)\s+(?P<org>{NAME})(?:\s+now)?$|^(?:i\s+)?(?:(?:moved|switched|went)\s+"
    rf"(?:over\s+)?to|(?:just\s+)?joined)\s+(?P<org2>{NAME})\b",
    re.IGNORECASE,
)
_NEW_PARTNER = re.compile(
    rf"^(?:i'm|im|i\s+am)\s+(?:now\s+)?(?:with|seeing|dating)\s+(?P<name>{NAME})(?:\s+now)?$", re.I
)
_IT_IS = re.compile(rf"^(?:it's|its|it\s+is)\s+(?:now\s+)?(?P<name>{NAME})(?:\s+now)?$", re.IGNORECASE)
_PLURAL_KIN = frozenset("twins kids children boys girls sons daughters".split())


def _said(m: re.Match[str]) -> str:
    rel = " ".join(m["rel"].lower().split())
    return f"{m['adj'].lower()} {rel}" if m["adj"] else rel


def _part(part: str, subject: _Subject, voice: Voice, read: Reader) -> tuple[list[Draft], _Subject | None]:
    """The facts one later part states, and whom the parts after it are about."""
    if subject.left is not None:
        new = _NEW_JOB.match(part) if subject.left == "job" else _NEW_PARTNER.match(part)
        if new is None:  # "…, I'm at a tiny startup called Verdana now": read as it is
            return _read_first_person(_we_as_i(part), _SPEAKER, voice, read), None
        if subject.left == "job":
            org = new["org"] or new["org2"]
            fact = en_sentence(f"{voice.title} now works at {org}")
            return [Draft(fact, "employer", "identity", 8).stating("employer", org)], None
        fact = en_sentence(f"{voice.title} is now with {new['name']}")
        return [Draft(fact, "partner", "relationship", 8).stating("partner", new["name"])], None
    if subject.pets is not None:
        if _BARE_NAME.match(part) and name_ok(part):
            fact = en_sentence(f"{voice.title} has a {subject.pets} named {part}")
            return [Draft(fact, "pet", "relationship", 7).stating("pet", part)], subject
        return [], None
    about = subject.about
    # "our eldest, Sam, …", "new manager, her name is Ingrid, …": the name that follows
    name_said = _NAME_SAID.match(part)
    given = name_said["name"] if name_said else part
    if subject.naming and about is not None and _BARE_NAME.match(given) and name_ok(given):
        named = replace(about, name=given)
        drafts = [_relation_fact(named, subject.said, voice)] if named.relation else []
        if subject.said in _PLURAL_KIN:  # "my twins, Ella and Ruby": each is named, neither is "they"
            return [d for d in drafts if d is not None], subject
        return [d for d in drafts if d is not None], replace(subject, about=named, naming=False)
    if about is not None and about.name is None and about.relation and (it := _IT_IS.match(part)):
        named = replace(about, name=it["name"])  # "my manager's changed, it's Fatima now"
        draft = _relation_fact(named, subject.said, voice)
        return ([draft] if draft else []), replace(subject, about=named)
    if _EMPHATIC.search(part):
        return [], subject  # "he does love a 4pm meeting": irony as often as not
    if _FIRST_PERSON.match(part) or _WE.match(part):
        return _read_first_person(_we_as_i(part), _SPEAKER, voice, read), _SPEAKER
    m = _KIN_SUBJECT.match(part) or MY_RELATIVE.match(part)
    if m and (relation := relation_of(m["rel"])):
        kin = _Subject(About(None, relation), m["rel"].lower())
        rest = part[m.end() :].strip()
        return _read_first_person(as_first_person(_is_or_has(rest)), kin, voice, read), kin
    if about is None:  # the speaker, their "I" left out: "born in Kano, been in Abuja since uni"
        clause = (
            f"I live in {subject.moved_in}" if subject.moved_in and _MOVE.search(part) else _subjectless(part)
        )
        if clause is None and _DRINK_ALONE.match(part) and is_drink(part):
            clause = f"I usually drink {_DRINK_ALONE.match(part)['drink']}"  # "I'm a big tea drinker, earl grey mostly"
        if clause is None and subject.was_from and (now_in := _NOW_IN.match(part)):
            clause = f"I live in {now_in['place']}"  # "I'm from Kraków originally, now in Berlin"
        if clause is None and _BARE_JOB.match(part) and is_occupation(part):
            clause = f"I'm a {part}"  # "I'm Henry, software tester at Canva"
        if clause is None and (not _NOT_ALONE.match(part) or _FOR_ME.match(part)):
            clause = part  # "Toronto is home now", "sparky by trade", "it's sparkling water for me now"
        return (_read_first_person(clause, subject, voice, read) if clause else []), subject
    pronoun = _PRONOUN.match(part)
    if pronoun:
        rest = pronoun["rest"]
        relation = _PRONOUN_IS_MY.match(part)
        if (
            relation and about.name and (rel := relation_of(relation["rel"]))
        ):  # "that's Karen, she's my manager"
            named = replace(about, relation=rel)
            draft = _relation_fact(named, relation["rel"].lower(), voice)
            return ([draft] if draft else []), replace(subject, about=named, said=relation["rel"].lower())
        if about.relation is None and about.name is None:
            return [], subject
        rest = _ONE_WHO.sub("'s ", rest)  # "she's the one who's a nurse"
        clause = as_first_person(_is_or_has(rest))
        return _read_first_person(clause, subject, voice, read), subject
    if subject.about and subject.about.name and (job := _THE_JOB.match(part)) and is_occupation(job["job"]):
        return _read_first_person(f"I'm a {job['job']}", subject, voice, read), subject
    age = _AGE.match(part)
    if age:
        return _read_first_person(f"I'm {age['age']} years old", subject, voice, read), subject
    if _THIRD_VERB.match(part) or _BE_START.match(part):
        clause = as_first_person(part) if _THIRD_VERB.match(part) else f"I'm {part}"
        return _read_first_person(clause, subject, voice, read), subject
    return [], subject


_BARE_JOB = re.compile(
    r"^(?!.*\bof\b)(?:[\w-]+\s+){0,3}?[\w-]+(?:\s+(?:at|for|with)\s+(?:(?-i:[A-Z])|(?:a|an)\s+(?-i:[a-z])).*|"
    r"\s+in\s+(?-i:[A-Z]).*)?$",
    re.IGNORECASE,
)
_DRINK_ALONE = re.compile(
    r"^(?P<drink>[\w'-]+(?:\s+[\w'-]+)?)\s+(?:mostly|usually|mainly|normally|always|only)$", re.I
)
_MOVE = re.compile(
    r"\b(?:the\s+move|moved|moving|new\s+(?:place|flat|house|home)|settled\s+in|unpacking|boxes)\b", re.I
)
_IN_NOW = re.compile(
    rf"^(?:i'm|im|i\s+am|we're|we\s+are)\s+(?:now\s+)?in\s+(?P<place>{NAME})\s+now$", re.IGNORECASE
)
_FOR_ME = re.compile(
    r"^(?:it's|its|it\s+is)\s+.+?\s+(?:for\s+me|everything|all\s+the\s+way)\b", re.IGNORECASE
)
_NOW_IN = re.compile(rf"^now\s+(?:in|based\s+in|living\s+in)\s+(?P<place>{NAME})(?:\s+now)?$", re.IGNORECASE)
_EMPHATIC = re.compile(r"\b(?:does|do)\s+(?:love|like|hate|enjoy)\b", re.IGNORECASE)
_ONE_WHO = re.compile(r"^'s\s+the\s+one\s+(?:who's|who\s+is|that's)\s+", re.IGNORECASE)
_NOT_ALONE = re.compile(
    r"^(?:he|she|they|it|it's|its|that|this|there|my|his|her|their|you|u|your|ur|the|a|an)\b", re.I
)


def _is_or_has(rest: str) -> str:
    """ "'s got dementia" → "has got dementia"; "'s from Punjab" → "is from Punjab"."""
    if not rest.startswith("'s"):
        return rest
    return ("has" if _PARTICIPLE.match(rest[2:]) else "is") + rest[2:]


def _we_as_i(part: str) -> str:
    m = _WE.match(part)
    if m is None:
        return part
    aux = (m["aux"] or "").strip().lower()
    start = {"'ve": "I've", "have": "I have", "'re": "I'm", "are": "I am"}.get(aux, "I")
    return f"{start} {part[m.end() :]}"


def _subjectless(part: str) -> str | None:
    """A part whose "I" was left out, with it put back: "been in Abuja since uni" → "I've been in
    Abuja since uni"; None when it does not read as one."""
    if _BORN.match(part):
        return f"I was {part}"
    if _HAVING.match(part):  # "I speak Welsh fluently, having grown up in Carmarthen"
        return "I grew up in" + part[part.lower().index(" in") + 3 :]
    if _HAVE_START.match(part):
        return f"I've {part}"
    if _VERB_START.match(part):
        return f"I {part}"
    if _BE_START.match(part) and not _A_THING_DOES.match(part):
        return f"I'm {part}"
    return None


def as_first_person(rest: str) -> str:
    """'is a nurse' → "I am a nurse"; 'only drinks tea' → 'I only drink tea'; 'lives in Leeds' → 'I live in Leeds'."""
    words = rest.strip().split()
    for i, word in enumerate(words):
        low = word.lower()
        if re.match(_ADVERBS.replace(")*", ")"), low + " "):
            continue
        if low in BACK_TO_FIRST:
            words[i] = BACK_TO_FIRST[low]
        elif low.endswith("ies") and len(low) > 4:
            words[i] = word[:-3] + "y"
        elif low.endswith(("shes", "ches", "sses", "xes")):
            words[i] = word[:-2]
        elif low.endswith("s") and not low.endswith("ss") and low not in ("was", "has", "is"):
            words[i] = word[:-1]
        break
    return "I " + " ".join(words)


def _read_first_person(clause: str | None, subject: _Subject, voice: Voice, read: Reader) -> list[Draft]:
    if not clause:
        return []
    about = subject.about
    if about is None:
        draft = read(clause, voice)
        return [draft] if draft is not None else []
    about = replace(about, of=voice.person)
    said = subject.said or about.relation or "relative"
    told = Voice.of(about.name) if about.relation is None and about.name else voice.relative(about, said)
    draft = read(clause, told)
    if draft is None or draft.attribute is None:
        return []
    return [about_of(draft, about)]


def about_of(draft: Draft, about: About) -> Draft:
    also = tuple(about_of(extra, about) for extra in draft.also)
    return replace(draft, about=draft.about or about, also=also)


def _relation_fact(about: About, said: str | None, voice: Voice) -> Draft | None:
    if about.name is None or about.relation is None:
        return None
    fact = en_sentence(f"{about.name} is {voice.possessive} {said or about.relation}")
    return Draft(fact, said or about.relation, "relationship", 7).stating(about.relation, about.name)


def opens_as_speaker(clause: str) -> bool:
    """Whether ``clause`` begins as a statement of the speaker's own ("I start my new job at…")."""
    return _is_speaker(_opening(spell_out(clause)))
