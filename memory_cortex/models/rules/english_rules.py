"""The English statements the rules extractor takes ("my name is…", "I live in…", "remind me
to…"), each a pattern and the handler that writes its fact."""

from __future__ import annotations

import re

from ..facts import Category
from .english_voice import en_fact, is_content, team_fact, third_person, topic_from
from .shapes import Draft, Handler, Rule, Voice, cap, en_sentence, first_words_of


def en_pattern(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.IGNORECASE)


_IM = r"(?:i'm|i\s+am|im)"
_IHAVE = r"(?:i\s+have|i've\s+got|i\s+have\s+got|ive\s+got)"
_ADV = (
    r"(?:(?:really|truly|absolutely|also|generally|usually|definitely|always|mostly|actually|"
    r"personally|strongly|much|still|just|honestly|totally|genuinely|do|currently|now|only)\s+)*"
)
_RELATION_WORDS = (
    "sister sisters brother brothers sibling siblings mother mom mum mommy mummy mama father dad daddy papa "
    "parent parents wife husband partner spouse fiance fiancé fiancee fiancée girlfriend boyfriend son sons "
    "daughter daughters kid kids child children baby twin friend friends bestie roommate flatmate housemate "
    "boss manager colleague colleagues coworker coworkers co-worker cofounder co-founder teammate mentor "
    "teacher doctor therapist dentist cat cats dog dogs pet pets puppy kitten parrot hamster rabbit horse "
    "cousin cousins aunt uncle niece nephew grandma grandmother grandpa grandfather grandparents "
    "granddaughter grandson stepmother stepfather stepson stepdaughter stepbrother stepsister neighbor "
    "neighbour landlord family in-laws mother-in-law father-in-law"
).split()
_RELATIONS = frozenset(_RELATION_WORDS)
_REL = "(?:" + "|".join(sorted(map(re.escape, _RELATION_WORDS), key=len, reverse=True)) + ")"
_REL_PHRASE = rf"(?:(?:best|older|younger|big|little|baby|twin|eldest|oldest|youngest|step)\s+)?{_REL}"

_NAME_WORD = r"[^\W\d_][\w'.-]*"
_NAME_TAIL = (
    r"(?:\s+(?:and|but|or|btw|by\s+the\s+way|though|so|from\s+now\s+on|please|instead|"
    r"for\s+short)\b.*|\s*\(.*\))?$"
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
    "something mine always never new free home available afk brb".split()
)


def _name_ok(name: str) -> bool:
    return name.split()[0].lower() not in _NOT_NAMES


def _name_is(m: re.Match[str], voice: Voice) -> Draft | None:
    if not _name_ok(m["name"]):
        return None
    kind = m["kind"] or ""
    return Draft(
        f"{cap(voice.possessive)} {kind}name is {m['name']}.", f"{kind.strip()} name".strip(), "identity", 10
    )


def _called(m: re.Match[str], voice: Voice) -> Draft | None:
    if not _name_ok(m["name"]):
        return None
    return Draft(f"{voice.title} wants to be called {m['name']}.", "preferred name", "identity", 9)


def _goes_by(m: re.Match[str], voice: Voice) -> Draft | None:
    if not _name_ok(m["name"]):
        return None
    return Draft(f"{voice.title} goes by {m['name']}.", "preferred name", "identity", 9)


def _im_name(m: re.Match[str], voice: Voice) -> Draft | None:
    """'Hi, I'm Ana': a name or a nationality; either way an identity, kept verbatim."""
    if not _name_ok(m["name"]):
        return None
    return Draft(f"{voice.title} is {m['name']}.", "identity", "identity", 8)


def _say(category: Category, importance: int, topic: str | None = None, *, obj: str = "obj") -> Handler:
    """The common case: the whole clause, in the third person; ``obj`` must be real content."""

    def handler(m: re.Match[str], voice: Voice) -> Draft | None:
        phrase = m.groupdict().get(obj)
        if not is_content(phrase):
            return None
        label = topic or topic_from(phrase or "", category)
        return Draft(en_fact(m.string, voice), label, category, importance)

    return handler


def _named_relation(m: re.Match[str], voice: Voice) -> Draft | None:
    """'Ana is my sister' → 'Ana is the user's sister.'"""
    if not _name_ok(m["name"]):
        return None
    return Draft(en_fact(m.string, voice), topic_from(m["rel"], "family"), "relationship", 7)


def _named_favourite(m: re.Match[str], voice: Voice) -> Draft | None:
    if not _name_ok(m["name"]):
        return None
    return Draft(en_fact(m.string, voice), f"favourite {topic_from(m['thing'], 'thing')}", "preference", 6)


_POSSESSIVE_FORBIDDEN = frozenset(
    "i you he she it they we me him her them us says said thinks thought told and or but that which who "
    "if when because also really is are was were has have had will would do does did not just".split()
)
_POSSESSIVE_DISCOURSE = frozenset(
    "question questions point guess concern concerns issue issues problem problems answer bad pleasure "
    "understanding assumption thought thoughts idea ideas suggestion request hope fear worry mistake "
    "fault turn apologies apology opinion take head brain mind heart day week life code output error "
    "errors result results log logs response message prompt test tests build screen internet connection "
    "wifi battery reply feeling feelings gut bet sense impression".split()
)
_IDENTITY_NOUNS = frozenset(
    "name birthday age email e-mail address job occupation profession pronouns nationality hometown "
    "gender timezone username handle phone number title role religion height weight diet citizenship "
    "language tongue website blog github".split()
)
_PROJECT_NOUNS = frozenset(
    "project projects repo repository stack deadline server database db app website site company startup "
    "team framework codebase branch api budget domain product client customer launch release backend "
    "frontend deployment pipeline service".split()
)
_GOAL_NOUNS = frozenset(
    "goal goals plan plans dream dreams aim priority priorities ambition resolution".split()
)
_TRANSIENT = re.compile(
    r"^(?:not|so|too|very|kind\s+of|sort\s+of|a\s+bit|a\s+little|still|already|broken|slow|down|failing|"
    r"fine|ok|okay|good|bad|great|done|ready|here|there|gone|missing|wrong|right|correct|different|same|"
    r"better|worse|empty|full|dead|crashing|stuck|loading|off|open|closed|weird|strange|messed|acting|"
    r"a\s+mess|killing|bugged|buggy|lagging|this|that|it|what|where|who|how|why|when|which)\b",
    re.IGNORECASE,
)


def _my_x_is_y(m: re.Match[str], voice: Voice) -> Draft | None:
    """'my sister's name is Ana', 'my favourite colour is green', 'my email is a@b.c'."""
    words = [w.removesuffix("'s") for w in m["x"].lower().split()]
    if any(w in _POSSESSIVE_FORBIDDEN for w in words) or words[-1] in _POSSESSIVE_DISCOURSE:
        return None
    if not is_content(m["y"]) or _TRANSIENT.match(m["y"].strip()):
        return None
    x = m["x"].lower()
    relation = next((w for w in words if w in _RELATIONS), None)
    if relation is not None:
        category: Category = "relationship"
        importance, topic = 7, x.split("'s")[0].strip() if "'s" in x else relation
    elif any(w in ("favourite", "favorite", "fave", "preferred", "hobby", "hobbies") for w in words):
        category, importance, topic = "preference", 6, x
    elif words[-1] in _IDENTITY_NOUNS:
        category, importance, topic = "identity", 8, x
    elif words[-1] in _PROJECT_NOUNS:
        category, importance, topic = "project_state", 6, x
    elif words[-1] in _GOAL_NOUNS:
        category, importance, topic = "fact", 6, x
    else:
        category, importance, topic = "fact", 5, x
    if category in ("relationship", "fact", "project_state") and m["y"].split()[0].lower().endswith("ing"):
        return None  # "my cat is sleeping", "my project is going well": a moment, not a fact
    return Draft(en_fact(m.string, voice), topic, category, importance)


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
    return Draft(f"{voice.title} is {m['age']} years old.", "age", "identity", 8)


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
            rf"^(?:i\s+go\s+by|{_IM}\s+called|people\s+call\s+me|everyone\s+calls\s+me|(?:my\s+)?friends\s+"
            rf"call\s+me)\s+{_CAP_NAME}{_NAME_TAIL}",
            _goes_by,
        ),
        (
            "I",
            rf"^{_IM}\s+(?:happily\s+)?(?:married|engaged)\s+to\s+(?P<obj>.+)$",
            _say("relationship", 8, "partner"),
        ),
        ("I", rf"^{_IM}\s+(?:currently\s+)?dating\s+(?P<obj>.+)$", _say("relationship", 7, "partner")),
        # --- health, diet: high importance, checked before the generic "I'm a…"
        (
            "I",
            rf"^{_IM}\s+(?:very\s+|severely\s+|highly\s+|extremely\s+|deathly\s+|quite\s+|mildly\s+|also\s+)?"
            r"allergic\s+to\s+(?P<obj>.+)$",
            _say("identity", 9, "allergy"),
        ),
        (
            "I",
            rf"^{_IHAVE}\s+(?:a\s+|an\s+)?(?:severe\s+|serious\s+|mild\s+|bad\s+)?(?P<obj>[\w -]{{1,40}}?)\s+"
            r"allerg(?:y|ies)$",
            _say("identity", 9, "allergy"),
        ),
        ("I", rf"^{_IHAVE}\s+(?:an?\s+)?allerg(?:y|ies)\s+to\s+(?P<obj>.+)$", _say("identity", 9, "allergy")),
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
            rf"^{_IM}\s+(?:a\s+|an\s+)?(?:strict\s+|also\s+)?(?P<obj>vegan|vegetarian|pescatarian|pescetarian|"
            r"teetotal(?:er|ler)?|lactose[- ]intolerant|gluten[- ]intolerant|celiac|coeliac|diabetic|halal|"
            r"kosher)\b.*$",
            _say("identity", 8, "diet"),
        ),
        (
            "I",
            rf"^{_IHAVE}\s+(?P<obj>(?:type\s+[12]\s+)?diabetes|asthma|adhd|epilepsy|dyslexia|autism|"
            r"c[oe]?eliac\s+disease|crohn's(?:\s+disease)?|migraines|a\s+heart\s+condition|high\s+blood\s+"
            r"pressure|hypertension|tinnitus|colou?r\s*blindness|arthritis)\b.*$",
            _say("identity", 8, "health"),
        ),
        (
            "I",
            rf"^{_IM}\s+(?P<obj>colou?r[- ]?blind|deaf|hard\s+of\s+hearing|blind|autistic|dyslexic|epileptic|"
            r"pregnant|left[- ]handed|right[- ]handed|disabled|neurodivergent|married|single|divorced|widowed|"
            r"retired|unemployed|self[- ]employed)\b.*$",
            _say("identity", 8),
        ),
        # --- relationships
        (None, rf"^{_CAP_NAME}\s+is\s+my\s+(?P<rel>{_REL_PHRASE})\b.*$", _named_relation),
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
            _my_x_is_y,
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
        ("I", rf"^{_IM}\s+(?P<age>\d{{1,3}})(?:\s*(?:years?|yrs?|y/?o)(?:\s+old)?)?$", _age),
        (
            "I",
            rf"^{_IM}\s+(?:also\s+|currently\s+|now\s+|actually\s+)?(?:a|an)\s+(?!(?:bit|little|lot|tad|fan|big|"
            r"huge|massive|great|fool|idiot|moron|mess|genius|liar|real|total|complete|quick|few|sec|second|"
            r"minute|moment)\b)(?P<obj>[\w-].*)$",
            _say("identity", 8),
        ),
        (
            "I",
            rf"^{_IM}\s+(?:the\s+)?(?P<obj>(?:ceo|cto|cfo|coo|founder|co-?founder|owner|tech\s+lead|lead\s+"
            r"developer|maintainer|author|creator|director|president|vp)\b.*)$",
            _say("identity", 8),
        ),
        (
            "I",
            r"^i\s+(?:currently\s+|now\s+|also\s+|still\s+)?(?:live|reside)\s+(?:in|at|near|on|outside(?:\s+of)?)"
            r"\s+(?P<obj>.+)$",
            _say("identity", 8, "home"),
        ),
        (
            "I",
            rf"^{_IM}\s+(?:currently\s+|now\s+)?(?:living|based|located|residing)\s+(?:in|at|near|out\s+of|"
            r"outside)\s+(?P<obj>.+)$",
            _say("identity", 8, "home"),
        ),
        (
            "I",
            r"^i(?:'ve|\s+have)?\s+(?:just\s+|recently\s+|finally\s+)?(?:moved|relocated)\s+(?:back\s+)?to\s+"
            r"(?P<obj>.+)$",
            _say("identity", 8, "home"),
        ),
        (
            "I",
            rf"^(?:{_IM}|i\s+come)\s+(?:originally\s+)?from\s+(?!(?:here|there|work|home|the\s+future|the\s+past|"
            r"school|now|scratch)\b)(?P<obj>.+)$",
            _say("identity", 8, "origin"),
        ),
        ("I", r"^i\s+was\s+born\s+(?:and\s+raised\s+)?in\s+(?P<obj>.+)$", _say("identity", 8, "birthplace")),
        ("I", r"^i\s+was\s+born\s+on\s+(?P<obj>.+)$", _say("identity", 8, "birthday")),
        ("I", r"^i\s+grew\s+up\s+in\s+(?P<obj>.+)$", _say("identity", 7, "origin")),
        ("I", r"^i\s+(?:currently\s+|now\s+|also\s+)?work\s+as\s+(?P<obj>.+)$", _say("identity", 8, "job")),
        (
            "I",
            r"^i\s+(?:currently\s+|now\s+|also\s+)?work\s+(?:at|for)\s+(?P<obj>.+)$",
            _say("identity", 8, "employer"),
        ),
        (
            "I",
            rf"^{_IM}\s+(?:currently\s+|now\s+)?(?:employed|working)\s+(?:as|at|for)\s+(?P<obj>.+)$",
            _say("identity", 8, "job"),
        ),
        (
            "I",
            rf"^(?:i\s+(?:currently\s+)?study|{_IM}\s+(?:currently\s+)?studying|{_IM}\s+majoring\s+in|i\s+teach)"
            r"\s+(?P<obj>.+)$",
            _say("identity", 7, "studies"),
        ),
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
            rf"^i\s+{_ADV}(?:prefer|like|love|adore|enjoy|hate|dislike|detest|loathe|despise)\s+(?P<obj>.+)$",
            _say("preference", 6),
        ),
        (
            "I",
            rf"^i\s+{_ADV}(?:don't|do\s+not|dont)\s+(?:really\s+)?(?:like|love|enjoy|care\s+for)\s+(?P<obj>.+)$",
            _say("preference", 6),
        ),
        (
            "I",
            rf"^i\s+{_ADV}(?:don't|do\s+not|dont)\s+(?:ever\s+)?(?:want|use)\s+(?P<obj>.+)$",
            _say("preference", 7),
        ),
        ("I", r"^i\s+(?:can't|cannot)\s+stand\s+(?P<obj>.+)$", _say("preference", 6)),
        (
            "I",
            r"^(?:i'd|i\s+would)\s+(?:much\s+)?(?:rather|prefer)\s+(?!not\s+(?:say|talk|discuss|answer|share|"
            r"go\s+into)\b)(?P<obj>.+)$",
            _say("preference", 6),
        ),
        (
            "I",
            rf"^{_IM}\s+(?:not\s+)?(?:a\s+)?(?:big\s+|huge\s+|massive\s+|great\s+|real\s+)?fan\s+of\s+(?P<obj>.+)$",
            _say("preference", 6),
        ),
        ("I", rf"^{_IM}\s+(?:really\s+)?into\s+(?P<obj>.+)$", _say("preference", 6)),
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
        ("I", r"^i\s+(?:also\s+|fluently\s+)?speak\s+(?P<obj>.+)$", _say("skill", 7, "languages")),
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
        ("I", rf"^{_IM}\s+{_CAP_NAME}$", _im_name),
    )
)
