"""English statements said the indirect way chat says them: "tea, always tea", "I eat halal",
"obsessed with Formula 1", "diagnosed with type 2 diabetes", "I'm fluent in Portuguese", "myself
Ana", "my boss at work is Paul", "I'm doing medicine at uni", "it's Tuesday for the dentist".
Where someone works and lives, said that way, has its own modules (english_employment,
english_places), whose rules come first in ``EN_MORE_RULES``."""

from __future__ import annotations

import re

from .english_employment import EN_EMPLOYMENT_RULES, works_as
from .english_places import DEMONYMS, EN_PLACE_RULES, PLACE, place_is_home
from .english_preferences import speaks
from .english_rule_parts import IM, en_rules
from .english_text import is_name
from .english_values import DIETS, LANGUAGES, clean_value, drink_value, is_drink
from .english_voice import en_fact, is_content, topic_from
from .shapes import About, Draft, Rule, Voice, en_sentence

NAME = r"(?-i:(?:(?:Mrs?|Ms|Dr)\.?\s+)?[A-Z][\w'.-]*(?:\s+[A-Z][\w'.-]*)?)"


def _diet(m: re.Match[str], voice: Voice) -> Draft | None:
    diet = clean_value(m["diet"])
    if not diet or not DIETS.match(diet):
        return None
    return Draft(en_fact(m.string, voice), "diet", "identity", 8).stating("diet", diet)


_NOT_DRUNK = frozenset("too so much lots loads more less enough way a lot it that this nothing".split())


def _habit_drink(m: re.Match[str], voice: Voice) -> Draft | None:
    """'black coffee, no sugar, every single morning', 'tea, always tea', "it's sparkling water for me now"."""
    drink = drink_value(m["obj"])
    # "every morning I drink my chimarrão": drinking it every day makes it a drink, named or not
    daily = (
        bool(m.groupdict().get("daily"))
        and drink is not None
        and re.fullmatch(r"[^\W\d_]+(?:\s+[^\W\d_]+)?", drink) is not None
        and drink.split()[0].lower() not in _NOT_DRUNK
    )
    if not drink or not (is_drink(drink) or daily) or len(drink.split()) > 4:
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


def _name(m: re.Match[str], voice: Voice) -> Draft | None:
    name = m["name"]
    if not is_name(name) or name.lower() in DEMONYMS:
        return None
    return Draft(f"{voice.title} is {name}.", "identity", "identity", 8).stating("name", name)


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

_OWN_RULES: tuple[Rule, ...] = en_rules(
    (
        # --- a name ("myself Ana")
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
            rf"^{IM}\s+(?:doing|on)\s+(?:a\s+)?(?P<diet>keto|paleo|low[- ]carb|vegan|plant[- ]based)(?:\s+diet)?\b.*$",
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
            "I",
            # "I basically live on black coffee, like 4 cups a day"
            r"^i\s+(?:basically\s+|pretty\s+much\s+|practically\s+|just\s+)?(?:live|survive|run)\s+on\s+"
            r"(?P<obj>[\w\s'-]{2,30}?)(?:\s*[,;].*|\s+(?:and|but|so|like|these)\b.*)?$",
            _habit_drink,
        ),
        (
            "every each",
            r"^(?:every\s+(?:single\s+)?(?:morning|day|evening|night)|each\s+morning)\s*,?\s+i\s+(?:always\s+|still\s+)?"
            r"(?P<daily>drink)\s+(?:my\s+|a\s+|some\s+)?(?P<obj>[^\W\d_][\w'-]*(?:\s+[^\W\d_][\w'-]*)?)(?:\s*[,;.].*)?$",
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
            rf"^{IM}\s+(?:strictly\s+|totally\s+|very\s+much\s+|more\s+of\s+)?(?:a|an)\s+(?P<obj>[\w\s-]{{2,25}}?)\s+"
            r"(?:girl|guy|person|man|woman|lad|gal|kinda\s+(?:girl|guy))\b.*$",
            _habit_drink,
        ),
        # --- likes
        (
            None,
            rf"^(?:{IM}\s+)?(?:kind\s+of\s+|a\s+bit\s+|totally\s+|completely\s+|absolutely\s+)?obsessed\s+(?:with|w)\s+"
            r"(?P<obj>.+)$",
            _likes,
        ),
        (
            "lifelong huge big massive die-hard diehard",
            r"^(?:lifelong|huge|big|massive|die-?hard)\s+(?P<obj>(?-i:[A-Z])[\w\s.-]{1,30}?)\s+(?:fan|supporter)\b.*$",
            _likes,
        ),
        ("I love", r"^(?:i\s+)?(?:do\s+)?love\s+a\s+good\s+(?P<obj>.+)$", _likes),
        ("I", rf"^{IM}\s+(?:all|totally|very\s+much)\s+about\s+(?P<obj>.+)$", _all_about),
        (
            "I",
            r"^i(?:'ve\s+been|\s+was|\s+got|\s+have\s+been)?\s+(?:just\s+|recently\s+|finally\s+|officially\s+)?"
            r"diagnosed\s+with\s+(?P<obj>.+)$",
            _diagnosed,
        ),
        (
            "I",
            rf"^{IM}\s+(?:also\s+|pretty\s+|fully\s+|totally\s+)?fluent\s+in\s+(?P<obj>.+)$",
            _fluent,
        ),
        (
            "I",
            r"^i\s+(?:currently\s+|now\s+|also\s+)?work\s+(?:nights\s+|days\s+|shifts\s+)?(?:at|for|in)\s+(?:a|an|the)\s+"
            r"[a-z][\w\s'-]*?\s+as\s+(?:a|an)\s+(?P<job>[\w\s-]{2,40}?)(?:\s*[,;.].*|\s+(?:and|but|so|since)\b.*)?$",
            works_as,
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
            rf"townhouse)\s+)?in\s+{PLACE}.*$",
            place_is_home,
        ),
        (
            "I",
            rf"^{IM}\s+(?:currently\s+)?(?:doing|reading|studying)\s+(?P<obj>{FIELDS})\s+at\s+(?:(?:[a-z]+\s+)?(?:uni|university|college)\b|"
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

# Tried in this order: where they work, where they live and come from, then the rules above.
EN_MORE_RULES: tuple[Rule, ...] = (*EN_EMPLOYMENT_RULES, *EN_PLACE_RULES, *_OWN_RULES)
